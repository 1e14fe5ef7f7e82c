package redfish_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/bmc/redfish"
	"github.com/ferrometal/ferro/internal/bmc/redfish/redfishtest"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// client returns a client with fast retries that logs into buf.
func client(t *testing.T, attempts int) (*redfish.Client, *bytes.Buffer) {
	var buf bytes.Buffer
	c := redfish.New(redfish.Options{ConnectionAttempts: attempts, ConnectionRetryInterval: time.Millisecond,
		Log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	t.Cleanup(c.Close)
	return c, &buf
}

func endpoint(b *redfishtest.Sloppy) redfish.Endpoint {
	return redfish.Endpoint{Address: b.URL, Username: redfishtest.User, Password: redfishtest.Password, AuthType: redfish.AuthAuto}
}

func TestHardware_SloppyCountsAndNoMemoryCollection(t *testing.T) {
	bmc := redfishtest.New(t)
	c, _ := client(t, 2)
	hw, err := c.Hardware(context.Background(), endpoint(bmc))
	if err != nil {
		t.Fatal(err)
	}
	want := &redfish.Hardware{
		Manufacturer: "Contoso", Model: "3500RX", SerialNumber: "437XR1138R2", BIOSVersion: "P79 v1.33 (02/28/2015)",
		CPUs: 16, CPUArch: "x86_64", CPUModel: "Multi-Core Intel(R) Xeon(R) processor 7xxx Series", CPUSockets: 2, CPUMaxMHz: 3700,
		MemoryMiB: 96 * 1024, MemorySource: "MemorySummary",
		// Only the NIC with Status Enabled and Health OK would get a port.
		NICs: []redfish.NIC{{Name: "12446A3B0411", MAC: "12:44:6A:3B:04:11", SpeedMbps: 1000, LinkUp: true, Enabled: true},
			{Name: "12446A3B8890", MAC: "12:44:6A:3B:88:90", SpeedMbps: 10000}},
		Disks: []redfish.Disk{{Name: "SATA Bay 1", SizeBytes: 8000000000000, Model: "3000GT8", Vendor: "Contoso"},
			{Name: "SATA Bay 2", SizeBytes: 200000000000, Model: "3000GT7", Vendor: "Contoso"},
			{Name: "SATA Bay 3", SizeBytes: 2000000000, Model: "3000GT7", Vendor: "Contoso"}},
		// The smallest enabled device of at least 4 GiB.
		LocalBytes: 200000000000, LocalSource: "simple storage",
		BootMode: "uefi", Fetches: 1, FetchedMost: hw.FetchedMost,
	}
	if d := cmp.Diff(want, hw); d != "" {
		t.Errorf("hardware (-want +got):\n%s", d)
	}
}

func TestDo_500ThenRecovers(t *testing.T) {
	bmc := redfishtest.New(t)
	bmc.Set(func(b *redfishtest.Sloppy) { b.Fail500 = 3 })
	c, log := client(t, 5)
	info, err := c.System(context.Background(), endpoint(bmc))
	if err != nil {
		t.Fatal(err)
	}
	if info.PowerState != "Off" || info.Path != redfishtest.SystemPath {
		t.Errorf("got %+v", info)
	}
	if n := strings.Count(log.String(), "retrying"); n != 3 {
		t.Errorf("%d retries logged, want 3:\n%s", n, log)
	}
}

func TestDo_GivesUpNamingBMCAndStep(t *testing.T) {
	bmc := redfishtest.New(t)
	bmc.Set(func(b *redfishtest.Sloppy) { b.Fail500 = 1000 })
	c, _ := client(t, 3)
	_, err := c.System(context.Background(), endpoint(bmc))
	var re *redfish.Error
	if !errors.As(err, &re) || re.BMC != bmc.URL || re.Step != "get System" || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Fatalf("got %v", err)
	}
	var n int
	bmc.Get(func(b *redfishtest.Sloppy) { n = len(b.Requests) })
	if n != 3 {
		t.Errorf("%d requests, want 3 (one per attempt)", n)
	}
}

func TestDo_Unreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, _ := client(t, 2)
	_, err = c.System(context.Background(), redfish.Endpoint{Address: "http://" + addr, Username: "u", Password: "unreach-pass", AuthType: "auto"})
	if err == nil || !strings.Contains(err.Error(), "redfish BMC http://"+addr) || !strings.Contains(err.Error(), "after 2 attempts") ||
		strings.Contains(err.Error(), "unreach-pass") {
		t.Fatalf("got %v", err)
	}
}

func TestDo_WrongPasswordIsNotRetried(t *testing.T) {
	bmc := redfishtest.New(t)
	c, log := client(t, 5)
	ep := endpoint(bmc)
	ep.Password = "wrong-pass-4471"
	_, err := c.System(context.Background(), ep)
	if !errors.Is(err, redfish.ErrUnauthorized) || !strings.Contains(err.Error(), bmc.URL) {
		t.Fatalf("got %v, want ErrUnauthorized naming the BMC", err)
	}
	if strings.Contains(err.Error()+log.String(), "wrong-pass-4471") {
		t.Error("the password leaked into the error or the log")
	}
	if strings.Contains(log.String(), "retrying") {
		t.Errorf("a 401 was retried:\n%s", log)
	}
}

