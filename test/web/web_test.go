// Package web_test is the observability lane: what an operator sees of a
// real `ferro serve` with fake-hardware nodes whose inspections take
// ferro's managed PXE path and whose reports a stand-in agent posts
// (test/inspection's).
//
// The browser tests drive Debian's headless Chromium with chromedp: they
// check what the pages show, follow a live inspection on a machine's page
// until it ends, check that a browser without credentials is refused under
// http_basic, and save a screenshot of every page into
// $FERRO_WEB_SCREENSHOTS (default: a directory under the test's temporary
// directory, named in the log; .ci/run sets artifacts/web-screenshots).
// The metrics test scrapes /metrics while inspections run, BMC calls going
// to ferro-vbmc over Redfish and IPMI, and has promtool check the text.
package web_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/test/inspection"
)

// lab is one ferro serve with managed PXE inspections on fake hardware.
type lab struct {
	t        *testing.T
	srv      *ferrotest.Server
	tftpRoot string
}

func startLab(t *testing.T, env ...string) *lab {
	t.Helper()
	dir := t.TempDir()
	images := filepath.Join(dir, "images")
	l := &lab{t: t, tftpRoot: filepath.Join(dir, "tftpboot")}
	for _, d := range []string{images, l.tftpRoot, filepath.Join(dir, "httpboot")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"ipa.kernel", "ipa.initramfs"} {
		if err := os.WriteFile(filepath.Join(images, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := []string{
		"FERRO_INSPECTOR_LISTEN_PORT=" + strconv.Itoa(ferrotest.FreePort(t)),
		"FERRO_INSPECTOR_ALLOW_LOOPBACK_CALLBACK=true",
		"FERRO_CONDUCTOR_FILE_URL_ALLOWED_PATHS=" + images,
		"FERRO_PXE_TFTP_ROOT=" + l.tftpRoot,
		"FERRO_DEPLOY_HTTP_ROOT=" + filepath.Join(dir, "httpboot"),
		"FERRO_DEPLOY_HTTP_URL=http://192.0.2.10:8080",
		"FERRO_CONDUCTOR_DEPLOY_KERNEL=file://" + filepath.Join(images, "ipa.kernel"),
		"FERRO_CONDUCTOR_DEPLOY_RAMDISK=file://" + filepath.Join(images, "ipa.initramfs"),
		// A page of two machines, so that paging shows with three.
		"FERRO_WEB_PAGE_SIZE=2",
	}
	l.srv = ferrotest.Start(t, ferrotest.WithEnv(append(base, env...)...))
	return l
}

type node struct {
	uuid, name string
	macs       []string
}

func (l *lab) enroll(name, resourceClass string, macs ...string) *node {
	l.t.Helper()
	return l.enrollWith(map[string]any{"name": name, "resource_class": resourceClass}, macs...)
}

// enrollWith creates a fake-hardware node inspected on the managed PXE
// path, with the fields given on top (a power interface and its
// driver_info, …), and its ports.
func (l *lab) enrollWith(fields map[string]any, macs ...string) *node {
	l.t.Helper()
	var created struct {
		UUID string `json:"uuid"`
	}
	body := map[string]any{"driver": "fake-hardware", "boot_interface": "pxe", "network_interface": "noop", "inspect_interface": "inspector"}
	for k, v := range fields {
		body[k] = v
	}
	name, _ := fields["name"].(string)
	ferrotest.Must(l.t, l.srv.URL, http.MethodPost, "/v1/nodes", body, &created)
	for _, mac := range macs {
		ferrotest.Must(l.t, l.srv.URL, http.MethodPost, "/v1/ports", map[string]any{"node_uuid": created.UUID, "address": mac, "pxe_enabled": true}, nil)
	}
	return &node{uuid: created.UUID, name: name, macs: macs}
}

// enrollAs creates a node with basic credentials (auth on).
func (l *lab) enrollAs(user, password, name string) {
	l.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, l.srv.URL+"/v1/nodes", strings.NewReader(`{"name":"`+name+`","driver":"fake-hardware"}`))
	req.SetBasicAuth(user, password)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "latest")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		l.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		l.t.Fatalf("create node %s: %s", name, resp.Status)
	}
}

