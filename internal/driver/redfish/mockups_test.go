package redfish_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	rf "github.com/ferrometal/ferro/internal/driver/redfish"
	"github.com/ferrometal/ferro/internal/states"
)

// mockup serves a Redfish tree captured from a real server as DMTF's
// Redfish-Mockup-Server does in short form (-S): GET /redfish/v1/<p> is
// <dir>/<p>/index.json without its "@Redfish.Copyright", trailing slashes,
// query and fragment ignored, 404 with an empty body for anything else; a
// POST to a collection that exists answers 204 with a Location and, for
// sessions, an X-Auth-Token. It counts the requests per path and answers
// the paths in fail with their status.
type mockup struct {
	dir string

	mu     sync.Mutex
	counts map[string]int
	fail   map[string]int
}

func serveMockup(t *testing.T, tree string) (*mockup, *httptest.Server) {
	m := &mockup{dir: filepath.Join("testdata", "mockups", tree), counts: map[string]int{}, fail: map[string]int{}}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv
}

func mockupPath(p string) string {
	p, _, _ = strings.Cut(p, "?")
	p, _, _ = strings.Cut(p, "#")
	p = strings.Trim(p, "/")
	return strings.Trim(strings.Replace(p, "redfish/v1", "", 1), "/")
}

func (m *mockup) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rel := mockupPath(r.URL.Path)
	m.mu.Lock()
	m.counts[r.Method+" "+rel]++
	code := m.fail[rel]
	m.mu.Unlock()
	if code != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		// A real BMC's error: long, its message in ExtendedInfo.
		fmt.Fprintf(w, `{"error":{"code":"Base.1.8.GeneralError","message":"A general error has occurred. See ExtendedInfo for more information.",`+
			`"@Message.ExtendedInfo":[{"@odata.type":"#Message.v1_1_1.Message","MessageId":"Base.1.8.InternalError","Message":"The request failed due to an internal service error.  The service is still operational.","Severity":"Critical","Resolution":"Resubmit the request.  If the problem persists, consider resetting the service."},`+
			`{"MessageId":"Oem.1.0.DriveNotReady","Message":"%s","Resolution":"%s"}]}}`, strings.Repeat("drive not ready ", 20), strings.Repeat("wait ", 40))
		return
	}
	raw, err := os.ReadFile(filepath.Join(m.dir, rel, "index.json"))
	if err != nil {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	switch r.Method {
	case http.MethodGet:
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		delete(doc, "@Redfish.Copyright")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("OData-Version", "4.0")
		json.NewEncoder(w).Encode(doc)
	case http.MethodPost:
		w.Header().Set("Location", r.URL.Path+"/1")
		if strings.Contains(r.URL.Path, "SessionService/Sessions") {
			w.Header().Set("X-Auth-Token", "1234567890ABCDEF")
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// maxFetches is the largest number of GETs of one path, and that path.
// The service root does not count: a login reads it twice (once to find
// the session service, once by gofish), once per connection, not per
// inspection.
func (m *mockup) maxFetches() (string, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	path, n := "", 0
	for p, c := range m.counts {
		if strings.HasPrefix(p, "GET ") && p != "GET " && (c > n || (c == n && p < path)) {
			path, n = p, c
		}
	}
	return path, n
}

// The trees under testdata/mockups were captured from real servers (HPE
// iLO 5, an AMI MegaRAC board, an Intel S2600, a stock OpenBMC, HPE Cray EX
// blades) and DMTF's samples; testdata/mockups/README.md gives their origin
// and licence, and the values Ironic's redfish inspection computes from
// each, read off Ironic's code (and checked with Debian's sushy against
// DMTF's mockup server). Each row is those values, with ferro's where it
// deliberately differs (the README says why).
func TestInspect_RealServersAsIronicInspectsThem(t *testing.T) {
	type want struct {
		cpus, cpuArch, memoryMB, localGB, bootMode string
		ports                                      []string
		fails                                      string // the last_error's words when the inspection must fail
	}
	enrolled := map[string]any{"cpu_arch": "x86_64", "memory_mb": "4096"}
	for _, tc := range []struct {
		tree, system string
		properties   map[string]any // as enrolled
		want         want
	}{
		{"DL325", "/redfish/v1/Systems/1", nil,
			want{"32", "x86_64", "65536", "0", "uefi", []string{"14:02:ec:d9:3a:a0", "94:40:c9:5c:86:bc"}, ""}},
		{"XL675d_A100", "/redfish/v1/Systems/1/", nil,
			want{"256", "x86_64", "262144", "893", "", []string{"98:03:9b:1e:de:fc", "98:03:9b:7f:c3:38"}, ""}},
		{"Gigabyte", "/redfish/v1/Systems/Self", nil,
			want{"256", "x86_64", "249856", "1874", "bios", []string{"b4:2e:99:ba:de:15", "b4:2e:99:ba:de:16"}, ""}},
		{"Intel", "/redfish/v1/Systems/QSBP74100021", nil,
			want{"8", "x86_64", "49152", "0", "bios", nil, ""}},
		{"OpenBMC-stock", "/redfish/v1/Systems/system", nil,
			want{fails: "failed to discover the following properties: memory_mb, cpu_arch"}},
		{"OpenBMC-stock", "/redfish/v1/Systems/system", enrolled,
			want{"", "x86_64", "4096", "0", "uefi", nil, ""}},
		{"EX425", "/redfish/v1/Systems/Node0", map[string]any{"cpu_arch": "x86_64"},
			want{"256", "x86_64", "262144", "0", "", nil, ""}},
		{"EX425", "/redfish/v1/Systems/Node1", nil,
			want{fails: "failed to discover the following properties: cpu_arch"}},
		{"EX235a", "/redfish/v1/Systems/Node0", map[string]any{"cpu_arch": "x86_64"},
			want{"128", "x86_64", "524288", "0", "", nil, ""}},
		{"dmtf-public-localstorage", "/redfish/v1/Systems/437XR1138R2", nil,
			want{"16", "x86_64", "98304", "99", "uefi", []string{"12:44:6a:3b:04:11", "aa:bb:cc:dd:ee:00"}, ""}},
		{"dmtf-public-rackmount1", "/redfish/v1/Systems/437XR1138R2", nil,
			want{"16", "x86_64", "98304", "3724", "uefi", []string{"12:44:6a:3b:04:11", "aa:bb:cc:dd:ee:00", "aa:bb:cc:dd:ee:fe"}, ""}},
		{"dmtf-public-tower", "/redfish/v1/Systems/437XR1238R2", nil,
			want{"256", "x86_64", "1048576", "1048575", "uefi", []string{"fb:aa:1d:4e:d0:7a", "fb:aa:1d:4e:d0:7c"}, ""}},
	} {
		t.Run(tc.tree+tc.system, func(t *testing.T) {
			m, srv := serveMockup(t, tc.tree)
			e := newEnv(t)
			task := e.task(map[string]any{"redfish_address": srv.URL, "redfish_username": "u", "redfish_password": "mockup-pw-3",
				"redfish_system_id": tc.system})
			for k, v := range tc.properties {
				task.Node.Properties[k] = v
			}
			in := rf.NewInspect(rf.InspectOptions{Options: e.opts, Inventory: e.store, Ports: e.store})
			next, err := in.InspectHardware(t.Context(), task)
			if tc.want.fails != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want.fails) {
					t.Fatalf("inspection: %v, want a failure saying %q", err, tc.want.fails)
				}
				return
			}
			if err != nil || next != states.Manageable {
				t.Fatalf("inspection: %q, %v", next, err)
			}
			p := task.Node.Properties
			str := func(k string) string { s, _ := p[k].(string); return s }
			boot := ""
			if c := str("capabilities"); strings.HasPrefix(c, "boot_mode:") {
				boot = strings.TrimPrefix(c, "boot_mode:")
			}
			var ports []string
			for _, port := range task.Ports {
				ports = append(ports, port.Address)
			}
			slices.Sort(ports)
			got := want{str("cpus"), str("cpu_arch"), str("memory_mb"), str("local_gb"), boot, ports, ""}
			for _, c := range []struct{ name, got, want string }{
				{"cpus", got.cpus, tc.want.cpus}, {"cpu_arch", got.cpuArch, tc.want.cpuArch},
				{"memory_mb", got.memoryMB, tc.want.memoryMB}, {"local_gb", got.localGB, tc.want.localGB},
				{"boot_mode", got.bootMode, tc.want.bootMode},
				{"ports", strings.Join(got.ports, ","), strings.Join(tc.want.ports, ",")},
			} {
				if c.got != c.want {
					t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
				}
			}
			if path, n := m.maxFetches(); n != 1 {
				t.Errorf("%s was fetched %d times in one inspection, want once", path, n)
			}
		})
	}
}

// One drive answering 500 does not fail the inspection (Ironic ignores
// storage errors): the root disk still comes from the volumes; the drive is
// asked for once; and an error that does fail an inspection quotes the
// BMC's message once, shortened, not its whole body escaped twice.
func TestInspect_StorageErrorsAreSkippedAndErrorsAreShort(t *testing.T) {
	const system = "/redfish/v1/Systems/437XR1138R2"
	m, srv := serveMockup(t, "dmtf-public-localstorage")
	drive := mockupPath("/redfish/v1/Chassis/1U/Drives/3D58ECBC375FD9F2")
	m.fail[drive] = http.StatusInternalServerError
	e := newEnv(t)
	info := map[string]any{"redfish_address": srv.URL, "redfish_username": "u", "redfish_password": "mockup-pw-3", "redfish_system_id": system}
	in := rf.NewInspect(rf.InspectOptions{Options: e.opts, Inventory: e.store, Ports: e.store})
	task := e.task(info)
	if _, err := in.InspectHardware(t.Context(), task); err != nil {
		t.Fatalf("a drive's 500 failed the inspection: %v", err)
	}
	if got := task.Node.Properties["local_gb"]; got != "99" {
		t.Errorf("local_gb %v, want 99 (the smallest volume)", got)
	}
	if n := m.counts["GET "+drive]; n != 1 {
		t.Errorf("the failing drive was asked for %d times, want once", n)
	}
	if !strings.Contains(e.log.String(), "storage resource skipped") {
		t.Errorf("the skipped drive is not logged:\n%s", e.log)
	}

	// The Processors collection failing fails the inspection, as in
	// Ironic; the text quotes the BMC once.
	m.fail[mockupPath(system+"/Processors")] = http.StatusInternalServerError
	_, err := in.InspectHardware(t.Context(), e.task(info))
	if err == nil {
		t.Fatal("a failing Processors collection did not fail the inspection")
	}
	msg := err.Error()
	t.Logf("last_error: %s", msg)
	if len(msg) > 400 || strings.Contains(msg, `\"`) || strings.Count(msg, "The request failed due to an internal service error") != 1 ||
		strings.Contains(msg, "Resolution") {
		t.Errorf("error is %d characters and does not quote the BMC's message once: %s", len(msg), msg)
	}
}

// A node that already has a boot_mode capability keeps it, as in Ironic.
func TestInspect_BootModeCapabilityIsNotOverwritten(t *testing.T) {
	_, srv := serveMockup(t, "Intel") // Legacy
	e := newEnv(t)
	task := e.task(map[string]any{"redfish_address": srv.URL, "redfish_system_id": "/redfish/v1/Systems/QSBP74100021"})
	task.Node.Properties["capabilities"] = "boot_mode:uefi,secure_boot:true"
	in := rf.NewInspect(rf.InspectOptions{Options: e.opts, Ports: e.store})
	if _, err := in.InspectHardware(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	if got := task.Node.Properties["capabilities"]; got != "boot_mode:uefi,secure_boot:true" {
		t.Errorf("capabilities %v", got)
	}
}