func TestDo_SessionRecreatedOn401(t *testing.T) {
	bmc := redfishtest.New(t)
	c, _ := client(t, 2)
	ep := endpoint(bmc)
	ctx := context.Background()
	if _, err := c.System(ctx, ep); err != nil {
		t.Fatal(err)
	}
	if _, err := c.System(ctx, ep); err != nil {
		t.Fatal(err)
	}
	var logins int
	bmc.Get(func(b *redfishtest.Sloppy) { logins = b.Logins })
	if logins != 1 {
		t.Fatalf("%d logins for two calls, want 1 (the session is cached)", logins)
	}
	bmc.Set(func(b *redfishtest.Sloppy) { b.ForgetSessions = true })
	if _, err := c.System(ctx, ep); err != nil {
		t.Fatalf("after the BMC forgot the session: %v", err)
	}
	var basic bool
	bmc.Get(func(b *redfishtest.Sloppy) { logins, basic = b.Logins, b.BasicSeen })
	if logins != 2 || basic {
		t.Errorf("logins %d (want 2), basic auth used %v (want false)", logins, basic)
	}
}

func TestConnect_AutoFallsBackToBasic(t *testing.T) {
	bmc := redfishtest.New(t)
	bmc.Set(func(b *redfishtest.Sloppy) { b.NoSessionService = true })
	c, _ := client(t, 2)
	if _, err := c.System(context.Background(), endpoint(bmc)); err != nil {
		t.Fatal(err)
	}
	var basic bool
	bmc.Get(func(b *redfishtest.Sloppy) { basic = b.BasicSeen })
	if !basic {
		t.Error("auto did not fall back to basic auth")
	}
}

func TestSystem_NotFound(t *testing.T) {
	bmc := redfishtest.New(t)
	c, _ := client(t, 2)
	for _, id := range []string{"nope", "/redfish/v1/Systems/nope"} {
		ep := endpoint(bmc)
		ep.SystemID = id
		_, err := c.System(context.Background(), ep)
		if !errors.Is(err, redfish.ErrNotFound) || !strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), bmc.URL) {
			t.Errorf("system id %q: got %v", id, err)
		}
	}
	ep := endpoint(bmc)
	ep.SystemID = redfishtest.SystemID
	if _, err := c.System(context.Background(), ep); err != nil {
		t.Errorf("member Id: %v", err)
	}
}

func TestVirtualMedia_InsertEjectsFirstAndEjectIsIdempotent(t *testing.T) {
	bmc := redfishtest.New(t)
	bmc.Set(func(b *redfishtest.Sloppy) { b.CDImage, b.CDInserted = "http://elsewhere/old.iso", true })
	c, _ := client(t, 2)
	ctx, ep := context.Background(), endpoint(bmc)
	cds, err := c.CDs(ctx, ep)
	if err != nil || len(cds) != 1 || cds[0].Path != redfishtest.CDPath {
		t.Fatalf("CDs: %v %v (the floppy must not count)", cds, err)
	}
	if err := c.InsertCD(ctx, ep, "http://ferro/vmedia/x.iso"); err != nil {
		t.Fatal(err)
	}
	var img string
	var reqs []string
	bmc.Get(func(b *redfishtest.Sloppy) { img, reqs = b.CDImage, slices.Clone(b.Requests) })
	if img != "http://ferro/vmedia/x.iso" {
		t.Errorf("image %q", img)
	}
	ej := slices.Index(reqs, "POST "+redfishtest.CDPath+"/Actions/VirtualMedia.EjectMedia")
	in := slices.Index(reqs, "POST "+redfishtest.CDPath+"/Actions/VirtualMedia.InsertMedia")
	if ej < 0 || in < ej {
		t.Errorf("want eject before insert: %v", reqs)
	}
	for range 2 {
		if err := c.EjectCDs(ctx, ep, nil); err != nil {
			t.Fatal(err)
		}
	}
	bmc.Get(func(b *redfishtest.Sloppy) { img = b.CDImage })
	if img != "" {
		t.Errorf("still inserted: %q", img)
	}
}

