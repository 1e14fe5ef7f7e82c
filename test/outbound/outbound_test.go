// Package outbound replays, against a real `ferro serve`, what a node's
// owner or a hostile BMC can make ferro fetch or follow: files named in
// driver_info (a device, a FIFO, a directory), links, redirects and session
// Locations that point away from the BMC (at ferro's own API among others),
// BMCs that echo the credentials they received, and answers that never end.
// Each test holds one guarantee of docs/security.md ("What ferro fetches and
// follows").
package outbound_test

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/bmc/redfish/redfishtest"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// password is every test node's BMC password: long and unlikely, so that
// AssertNoSecrets finds it wherever it leaks.
const password = "Out-9vQ3-bmc-pw"

// serve starts ferro with fast, few Redfish retries and a one-connection
// cache (so that a second BMC login logs the first out).
func serve(t *testing.T, env ...string) *ferrotest.Server {
	t.Helper()
	env = append([]string{"FERRO_REDFISH_CONNECTION_ATTEMPTS=2", "FERRO_REDFISH_CONNECTION_RETRY_INTERVAL=0",
		"FERRO_REDFISH_CONNECTION_CACHE_SIZE=1"}, env...)
	return ferrotest.Start(t, ferrotest.WithEnv(env...))
}

type node struct {
	UUID           string         `json:"uuid"`
	ProvisionState string         `json:"provision_state"`
	LastError      *string        `json:"last_error"`
	Reservation    *string        `json:"reservation"`
	DriverInfo     map[string]any `json:"driver_info"`
}

func create(t *testing.T, s *ferrotest.Server, driver string, info map[string]any) node {
	t.Helper()
	var n node
	ferrotest.Must(t, s.URL, "POST", "/v1/nodes", map[string]any{"driver": driver, "driver_info": info}, &n)
	return n
}

func get(t *testing.T, s *ferrotest.Server, uuid string) node {
	t.Helper()
	var n node
	ferrotest.Must(t, s.URL, "GET", "/v1/nodes/"+uuid, nil, &n)
	return n
}

// manageFails asks for manage and waits until the background power read
// has failed it back to enroll, returning its last_error.
func manageFails(t *testing.T, s *ferrotest.Server, uuid string) string {
	t.Helper()
	if code, b := ferrotest.Call(t, s.URL, "PUT", "/v1/nodes/"+uuid+"/states/provision", map[string]any{"target": "manage"}); code != 202 {
		t.Fatalf("manage: %d %s", code, b)
	}
	n := waitIdle(t, s, uuid)
	if n.ProvisionState != "enroll" || n.LastError == nil {
		t.Fatalf("manage ended in %s with last_error %v, want enroll with an error", n.ProvisionState, n.LastError)
	}
	return *n.LastError
}

