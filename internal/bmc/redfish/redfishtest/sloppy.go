// Package redfishtest is a Redfish service for tests of ferro's Redfish
// client and drivers that misbehaves like real BMCs do. It serves
// DMTF-mockup-shaped JSON from testdata/sloppy; ferro-vbmc (a BMC that
// behaves) is the other end tests use over real HTTP.
package redfishtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Sloppy serves the DMTF-mockup-shaped JSON in testdata/sloppy with the
// faults real BMCs have, each switchable: counts as strings (in the files),
// no Memory collection, a one-time override kept as Continuous, a reset
// that shows in PowerState only after some reads, 500s before it answers,
// and sessions it forgets.
type Sloppy struct {
	t   testing.TB
	srv *httptest.Server

	// URL is the service's base URL.
	URL string

	mu sync.Mutex
	// Faults, set with Set.
	Fail500          int  // answer the next n requests with 500
	KeepContinuous   bool // store a one-time override as Continuous
	PowerLag         int  // PowerState changes only after this many System reads
	NeverConfirm     bool // PowerState never changes after a reset
	ForgetSessions   bool // drop every session once, before the next request
	NoSessionService bool
	// State, read with Get.
	Power      string
	Boot       map[string]any
	CDImage    string
	CDInserted bool
	Logins     int
	Requests   []string
	Resets     []string
	Patches    []map[string]any
	BasicSeen  bool
	pendingOn  string
	lagLeft    int
	sessions   map[string]bool
	nextToken  int
}

// Credentials and paths of the service.
const (
	User       = "root"
	Password   = "sloppy-pass-Zq7"
	SystemPath = "/redfish/v1/Systems/437XR1138R2"
	SystemID   = "437XR1138R2"
	CDPath     = "/redfish/v1/Managers/BMC/VirtualMedia/CD1"
)

// New starts the service; it stops when the test ends. The System is off.
func New(t testing.TB) *Sloppy {
	b := &Sloppy{t: t, Power: "Off", sessions: map[string]bool{},
		Boot: map[string]any{"BootSourceOverrideEnabled": "Disabled", "BootSourceOverrideTarget": "None", "BootSourceOverrideMode": "UEFI"}}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	b.URL = b.srv.URL
	t.Cleanup(b.srv.Close)
	return b
}

// DriverInfo is a node's driver_info for this service.
func (b *Sloppy) DriverInfo() map[string]any {
	return map[string]any{"redfish_address": b.URL, "redfish_username": User, "redfish_password": Password}
}

var sloppyFiles = map[string]string{
	"/redfish/v1":                                   "root.json",
	"/redfish/v1/Systems":                           "systems.json",
	SystemPath:                                      "system.json",
	SystemPath + "/Processors":                      "processors.json",
	SystemPath + "/Processors/CPU1":                 "cpu1.json",
	SystemPath + "/Processors/CPU2":                 "cpu2.json",
	SystemPath + "/EthernetInterfaces":              "nics.json",
	SystemPath + "/EthernetInterfaces/12446A3B0411": "nic1.json",
	SystemPath + "/EthernetInterfaces/12446A3B8890": "nic2.json",
	SystemPath + "/SimpleStorage":                   "simplestorages.json",
	SystemPath + "/SimpleStorage/1":                 "simplestorage.json",
	"/redfish/v1/Managers":                          "managers.json",
	"/redfish/v1/Managers/BMC":                      "manager.json",
	"/redfish/v1/Managers/BMC/VirtualMedia":         "vmedias.json",
	"/redfish/v1/Managers/BMC/VirtualMedia/Floppy1": "floppy.json",
	"/redfish/v1/SessionService":                    "sessionservice.json",
}

func (b *Sloppy) file(name string) map[string]any {
	_, me, _, _ := runtime.Caller(0)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(me), "testdata", "sloppy", name))
	if err != nil {
		b.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		b.t.Fatalf("%s: %v", name, err)
	}
	return m
}

