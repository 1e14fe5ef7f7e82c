package ramdisk

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultModules are the modules every ferro ramdisk carries, with their
// dependencies: common virtual and server NICs, disk controllers and the
// in-band IPMI drivers. virtio_pci is named because modules.dep does not
// list it as virtio_net's dependency (it binds the PCI device; virtio_net
// binds the virtio device it creates).
var DefaultModules = []string{
	// NICs
	"virtio_pci", "virtio_net", "e1000", "e1000e", "igb", "ixgbe", "i40e", "bnxt_en", "tg3",
	// disks
	"virtio_blk", "virtio_scsi", "sd_mod", "ahci", "ata_piix", "nvme", "megaraid_sas", "mpt3sas",
	// in-band IPMI (/dev/ipmi0)
	"ipmi_si", "ipmi_devintf",
	// entropy for crypto/rand under emulation without RDRAND
	"virtio_rng",
}

// Modules is a kernel's module tree: /lib/modules/<version>.
type Modules struct {
	Dir string
	// deps maps a module name to its file (relative to Dir) and the names
	// it depends on.
	files   map[string]string
	deps    map[string][]string
	aliases map[string][]string
	builtin map[string]bool
}

// OpenModules indexes the module tree at dir. It reads modules.dep when
// depmod has written one; Debian's linux-image package ships without it
// (its postinst runs depmod), so otherwise each module's .modinfo
// "depends=" is read, which is what depmod itself does.
func OpenModules(dir string) (*Modules, error) {
	m := &Modules{Dir: dir, files: map[string]string{}, deps: map[string][]string{}, aliases: map[string][]string{}, builtin: map[string]bool{}}
	if b, err := os.ReadFile(filepath.Join(dir, "modules.builtin")); err == nil {
		for _, l := range strings.Fields(string(b)) {
			m.builtin[moduleName(l)] = true
		}
	}
	if f, err := os.Open(filepath.Join(dir, "modules.dep")); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			file, rest, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			name := moduleName(file)
			m.files[name] = file
			for _, d := range strings.Fields(rest) {
				m.deps[name] = append(m.deps[name], moduleName(d))
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read modules.dep: %w", err)
		}
		return m, nil
	}
	err := filepath.WalkDir(filepath.Join(dir, "kernel"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".ko") {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		m.files[moduleName(rel)] = rel
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("index modules in %s: %w", dir, err)
	}
	if len(m.files) == 0 {
		return nil, fmt.Errorf("index modules in %s: no .ko file (compressed modules are not supported)", dir)
	}
	return m, nil
}

// dependsOf returns a module's direct dependencies: modules.dep's, else
// its .modinfo's.
func (m *Modules) dependsOf(name string) ([]string, error) {
	if d, ok := m.deps[name]; ok {
		return d, nil
	}
	if err := m.readModinfo(name); err != nil {
		return nil, err
	}
	return m.deps[name], nil
}

// Aliases returns the device patterns a module binds to (.modinfo's
// alias=, as in modules.alias), which the agent matches against the
// machine's devices to load only the drivers it needs.
func (m *Modules) Aliases(name string) ([]string, error) {
	if a, ok := m.aliases[name]; ok {
		return a, nil
	}
	if err := m.readModinfo(name); err != nil {
		return nil, err
	}
	return m.aliases[name], nil
}

// readModinfo reads a module's .modinfo section: NUL-separated key=value
// strings.
func (m *Modules) readModinfo(name string) error {
	f, err := elf.Open(filepath.Join(m.Dir, m.files[name]))
	if err != nil {
		return fmt.Errorf("read module %s: %w", name, err)
	}
	defer f.Close()
	sec := f.Section(".modinfo")
	if sec == nil {
		return fmt.Errorf("read module %s: no .modinfo section", name)
	}
	info, err := sec.Data()
	if err != nil {
		return fmt.Errorf("read module %s: %w", name, err)
	}
	deps, aliases := []string{}, []string{}
	for _, kv := range bytes.Split(info, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("depends=")); ok {
			for _, d := range strings.Split(string(v), ",") {
				if d != "" {
					deps = append(deps, moduleName(d))
				}
			}
		}
		if v, ok := bytes.CutPrefix(kv, []byte("alias=")); ok && len(v) > 0 {
			aliases = append(aliases, string(v))
		}
	}
	if _, ok := m.deps[name]; !ok {
		m.deps[name] = deps
	}
	m.aliases[name] = aliases
	return nil
}

// ErrUnknownModule is returned (wrapped) for a module name the kernel has
// neither as a file nor built in.
var ErrUnknownModule = errors.New("no such kernel module")

// Resolve returns the files (relative to Dir) of the named modules and all
// they depend on, each after its dependencies: the order to load them in.
// Built-in modules are skipped.
func (m *Modules) Resolve(names []string) ([]string, error) {
	var order []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(name string, depth int) error
	visit = func(name string, depth int) error {
		if depth > 64 {
			return fmt.Errorf("module %s: dependency chain too deep", name)
		}
		switch state[name] {
		case 1:
			return fmt.Errorf("module %s: dependency cycle", name)
		case 2:
			return nil
		}
		file, ok := m.files[name]
		if !ok {
			if m.builtin[name] {
				state[name] = 2
				return nil
			}
			return fmt.Errorf("%w: %s in %s", ErrUnknownModule, name, m.Dir)
		}
		state[name] = 1
		deps, err := m.dependsOf(name)
		if err != nil {
			return err
		}
		for _, d := range deps {
			if err := visit(d, depth+1); err != nil {
				return err
			}
		}
		state[name] = 2
		order = append(order, file)
		return nil
	}
	for _, n := range names {
		if err := visit(moduleName(n), 0); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// moduleName is the kernel's name for a module path or name: the base name
// without .ko and compression suffix, dashes as underscores.
func moduleName(path string) string {
	b := filepath.Base(path)
	if i := strings.Index(b, ".ko"); i >= 0 {
		b = b[:i]
	}
	return strings.ReplaceAll(b, "-", "_")
}
