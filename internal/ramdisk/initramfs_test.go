package ramdisk

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/callback"
	"github.com/google/go-cmp/cmp"
)

// testdata/modules/6.1.0-test is a module tree as depmod leaves it
// (modules.dep, modules.alias, modules.builtin); the .ko files are
// placeholders, never loaded.
const testModules = "testdata/modules/6.1.0-test"

func TestResolve_DependenciesFirst(t *testing.T) {
	m, err := OpenModules(testModules)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Resolve([]string{"virtio_net", "virtio_pci", "loop", "e1000-test"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"kernel/net/core/failover.ko", "kernel/drivers/net/net_failover.ko",
		"kernel/drivers/virtio/virtio_ring.ko", "kernel/drivers/virtio/virtio.ko", "kernel/drivers/net/virtio_net.ko", "kernel/drivers/virtio/virtio_pci.ko",
		"kernel/drivers/net/e1000-test.ko",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestResolve_UnknownModule(t *testing.T) {
	m, err := OpenModules(testModules)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Resolve([]string{"virtio_net", "no_such_driver"}); !errors.Is(err, ErrUnknownModule) || !strings.Contains(err.Error(), "no_such_driver") {
		t.Errorf("err = %v", err)
	}
}

func TestWriteInitramfs_InitConsoleModulesAndList(t *testing.T) {
	m, err := OpenModules(testModules)
	if err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(t.TempDir(), "ferro-agent")
	if err := os.WriteFile(agent, []byte("#!agent\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	man, err := WriteInitramfs(&buf, InitramfsOptions{Agent: agent, Modules: m, ModuleNames: []string{"virtio_net", "e1000_test"}})
	if err != nil {
		t.Fatal(err)
	}
	if man.Bytes != int64(buf.Len()) || len(man.Modules) != 6 {
		t.Errorf("manifest = %+v (archive %d bytes)", man, buf.Len())
	}
	recs, err := ReadInitramfs(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	init, ok := recs["init"]
	if !ok || init.Mode&0o777 != 0o755 || string(read(t, init)) != "#!agent\n" {
		t.Errorf("init = %+v", init.Info)
	}
	if c, ok := recs["dev/console"]; !ok || c.Rmajor != 5 || c.Rminor != 1 {
		t.Errorf("dev/console = %+v", c.Info)
	}
	for _, d := range []string{"proc", "sys", "dev", "lib/modules/6.1.0-test/kernel/net/core"} {
		if _, ok := recs[d]; !ok {
			t.Errorf("no directory %s", d)
		}
	}
	list := string(read(t, recs[callback.ModuleList]))
	wantLine := "lib/modules/6.1.0-test/kernel/drivers/net/virtio_net.ko\tnet_failover,failover,virtio,virtio_ring\tvirtio:d00000001v*\n"
	if !strings.Contains(list, wantLine) {
		t.Errorf("module list lacks %q:\n%s", wantLine, list)
	}
	ko := recs["lib/modules/6.1.0-test/kernel/drivers/net/virtio_net.ko"]
	if string(read(t, ko)) != "module drivers/net/virtio_net\n" {
		t.Errorf("virtio_net.ko content = %q", read(t, ko))
	}
	// Same inputs, same bytes: no time stamps or owners of the build host.
	var again bytes.Buffer
	if _, err := WriteInitramfs(&again, InitramfsOptions{Agent: agent, Modules: m, ModuleNames: []string{"virtio_net", "e1000_test"}}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two builds differ")
	}
}

func read(t *testing.T, r interface {
	ReadAt([]byte, int64) (int, error)
}) []byte {
	t.Helper()
	if r == nil {
		return nil
	}
	b, err := io.ReadAll(io.NewSectionReader(r, 0, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
