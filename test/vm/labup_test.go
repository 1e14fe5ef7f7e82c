package vm_test

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/ramdisk"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/vbmctest"
)

// TestLabUp_TheReadmesTwoCommands runs `ferro lab up` as a newcomer
// would, then the inspect command it prints (the real baremetal CLI), and
// checks the machine was inspected and that stopping the lab removes the
// namespace and its directory.
func TestLabUp_TheReadmesTwoCommands(t *testing.T) {
	if os.Geteuid() != 0 {
		ferrotest.SkipOrFail(t, "ferro lab up needs root")
	}
	ferrotest.RequireTool(t, "qemu-system-x86_64")
	ferrotest.RequireTool(t, "baremetal")
	images := builtRamdisk(t)
	bin := ferrotest.Binary(t)
	netns := "ferro-labtest-" + strings.ToLower(rand.Text()[:6])
	dir := filepath.Join(t.TempDir(), "lab")
	cmd := exec.Command(bin, "lab", "up", "--netns", netns, "--dir", dir,
		"--ferro-vbmc", vbmctest.Binary(t),
		"--kernel", filepath.Join(images, ramdisk.KernelFile), "--initramfs", filepath.Join(images, ramdisk.InitramfsFile))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr logBuffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		done <- cmd.Wait()
	}()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			cmd.Process.Signal(syscall.SIGINT)
			<-done
		}
		exec.Command("ip", "netns", "del", netns).Run()
	})
	var inspect string
	var out []string
	timeout := time.After(3 * time.Minute)
	for inspect == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("ferro lab up ended: %v\n%s\n%s", <-done, strings.Join(out, "\n"), stderr.String())
			}
			out = append(out, l)
			if strings.Contains(l, " node inspect ") {
				inspect = strings.TrimSpace(l)
			}
		case <-timeout:
			t.Fatalf("ferro lab up printed no inspect command in 3 minutes:\n%s\n%s", strings.Join(out, "\n"), stderr.String())
		}
	}
	t.Logf("ferro lab up said:\n%s", strings.Join(out, "\n"))
	// The printed command, as root already (no sudo).
	args := strings.Fields(strings.TrimPrefix(inspect, "sudo "))
	run := exec.Command(args[0], args[1:]...)
	run.Env = append(os.Environ(), "HOME="+t.TempDir())
	began := time.Now()
	b, err := run.CombinedOutput()
	if err != nil {
		b2, _ := os.ReadFile(filepath.Join(dir, "lab0-console.log"))
		t.Fatalf("%s: %v\n%s\nconsole tail:\n%s", inspect, err, b, tail(string(ansiRE.ReplaceAll(b2, nil)), 3000))
	}
	t.Logf("%s took %.1f s", inspect, time.Since(began).Seconds())
	show := append(args[:len(args)-4:len(args)-4], "node", "show", "lab0", "-f", "json")
	b, err = exec.Command(show[0], show[1:]...).Output()
	if err != nil {
		t.Fatalf("%v: %v", show, err)
	}
	var node map[string]any
	if err := json.Unmarshal(b, &node); err != nil {
		t.Fatal(err)
	}
	props, _ := node["properties"].(map[string]any)
	if node["provision_state"] != "manageable" || str(props["cpus"]) != "1" || str(props["memory_mb"]) != "1024" {
		t.Errorf("lab0 after inspection: %v %v", node["provision_state"], props)
	}

	cmd.Process.Signal(syscall.SIGINT)
	stopped = true
	for range lines {
	}
	if err := <-done; err != nil {
		t.Errorf("ferro lab up exited with %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat("/run/netns/" + netns); !os.IsNotExist(err) {
		t.Errorf("namespace %s is still there: %v", netns, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("lab directory %s is still there: %v", dir, err)
	}
}
