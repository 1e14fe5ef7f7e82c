package agent

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/netnstest"
)

// testNamespace is a network namespace a test creates (removed at its
// end). Code that must run inside it runs in a helper: this test binary
// started there again (a Go program cannot move all its threads).
type testNamespace struct {
	t      *testing.T
	name   string
	ipTool string
}

// newTestNamespace needs root and iproute2 (skipped locally without them,
// failing in CI).
func newTestNamespace(t *testing.T, prefix string) *testNamespace {
	t.Helper()
	ipTool := ferrotest.RequireTool(t, "ip", "/usr/sbin", "/sbin")
	if os.Geteuid() != 0 {
		ferrotest.SkipOrFail(t, "network namespaces need root")
	}
	n := &testNamespace{t: t, name: fmt.Sprintf("ferro-%s-%d", prefix, os.Getpid()), ipTool: ipTool}
	n.ip("netns", "add", n.name)
	t.Cleanup(func() { exec.Command(ipTool, "netns", "del", n.name).Run() })
	netnstest.PrivateResolvConf(t, n.name)
	return n
}

// ip runs iproute2 with args (add "-n", n.name for the namespace's side);
// a failure ends the test.
func (n *testNamespace) ip(args ...string) {
	n.t.Helper()
	if out, err := exec.Command(n.ipTool, args...).CombinedOutput(); err != nil {
		n.t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// command is name with args run inside the namespace.
func (n *testNamespace) command(name string, args ...string) *exec.Cmd {
	return exec.Command(n.ipTool, append([]string{"netns", "exec", n.name, name}, args...)...)
}

// helper is this test binary run inside the namespace with env set (its
// TestMain dispatches on the variable) and no test selected.
func (n *testNamespace) helper(env string) *exec.Cmd {
	n.t.Helper()
	self, err := os.Executable()
	if err != nil {
		n.t.Fatal(err)
	}
	c := n.command(self, "-test.run=^$")
	c.Env = append(os.Environ(), env)
	return c
}
