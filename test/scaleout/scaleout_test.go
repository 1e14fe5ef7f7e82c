// Package scaleout runs ferro as it scales out: several `ferro serve`
// processes on one PostgreSQL database that the test harness starts
// itself. They share nodes and locks; one takes over the nodes of another
// that dies, and a conductor that comes back cleans up after itself.
package scaleout_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/pgtest"
	"github.com/ferrometal/ferro/test/inspection"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// conductor starts `ferro serve` as host on the database dsn. Conductors
// heart-beat every second and count as dead after three.
func conductor(t *testing.T, dsn, host string, env ...string) *ferrotest.Server {
	t.Helper()
	return ferrotest.Start(t, ferrotest.WithDataDir(t.TempDir()), ferrotest.WithEnv(append([]string{
		"FERRO_DATABASE_CONNECTION=" + dsn,
		"FERRO_DEFAULT_HOST=" + host,
		"FERRO_CONDUCTOR_HEARTBEAT_INTERVAL=1",
		"FERRO_CONDUCTOR_HEARTBEAT_TIMEOUT=3",
	}, env...)...))
}

func must(t *testing.T, base, method, path string, in, out any) {
	t.Helper()
	ferrotest.Must(t, base, method, path, in, out)
}

type node struct {
	UUID           string  `json:"uuid"`
	ProvisionState string  `json:"provision_state"`
	TargetState    *string `json:"target_provision_state"`
	Reservation    *string `json:"reservation"`
	LastError      *string `json:"last_error"`
	Conductor      string  `json:"conductor"`
}