func (l *lab) provision(n *node, target string) {
	l.t.Helper()
	ferrotest.Must(l.t, l.srv.URL, http.MethodPut, "/v1/nodes/"+n.uuid+"/states/provision", map[string]any{"target": target}, nil)
}

func (l *lab) waitState(n *node, want string) {
	l.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var got struct {
			ProvisionState string `json:"provision_state"`
			LastError      string `json:"last_error"`
		}
		ferrotest.Must(l.t, l.srv.URL, http.MethodGet, "/v1/nodes/"+n.uuid, nil, &got)
		if got.ProvisionState == want {
			return
		}
		if got.ProvisionState == "inspect failed" || time.Now().After(deadline) {
			l.t.Fatalf("node %s is %q, want %q; last_error %q", n.name, got.ProvisionState, want, got.LastError)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startInspection takes the node to inspect wait and returns the boot
// configuration its PXE ROM would read.
func (l *lab) startInspection(n *node) *inspection.BootConfig {
	l.t.Helper()
	l.provision(n, "inspect")
	l.waitState(n, "inspect wait")
	bc, err := inspection.ReadBootConfig("pxe", l.tftpRoot, n.macs[0])
	if err != nil {
		l.t.Fatal(err)
	}
	return bc
}

func (l *lab) post(bc *inspection.BootConfig, report map[string]any) {
	l.t.Helper()
	code, body, err := inspection.Post(context.Background(), http.DefaultClient, bc.Callback, bc.Token, report)
	if err != nil || code >= 300 {
		l.t.Fatalf("post the report: %d %s %v", code, body, err)
	}
}

// hw is what a report says about the machine, for report().
type hw struct {
	disks   []disk
	switch_ string
	port    string
	vlans   []int
}

type disk struct {
	name, serial string
	size         int64
}

// report is the stock agent's example report with these NICs, disks and
// the first NIC's LLDP neighbour.
func report(t *testing.T, macs []string, h hw) map[string]any {
	t.Helper()
	r, err := inspection.Report(macs...)
	if err != nil {
		t.Fatal(err)
	}
	inv := r["inventory"].(map[string]any)
	var disks []any
	for _, d := range h.disks {
		disks = append(disks, map[string]any{"name": d.name, "size": d.size, "serial": d.serial, "model": "QEMU HARDDISK", "rotational": true})
	}
	inv["disks"] = disks
	r["root_disk"] = disks[0]
	tlvs := []any{
		[]any{1, "04" + "52540000aa01"},                     // chassis ID: a MAC
		[]any{2, "05" + hex.EncodeToString([]byte(h.port))}, // port ID: interface name
		[]any{5, hex.EncodeToString([]byte(h.switch_))},     // system name
		[]any{127, "0080c201" + hex4(h.vlans[0])},           // port VLAN ID
	}
	for _, v := range h.vlans {
		name := "vlan" + strconv.Itoa(v)
		tlvs = append(tlvs, []any{127, "0080c203" + hex4(v) + hex.EncodeToString([]byte{byte(len(name))}) + hex.EncodeToString([]byte(name))})
	}
	iface0 := inv["interfaces"].([]any)[0].(map[string]any)
	r["lldp_raw"] = map[string]any{iface0["name"].(string): tlvs}
	return r
}

// inLastHour reports whether s, as the view writes times, is within the last hour.
func inLastHour(s string) bool {
	at, err := time.Parse("2006-01-02 15:04:05Z", s)
	return err == nil && time.Since(at) < time.Hour && time.Since(at) > -time.Minute
}

func hex4(v int) string { return hex.EncodeToString([]byte{byte(v >> 8), byte(v)}) }

// browser starts headless Chromium with the flags that work on a shared,
// sandbox-less machine, and a fresh profile.
func browser(t *testing.T, headers map[string]any) context.Context {
	t.Helper()
	bin := ferrotest.RequireTool(t, "chromium")
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancel)
	// A generous bound for everything the browser does in one test.
	ctx, cancelTimeout := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(cancelTimeout)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if headers != nil {
		if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers(headers)}); err != nil {
			t.Fatal(err)
		}
	}
	return ctx
}

