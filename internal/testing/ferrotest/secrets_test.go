package ferrotest

import (
	"fmt"
	"strings"
	"testing"
)

// secretRecorder is a testing.TB that keeps the failures instead of reporting them.
type secretRecorder struct {
	testing.TB
	errs []string
}

func (r *secretRecorder) Helper() {}
func (r *secretRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestAssertNoSecrets(t *testing.T) {
	logs := "level=INFO msg=enrolled node=n1\nlevel=WARN msg=\"open session\" password=hunter2-secret bmc=127.0.0.1:623\n"
	r := &secretRecorder{TB: t}
	AssertNoSecrets(r, "ferro serve", logs, "hunter2-secret", "not-in-there", "")
	if len(r.errs) != 1 {
		t.Fatalf("failures = %q, want one", r.errs)
	}
	if strings.Contains(r.errs[0], "hunter2-secret") || !strings.Contains(r.errs[0], "password=<SECRET>") || !strings.Contains(r.errs[0], "ferro serve") {
		t.Errorf("failure %q: want the place shown, the secret masked and the log named", r.errs[0])
	}
	r = &secretRecorder{TB: t}
	AssertNoSecrets(r, "x", logs, "abc")
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "too short") {
		t.Errorf("a 3-character secret: failures %q, want it refused", r.errs)
	}
}