// waitNode polls base until the node is in state with no lock held.
func waitNode(t *testing.T, base, id, state string, within time.Duration) node {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var n node
		must(t, base, http.MethodGet, "/v1/nodes/"+id, nil, &n)
		if n.ProvisionState == state && n.Reservation == nil {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s: %q reserved by %v (last_error %v) after %v, want %q and no lock",
				id, n.ProvisionState, deref(n.Reservation), deref(n.LastError), within, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

func createNode(t *testing.T, base string, body map[string]any) string {
	t.Helper()
	if body == nil {
		body = map[string]any{"driver": "fake-hardware"}
	}
	var n node
	must(t, base, http.MethodPost, "/v1/nodes", body, &n)
	return n.UUID
}

func provision(t *testing.T, base, id, verb string) (int, []byte) {
	t.Helper()
	return ferrotest.Call(t, base, http.MethodPut, "/v1/nodes/"+id+"/states/provision", map[string]any{"target": verb})
}

// Both processes see one fleet: what one creates the other lists, either
// runs the work of the requests it takes, and the lock in the database
// lets exactly one of many requests on a node through, whichever process
// each reached.
func TestScaleOut_TwoConductorsShareNodesAndLocks(t *testing.T) {
	dsn := pgtest.Start(t)
	a := conductor(t, dsn, "conductor-a")
	b := conductor(t, dsn, "conductor-b")
	servers := []*ferrotest.Server{a, b}

	// Each lists both conductors as alive.
	for _, s := range servers {
		deadline := time.Now().Add(10 * time.Second)
		for {
			var out struct {
				Conductors []struct {
					Hostname string `json:"hostname"`
					Alive    bool   `json:"alive"`
				} `json:"conductors"`
			}
			must(t, s.URL, http.MethodGet, "/v1/conductors", nil, &out)
			var alive []string
			for _, c := range out.Conductors {
				if c.Alive {
					alive = append(alive, c.Hostname)
				}
			}
			slices.Sort(alive)
			if slices.Equal(alive, []string{"conductor-a", "conductor-b"}) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s lists alive conductors %v, want conductor-a and conductor-b", s.URL, alive)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// Nodes created on one process are managed and inspected through the
	// other, and end up manageable with no lock left, as both see them.
	const nodes = 20
	ids := make([]string, nodes)
	for i := range ids {
		ids[i] = createNode(t, servers[i%2].URL, nil)
	}
	for i, id := range ids {
		if code, body := provision(t, servers[(i+1)%2].URL, id, "manage"); code != http.StatusAccepted {
			t.Fatalf("manage %s: HTTP %d %s", id, code, body)
		}
	}
	for i, id := range ids {
		waitNode(t, servers[i%2].URL, id, "manageable", 10*time.Second)
		if code, body := provision(t, servers[i%2].URL, id, "inspect"); code != http.StatusAccepted {
			t.Fatalf("inspect %s: HTTP %d %s", id, code, body)
		}
	}
	for i, id := range ids {
		waitNode(t, servers[(i+1)%2].URL, id, "manageable", 10*time.Second)
	}
	var list struct {
		Nodes []node `json:"nodes"`
	}
	must(t, b.URL, http.MethodGet, "/v1/nodes?detail=true", nil, &list)
	if len(list.Nodes) != nodes {
		t.Errorf("%s lists %d nodes, want %d", b.URL, len(list.Nodes), nodes)
	}

	// Many manage requests on one enroll node, half to each process: one
	// wins; every other finds it locked or already manageable.
	id := createNode(t, a.URL, nil)
	const racers = 24
	codes := make([]int, racers)
	var start sync.WaitGroup
	start.Add(1)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			start.Wait()
			var err error
			codes[i], _, err = ferrotest.Send(servers[i%2].URL, http.MethodPut, "/v1/nodes/"+id+"/states/provision", map[string]any{"target": "manage"})
			if err != nil {
				t.Error(err)
			}
		})
	}
	start.Done()
	wg.Wait()
	accepted := 0
	for _, c := range codes {
		switch c {
		case http.StatusAccepted:
			accepted++
		case http.StatusConflict, http.StatusBadRequest:
		default:
			t.Errorf("manage race: HTTP %d", c)
		}
	}
	if accepted != 1 {
		t.Errorf("manage race over two processes: %d answers were 202 (%v), want exactly 1", accepted, codes)
	}
	waitNode(t, b.URL, id, "manageable", 10*time.Second)
}

// startInspection enrols a fake-hardware node with pxe boot, the noop
// network and ferro's inspector, deploy images from imagesURL and one port
// of mac, manages it and starts its inspection through srv.
func startInspection(t *testing.T, srv *ferrotest.Server, imagesURL, mac string) string {
	t.Helper()
	id := createNode(t, srv.URL, map[string]any{
		"driver": "fake-hardware", "boot_interface": "pxe", "network_interface": "noop", "inspect_interface": "inspector",
		"driver_info": map[string]any{"deploy_kernel": imagesURL + "/ipa.kernel", "deploy_ramdisk": imagesURL + "/ipa.initramfs"},
	})
	must(t, srv.URL, http.MethodPost, "/v1/ports", map[string]any{"node_uuid": id, "address": mac, "pxe_enabled": true}, nil)
	if code, body := provision(t, srv.URL, id, "manage"); code != http.StatusAccepted {
		t.Fatalf("manage: HTTP %d %s", code, body)
	}
	waitNode(t, srv.URL, id, "manageable", 10*time.Second)
	if code, body := provision(t, srv.URL, id, "inspect"); code != http.StatusAccepted {
		t.Fatalf("inspect: HTTP %d %s", code, body)
	}
	return id
}

// servedImages returns the URL of an HTTP server of deploy images that
// answer at once.
func servedImages(t *testing.T) string {
	images := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("IMAGE " + r.URL.Path))
	}))
	t.Cleanup(images.Close)
	return images.URL
}

// slowInspection starts an inspection of a new node through srv that stays
// in inspecting, locked, until the test ends: the deploy kernel's server
// answers only then, so the ramdisk preparation is under way meanwhile.
func slowInspection(t *testing.T, srv *ferrotest.Server) string {
	t.Helper()
	var fetches atomic.Int32
	release := make(chan struct{})
	images := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.Error(w, "gone", http.StatusServiceUnavailable)
	}))
	t.Cleanup(images.Close)
	t.Cleanup(func() { close(release) })
	id := startInspection(t, srv, images.URL, "52:54:00:5c:a1:e0")
	deadline := time.Now().Add(10 * time.Second)
	for fetches.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the deploy kernel was never fetched")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return id
}

// checkHeld fails t unless the node is in inspecting, locked by holder.
func checkHeld(t *testing.T, base, id, holder string) {
	t.Helper()
	var n node
	must(t, base, http.MethodGet, "/v1/nodes/"+id, nil, &n)
	if n.ProvisionState != "inspecting" || deref(n.Reservation) != holder {
		t.Fatalf("node %q reserved by %s (last_error %s), want inspecting and %s", n.ProvisionState, deref(n.Reservation), deref(n.LastError), holder)
	}
}

