package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ferrometal/ferro/internal/bmc/ipmi"
	"github.com/ferrometal/ferro/internal/bmc/redfish"
	"github.com/ferrometal/ferro/internal/testing/freeport"
	"github.com/ferrometal/ferro/internal/vbmc"
)

const vbmcUser, vbmcPass = "admin", "bench-pass"

// startVBMC runs ferro-vbmc's server (internal/vbmc, as cmd/ferro-vbmc runs
// it) in this process with n fake machines, each with its IPMI endpoint.
func startVBMC(ctx context.Context, n int) (vbmc.Ready, []string, func() error, error) {
	cfg := vbmc.Config{Username: vbmcUser, Password: vbmcPass, Redfish: vbmc.RedfishConfig{Listen: "127.0.0.1:0"}}
	names := make([]string, n)
	for i := range n {
		names[i] = "b" + strconv.Itoa(i)
		cfg.Machines = append(cfg.Machines, vbmc.MachineConfig{
			Name: names[i], Backend: vbmc.BackendFake, IPMIListen: "127.0.0.1:0",
			CPUs: 2, MemoryMB: 2048, MACs: []string{fmt.Sprintf("52:54:00:bf:%02x:%02x", i>>8, i&0xff)},
		})
	}
	data, _ := json.Marshal(cfg)
	cfg, err := vbmc.ParseConfig(data)
	if err != nil {
		return vbmc.Ready{}, nil, nil, err
	}
	srv, err := vbmc.New(cfg, vbmc.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return vbmc.Ready{}, nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	readyc := make(chan vbmc.Ready, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, func(r vbmc.Ready) { readyc <- r }) }()
	stop := func() error { cancel(); return <-done }
	select {
	case rd := <-readyc:
		return rd, names, stop, nil
	case err := <-done:
		cancel()
		return vbmc.Ready{}, nil, nil, err
	}
}

func ipmiTarget(rd vbmc.Ready, name string) ipmi.Target {
	host, port, _ := net.SplitHostPort(rd.IPMI[name])
	p, _ := strconv.Atoi(port)
	return ipmi.Target{Address: host, Port: p, Username: vbmcUser, Password: vbmcPass, CipherSuite: 3}
}

func redfishEndpoint(rd vbmc.Ready, name string) redfish.Endpoint {
	return redfish.Endpoint{Address: rd.RedfishURL, SystemID: "/redfish/v1/Systems/" + name,
		Username: vbmcUser, Password: vbmcPass, AuthType: "session"}
}

