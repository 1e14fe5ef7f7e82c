package redfish_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/bmc/redfish"
	"github.com/ferrometal/ferro/internal/bmc/redfish/redfishtest"
)

func TestParseDriverInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		info map[string]any
		want redfish.Endpoint
		err  error
		msg  string
	}{
		{"bare host is https", map[string]any{"redfish_address": "10.0.0.5"}, redfish.Endpoint{Address: "https://10.0.0.5", AuthType: "auto"}, nil, ""},
		{"http with port", map[string]any{"redfish_address": "http://bmc:8000", "redfish_system_id": "/redfish/v1/Systems/1",
			"redfish_username": "u", "redfish_password": "p", "redfish_auth_type": "session", "redfish_verify_ca": "false"},
			redfish.Endpoint{Address: "http://bmc:8000", SystemID: "/redfish/v1/Systems/1", Username: "u", Password: "p", AuthType: "session", Insecure: true}, nil, ""},
		{"verify_ca bool", map[string]any{"redfish_address": "bmc", "redfish_verify_ca": false}, redfish.Endpoint{Address: "https://bmc", AuthType: "auto", Insecure: true}, nil, ""},
		{"missing address", map[string]any{"redfish_username": "u"}, redfish.Endpoint{}, redfish.ErrMissingDriverInfo, "redfish_address"},
		{"ftp", map[string]any{"redfish_address": "ftp://bmc"}, redfish.Endpoint{}, redfish.ErrInvalidDriverInfo, "must be http:// or https://"},
		{"path", map[string]any{"redfish_address": "https://bmc/redfish/v1"}, redfish.Endpoint{}, redfish.ErrInvalidDriverInfo, "without a path"},
		{"credentials in URL", map[string]any{"redfish_address": "https://u:secret@bmc"}, redfish.Endpoint{}, redfish.ErrInvalidDriverInfo, "must not carry credentials"},
		{"bad auth type", map[string]any{"redfish_address": "bmc", "redfish_auth_type": "kerberos"}, redfish.Endpoint{}, redfish.ErrInvalidDriverInfo, "redfish_auth_type"},
		{"bad verify_ca", map[string]any{"redfish_address": "bmc", "redfish_verify_ca": "/nonexistent/ca.pem"}, redfish.Endpoint{}, redfish.ErrInvalidDriverInfo, "redfish_verify_ca"},
		{"address not a string", map[string]any{"redfish_address": 5}, redfish.Endpoint{}, redfish.ErrInvalidDriverInfo, "must be a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := redfish.ParseDriverInfo(tc.info, "auto")
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("got %v, want %v mentioning %q", err, tc.err, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	_, err := redfish.ParseDriverInfo(map[string]any{"redfish_address": "ftp://x", "redfish_password": "hunter2-secret"}, "auto")
	if err == nil || strings.Contains(err.Error(), "hunter2-secret") {
		t.Errorf("error %v must not be nil or carry the password", err)
	}
}

// client returns a client with fast retries that logs into buf.
func client(t *testing.T, attempts int) (*redfish.Client, *bytes.Buffer) {
	var buf bytes.Buffer
	c := redfish.New(redfish.Options{ConnectionAttempts: attempts, ConnectionRetryInterval: time.Millisecond,
		Log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	t.Cleanup(c.Close)
	return c, &buf
}

func endpoint(b *redfishtest.Sloppy) redfish.Endpoint {
	ep, err := redfish.ParseDriverInfo(b.DriverInfo(), "auto")
	if err != nil {
		panic(err)
	}
	return ep
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
		NICs: []redfish.NIC{{Name: "12446A3B0411", MAC: "12:44:6A:3B:04:11", SpeedMbps: 1000, LinkUp: true},
			{Name: "12446A3B8890", MAC: "12:44:6A:3B:88:90", SpeedMbps: 10000}},
		Disks: []redfish.Disk{{Name: "SATA Bay 1", SizeBytes: 8000000000000, Model: "3000GT8", Vendor: "Contoso"},
			{Name: "SATA Bay 2", SizeBytes: 200000000000, Model: "3000GT7", Vendor: "Contoso"},
			{Name: "SATA Bay 3", SizeBytes: 2000000000, Model: "3000GT7", Vendor: "Contoso"}},
		BootMode: "uefi",
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