// checkTakenOver waits until the survivor failed the node the dead holder
// left, and runs it again.
func checkTakenOver(t *testing.T, survivor *ferrotest.Server, id, dead string) {
	t.Helper()
	got := waitNode(t, survivor.URL, id, "inspect failed", 20*time.Second)
	if le := deref(got.LastError); !strings.Contains(le, dead) || !strings.Contains(le, "inspecting") {
		t.Errorf("last_error = %q, want it to name the dead %s and the state", le, dead)
	}
	if code, body := provision(t, survivor.URL, id, "manage"); code != http.StatusAccepted {
		t.Fatalf("manage after take-over: HTTP %d %s", code, body)
	}
	waitNode(t, survivor.URL, id, "manageable", 10*time.Second)
}

var inspectorEnv = []string{"FERRO_INSPECTOR_ALLOW_LOOPBACK_CALLBACK=true", "FERRO_INSPECTOR_INTROSPECTION_DELAY=0"}

// A conductor killed in the middle of starting an inspection leaves its
// node locked in inspecting. The surviving conductor sees it stop
// heart-beating, takes its nodes over, releases the lock and fails the
// node with a last_error naming the dead conductor — as Ironic does.
func TestScaleOut_SurvivorTakesOverTheNodesOfAKilledConductor(t *testing.T) {
	dsn := pgtest.Start(t)
	a := conductor(t, dsn, "conductor-a", inspectorEnv...)
	b := conductor(t, dsn, "conductor-b", inspectorEnv...)
	id := slowInspection(t, a)
	checkHeld(t, b.URL, id, "conductor-a")
	a.Kill(t) // SIGKILL: no graceful stop, no unregistering, the lock stays
	checkTakenOver(t, b, id, "conductor-a")
}

// A process with the api role but not the conductor role runs the work of
// its requests itself (there is no RPC between roles). It heart-beats, so
// a conductor leaves its locks alone however long its work takes, but it
// is no conductor: not listed, not in the hash ring. Killed, its nodes are
// taken over too.
func TestScaleOut_APIOnlyProcessKeepsItsLocksUntilItDies(t *testing.T) {
	dsn := pgtest.Start(t)
	b := conductor(t, dsn, "conductor-b", inspectorEnv...)
	api := ferrotest.Start(t, ferrotest.WithRole("api,inspector"), ferrotest.WithDataDir(t.TempDir()), ferrotest.WithEnv(append([]string{
		"FERRO_DATABASE_CONNECTION=" + dsn,
		"FERRO_DEFAULT_HOST=conductor-b", // the same host as the conductor: its locks are its own
		"FERRO_CONDUCTOR_HEARTBEAT_INTERVAL=1",
		"FERRO_CONDUCTOR_HEARTBEAT_TIMEOUT=3",
	}, inspectorEnv...)...))
	id := slowInspection(t, api)
	checkHeld(t, b.URL, id, "conductor-b-api")
	// Take-over scans of conductor-b that ran once the api process's last
	// heartbeat could be older than the timeout (3 s): one that took it
	// for dead would have released the lock.
	waitTakeOverScans(t, b, time.Now().Add(3*time.Second), 2)
	checkHeld(t, b.URL, id, "conductor-b-api")
	for _, srv := range []*ferrotest.Server{b, api} {
		var out struct {
			Conductors []struct {
				Hostname string `json:"hostname"`
			} `json:"conductors"`
		}
		must(t, srv.URL, http.MethodGet, "/v1/conductors", nil, &out)
		if len(out.Conductors) != 1 || out.Conductors[0].Hostname != "conductor-b" {
			t.Errorf("%s lists conductors %+v, want conductor-b alone", srv.URL, out.Conductors)
		}
	}
	api.Kill(t)
	checkTakenOver(t, b, id, "conductor-b-api")
}

var takeOverRuns = regexp.MustCompile(`(?m)^ferro_conductor_periodic_task_duration_seconds_count\{task="take_over"\} (\d+)$`)

