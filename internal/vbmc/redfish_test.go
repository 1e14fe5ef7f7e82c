package vbmc

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// sushyPython returns a python3 that can import sushy (Debian's
// python3-sushy is installed for /usr/bin/python3, which a pyenv or venv
// python3 earlier in PATH may not see).
func sushyPython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", ""} {
		if p == "" {
			p = ferrotest.RequireTool(t, "python3")
		}
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if exec.Command(p, "-c", "import sushy").Run() == nil {
			return p
		}
	}
	ferrotest.SkipOrFail(t, "no python3 can import sushy (Debian package python3-sushy; .ci/run installs it)")
	return ""
}

// runSushy runs testdata/sushy_check.py and decodes its JSON.
func runSushy(t *testing.T, py string, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(py, append([]string{"testdata/sushy_check.py"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sushy_check.py %s: %v\n%s", strings.Join(args[4:], " "), err, stderr.String())
	}
	var res map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("sushy_check.py output %q: %v\n%s", out, err, stderr.String())
	}
	return res
}

// TestRedfish_SushyDrivesPowerBootInventoryAndVirtualMedia runs sushy, as
// Ironic does, with each authentication mode against its own machine.
func TestRedfish_SushyDrivesPowerBootInventoryAndVirtualMedia(t *testing.T) {
	py := sushyPython(t)
	iso := make([]byte, 3<<20+17)
	rand.Read(iso)
	var fetches atomic.Int32
	images := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/boot/ramdisk.iso" {
			http.NotFound(w, r)
			return
		}
		fetches.Add(1)
		http.ServeContent(w, r, "ramdisk.iso", time.Time{}, bytes.NewReader(iso))
	}))
	t.Cleanup(images.Close)
	imageURL := images.URL + "/boot/ramdisk.iso"

	auths := []string{"basic", "session", "auto"}
	srv, ready := startServer(t, auths...)
	t.Cleanup(func() {
		// After the parallel subtests: sushy deleted the sessions it opened.
		if ids := srv.sessions.ids(time.Now()); len(ids) != 0 {
			t.Errorf("sessions still open after sushy closed them: %v", ids)
		}
	})
	for _, auth := range auths {
		t.Run(auth, func(t *testing.T) {
			t.Parallel()
			m := srv.Machine(auth)
			before := fetches.Load()
			got := runSushy(t, py, ready.RedfishURL, "admin", "vbmc-pass", auth, auth, "all", imageURL)

			want := map[string]any{
				"power_initial":   "Off",
				"power_after_on":  "On",
				"power_after_off": "Off",
				"reset_allowed":   []any{"ForceOff", "ForceOn", "ForceRestart", "GracefulRestart", "GracefulShutdown", "Nmi", "On", "PowerCycle"},
				"boot": map[string]any{
					"target": "Pxe", "enabled": "Once", "mode": "UEFI",
					"allowed": []any{"BiosSetup", "Cd", "Hdd", "None", "Pxe"},
				},
				"boot_after_on":            map[string]any{"target": "None", "enabled": "Disabled"},
				"bad_enabled":              "refused by sushy",
				"cpus":                     float64(4),
				"cpu_arch":                 "x86",
				"memory_gib":               float64(8),
				"macs":                     []any{"52:54:00:00:" + twoHex(indexOf(auths, auth)) + ":01", "52:54:00:00:" + twoHex(indexOf(auths, auth)) + ":02"},
				"simple_storage_max_bytes": float64(100 << 30),
				"storage_drive_bytes":      []any{float64(20 << 30), float64(100 << 30)},
				"bios":                     map[string]any{"BootMode": "Uefi", "NicBoot1": "NetworkBoot", "ProcTurboMode": "Enabled", "QuietBoot": false, "SerialNumber": auth},
				"vmedia_before":            map[string]any{"inserted": false, "media_types": []any{"CD", "DVD"}},
				"vmedia":                   map[string]any{"inserted": true, "image": imageURL, "image_name": "ramdisk.iso", "write_protected": true},
			}
			if auth == "basic" {
				// no session
			} else {
				uri, _ := got["session_uri"].(string)
				if !strings.HasPrefix(uri, "/redfish/v1/SessionService/Sessions/") || got["session_token"] != true {
					t.Errorf("session: uri %q token %v; want a session from POST Sessions", uri, got["session_token"])
				}
				delete(got, "session_uri")
				delete(got, "session_token")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("what sushy saw (-want +got):\n%s", diff)
			}

			// The machine's own state agrees, and the image was really fetched.
			if lb := m.LastBoot(); lb.Device != BootPxe || !lb.UEFI {
				t.Errorf("the power-on after the override booted %+v, want PXE UEFI", lb)
			}
			v := m.VirtualMedia()
			data, err := os.ReadFile(v.File)
			if err != nil || !bytes.Equal(data, iso) {
				t.Fatalf("inserted image file %q: %d bytes (%v), want the %d bytes served", v.File, len(data), err, len(iso))
			}
			if n := fetches.Load() - before; n < 1 {
				t.Errorf("image fetched %d times", n)
			}

			got = runSushy(t, py, ready.RedfishURL, "admin", "vbmc-pass", auth, auth, "eject")
			delete(got, "session_uri")
			delete(got, "session_token")
			if diff := cmp.Diff(map[string]any{"vmedia": map[string]any{"inserted": false, "image": nil}}, got); diff != "" {
				t.Errorf("after eject (-want +got):\n%s", diff)
			}
			if _, err := os.Stat(v.File); !os.IsNotExist(err) {
				t.Errorf("image file %s still there after eject: %v", v.File, err)
			}

			got = runSushy(t, py, ready.RedfishURL, "admin", "wrong-pass", auth, auth, "denied")
			if got["access_error"] != float64(401) {
				t.Errorf("wrong password: sushy saw %v, want an AccessError with status 401", got)
			}
		})
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
