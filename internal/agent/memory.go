package agent

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/u-root/u-root/pkg/smbios"
)

// Memory reads the RAM: total is what the kernel manages (MemTotal, as
// IPA's psutil reports it), physical_mb the sum of the SMBIOS memory
// devices (IPA adds up lshw's banks). smb may be nil when the machine has
// no SMBIOS; physical_mb is then 0.
func Memory(root string, smb *smbios.Info) (*inventory.Memory, error) {
	f, err := os.Open(filepath.Join(root, "proc/meminfo"))
	if err != nil {
		return nil, fmt.Errorf("read meminfo: %w", err)
	}
	defer f.Close()
	mem := &inventory.Memory{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || key != "MemTotal" {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("read meminfo: MemTotal %q: %w", val, err)
		}
		mem.Total = kb * 1024
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read meminfo: %w", err)
	}
	if mem.Total == 0 {
		return nil, fmt.Errorf("read meminfo: no MemTotal")
	}
	if smb != nil {
		devs, err := smb.GetMemoryDevices()
		if err == nil {
			var bytes uint64
			for _, d := range devs {
				bytes += d.GetSizeBytes()
			}
			mem.PhysicalMB = int(bytes >> 20)
		}
	}
	return mem, nil
}