// waitTakeOverScans waits until srv's conductor has finished n take-over
// scans counted from the first scrape after since: at least n-1 of them
// started after it.
func waitTakeOverScans(t *testing.T, srv *ferrotest.Server, since time.Time, n int) {
	t.Helper()
	runs := func() int {
		code, body := ferrotest.Call(t, srv.URL, http.MethodGet, "/metrics", nil)
		if code != http.StatusOK {
			t.Fatalf("GET /metrics: %d %.2000s", code, body)
		}
		m := takeOverRuns.FindSubmatch(body)
		if m == nil {
			return 0 // no scan finished yet
		}
		v, _ := strconv.Atoi(string(m[1]))
		return v
	}
	base := -1
	deadline := time.Now().Add(time.Minute)
	for {
		got := runs()
		switch {
		case time.Now().Before(since):
		case base < 0:
			base = got
		case got >= base+n:
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("conductor %s ran %d take-over scans in a minute, want %d", srv.URL, got-max(base, 0), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A conductor that dies after preparing an inspection leaves its boot
// files on its own disk; the survivor finishes the inspection when the
// report comes and tears down what it can reach. When the dead conductor
// comes back it removes those files before taking work, so the node's
// per-MAC entry cannot boot it into the inspection ramdisk again.
func TestScaleOut_RestartedConductorSweepsBootFilesOfInspectionsEndedElsewhere(t *testing.T) {
	dsn := pgtest.Start(t)
	images := servedImages(t)
	dirA := t.TempDir()
	startA := func() *ferrotest.Server {
		return ferrotest.Start(t, ferrotest.WithDataDir(dirA), ferrotest.WithEnv(append([]string{
			"FERRO_DATABASE_CONNECTION=" + dsn,
			"FERRO_DEFAULT_HOST=conductor-a",
			"FERRO_CONDUCTOR_HEARTBEAT_INTERVAL=1",
			"FERRO_CONDUCTOR_HEARTBEAT_TIMEOUT=3",
		}, inspectorEnv...)...))
	}
	a := startA()
	b := conductor(t, dsn, "conductor-b", inspectorEnv...)

	const mac = "52:54:00:5c:a1:e1"
	id := startInspection(t, a, images, mac)
	waitNode(t, b.URL, id, "inspect wait", 10*time.Second)
	tftpA := filepath.Join(dirA, "tftpboot")
	bc, err := inspection.ReadBootConfig("pxe", tftpA, mac)
	if err != nil {
		t.Fatalf("conductor-a's boot entry for %s: %v", mac, err)
	}
	a.Kill(t)

	// The agent's report reaches the survivor (behind a load balancer, the
	// callback URL would lead there).
	report, err := inspection.Report(mac)
	if err != nil {
		t.Fatal(err)
	}
	if code, body, err := inspection.Post(context.Background(), http.DefaultClient, b.URL+"/v1/continue", bc.Token, report); err != nil || code != http.StatusOK {
		t.Fatalf("report to conductor-b: HTTP %d %s %v", code, body, err)
	}
	waitNode(t, b.URL, id, "manageable", 20*time.Second)
	entry := inspection.MACEntry("pxe", tftpA, mac)
	if !exists(entry) {
		t.Fatal("conductor-a's boot entry is already gone: the test shows nothing")
	}

	startA()
	for _, p := range []string{entry, filepath.Join(tftpA, id)} {
		if exists(p) {
			t.Errorf("%s left behind after conductor-a restarted", p)
		}
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// An api-only process with the inspector role finishes, at once, the
// inspections whose reports its inspector takes: nobody waits for the
// owner's next status poll (60 s by default).
func TestScaleOut_APIOnlyProcessFinishesTheInspectionsItsInspectorTakes(t *testing.T) {
	dsn := pgtest.Start(t)
	images := servedImages(t)
	conductor(t, dsn, "conductor-b", inspectorEnv...)
	dir := t.TempDir()
	api := ferrotest.Start(t, ferrotest.WithRole("api,inspector"), ferrotest.WithDataDir(dir), ferrotest.WithEnv(append([]string{
		"FERRO_DATABASE_CONNECTION=" + dsn,
		"FERRO_DEFAULT_HOST=api-1",
	}, inspectorEnv...)...))

	const mac = "52:54:00:5c:a1:e2"
	id := startInspection(t, api, images, mac)
	waitNode(t, api.URL, id, "inspect wait", 10*time.Second)
	tftp := filepath.Join(dir, "tftpboot")
	bc, err := inspection.ReadBootConfig("pxe", tftp, mac)
	if err != nil {
		t.Fatal(err)
	}
	report, err := inspection.Report(mac)
	if err != nil {
		t.Fatal(err)
	}
	if code, body, err := inspection.Post(context.Background(), http.DefaultClient, bc.Callback, bc.Token, report); err != nil || code != http.StatusOK {
		t.Fatalf("report: HTTP %d %s %v", code, body, err)
	}
	waitNode(t, api.URL, id, "manageable", 10*time.Second)
	if exists(inspection.MACEntry("pxe", tftp, mac)) {
		t.Error("the boot entry is left behind")
	}
}
