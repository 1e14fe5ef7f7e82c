package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// ueventHelperEnv makes the test binary a uevent helper inside the test's
// network namespace (where the kernel sends that namespace's net device
// events): it opens the socket, says "ready", waits for a line, drains
// the socket, brings the interfaces it learnt up and waits for their
// carrier, then prints what it saw as JSON.
const ueventHelperEnv = "FERRO_AGENT_UEVENT_HELPER"

type ueventHelperResult struct {
	Netdevs []string `json:"netdevs"`
	Lost    bool     `json:"lost"`
	Carrier []string `json:"carrier"`
	Err     string   `json:"err,omitempty"`
}

func ueventHelper() {
	s, err := openUevents()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n')
	ev, lost, err := s.drain()
	res := ueventHelperResult{Netdevs: ev.netdevs, Lost: lost}
	if err != nil {
		res.Err = err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, n := range ev.netdevs {
		if err := LinkUp(n); err != nil {
			res.Err = err.Error()
		}
	}
	for _, n := range ev.netdevs {
		if err := waitCarrier(ctx, n); err != nil {
			res.Err = err.Error()
			continue
		}
		res.Carrier = append(res.Carrier, n)
	}
	json.NewEncoder(os.Stdout).Encode(res)
	os.Exit(0)
}

// TestUevents_NetdevsFromTheKernel creates a veth pair in a network
// namespace while the helper's uevent socket is open there: the kernel's
// events name both ends, and once both are up the helper sees their
// carrier through the kernel's link notifications.
func TestUevents_NetdevsFromTheKernel(t *testing.T) {
	n := newTestNamespace(t, "uevent")
	ns, ipTool := n.name, n.ipTool
	helper := n.helper(ueventHelperEnv + "=1")
	stdin, _ := helper.StdinPipe()
	stdout, _ := helper.StdoutPipe()
	var stderr strings.Builder
	helper.Stderr = &stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { helper.Process.Kill(); helper.Wait() })
	out := bufio.NewReader(stdout)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("helper: %q %v\n%s", line, err, stderr.String())
	}
	if b, err := exec.Command(ipTool, "-n", ns, "link", "add", "agent0", "type", "veth", "peer", "name", "switch0").CombinedOutput(); err != nil {
		t.Fatalf("ip link add: %v\n%s", err, b)
	}
	io.WriteString(stdin, "go\n")
	var res ueventHelperResult
	if err := json.NewDecoder(out).Decode(&res); err != nil {
		t.Fatalf("helper: %v\n%s", err, stderr.String())
	}
	slices.Sort(res.Netdevs)
	slices.Sort(res.Carrier)
	want := []string{"agent0", "switch0"}
	if !slices.Equal(res.Netdevs, want) || res.Lost || res.Err != "" || !slices.Equal(res.Carrier, want) {
		t.Errorf("helper saw %+v, want netdevs and carrier %v", res, want)
	}
}
