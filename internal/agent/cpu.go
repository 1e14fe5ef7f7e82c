package agent

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/ferrometal/ferro/internal/inventory"
)

// unameArch is uname's machine name for GOARCH, which lscpu (and so IPA)
// reports as the architecture.
func unameArch(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	case "386":
		return "i686"
	case "ppc64le":
		return "ppc64le"
	case "s390x":
		return "s390x"
	case "riscv64":
		return "riscv64"
	}
	return goarch
}

// CPU reads the processors from root/proc/cpuinfo: the model, frequency and
// flags of the first, how many there are and on how many sockets. The
// frequency is the maximum from cpufreq when the kernel has it, as lscpu's
// "CPU max MHz", else cpuinfo's current "cpu MHz".
func CPU(root string) (*inventory.CPU, error) {
	f, err := os.Open(filepath.Join(root, "proc/cpuinfo"))
	if err != nil {
		return nil, fmt.Errorf("read cpuinfo: %w", err)
	}
	defer f.Close()
	cpu := &inventory.CPU{Architecture: unameArch(runtime.GOARCH)}
	sockets := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20) // flags lines are long
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "processor":
			cpu.Count++
		case "model name":
			if cpu.ModelName == "" {
				cpu.ModelName = val
			}
		case "cpu MHz":
			if cpu.Frequency == "" {
				cpu.Frequency = val
			}
		case "flags", "Features": // Features: arm64
			if cpu.Flags == nil {
				cpu.Flags = strings.Fields(val)
			}
		case "physical id":
			sockets[val] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read cpuinfo: %w", err)
	}
	if cpu.Count == 0 {
		return nil, fmt.Errorf("read cpuinfo: no processor found")
	}
	if khz, ok := readInt(filepath.Join(root, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")); ok && khz > 0 {
		cpu.Frequency = strconv.FormatFloat(float64(khz)/1000, 'f', 4, 64)
	}
	cpu.SocketCount = len(sockets)
	if cpu.SocketCount == 0 {
		cpu.SocketCount = 1
	}
	return cpu, nil
}
