// Package ferrotest is the test harness shared by ferro's test lanes: it
// builds the ferro binary, runs `ferro serve` as a real process, and decides
// whether a missing external tool skips a test or fails it.
//
// Locally a lane whose tool is missing is skipped. In CI (CI=true) nothing may
// skip: a missing tool is a failure, so a broken CI image cannot pass quietly.
package ferrotest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// InCI reports whether the tests run in CI, where every lane must run.
func InCI() bool { return os.Getenv("CI") == "true" }

// SkipOrFail skips the test with the formatted reason, or fails it when
// running in CI.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("%s (CI=true: lanes must not skip)", msg)
	}
	t.Skip(msg)
}

// debianPackage names the Debian package that provides a tool, for the
// message shown when it is missing.
var debianPackage = map[string]string{
	"baremetal":          "python3-ironicclient",
	"ipmitool":           "ipmitool",
	"ipmi_sim":           "openipmi",
	"keystone-manage":    "keystone",
	"uwsgi":              "uwsgi-plugin-python3",
	"subunit2csv":        "subunit",
	"initdb":             "postgresql",
	"pg_ctl":             "postgresql",
	"postgres":           "postgresql",
	"neutron-server":     "neutron-server",
	"qemu-system-x86_64": "qemu-system-x86",
	"isoinfo":            "genisoimage",
	"qemu-img":           "qemu-utils",
	"python3":            "python3",
	"busybox":            "busybox",
	"tftp":               "tftp-hpa",
	"curl":               "curl",
	"htpasswd":           "apache2-utils",
	"lldpd":              "lldpd",
	"lldpcli":            "lldpd",
	"apt-get":            "apt",
	"dpkg-deb":           "dpkg",
	"ip":                 "iproute2",
}

// RequireTool returns the absolute path of the executable name, looked up in
// PATH and then in dirs (glob patterns allowed, e.g.
// "/usr/lib/postgresql/*/bin"). When it is not found the test is skipped, or
// fails in CI.
func RequireTool(t testing.TB, name string, dirs ...string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
		return p
	}
	for _, pattern := range dirs {
		matches, _ := filepath.Glob(filepath.Join(pattern, name))
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return m
			}
		}
	}
	hint := ""
	if pkg, ok := debianPackage[name]; ok {
		hint = fmt.Sprintf(" (Debian package %s; .ci/run installs it)", pkg)
	}
	SkipOrFail(t, "%s not found in PATH%s", name, hint)
	return ""
}