// benchVBMC measures ferro's bmc/ipmi and bmc/redfish clients against
// ferro-vbmc's fake machines, every BMC driven in parallel, then Debian's
// ipmitool against the same ferro-vbmc, one command at a time.
func benchVBMC(machines, n, toolN int) error {
	ctx := context.Background()
	rd, names, stop, err := startVBMC(ctx, machines)
	if err != nil {
		return fmt.Errorf("ferro-vbmc: %w", err)
	}
	defer stop()

	fmt.Printf("\nferro's clients against ferro-vbmc: %d fake machines, all at once, %d power operations each (on/off alternating)\n", machines, n)
	ic := ipmi.New(ipmi.Options{CommandRetryTimeout: 10 * time.Second})
	defer ic.Close()
	onOff := func(i int) bool { return i%2 == 0 }
	lat, wall, err := measure(machines, n, func(b, i int) error {
		a := ipmi.PowerOff
		if onOff(i) {
			a = ipmi.PowerOn
		}
		return ic.Power(ctx, ipmiTarget(rd, names[b]), a)
	})
	if err != nil {
		return fmt.Errorf("bmc/ipmi: %w", err)
	}
	report(fmt.Sprintf("bmc/ipmi    chassis control, %d BMCs (lanplus, cipher 3, one session each)", machines), lat, wall)
	lat, wall, err = measure(machines, n, func(b, _ int) error {
		_, err := ic.PowerStatus(ctx, ipmiTarget(rd, names[b]))
		return err
	})
	if err != nil {
		return fmt.Errorf("bmc/ipmi: %w", err)
	}
	report(fmt.Sprintf("bmc/ipmi    power status,    %d BMCs", machines), lat, wall)
	// One BMC, one command at a time: the figure to set beside ipmitool's.
	lat, wall, err = measure(1, n, func(_, i int) error {
		a := ipmi.PowerOff
		if onOff(i) {
			a = ipmi.PowerOn
		}
		return ic.Power(ctx, ipmiTarget(rd, names[0]), a)
	})
	if err != nil {
		return fmt.Errorf("bmc/ipmi: %w", err)
	}
	report("bmc/ipmi    chassis control, 1 BMC, sequential", lat, wall)
	lat, wall, err = measure(1, n, func(_, _ int) error {
		_, err := ic.PowerStatus(ctx, ipmiTarget(rd, names[0]))
		return err
	})
	if err != nil {
		return fmt.Errorf("bmc/ipmi: %w", err)
	}
	report("bmc/ipmi    power status,    1 BMC, sequential", lat, wall)

	rc := redfish.New(redfish.Options{ConnectionAttempts: 3, ConnectionRetryInterval: 100 * time.Millisecond})
	defer rc.Close()
	lat, wall, err = measure(machines, n, func(b, i int) error {
		rt := "ForceOff"
		if onOff(i) {
			rt = "On"
		}
		return rc.Reset(ctx, redfishEndpoint(rd, names[b]), rt)
	})
	if err != nil {
		return fmt.Errorf("bmc/redfish: %w", err)
	}
	report(fmt.Sprintf("bmc/redfish Reset (System read + action), %d Systems (session auth)", machines), lat, wall)
	lat, wall, err = measure(machines, n, func(b, _ int) error {
		_, err := rc.System(ctx, redfishEndpoint(rd, names[b]))
		return err
	})
	if err != nil {
		return fmt.Errorf("bmc/redfish: %w", err)
	}
	report(fmt.Sprintf("bmc/redfish System read,     %d Systems", machines), lat, wall)

	tool, err := exec.LookPath("ipmitool")
	if err != nil || toolN == 0 {
		fmt.Println("ipmitool not run (Debian package ipmitool): no comparison")
		return nil
	}
	t := ipmiTarget(rd, names[0])
	fmt.Printf("Debian ipmitool against the same ferro-vbmc, one process and RMCP+ session per command (as Ironic runs it), cipher 3, sequential\n")
	for _, cmd := range [][]string{{"power", "status"}, {"power", "on"}, {"power", "off"}} {
		lat, wall, err := measure(1, toolN, func(_, _ int) error {
			args := append([]string{"-I", "lanplus", "-C", "3", "-H", t.Address, "-p", strconv.Itoa(t.Port),
				"-U", t.Username, "-P", t.Password, "-L", "ADMINISTRATOR"}, cmd...)
			if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
				return fmt.Errorf("ipmitool %s: %w: %s", strings.Join(cmd, " "), err, out)
			}
			return nil
		})
		if err != nil {
			return err
		}
		report(fmt.Sprintf("ipmitool    %-12s 1 BMC", strings.Join(cmd, " ")), lat, wall)
	}
	return nil
}