func (b *Sloppy) serve(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := strings.TrimRight(r.URL.Path, "/")
	b.Requests = append(b.Requests, r.Method+" "+p)
	if b.Fail500 > 0 {
		b.Fail500--
		http.Error(w, `{"error":{"code":"Base.1.0.InternalError","message":"try again"}}`, http.StatusInternalServerError)
		return
	}
	if b.ForgetSessions {
		b.ForgetSessions = false
		b.sessions = map[string]bool{}
	}
	if p != "/redfish/v1" {
		if !b.authorized(r) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"code":"Base.1.0.NoValidSession","message":"no valid session"}}`))
			return
		}
	}
	switch {
	case r.Method == http.MethodPost && p == "/redfish/v1/SessionService/Sessions":
		if b.NoSessionService {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		var body struct{ UserName, Password string }
		json.NewDecoder(r.Body).Decode(&body)
		if body.UserName != User || body.Password != Password {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		b.nextToken++
		b.Logins++
		tok := "tok" + strings.Repeat("x", b.nextToken)
		b.sessions[tok] = true
		w.Header().Set("X-Auth-Token", tok)
		w.Header().Set("Location", "/redfish/v1/SessionService/Sessions/"+tok)
		b.json(w, http.StatusCreated, map[string]any{"Id": tok})
	case r.Method == http.MethodDelete && strings.HasPrefix(p, "/redfish/v1/SessionService/Sessions/"):
		delete(b.sessions, strings.TrimPrefix(p, "/redfish/v1/SessionService/Sessions/"))
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodGet && p == SystemPath:
		sys := b.file("system.json")
		if b.lagLeft > 0 {
			b.lagLeft--
		} else if b.pendingOn != "" {
			b.Power, b.pendingOn = b.pendingOn, ""
		}
		sys["PowerState"] = b.Power
		sys["Boot"] = mergeBoot(sys["Boot"].(map[string]any), b.Boot)
		b.json(w, http.StatusOK, sys)
	case r.Method == http.MethodGet && p == SystemPath+"/Memory":
		http.Error(w, `{"error":{"message":"resource not found"}}`, http.StatusNotFound)
	case r.Method == http.MethodPatch && p == SystemPath:
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		b.Patches = append(b.Patches, body)
		boot, _ := body["Boot"].(map[string]any)
		for k, v := range boot {
			b.Boot[k] = v
		}
		if b.KeepContinuous && b.Boot["BootSourceOverrideEnabled"] == "Once" {
			b.Boot["BootSourceOverrideEnabled"] = "Continuous"
		}
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && p == SystemPath+"/Actions/ComputerSystem.Reset":
		var body struct{ ResetType string }
		json.NewDecoder(r.Body).Decode(&body)
		b.Resets = append(b.Resets, body.ResetType)
		target := map[string]string{"On": "On", "ForceOn": "On", "ForceOff": "Off", "GracefulShutdown": "Off", "ForceRestart": "On", "GracefulRestart": "On"}[body.ResetType]
		if target == "" {
			http.Error(w, "bad reset type", http.StatusBadRequest)
			return
		}
		if b.NeverConfirm {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		b.pendingOn, b.lagLeft = target, b.PowerLag
		if b.PowerLag == 0 {
			b.Power, b.pendingOn = target, ""
		}
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodGet && p == CDPath:
		var img any
		if b.CDImage != "" {
			img = b.CDImage
		}
		b.json(w, http.StatusOK, map[string]any{
			"@odata.type": "#VirtualMedia.v1_3_0.VirtualMedia", "@odata.id": CDPath, "Id": "CD1", "Name": "Virtual CD",
			"MediaTypes": []string{"CD", "DVD"}, "Image": img, "Inserted": b.CDInserted, "WriteProtected": true,
			"Actions": map[string]any{
				"#VirtualMedia.InsertMedia": map[string]any{"target": CDPath + "/Actions/VirtualMedia.InsertMedia"},
				"#VirtualMedia.EjectMedia":  map[string]any{"target": CDPath + "/Actions/VirtualMedia.EjectMedia"},
			}})
	case r.Method == http.MethodPost && p == CDPath+"/Actions/VirtualMedia.InsertMedia":
		if b.CDImage != "" {
			http.Error(w, `{"error":{"message":"media already inserted"}}`, http.StatusConflict)
			return
		}
		var body struct{ Image string }
		json.NewDecoder(r.Body).Decode(&body)
		b.CDImage, b.CDInserted = body.Image, true
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && p == CDPath+"/Actions/VirtualMedia.EjectMedia":
		b.CDImage, b.CDInserted = "", false
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodGet && sloppyFiles[p] != "":
		b.json(w, http.StatusOK, b.file(sloppyFiles[p]))
	default:
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
	}
}

func (b *Sloppy) authorized(r *http.Request) bool {
	if b.sessions[r.Header.Get("X-Auth-Token")] {
		return true
	}
	if u, p, ok := r.BasicAuth(); ok {
		b.BasicSeen = true
		return u == User && p == Password
	}
	return r.Method == http.MethodPost && r.URL.Path == "/redfish/v1/SessionService/Sessions"
}

func mergeBoot(static, state map[string]any) map[string]any {
	for k, v := range state {
		static[k] = v
	}
	return static
}

func (b *Sloppy) json(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// Set changes faults or state under the service's lock.
func (b *Sloppy) Set(fn func(b *Sloppy)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fn(b)
}

// Get reads state under the service's lock.
func (b *Sloppy) Get(fn func(b *Sloppy)) { b.Set(fn) }
