package redfish_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	rf "github.com/ferrometal/ferro/internal/driver/redfish"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// The health of the captured real servers (an Apollo XL675d reports
// Warning, the others OK) is what Ironic's get_node_health reads through
// python3-sushy from the same trees; a System without Status.Health has
// none.
func TestHealth_RealServersAsSushyReadsThem(t *testing.T) {
	for _, tc := range []struct{ tree, system, want string }{
		{"DL325", "/redfish/v1/Systems/1", "OK"},
		{"XL675d_A100", "/redfish/v1/Systems/1/", "Warning"},
		{"Gigabyte", "/redfish/v1/Systems/Self", "OK"},
		{"OpenBMC-stock", "/redfish/v1/Systems/system", "OK"},
		{"dmtf-public-tower", "/redfish/v1/Systems/437XR1238R2", "OK"},
	} {
		t.Run(tc.tree, func(t *testing.T) {
			_, srv := serveMockup(t, tc.tree)
			e := newEnv(t)
			task := e.task(map[string]any{"redfish_address": srv.URL, "redfish_username": "u", "redfish_password": "mockup-pw-3",
				"redfish_system_id": tc.system})
			got, err := rf.NewManagement(e.opts).Health(t.Context(), task)
			if err != nil || got != tc.want {
				t.Fatalf("Health = %q, %v; want %q", got, err, tc.want)
			}
			py := "/usr/bin/python3"
			if exec.Command(py, "-c", "import sushy").Run() != nil {
				ferrotest.SkipOrFail(t, "/usr/bin/python3 cannot import sushy (Debian package python3-sushy)")
			}
			out, err := exec.Command(py, "testdata/sushy_health.py", srv.URL, "u", "mockup-pw-3", tc.system).CombinedOutput()
			if err != nil {
				t.Fatalf("sushy: %v\n%s", err, out)
			}
			if s := strings.TrimSpace(string(out)); s != got {
				t.Errorf("sushy reads %q, ferro %q", s, got)
			}
		})
	}
}

// The firmware components of DMTF's sample servers, NICs included (1.114's
// vendor, model and serial number from each NetworkAdapter), are those
// Ironic's cache_firmware_components reads through python3-sushy from the
// same trees: an adapter whose controllers give no FirmwarePackageVersion
// (acd's Slot4) has none.
func TestFirmware_NICsOfSampleServersAsSushyReadsThem(t *testing.T) {
	for _, tc := range []struct {
		tree, system string
		nics         []string // component=version vendor/model/serial
	}{
		{"dmtf-public-tower", "/redfish/v1/Systems/437XR1238R2", []string{
			"nic:2M220100SL=7.4.10 Contoso/SuperNIC 2000/2M220100SL"}},
		{"dmtf-public-acd", "/redfish/v1/Systems/437XR1138R2", []string{
			"nic:CSC125J87D=8.11.0 Contoso Systems Inc./Contoso SuperC 2000 25Gb 2p Adapter/CSC125J87D",
			"nic:ABCD12345=12.13.14 Contoso/Contoso SC32G-FC HBA/ABCD12345",
			"nic:ABCDE2345=12.13.14 Contoso/Contoso PS100 NIC/ABCDE2345"}},
	} {
		t.Run(tc.tree, func(t *testing.T) {
			_, srv := serveMockup(t, tc.tree)
			e := newEnv(t)
			task := e.task(map[string]any{"redfish_address": srv.URL, "redfish_username": "u", "redfish_password": "mockup-pw-3",
				"redfish_system_id": tc.system})
			got, err := rf.NewFirmware(e.opts).FirmwareComponents(t.Context(), task)
			if err != nil {
				t.Fatal(err)
			}
			var nics []string
			var mine []map[string]any
			for _, c := range got {
				if strings.HasPrefix(c.Component, rf.NICComponentPrefix) {
					nics = append(nics, c.Component+"="+c.CurrentVersion+" "+c.Vendor+"/"+c.Model+"/"+c.SerialNumber)
				}
				m := map[string]any{"component": c.Component, "current_version": c.CurrentVersion,
					"vendor": nullable(c.Vendor), "model": nullable(c.Model), "serial_number": nullable(c.SerialNumber)}
				mine = append(mine, m)
			}
			if d := cmp.Diff(tc.nics, nics); d != "" {
				t.Errorf("NIC components (-want +got):\n%s", d)
			}
			py := "/usr/bin/python3"
			if exec.Command(py, "-c", "import sushy").Run() != nil {
				ferrotest.SkipOrFail(t, "/usr/bin/python3 cannot import sushy (Debian package python3-sushy)")
			}
			cmd := exec.Command(py, "testdata/sushy_firmware.py", srv.URL, "u", "mockup-pw-3", tc.system)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("sushy: %v\n%s", err, stderr.String())
			}
			var theirs []map[string]any
			if err := json.Unmarshal(out, &theirs); err != nil {
				t.Fatalf("sushy said %s: %v", out, err)
			}
			if d := cmp.Diff(theirs, mine); d != "" {
				t.Errorf("components (-sushy +ferro):\n%s", d)
			}
		})
	}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
