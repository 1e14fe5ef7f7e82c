package vbmc

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// startServer runs a Server in process with fake machines named names (IPMI
// and Redfish on free loopback ports) until the test ends.
func startServer(t *testing.T, names ...string) (*Server, Ready) {
	t.Helper()
	cfg := Config{
		Username: "admin",
		Password: "vbmc-pass",
		Redfish:  RedfishConfig{Listen: "127.0.0.1:0"},
		StateDir: t.TempDir(),
	}
	for i, n := range names {
		cfg.Machines = append(cfg.Machines, MachineConfig{
			Name: n, Backend: BackendFake, IPMIListen: "127.0.0.1:0",
			CPUs: 4, MemoryMB: 8192,
			MACs:    []string{"52:54:00:00:" + twoHex(i) + ":01", "52:54:00:00:" + twoHex(i) + ":02"},
			DisksGB: []int{20, 100},
		})
	}
	return startConfig(t, cfg)
}

func twoHex(i int) string {
	s := strconv.FormatInt(int64(i&0xff), 16)
	if len(s) == 1 {
		s = "0" + s
	}
	return s
}

func startConfig(t *testing.T, cfg Config) (*Server, Ready) {
	t.Helper()
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	srv, err := New(cfg, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	readyc := make(chan Ready, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, func(r Ready) { readyc <- r }) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("Run did not return 30 s after its context ended")
		}
	})
	select {
	case r := <-readyc:
		return srv, r
	case err := <-done:
		t.Fatalf("Run before ready: %v", err)
	}
	return nil, Ready{}
}