// TestRequestShapes_MatchSushy makes the changing requests ferro makes
// (reset, boot override, insert and eject) with ferro's client and with
// python3-sushy, the library Ironic uses, against the same kind of service:
// they must send the same methods, paths and bodies.
func TestRequestShapes_MatchSushy(t *testing.T) {
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import sushy").Run() != nil {
		ferrotest.SkipOrFail(t, "/usr/bin/python3 cannot import sushy (Debian package python3-sushy)")
	}
	const image = "http://192.0.2.9/vmedia/x.iso"
	theirs := redfishtest.New(t)
	out, err := exec.Command(py, "testdata/sushy_shapes.py", theirs.URL, redfishtest.User, redfishtest.Password,
		redfishtest.SystemPath, "/redfish/v1/Managers/BMC", redfishtest.CDPath, image).CombinedOutput()
	if err != nil {
		t.Fatalf("sushy: %v\n%s", err, out)
	}
	ours := redfishtest.New(t)
	c, _ := client(t, 2)
	ctx, ep := context.Background(), endpoint(ours)
	ep.AuthType = redfish.AuthBasic
	if err := c.Reset(ctx, ep, "On"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetBoot(ctx, ep, redfish.BootOverride{Target: "Cd", Enabled: "Once", Mode: "UEFI"}); err != nil {
		t.Fatal(err)
	}
	if err := c.InsertCD(ctx, ep, image); err != nil {
		t.Fatal(err)
	}
	if err := c.EjectCDs(ctx, ep, nil); err != nil {
		t.Fatal(err)
	}
	var want, got []redfishtest.Call
	theirs.Get(func(b *redfishtest.Sloppy) { want = slices.Clone(b.Calls) })
	ours.Get(func(b *redfishtest.Sloppy) { got = slices.Clone(b.Calls) })
	// An empty body and {} are the same request.
	for _, calls := range [][]redfishtest.Call{want, got} {
		for i := range calls {
			if len(calls[i].Body) == 0 {
				calls[i].Body = nil
			}
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("requests (-sushy +ferro):\n%s", d)
	}
}

func TestVerifyCA(t *testing.T) {
	bmcTLS, ca := redfishtest.NewTLS(t)
	c, log := client(t, 3)
	ctx := context.Background()
	// What redfish_verify_ca parses into: the system's CAs (nil, true),
	// none (false), or a bundle file or directory.
	for _, tc := range []struct {
		verify   any
		insecure bool
		caFile   string
		ok       bool
	}{{nil, false, "", false}, {true, false, "", false}, {false, true, "", true}, {ca, false, ca, true}, {filepath.Dir(ca), false, filepath.Dir(ca), true}} {
		ep := endpoint(bmcTLS)
		ep.Insecure, ep.CAFile = tc.insecure, tc.caFile
		_, err := c.System(ctx, ep)
		if (err == nil) != tc.ok {
			t.Errorf("redfish_verify_ca=%v: err %v, want ok=%v", tc.verify, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "certificate") {
			t.Errorf("redfish_verify_ca=%v: %v does not say it is the certificate", tc.verify, err)
		}
	}
	if strings.Contains(log.String(), "retrying") {
		t.Errorf("a certificate failure was retried:\n%s", log)
	}
}

func TestVirtualMedia_OnTheSystem(t *testing.T) {
	bmc := redfishtest.New(t)
	bmc.Set(func(b *redfishtest.Sloppy) { b.SystemVirtualMedia = true })
	c, _ := client(t, 2)
	ctx, ep := context.Background(), endpoint(bmc)
	cds, err := c.CDs(ctx, ep)
	if err != nil || len(cds) != 1 || cds[0].Path != redfishtest.SystemCDPath {
		t.Fatalf("CDs %+v, %v", cds, err)
	}
	if err := c.InsertCD(ctx, ep, "http://ferro/vmedia/y.iso"); err != nil {
		t.Fatal(err)
	}
	var img string
	bmc.Get(func(b *redfishtest.Sloppy) { img = b.CDImage })
	if img != "http://ferro/vmedia/y.iso" {
		t.Errorf("image %q", img)
	}
	if err := c.EjectCDs(ctx, ep, func(image string) bool { return strings.HasPrefix(image, "http://ferro/") }); err != nil {
		t.Fatal(err)
	}
	bmc.Get(func(b *redfishtest.Sloppy) { img = b.CDImage })
	if img != "" {
		t.Errorf("still inserted: %q", img)
	}
}

// A cache smaller than the BMCs in use evicts, in turn, the session the
// next request needs: each BMC is logged in to again every round, and the
// client says so once, naming the option to raise.
func TestConnectionCache_TooSmallForTheBMCsInUseWarnsOnce(t *testing.T) {
	var buf bytes.Buffer
	c := redfish.New(redfish.Options{CacheSize: 2, ConnectionAttempts: 1,
		Log: slog.New(slog.NewTextHandler(&buf, nil))})
	t.Cleanup(c.Close)
	bmcs := []*redfishtest.Sloppy{redfishtest.New(t), redfishtest.New(t), redfishtest.New(t)}
	ctx := context.Background()
	for range 3 {
		for _, b := range bmcs {
			if _, err := c.System(ctx, endpoint(b)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, b := range bmcs {
		var logins int
		b.Get(func(b *redfishtest.Sloppy) { logins = b.Logins })
		if logins != 3 {
			t.Errorf("BMC %d: %d logins in three rounds, want 3 (LRU over three BMCs with room for two)", i, logins)
		}
	}
	if n := strings.Count(buf.String(), "raise [redfish]connection_cache_size"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, &buf)
	}
	if strings.Contains(buf.String(), redfishtest.Password) {
		t.Errorf("the log has the password:\n%s", &buf)
	}
}
