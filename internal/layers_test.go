// Package layers_test holds the shape of internal/: which floor each
// package lives on, and that no import runs from a lower floor to a higher
// one (Tailscale's deptest, by hand). Go itself refuses import cycles; the
// floors forbid the longer loops a cycle check cannot see, such as a
// client that reaches back into the drivers that use it.
package layers_test

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ferrometal/ferro/"

// The floors, lowest first. A package may import packages of its own floor
// and of the floors below, never above.
const (
	// vocabulary: the domain and the wire shapes every part shares; pure
	// data and rules, no I/O beyond reading what it is handed.
	vocabulary = iota
	// parts: one job against one outside thing each — persistence, a BMC
	// protocol, an OpenStack service, boot images, a network server —
	// and the harnesses that start real ones for tests.
	parts
	// driverAPI: the driver interfaces, Task and the registry.
	driverAPI
	// drivers: the hardware types and interface implementations.
	drivers
	// services: what runs the work (conductor, inspector and its
	// processing pipeline, the netboot service, the lab).
	services
	// frontEnds: the REST APIs.
	frontEnds
)

var floorNames = []string{"vocabulary", "parts", "driver API", "drivers", "services", "front ends"}

// floors places every package under internal/; a new package must be
// placed here (a prefix ending in "/" places a folder).
var floors = map[string]int{
	"internal/baremetal": vocabulary, "internal/states": vocabulary, "internal/callback": vocabulary,
	"internal/dhcpopt": vocabulary, "internal/jsonlimit": vocabulary, "internal/reportbudget": vocabulary, "internal/pyjson": vocabulary,
	"internal/inventory": vocabulary, "internal/lldp": vocabulary, "internal/rootdevice": vocabulary, "internal/hardware": vocabulary, "internal/progress": vocabulary,
	"internal/config": vocabulary, "internal/service": vocabulary, "internal/netns": vocabulary,
	"internal/scrub": vocabulary,

	"internal/store": parts, "internal/store/": parts, "internal/pxefilter": parts, "internal/openstack": parts, "internal/neutron": parts,
	"internal/bmc/": parts, "internal/ramdisk": parts, "internal/vbmc": parts, "internal/netboot/": parts,
	"internal/auth": parts, "internal/agent": parts, "internal/testing/": parts,
	// The processing pipeline: the inspector service and the agent inspect
	// interface (a driver) both run it.
	"internal/inspection": parts, "internal/inspection/": parts,
	"internal/localfile": parts,

	"internal/driver": driverAPI,
	// Metrics count what the driver API, the store and the states name.
	"internal/metrics": driverAPI,

	"internal/driver/": drivers,

	"internal/conductor": services, "internal/inspector": services, "internal/inspector/": services,
	"internal/netboot": services, "internal/lab": services,

	"internal/api/": frontEnds, "internal/web": frontEnds,
}

func floorOf(pkg string) (int, bool) {
	if f, ok := floors[pkg]; ok {
		return f, true
	}
	best, floor := "", 0
	for prefix, f := range floors {
		if strings.HasSuffix(prefix, "/") && strings.HasPrefix(pkg, prefix) && len(prefix) > len(best) {
			best, floor = prefix, f
		}
	}
	return floor, best != ""
}

type pkg struct {
	ImportPath                         string
	Imports, TestImports, XTestImports []string
}

// list runs go list over the whole module.
func list(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		for _, l := range []*[]string{&p.Imports, &p.TestImports, &p.XTestImports} {
			var own []string
			for _, imp := range *l {
				if strings.HasPrefix(imp, module) {
					own = append(own, strings.TrimPrefix(imp, module))
				}
			}
			*l = own
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 50 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func TestLayers_NoImportRunsUp(t *testing.T) {
	for _, p := range list(t) {
		if !strings.HasPrefix(p.ImportPath, "internal/") {
			continue
		}
		from, ok := floorOf(p.ImportPath)
		if !ok {
			t.Errorf("%s has no floor: place it in layers_test.go", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			to, ok := floorOf(imp)
			if ok && to > from {
				t.Errorf("%s (%s) imports %s (%s): an arrow back up", p.ImportPath, floorNames[from], imp, floorNames[to])
			}
		}
	}
}

// Configuration stops at cmd/: nothing under internal/ but the config
// package itself reads *config.Config, in code or in tests; each package
// declares typed options and cmd/ferro fills them.
func TestLayers_ConfigStopsAtCmd(t *testing.T) {
	for _, p := range list(t) {
		if p.ImportPath == "internal/config" {
			continue
		}
		var imports []string
		imports = append(imports, p.Imports...)
		if strings.HasPrefix(p.ImportPath, "internal/") {
			imports = append(append(imports, p.TestImports...), p.XTestImports...)
		}
		if slices.Contains(imports, "internal/config") && !strings.HasPrefix(p.ImportPath, "cmd/") && !strings.HasPrefix(p.ImportPath, "bench/") {
			t.Errorf("%s imports internal/config", p.ImportPath)
		}
	}
}

// Test harnesses and the test-only hardware type are for tests (and the
// bench/ programs, which start real parts too): no binary and no package
// under internal/ imports them outside its tests.
func TestLayers_TestOnlyPackagesStayInTests(t *testing.T) {
	testOnly := func(imp string) bool {
		return strings.HasPrefix(imp, "internal/testing/") || imp == "internal/driver/testhw" ||
			imp == "internal/store/storetest" || imp == "internal/bmc/redfish/redfishtest"
	}
	for _, p := range list(t) {
		if testOnly(p.ImportPath) || strings.HasPrefix(p.ImportPath, "bench/") {
			continue
		}
		for _, imp := range p.Imports {
			if testOnly(imp) {
				t.Errorf("%s imports %s outside its tests", p.ImportPath, imp)
			}
		}
	}
}