// benchAPI measures the whole path: `ferro serve` (built from this
// checkout unless ferroBin is given) with nodes ipmi and redfish nodes
// enrolled on ferro-vbmc's machines; each node is powered on and off
// rounds times through PUT /v1/nodes/{node}/states/power, all nodes at once,
// an operation ending when GET /v1/nodes/{node} shows the conductor's
// answer (target_power_state cleared, power_state the target). Polling
// every 20 ms bounds the latency's resolution.
func benchAPI(ferroBin string, nodes, rounds int) error {
	ctx := context.Background()
	rd, names, stop, err := startVBMC(ctx, 2*nodes)
	if err != nil {
		return fmt.Errorf("ferro-vbmc: %w", err)
	}
	defer stop()
	dir, err := os.MkdirTemp("", "bench-bmc-api-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if ferroBin == "" {
		ferroBin = filepath.Join(dir, "ferro")
		if out, err := exec.Command("go", "build", "-o", ferroBin, "./cmd/ferro").CombinedOutput(); err != nil {
			return fmt.Errorf("build ferro (run from the repository root, or pass -ferro): %w: %s", err, out)
		}
	}
	base, stopFerro, err := startFerro(ferroBin, dir)
	if err != nil {
		return err
	}
	defer stopFerro()

	uuids := make([]string, len(names))
	for i, name := range names {
		body := map[string]any{"name": name, "driver": "ipmi", "driver_info": map[string]any{
			"ipmi_address": ipmiTarget(rd, name).Address, "ipmi_port": ipmiTarget(rd, name).Port,
			"ipmi_username": vbmcUser, "ipmi_password": vbmcPass, "ipmi_cipher_suite": "3"}}
		if i >= nodes {
			body = map[string]any{"name": name, "driver": "redfish", "driver_info": map[string]any{
				"redfish_address": rd.RedfishURL, "redfish_system_id": "/redfish/v1/Systems/" + name,
				"redfish_username": vbmcUser, "redfish_password": vbmcPass}}
		}
		var n struct {
			UUID string `json:"uuid"`
		}
		if err := api(base, http.MethodPost, "/v1/nodes", body, http.StatusCreated, &n); err != nil {
			return err
		}
		uuids[i] = n.UUID
		if err := api(base, http.MethodPut, "/v1/nodes/"+n.UUID+"/states/provision", map[string]any{"target": "manage"}, http.StatusAccepted, nil); err != nil {
			return err
		}
	}
	for _, id := range uuids {
		if err := waitNode(base, id, func(n apiNode) bool { return n.ProvisionState == "manageable" }); err != nil {
			return err
		}
	}
	fmt.Printf("\nthe full API path: ferro serve + ferro-vbmc, %d ipmi and %d redfish nodes at once, %d power operations each\n", nodes, nodes, 2*rounds)
	fmt.Printf("  ([ipmi]min_command_interval 0; an operation = PUT states/power until GET shows the conductor's answer, polled every 20 ms)\n")
	for _, kind := range []struct {
		name     string
		from, to int
	}{{"ipmi", 0, nodes}, {"redfish", nodes, 2 * nodes}, {"both", 0, 2 * nodes}} {
		ids := uuids[kind.from:kind.to]
		lat, wall, err := measure(len(ids), 2*rounds, func(b, i int) error {
			target := "power off"
			if i%2 == 0 {
				target = "power on"
			}
			// A node can still be locked for a moment after the answer
			// (the lock goes after the save) or by the power sync: retry
			// on 409, as clients do.
			for attempt := 0; ; attempt++ {
				err := api(base, http.MethodPut, "/v1/nodes/"+ids[b]+"/states/power", map[string]any{"target": target}, http.StatusAccepted, nil)
				if err == nil {
					break
				}
				if !strings.Contains(err.Error(), "HTTP 409") || attempt == 100 {
					return err
				}
				locked.Add(1)
				time.Sleep(10 * time.Millisecond)
			}
			return waitNode(base, ids[b], func(n apiNode) bool {
				return n.TargetPowerState == nil && n.Reservation == nil && n.PowerState != nil && *n.PowerState == target
			})
		})
		if err != nil {
			return fmt.Errorf("API %s: %w", kind.name, err)
		}
		report(fmt.Sprintf("API power   %-7s %d nodes", kind.name, len(ids)), lat, wall)
	}
	fmt.Printf("  (409 NodeLocked answers retried: %d)\n", locked.Load())
	return nil
}

type apiNode struct {
	ProvisionState   string  `json:"provision_state"`
	PowerState       *string `json:"power_state"`
	TargetPowerState *string `json:"target_power_state"`
	LastError        *string `json:"last_error"`
	Reservation      *string `json:"reservation"`
}

var locked atomic.Int64

var httpc = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}

func api(base, method, path string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "latest")
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// waitNode polls a node until done holds; a last_error or a minute ends it.
func waitNode(base, id string, done func(apiNode) bool) error {
	deadline := time.Now().Add(time.Minute)
	for {
		var n apiNode
		if err := api(base, http.MethodGet, "/v1/nodes/"+id+"?fields=provision_state,power_state,target_power_state,last_error,reservation", nil, http.StatusOK, &n); err != nil {
			return err
		}
		if n.LastError != nil && *n.LastError != "" {
			return fmt.Errorf("node %s: %s", id, *n.LastError)
		}
		if done(n) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s: not done after a minute: %+v", id, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startFerro runs `ferro serve` on loopback with a data directory under
// dir and returns its API URL once GET / answers.
func startFerro(bin, dir string) (string, func(), error) {
	port, err := freeport.Next()
	if err != nil {
		return "", nil, err
	}
	iport, err := freeport.Next()
	if err != nil {
		return "", nil, err
	}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bin, "serve", "--data-dir", data)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FERRO_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "FERRO_API_HOST_IP=127.0.0.1", "FERRO_API_PORT="+strconv.Itoa(port),
		"FERRO_INSPECTOR_LISTEN_ADDRESS=127.0.0.1", "FERRO_INSPECTOR_LISTEN_PORT="+strconv.Itoa(iport),
		"FERRO_IPMI_MIN_COMMAND_INTERVAL=0", "FERRO_CONDUCTOR_WORKERS_POOL_SIZE=500")
	logf, err := os.Create(filepath.Join(dir, "ferro.log"))
	if err != nil {
		return "", nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return "", nil, err
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
			logf.Close()
		})
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := httpc.Get(base + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, stop, nil
			}
		}
		if time.Now().After(deadline) {
			stop()
			log, _ := os.ReadFile(logf.Name())
			return "", nil, errors.Join(errors.New("ferro serve not ready after 30 s"), err, errors.New(string(log)))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