// screenshots is where the pages' pictures go.
func screenshots(t *testing.T) string {
	dir := os.Getenv("FERRO_WEB_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

func shoot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// text returns the text of the first element sel matches.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

func TestWeb_PagesAndALiveInspection(t *testing.T) {
	l := startLab(t)
	shots := screenshots(t)
	a := l.enroll("web-a", "baremetal-large", "52:54:00:00:0a:01", "52:54:00:00:0a:02")
	b := l.enroll("web-b", "baremetal-small", "52:54:00:00:0b:01")
	c := l.enroll("web-c", "baremetal-small", "52:54:00:00:0c:01")
	first := hw{disks: []disk{{"/dev/sda", "ROOT1", 10 << 30}, {"/dev/sdb", "DATA2", 20 << 30}}, switch_: "lab-switch", port: "swp3", vlans: []int{100, 200}}
	for _, n := range []*node{a, b} {
		l.provision(n, "manage")
		l.waitState(n, "manageable")
		bc := l.startInspection(n)
		l.post(bc, report(t, n.macs, first))
		l.waitState(n, "manageable")
	}

	ctx := browser(t, nil)
	base := l.srv.URL + "/ui/"

	// The list: every machine with its state, power, resource class and
	// last inspection; two to a page.
	if err := chromedp.Do(ctx, chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS("#machines"))); err != nil {
		t.Fatal(err)
	}
	rows := text(t, ctx, "#machines tbody")
	mustContain(t, "machine list", rows, "web-a", "web-b", "manageable", "baremetal-large", "power off")
	if strings.Contains(rows, "web-c") {
		t.Errorf("the first page of two holds a third machine:\n%s", rows)
	}
	if got := text(t, ctx, `#machines tr[data-node="`+a.uuid+`"] .inspected`); !inLastHour(got) {
		t.Errorf("web-a's last inspection = %q, want a time within the last hour", got)
	}
	shoot(t, ctx, shots, "list")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`a[rel="next"]`)), chromedp.WaitVisible(chromedp.CSS(`tr[data-node="`+c.uuid+`"]`))); err != nil {
		t.Fatalf("next page: %v", err)
	}
	mustContain(t, "second page", text(t, ctx, "#machines tbody"), "web-c", "enroll")

	// Search and filters.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"?q=WEB-B"), chromedp.WaitVisible(chromedp.CSS("#machines"))); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "#machines tbody"); !strings.Contains(got, "web-b") || strings.Contains(got, "web-a") {
		t.Errorf("search WEB-B shows:\n%s", got)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"?state=enroll"), chromedp.WaitVisible(chromedp.CSS("#machines"))); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "#machines tbody"); !strings.Contains(got, "web-c") || strings.Contains(got, "web-a") {
		t.Errorf("state filter enroll shows:\n%s", got)
	}
	// The list updates itself: a node put into maintenance shows so
	// without a reload.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"?resource_class=baremetal-small"), chromedp.WaitVisible(chromedp.CSS("#machines"))); err != nil {
		t.Fatal(err)
	}
	ferrotest.Must(t, l.srv.URL, http.MethodPut, "/v1/nodes/"+b.uuid+"/maintenance", map[string]any{"reason": "disk noise"}, nil)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`tr[data-node="`+b.uuid+`"] .badge.bad`))); err != nil {
		t.Fatalf("the list did not show the maintenance by itself: %v", err)
	}
	ferrotest.Must(t, l.srv.URL, http.MethodDelete, "/v1/nodes/"+b.uuid+"/maintenance", nil, nil)

	// A re-inspection of web-a followed live on its page: one disk pulled,
	// the NIC moved to another switch port.
	bc := l.startInspection(a)
	machine := base + "machines/" + a.uuid
	if err := chromedp.Do(ctx, chromedp.Navigate(machine), chromedp.WaitVisible(chromedp.CSS(`#live[data-live="true"]`))); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "live section in inspect wait", text(t, ctx, "#live"), "inspect wait", "powered on")
	shoot(t, ctx, shots, "machine-inspecting")
	second := first
	second.disks = first.disks[:1]
	second.port = "swp7"
	l.post(bc, report(t, a.macs, second))
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`body[data-settled="true"]`))); err != nil {
		t.Fatalf("the machine page did not follow the inspection to its end: %v", err)
	}
	live := text(t, ctx, "#live")
	mustContain(t, "machine page after the inspection", live, "manageable", "report received", "processed", "powered off", "finished")
	timeline := text(t, ctx, "#timeline")
	if !strings.Contains(timeline, " ms") && !strings.Contains(timeline, " s") {
		t.Errorf("the timeline shows no phase durations:\n%s", timeline)
	}
	// The inventory, for people.
	mustContain(t, "CPUs", text(t, ctx, "#cpus"), "32 × AMD EPYC 7313 16-Core Processor", "1 socket", "x86_64")
	mustContain(t, "memory", text(t, ctx, "#memory"), "131072 MiB")
	disks := text(t, ctx, "#disks")
	mustContain(t, "disks", disks, "/dev/sda", "10 GiB", "ROOT1", "root disk")
	if strings.Contains(disks, "/dev/sdb") {
		t.Errorf("the pulled disk is still listed:\n%s", disks)
	}
	nics := text(t, ctx, "#nics")
	mustContain(t, "NICs", nics, "52:54:00:00:0a:01", "lab-switch", "swp7", "100 (untagged)", "200", "PXE")
	mustContain(t, "BMC", text(t, ctx, "#bmc"), "198.51.100.121", "3c:fd:fe:11:22:99")
	mustContain(t, "properties", text(t, ctx, "#properties"), "cpus", "32", "memory_mb", "131072")
	// What changed: exactly the pulled disk and the moved NIC.
	changes := text(t, ctx, "#changes")
	mustContain(t, "changes", changes, "disk", "DATA2", "removed", "/dev/sdb, 20 GiB", "nic", "52:54:00:00:0a:01", "switch_port", "lab-switch port swp3", "lab-switch port swp7")
	changeRows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#changes tbody tr").length`))
	if err != nil {
		t.Fatal(err)
	}
	if changeRows != 2 {
		t.Errorf("%d changes shown, want 2:\n%s", changeRows, changes)
	}
	mustContain(t, "history", text(t, ctx, "#history"), "hardware changes", "2 hardware changes: disk DATA2 removed")
	shoot(t, ctx, shots, "machine")
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS("#changes"))); err != nil {
		t.Fatal(err)
	}
	changesPNG, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#changes")))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shots, "changes.png"), changesPNG, 0o644); err != nil {
		t.Fatal(err)
	}

	// The same changes through ferro's API.
	var api struct {
		PreviousInspection *time.Time `json:"previous_inspection"`
		Changes            []struct {
			Component, ID, Change, Field, Old, New string
		} `json:"changes"`
	}
	ferrotest.Must(t, l.srv.URL, http.MethodGet, "/ferro/v1/nodes/web-a/hardware/changes", nil, &api)
	var got []string
	for _, ch := range api.Changes {
		got = append(got, ch.Component+" "+ch.ID+" "+ch.Change+" "+ch.Field+" "+ch.Old+" → "+ch.New)
	}
	want := []string{"disk DATA2 removed  /dev/sdb, 20 GiB, QEMU HARDDISK, serial DATA2 → ", "nic 52:54:00:00:0a:01 changed switch_port lab-switch port swp3 → lab-switch port swp7"}
	if !slices.Equal(got, want) || api.PreviousInspection == nil {
		t.Errorf("API changes = %q (previous %v), want %q", got, api.PreviousInspection, want)
	}

	// The switch view: which machine's NIC is on which port.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"switches"), chromedp.WaitVisible(chromedp.CSS(".switch"))); err != nil {
		t.Fatal(err)
	}
	sw := text(t, ctx, "main")
	mustContain(t, "switch view", sw, "lab-switch", "swp7", "web-a", "swp3", "web-b", "52:54:00:00:0b:01", "port record says swp3")
	shoot(t, ctx, shots, "switches")

	// A node never inspected has a page too.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"machines/web-c"), chromedp.WaitVisible(chromedp.CSS("#live"))); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "uninspected machine", text(t, ctx, "main"), "enroll", "No inventory stored")
}

