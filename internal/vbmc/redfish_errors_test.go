package vbmc

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type rfClient struct {
	t     *testing.T
	base  string
	user  string
	pass  string
	token string
}

func (c *rfClient) do(method, path string, body any, hdr ...string) (int, http.Header, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, _ := json.Marshal(b)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("X-Auth-Token", c.token)
	} else if c.user != "" {
		req.SetBasicAuth(c.user, c.pass)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(data) > 0 {
		if err := json.Unmarshal(data, &out); err != nil {
			c.t.Fatalf("%s %s: body %q is not JSON: %v", method, path, data, err)
		}
	}
	return resp.StatusCode, resp.Header, out
}

func errMessage(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

func TestRedfish_RefusesBadCredentialsAndTokens(t *testing.T) {
	_, ready := startServer(t, "m")
	anon := &rfClient{t: t, base: ready.RedfishURL}
	if st, _, _ := anon.do("GET", "/redfish/v1/", nil); st != 200 {
		t.Errorf("service root without credentials: %d, want 200", st)
	}
	for _, c := range []*rfClient{
		anon,
		{t: t, base: ready.RedfishURL, user: "admin", pass: "wrong"},
		{t: t, base: ready.RedfishURL, user: "root", pass: "vbmc-pass"},
		{t: t, base: ready.RedfishURL, token: "not-a-token"},
	} {
		st, hdr, body := c.do("GET", "/redfish/v1/Systems/m", nil)
		if st != 401 || errMessage(body) == "" {
			t.Errorf("user %q token %q: %d %v, want 401 with a Redfish error", c.user, c.token, st, body)
		}
		if c.token == "" && hdr.Get("WWW-Authenticate") == "" {
			t.Errorf("401 without WWW-Authenticate")
		}
	}
	if st, hdr, _ := anon.do("POST", "/redfish/v1/SessionService/Sessions", map[string]string{"UserName": "admin", "Password": "nope"}); st != 401 || hdr.Get("X-Auth-Token") != "" {
		t.Errorf("session with a wrong password: %d, token %q", st, hdr.Get("X-Auth-Token"))
	}

	st, hdr, _ := anon.do("POST", "/redfish/v1/SessionService/Sessions", map[string]string{"UserName": "admin", "Password": "vbmc-pass"})
	if st != 201 || hdr.Get("X-Auth-Token") == "" || !strings.HasPrefix(hdr.Get("Location"), "/redfish/v1/SessionService/Sessions/") {
		t.Fatalf("create session: %d %v", st, hdr)
	}
	sess := &rfClient{t: t, base: ready.RedfishURL, token: hdr.Get("X-Auth-Token")}
	if st, _, _ := sess.do("GET", "/redfish/v1/Systems/m", nil); st != 200 {
		t.Fatalf("GET with the session token: %d", st)
	}
	if st, _, _ := sess.do("DELETE", hdr.Get("Location"), nil); st != 204 {
		t.Fatalf("DELETE session: %d", st)
	}
	if st, _, _ := sess.do("GET", "/redfish/v1/Systems/m", nil); st != 401 {
		t.Fatalf("GET with a deleted session's token: %d, want 401", st)
	}
}

func TestRedfish_BadRequestsChangeNothing(t *testing.T) {
	srv, ready := startServer(t, "m")
	m := srv.Machine("m")
	c := &rfClient{t: t, base: ready.RedfishURL, user: "admin", pass: "vbmc-pass"}
	want := m.Boot()
	cases := []struct {
		name, method, path string
		body               any
		hdr                []string
		status             int
	}{
		{"unknown system", "GET", "/redfish/v1/Systems/nope", nil, nil, 404},
		{"boot target not allowed", "PATCH", "/redfish/v1/Systems/m", map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Floppy"}}, nil, 400},
		{"boot enabled not allowed", "PATCH", "/redfish/v1/Systems/m", map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Sometimes"}}, nil, 400},
		{"read-only property", "PATCH", "/redfish/v1/Systems/m", map[string]any{"PowerState": "On"}, nil, 400},
		{"malformed JSON", "PATCH", "/redfish/v1/Systems/m", `{"Boot":`, nil, 400},
		{"stale If-Match", "PATCH", "/redfish/v1/Systems/m", map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Pxe"}}, []string{"If-Match", `W/"0"`}, 412},
		{"body too large", "PATCH", "/redfish/v1/Systems/m", `{"Boot":{"BootSourceOverrideTarget":"` + strings.Repeat("x", maxRequestBody) + `"}}`, nil, 413},
		{"reset type missing", "POST", "/redfish/v1/Systems/m/Actions/ComputerSystem.Reset", map[string]any{}, nil, 400},
		{"reset type unknown", "POST", "/redfish/v1/Systems/m/Actions/ComputerSystem.Reset", map[string]any{"ResetType": "Explode"}, nil, 400},
		{"nmi while off", "POST", "/redfish/v1/Systems/m/Actions/ComputerSystem.Reset", map[string]any{"ResetType": "Nmi"}, nil, 409},
		{"insert without image", "POST", "/redfish/v1/Managers/m/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia", map[string]any{}, nil, 400},
		{"insert file URL", "POST", "/redfish/v1/Managers/m/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": "file:///etc/passwd"}, nil, 400},
		{"insert unreachable", "POST", "/redfish/v1/Managers/m/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": "http://127.0.0.1:1/x.iso"}, nil, 400},
		{"unknown virtual media", "GET", "/redfish/v1/Managers/m/VirtualMedia/Floppy", nil, nil, 404},
	}
	for _, tc := range cases {
		st, _, body := c.do(tc.method, tc.path, tc.body, tc.hdr...)
		if st != tc.status || errMessage(body) == "" {
			t.Errorf("%s: %d %v, want %d with a Redfish error", tc.name, st, body, tc.status)
		}
	}
	if got := m.Boot(); got != want {
		t.Errorf("boot override changed by refused requests: %+v, want %+v", got, want)
	}
	if on, _ := m.PowerState(t.Context()); on {
		t.Errorf("machine powered on by refused requests")
	}
	if v := m.VirtualMedia(); v.Inserted {
		t.Errorf("virtual media inserted by refused requests: %+v", v)
	}

	// The current ETag is accepted, weak or strong.
	_, hdr, _ := c.do("GET", "/redfish/v1/Systems/m", nil)
	etag := hdr.Get("ETag")
	if st, _, _ := c.do("PATCH", "/redfish/v1/Systems/m", map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Cd"}}, "If-Match", strings.TrimPrefix(etag, "W/")); st != 204 {
		t.Fatalf("PATCH with the current ETag %s: %d", etag, st)
	}
	if got := m.Boot(); got.Target != BootCd || got.Enabled != BootOnce {
		t.Errorf("boot after PATCH Target=Cd alone: %+v, want Cd once", got)
	}
}

func TestRedfish_InsertMediaIsBoundedAndExclusive(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 2<<20)
	images := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/small.iso":
			w.Write([]byte("small image"))
		case "/big.iso":
			w.Write(big) // over max_image_mb=1
		case "/chunked.iso":
			w.(http.Flusher).Flush() // no Content-Length: the limit applies while copying
			w.Write(big)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(images.Close)
	dir := t.TempDir()
	srv, ready := startConfig(t, Config{
		Username: "admin", Password: "vbmc-pass", Redfish: RedfishConfig{Listen: "127.0.0.1:0"},
		StateDir: dir, MaxImageMB: 1,
		Machines: []MachineConfig{{Name: "m", Backend: BackendFake, CPUs: 1, MemoryMB: 1024, MACs: []string{"52:54:00:00:00:aa"}}},
	})
	c := &rfClient{t: t, base: ready.RedfishURL, user: "admin", pass: "vbmc-pass"}
	insert := "/redfish/v1/Managers/m/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia"
	for _, p := range []string{"/big.iso", "/chunked.iso", "/missing.iso"} {
		if st, _, body := c.do("POST", insert, map[string]string{"Image": images.URL + p}); st != 400 {
			t.Errorf("insert %s: %d %v, want 400", p, st, body)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "m", "*")); len(files) != 0 {
		t.Errorf("refused inserts left files: %v", files)
	}
	if st, _, _ := c.do("POST", insert, map[string]string{"Image": images.URL + "/small.iso"}); st != 204 {
		t.Fatalf("insert small image: %d", st)
	}
	if st, _, _ := c.do("POST", insert, map[string]string{"Image": images.URL + "/small.iso"}); st != 409 {
		t.Errorf("insert over an inserted image: %d, want 409", st)
	}
	v := srv.Machine("m").VirtualMedia()
	if data, err := os.ReadFile(v.File); err != nil || string(data) != "small image" {
		t.Errorf("image file: %q %v", data, err)
	}
	if st, _, _ := c.do("POST", "/redfish/v1/Managers/m/VirtualMedia/Cd/Actions/VirtualMedia.EjectMedia", map[string]any{}); st != 204 {
		t.Fatalf("eject: %d", st)
	}
	if st, _, _ := c.do("POST", "/redfish/v1/Managers/m/VirtualMedia/Cd/Actions/VirtualMedia.EjectMedia", nil); st != 204 {
		t.Errorf("eject of an empty drive: %d, want 204", st)
	}
	if _, err := os.Stat(v.File); !os.IsNotExist(err) {
		t.Errorf("image file after eject: %v", err)
	}
}
