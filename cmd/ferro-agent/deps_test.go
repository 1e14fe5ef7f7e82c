//go:build linux

package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The agent runs in a small ramdisk and must not carry the server: this
// fails when cmd/ferro-agent links the store, the APIs, the configuration,
// OpenStack clients or a database driver (Tailscale's deptest, by hand).
func TestDeps_AgentLinksNoServerCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/ferrometal/ferro/internal/store",
		"github.com/ferrometal/ferro/internal/api",
		"github.com/ferrometal/ferro/internal/config",
		"github.com/ferrometal/ferro/internal/conductor",
		"github.com/ferrometal/ferro/internal/inspector",
		"github.com/ferrometal/ferro/internal/driver",
		"github.com/ferrometal/ferro/internal/ramdisk",
		"github.com/gophercloud/",
		"github.com/jackc/pgx",
		"modernc.org/",
		"database/sql",
		"github.com/mattn/go-sqlite3",
		"github.com/lib/pq",
		"github.com/diskfs/",
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps printed only %q", out)
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == strings.TrimSuffix(f, "/") || strings.HasPrefix(d, f) || strings.HasPrefix(d, f+"/") {
				t.Errorf("cmd/ferro-agent links %s (forbidden: %s)", d, f)
			}
		}
	}
}
