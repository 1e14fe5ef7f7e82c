package agent_test

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/agent"
)

// TestPoster_FixtureReportAcceptedByFerro collects the QEMU-shaped fixture
// tree with the agent's collectors and posts it with the agent's Poster,
// token in its header, to ferro's real inspector, which must accept it and
// set the node's properties from it.
func TestPoster_FixtureReportAcceptedByFerro(t *testing.T) {
	images := t.TempDir()
	for _, f := range []string{"k", "r"} {
		if err := os.WriteFile(images+"/"+f, []byte("not booted\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := startLab(t, images)
	const mac = "52:54:00:12:34:56" // eth0 of testdata/vm
	uuid := l.enroll(mac, "k", "r")
	bc := l.inspect(uuid, mac)

	p, err := agent.ParseCmdline("BOOTIF=01-52-54-00-12-34-56 ipa-inspection-collectors=default,pci-devices")
	if err != nil {
		t.Fatal(err)
	}
	f := &agent.Failures{}
	rep := agent.Collect(context.Background(), slog.New(slog.DiscardHandler), agent.Host{
		Root: "../../internal/agent/testdata/vm",
		// the address DHCP gave the boot NIC: the inspector ignores
		// interfaces without one
		Addrs: func(name string) (string, string) {
			if name == "eth0" {
				return "192.0.2.50", ""
			}
			return "", ""
		},
	}, p, f)
	rep.Error = f.Error()
	if rep.Error != nil {
		t.Fatalf("collect: %s", *rep.Error)
	}

	// Without the token the inspector refuses the report: not retried.
	bad := &agent.Poster{URL: bc.Callback, Deadline: 20 * time.Second}
	if _, err := bad.Post(context.Background(), rep); err == nil {
		t.Fatal("a report without the token was accepted")
	}
	if st := l.node(uuid)["provision_state"]; st != "inspect wait" {
		t.Fatalf("after a refused report the node is in %v", st)
	}

	poster := &agent.Poster{URL: bc.Callback, Token: bc.Token, Deadline: time.Minute, MinBackoff: 100 * time.Millisecond}
	answer, err := poster.Post(context.Background(), rep)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	t.Logf("inspector answered %s", answer)
	got := l.waitState(uuid, "manageable", stateTimeout)
	props, _ := got["properties"].(map[string]any)
	// 2 processors; root disk sda, 5 GiB. The fixture has no SMBIOS, so
	// no physical_mb, and like ironic-inspector ferro then sets no
	// memory_mb (it never uses the kernel's MemTotal).
	for k, want := range map[string]string{"cpus": "2", "memory_mb": "", "local_gb": "4", "cpu_arch": "x86_64"} {
		if str(props[k]) != want {
			t.Errorf("properties[%s] = %v, want %s (properties: %v)", k, props[k], want, props)
		}
	}
	inv := l.inventory(uuid)
	disks, _ := inv["disks"].([]any)
	if len(disks) != 3 {
		t.Errorf("stored inventory has %d disks, want 3: %s", len(disks), dump(inv))
	}
}