// visit loads url and returns the status and WWW-Authenticate challenge of
// its answer, and whether the page loaded: Chromium stops a load that a
// 401 with a Basic challenge answers (it would ask the user), so a refused
// load is an error here.
func visit(t *testing.T, ctx context.Context, url string) (status int64, challenge string, loaded bool) {
	t.Helper()
	err := chromedp.Listen(ctx, func(ev any) {
		if r, ok := ev.(*network.EventResponseReceived); ok && r.Response.URL == url {
			status = r.Response.Status
			for k, v := range r.Response.Headers {
				if strings.EqualFold(k, "WWW-Authenticate") {
					challenge, _ = v.(string)
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("body")))
	if err != nil && !strings.Contains(err.Error(), "ERR_INVALID_AUTH_CREDENTIALS") {
		t.Fatalf("load %s: %v", url, err)
	}
	if err == nil {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#machines").length`))
		if err != nil {
			t.Fatal(err)
		}
		loaded = n > 0
	}
	return status, challenge, loaded
}

func TestWeb_RefusesABrowserWithoutCredentials(t *testing.T) {
	users := ferrotest.Htpasswd(t, nil, "operator", "s3cret")
	l := startLab(t, "FERRO_DEFAULT_AUTH_STRATEGY=http_basic", "FERRO_DEFAULT_HTTP_BASIC_AUTH_USER_FILE="+users)
	l.enrollAs("operator", "s3cret", "web-secret")
	shots := screenshots(t)
	url := l.srv.URL + "/ui/"

	ctx := browser(t, nil)
	status, challenge, loaded := visit(t, ctx, url)
	if status != http.StatusUnauthorized || !strings.HasPrefix(challenge, "Basic") || loaded {
		t.Errorf("an unauthenticated browser got %d with challenge %q (list shown: %v), want 401, Basic, no list", status, challenge, loaded)
	}
	// A wrong password is refused as well.
	wrong := browser(t, map[string]any{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("operator:nope"))})
	if status, _, loaded := visit(t, wrong, url); status != http.StatusUnauthorized || loaded {
		t.Errorf("a wrong password got %d (list shown: %v), want 401", status, loaded)
	}
	// The user's credentials show the list.
	authed := browser(t, map[string]any{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("operator:s3cret"))})
	if status, _, loaded := visit(t, authed, url); status != http.StatusOK || !loaded {
		t.Fatalf("an authenticated browser got %d (list shown: %v), want 200 and the list", status, loaded)
	}
	mustContain(t, "list with credentials", text(t, authed, "#machines"), "web-secret")
	shoot(t, authed, shots, "list-authenticated")
	// The metrics and ferro's API are behind the same authentication.
	for _, path := range []string{"/metrics", "/ferro/v1/nodes/web-secret/hardware/changes"} {
		if code, _ := ferrotest.Call(t, l.srv.URL, http.MethodGet, path, nil); code != http.StatusUnauthorized {
			t.Errorf("GET %s without credentials = %d, want 401", path, code)
		}
	}
}
