package pxefilter

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/states"
)

func TestDecide(t *testing.T) {
	nodes := []Node{
		{UUID: "a", ProvisionState: states.InspectWait, InspectInterface: "agent"},
		{UUID: "b", ProvisionState: states.Inspecting, InspectInterface: "agent"},
		{UUID: "c", ProvisionState: states.InspectWait, InspectInterface: "inspector"},
		{UUID: "d", ProvisionState: states.Manageable, InspectInterface: "agent"},
	}
	ports := []Port{{"52:54:00:00:00:0A", "a"}, {"52:54:00:00:00:0b", "b"}, {"52:54:00:00:00:0c", "c"}, {"52:54:00:00:00:0d", "d"}, {"52:54:00:00:00:0e", "gone"}}
	for _, tc := range []struct {
		name      string
		nodes     []Node
		supported []string
		discovery bool
		want      Decision
	}{
		{"agent nodes being inspected", nodes, []string{"agent"}, false, Decision{
			Allow: []string{"52:54:00:00:00:0a", "52:54:00:00:00:0b"},
			Deny:  []string{"52:54:00:00:00:0c", "52:54:00:00:00:0d", "52:54:00:00:00:0e"}, AllowUnknown: true}},
		{"both interfaces", nodes, []string{"agent", "inspector"}, false, Decision{
			Allow: []string{"52:54:00:00:00:0a", "52:54:00:00:00:0b", "52:54:00:00:00:0c"},
			Deny:  []string{"52:54:00:00:00:0d", "52:54:00:00:00:0e"}, AllowUnknown: true}},
		{"nothing inspected", nodes[3:], []string{"agent"}, false, Decision{
			Deny: []string{"52:54:00:00:00:0a", "52:54:00:00:00:0b", "52:54:00:00:00:0c", "52:54:00:00:00:0d", "52:54:00:00:00:0e"}}},
		{"nothing inspected, discovery on", nodes[3:], []string{"agent"}, true, Decision{
			Deny: []string{"52:54:00:00:00:0a", "52:54:00:00:00:0b", "52:54:00:00:00:0c", "52:54:00:00:00:0d", "52:54:00:00:00:0e"}, AllowUnknown: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Decide(tc.nodes, ports, tc.supported, tc.discovery)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// The files read back in Ironic's format; a MAC whose port is gone gets
// the unknown MACs' verdict; files already right are not rewritten;
// files that are not MACs are left alone.
func TestSync_WritesIronicsFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "README"), []byte("operator's\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "52:54:00:00:00:99"), []byte("52:54:00:00:00:99\n"), 0o644) // a port since deleted
	n, err := Sync(dir, Decision{Allow: []string{"52:54:00:00:00:01"}, Deny: []string{"52:54:00:00:00:02"}, AllowUnknown: false})
	if err != nil || n != 4 {
		t.Fatalf("Sync = %d, %v; want 4 files written", n, err)
	}
	want := map[string]string{
		"README":            "operator's\n",
		"52:54:00:00:00:01": "52:54:00:00:00:01\n",
		"52:54:00:00:00:02": "52:54:00:00:00:02,ignore\n",
		"52:54:00:00:00:99": "52:54:00:00:00:99,ignore\n",
		UnknownHostsFile:    "*:*:*:*:*:*,ignore\n",
	}
	if diff := cmp.Diff(want, readDir(t, dir)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if n, err := Sync(dir, Decision{Allow: []string{"52:54:00:00:00:01"}, Deny: []string{"52:54:00:00:00:02"}}); err != nil || n != 0 {
		t.Errorf("the same decision again: %d files written, %v; want none", n, err)
	}
	// An inspection ends, another starts; unknown MACs may boot now.
	if _, err := Sync(dir, Decision{Allow: []string{"52:54:00:00:00:02"}, Deny: []string{"52:54:00:00:00:01"}, AllowUnknown: true}); err != nil {
		t.Fatal(err)
	}
	want["52:54:00:00:00:01"], want["52:54:00:00:00:02"] = "52:54:00:00:00:01,ignore\n", "52:54:00:00:00:02\n"
	want["52:54:00:00:00:99"], want[UnknownHostsFile] = "52:54:00:00:00:99\n", "*:*:*:*:*:*\n"
	if diff := cmp.Diff(want, readDir(t, dir)); diff != "" {
		t.Errorf("files after the change (-want +got):\n%s", diff)
	}
	if _, err := Sync(filepath.Join(dir, "missing"), Decision{}); err == nil {
		t.Error("a missing dhcp_hostsdir is not an error")
	}
}
