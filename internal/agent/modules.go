package agent

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Module is one entry of the ramdisk's module list.
type Module struct {
	Name    string
	Path    string   // relative to the ramdisk's root
	Deps    []string // names
	Aliases []string // device patterns (modules.alias syntax)
	// lits are the aliases' literal prefixes (up to the first wildcard),
	// worked out once by ParseModuleList for Matching.
	lits []string
}

// ModuleList is the ramdisk's module list, in load order.
type ModuleList []Module

// ParseModuleList reads the list the ramdisk builder writes: one module a
// line, "path<TAB>dep,dep<TAB>alias alias", '#' comments.
func ParseModuleList(s string) ModuleList {
	var ml ModuleList
	for _, line := range strings.Split(s, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		m := Module{Path: strings.TrimSpace(f[0])}
		m.Name = ModuleName(m.Path)
		if len(f) > 1 {
			for _, d := range strings.Split(f[1], ",") {
				if d = strings.TrimSpace(d); d != "" {
					m.Deps = append(m.Deps, ModuleName(d))
				}
			}
		}
		if len(f) > 2 {
			m.Aliases = strings.Fields(f[2])
			m.lits = make([]string, len(m.Aliases))
			for i, a := range m.Aliases {
				m.lits[i] = aliasLiteral(a)
			}
		}
		ml = append(ml, m)
	}
	return ml
}

func (ml ModuleList) index(name string) int {
	for i, m := range ml {
		if m.Name == name {
			return i
		}
	}
	return -1
}

// Closure returns the named modules and everything they depend on, in the
// list's (load) order.
func (ml ModuleList) Closure(names []string) []Module {
	want := map[string]bool{}
	var add func(n string, depth int)
	add = func(n string, depth int) {
		i := ml.index(n)
		if want[n] || i < 0 || depth > 64 {
			return
		}
		want[n] = true
		for _, d := range ml[i].Deps {
			add(d, depth+1)
		}
	}
	for _, n := range names {
		add(n, 0)
	}
	var out []Module
	for _, m := range ml {
		if want[m.Name] {
			out = append(out, m)
		}
	}
	return out
}

// Followers bind to devices that their dependencies' drivers create,
// which may appear only after this round's scan: SCSI class drivers (their
// aliases are all "scsi:", and SCSI scanning is asynchronous) and the
// OpenIPMI character device, which has no alias at all.
func isFollower(m Module) bool {
	if m.Name == "ipmi_devintf" {
		return true
	}
	if len(m.Aliases) == 0 {
		return false // a library: loaded when something needs it
	}
	for _, a := range m.Aliases {
		if !strings.HasPrefix(a, "scsi:") {
			return false
		}
	}
	return true
}

// Matching returns the names of the modules to load for these device
// modaliases: those with an alias matching one, and then, repeatedly, the
// "followers" (modules without a hardware-bus alias) that depend on one of
// them (see isFollower): sd_mod on scsi_mod, ipmi_devintf on
// ipmi_msghandler.
func (ml ModuleList) Matching(modaliases []string) []string {
	wanted := map[string]bool{}
	for _, m := range ml {
	match:
		for i, a := range m.Aliases {
			// Big NIC drivers have hundreds of aliases: compare the
			// literal part first, so the emulated CPU of a VM is not
			// spent in path.Match.
			var lit string
			if len(m.lits) == len(m.Aliases) {
				lit = m.lits[i]
			} else {
				lit = aliasLiteral(a)
			}
			for _, d := range modaliases {
				if !strings.HasPrefix(d, lit) {
					continue
				}
				if ok, _ := path.Match(a, d); ok {
					wanted[m.Name] = true
					break match
				}
			}
		}
	}
	for _, m := range ml.Closure(keys(wanted)) {
		wanted[m.Name] = true
	}
	for changed := true; changed; {
		changed = false
		for _, m := range ml {
			if wanted[m.Name] || !isFollower(m) {
				continue
			}
			for _, d := range m.Deps {
				if wanted[d] {
					for _, c := range ml.Closure([]string{m.Name}) {
						wanted[c.Name] = true
					}
					changed = true
					break
				}
			}
		}
	}
	var out []string
	for _, m := range ml {
		if wanted[m.Name] {
			out = append(out, m.Name)
		}
	}
	return out
}

// aliasLiteral is an alias pattern up to its first wildcard.
func aliasLiteral(a string) string {
	if i := strings.IndexAny(a, "*?[\\"); i >= 0 {
		return a[:i]
	}
	return a
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Modaliases returns the modalias of every device under root/sys/bus. It
// lists each bus's devices rather than globbing: half the system calls,
// which counts under emulation.
func Modaliases(root string) []string {
	base := filepath.Join(root, "sys/bus")
	buses, _ := os.ReadDir(base)
	var out []string
	for _, b := range buses {
		dir := filepath.Join(base, b.Name(), "devices")
		devs, _ := os.ReadDir(dir)
		for _, d := range devs {
			if s := readString(filepath.Join(dir, d.Name(), "modalias")); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// ModuleName is the kernel's name for a module file: the base name without
// .ko (and compression suffix), dashes as underscores.
func ModuleName(p string) string {
	b := filepath.Base(p)
	if i := strings.Index(b, ".ko"); i >= 0 {
		b = b[:i]
	}
	return strings.ReplaceAll(b, "-", "_")
}