// waitIdle waits until the node is neither reserved nor in a transient state.
func waitIdle(t *testing.T, s *ferrotest.Server, uuid string) node {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		n := get(t, s, uuid)
		if n.Reservation == nil && n.ProvisionState != "verifying" && n.ProvisionState != "inspecting" {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s still %s (reserved %v)", uuid, n.ProvisionState, n.Reservation != nil)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func history(t *testing.T, s *ferrotest.Server, uuid string) string {
	t.Helper()
	_, b := ferrotest.Call(t, s.URL, "GET", "/v1/nodes/"+uuid+"/history?detail=true", nil)
	return string(b)
}

func hostPort(raw string) string {
	u, _ := url.Parse(raw)
	return u.Host
}

// rssWatch samples the server's resident memory while a test provokes it,
// and kills the server if it passes limit, so that a ferro that reads a
// device whole fails the test instead of taking the shared machine down.
type rssWatch struct {
	mu     sync.Mutex
	peak   int64
	killed bool
	stop   chan struct{}
	done   chan struct{}
}

func watchRSS(t *testing.T, s *ferrotest.Server, limit int64) *rssWatch {
	w := &rssWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			rss := statusKB(s.Pid(), "VmRSS:") << 10
			w.mu.Lock()
			w.peak = max(w.peak, rss)
			over := rss > limit
			w.mu.Unlock()
			if over {
				w.mu.Lock()
				w.killed = true
				w.mu.Unlock()
				syscall.Kill(s.Pid(), syscall.SIGKILL)
				t.Errorf("ferro's RSS passed %d MiB: killed it", limit>>20)
				return
			}
			select {
			case <-w.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(w.finish)
	return w
}

func (w *rssWatch) finish() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// result stops the watch and returns the peak RSS seen and whether the
// server had to be killed.
func (w *rssWatch) result() (int64, bool) {
	w.finish()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.peak, w.killed
}

func statusKB(pid int, key string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// Item 1 of issue 17. redfish_verify_ca naming a device, a FIFO, a missing
// file or an unreadable one is refused before anything is read, with one
// text for all, so the answer is no oracle on the conductor's files; a
// directory of CA files is read within bounds, skipping what is not a
// regular file (a FIFO among them is never opened). ferro's memory stays
// flat throughout.
func TestCABundle_DevicesFIFOsAndMissingPathsAreNeverRead(t *testing.T) {
	tls, ca := redfishtest.NewTLS(t)
	s := serve(t)
	watch := watchRSS(t, s, 1<<30)

	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	unreadable := filepath.Join(dir, "unreadable.pem")
	os.WriteFile(unreadable, []byte("x"), 0o000)
	refused := []string{"/dev/zero", fifo, filepath.Join(dir, "missing.pem"), "/dev/stdin"}
	if os.Geteuid() != 0 {
		refused = append(refused, unreadable)
	}
	var texts []string
	for _, path := range refused {
		info := tls.DriverInfo()
		info["redfish_verify_ca"] = path
		n := create(t, s, "redfish", info)
		// GET …/validate and manage (whose verify step validates power
		// first, in the background as Ironic's does) both refuse it.
		var v map[string]struct {
			Result *bool  `json:"result"`
			Reason string `json:"reason"`
		}
		ferrotest.Must(t, s.URL, "GET", "/v1/nodes/"+n.UUID+"/validate", nil, &v)
		if v["power"].Result == nil || *v["power"].Result {
			t.Errorf("validate with redfish_verify_ca=%s: power %+v, want refused", path, v["power"])
		}
		lastError := manageFails(t, s, n.UUID)
		for _, text := range []string{v["power"].Reason, lastError} {
			if strings.Contains(text, path) {
				t.Errorf("the refusal names the path: %s", text)
			}
		}
		texts = append(texts, strings.ReplaceAll(v["power"].Reason+" | "+lastError, n.UUID, "NODE"))
	}
	if len(texts) > 0 {
		t.Logf("every refusal: %s", texts[0])
	}
	for i, tx := range texts {
		if tx != texts[0] {
			t.Errorf("refusals differ (an oracle):\n%s: %s\n%s: %s", refused[0], texts[0], refused[i], tx)
		}
	}

	// A directory: the CA among a FIFO, a link to /dev/zero and a
	// subdirectory verifies the BMC.
	cadir := t.TempDir()
	pem, _ := os.ReadFile(ca)
	os.WriteFile(filepath.Join(cadir, "bmc.pem"), pem, 0o644)
	syscall.Mkfifo(filepath.Join(cadir, "a-fifo"), 0o644)
	os.Symlink("/dev/zero", filepath.Join(cadir, "b-zero.pem"))
	os.Mkdir(filepath.Join(cadir, "c-sub"), 0o755)
	info := tls.DriverInfo()
	info["redfish_verify_ca"] = cadir
	n := create(t, s, "redfish", info)
	ferrotest.Must(t, s.URL, "PUT", "/v1/nodes/"+n.UUID+"/states/provision", map[string]any{"target": "manage"}, nil)
	if got := waitIdle(t, s, n.UUID); got.ProvisionState != "manageable" {
		t.Errorf("CA directory: node %s, last_error %v", got.ProvisionState, deref(got.LastError))
	}

	peak, killed := watch.result()
	t.Logf("peak RSS while the paths were tried: %d MiB", peak>>20)
	if killed {
		t.Fatalf("ferro passed 1 GiB of memory and was killed: it read a device or a FIFO")
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Item 3 of issue 17. A hostile BMC's session Location names ferro's own
// API ("@127.0.0.1:<api>/v1/nodes/<victim>", which appended to the BMC's
// address is a user name and another host): when the session is dropped
// (here, the one-connection cache evicting it for another BMC login), ferro
// sends nothing there and the victim node survives.
func TestHostileBMC_SessionLocationCannotReachFerrosAPI(t *testing.T) {
	s := serve(t)
	victim := create(t, s, "fake-hardware", nil)
	h := redfishtest.NewHostile(t)
	h.Set(func(h *redfishtest.Hostile) {
		h.SessionLocation = "@" + hostPort(s.URL) + "/v1/nodes/" + victim.UUID
	})
	a := create(t, s, "redfish", h.DriverInfo(password))
	ferrotest.Must(t, s.URL, "PUT", "/v1/nodes/"+a.UUID+"/states/provision", map[string]any{"target": "manage"}, nil)
	waitIdle(t, s, a.UUID)
	// Another login on the same BMC with other credentials takes the only
	// cache slot: the first session is logged out.
	info := h.DriverInfo(password)
	info["redfish_username"] = "other"
	b := create(t, s, "redfish", info)
	ferrotest.Must(t, s.URL, "PUT", "/v1/nodes/"+b.UUID+"/states/provision", map[string]any{"target": "manage"}, nil)
	waitIdle(t, s, b.UUID)
	// The logout runs in the background: wait for it to be logged, or
	// for the victim to go.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(s.Log(), "redfish session kept without logout") && time.Now().Before(deadline) {
		if code, _ := ferrotest.Call(t, s.URL, "GET", "/v1/nodes/"+victim.UUID, nil); code == 404 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body := ferrotest.Call(t, s.URL, "GET", "/v1/nodes/"+victim.UUID, nil); code != 200 {
		t.Fatalf("the victim node answers %d %s: the BMC's Location reached ferro's API", code, body)
	}
	ferrotest.AssertNoSecrets(t, "ferro serve", s.Log(), password, redfishtest.HostileToken)
}

// Item 3 of issue 17. Links, redirects and action targets that leave the
// BMC: a 307 to another port, a member @odata.id with the userinfo trick,
// a Reset target on another host. The witness where each points receives
// nothing (no request, no token); the operation fails naming the refusal.
func TestHostileBMC_LinksAndRedirectsStayOnTheBMC(t *testing.T) {
	s := serve(t)
	for _, tc := range []struct {
		name     string
		attack   func(h *redfishtest.Hostile, witness string)
		noSystem bool // the node names no System: it is found through the collection
		power    bool // the attack is in the Reset action: power the node on
	}{
		{"307 to another port", func(h *redfishtest.Hostile, w string) { h.Redirect = w + "/steal" }, false, false},
		{"member @odata.id as userinfo", func(h *redfishtest.Hostile, w string) { h.SystemLink = "@" + hostPort(w) + "/steal" }, true, false},
		{"member @odata.id on another host", func(h *redfishtest.Hostile, w string) { h.SystemLink = w + "/steal" }, true, false},
		{"Reset target as userinfo", func(h *redfishtest.Hostile, w string) { h.ResetTarget = "@" + hostPort(w) + "/v1/nodes" }, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := redfishtest.NewHostile(t)
			w := redfishtest.NewWitness(t)
			h.Set(func(h *redfishtest.Hostile) { tc.attack(h, w.URL) })
			info := h.DriverInfo(password)
			if tc.noSystem {
				delete(info, "redfish_system_id")
			}
			n := create(t, s, "redfish", info)
			var lastError string
			if tc.power {
				ferrotest.Must(t, s.URL, "PUT", "/v1/nodes/"+n.UUID+"/states/power", map[string]any{"target": "power on"}, nil)
				lastError = deref(waitIdle(t, s, n.UUID).LastError)
				for deadline := time.Now().Add(60 * time.Second); lastError == "" && time.Now().Before(deadline); {
					time.Sleep(100 * time.Millisecond)
					lastError = deref(get(t, s, n.UUID).LastError)
				}
			} else {
				lastError = manageFails(t, s, n.UUID)
			}
			if hits := w.Hits(); len(hits) > 0 {
				t.Errorf("the witness received %v", hits)
			}
			if !strings.Contains(lastError, "leaves the BMC's origin") {
				t.Errorf("last_error %q does not name the refusal", lastError)
			}
		})
	}
	ferrotest.AssertNoSecrets(t, "ferro serve", s.Log(), password, redfishtest.HostileToken)
}

// Item 8 of issue 17. A BMC that quotes the credentials it received (the
// login's JSON body, the Authorization header, the session token) in its
// error answers: the password appears neither in last_error, nor in the
// node's history, nor in ferro's log, in any of those encodings.
func TestHostileBMC_EchoedCredentialsStayOutOfLastErrorHistoryAndLog(t *testing.T) {
	s := serve(t)
	h := redfishtest.NewHostile(t)
	h.Set(func(h *redfishtest.Hostile) { h.EchoCredentials, h.FailSystem = true, true })
	leaks := []string{password, redfishtest.HostileToken,
		base64.StdEncoding.EncodeToString([]byte(redfishtest.User + ":" + password))}
	for _, auth := range []string{"session", "basic"} {
		info := h.DriverInfo(password)
		info["redfish_auth_type"] = auth
		n := create(t, s, "redfish", info)
		lastError := manageFails(t, s, n.UUID)
		if !strings.Contains(lastError, "***") {
			t.Errorf("%s: last_error %q does not quote the BMC's (scrubbed) message", auth, lastError)
		}
		if len(lastError) > 600 || strings.Contains(lastError, `\"`) {
			t.Errorf("%s: last_error is %d characters or escapes JSON: %s", auth, len(lastError), lastError)
		}
		ferrotest.AssertNoSecrets(t, "last_error", lastError, leaks...)
		ferrotest.AssertNoSecrets(t, "node history", history(t, s, n.UUID), leaks...)
	}
	ferrotest.AssertNoSecrets(t, "ferro serve", s.Log(), leaks...)
}

// Answers that never end, as JSON and as an error's text, are cut at the
// client's bound: the node's manage fails and ferro's memory stays small.
func TestHostileBMC_EndlessAnswersAreCut(t *testing.T) {
	s := serve(t)
	watch := watchRSS(t, s, 1<<30)
	for _, asError := range []bool{false, true} {
		h := redfishtest.NewHostile(t)
		h.Set(func(h *redfishtest.Hostile) { h.EndlessSystem, h.EndlessError = !asError, asError })
		n := create(t, s, "redfish", h.DriverInfo(password))
		lastError := manageFails(t, s, n.UUID)
		if !strings.Contains(lastError, "larger than") {
			t.Errorf("error body %v: last_error %q does not name the bound", asError, lastError)
		}
	}
	peak, killed := watch.result()
	t.Logf("peak RSS with endless answers: %d MiB", peak>>20)
	if killed || peak > 256<<20 {
		t.Errorf("peak RSS %d MiB (killed: %v), want under 256 MiB", peak>>20, killed)
	}
}
