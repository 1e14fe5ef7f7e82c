package ferrotest

import (
	"strings"
	"testing"
)

// AssertNoSecrets fails t for every secret (a password, a token) that
// occurs in logs, naming what and where (the surrounding text, with the
// secret itself masked). what says whose logs they are ("ferro serve",
// "ferro-vbmc"). Empty secrets are ignored; a secret shorter than 6
// characters is refused, since it would match by chance.
func AssertNoSecrets(t testing.TB, what, logs string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s == "" {
			continue
		}
		if len(s) < 6 {
			t.Errorf("AssertNoSecrets: secret %q is too short to search for (use at least 6 characters)", s)
			continue
		}
		if n := strings.Count(logs, s); n > 0 {
			i := strings.Index(logs, s)
			from, to := max(0, i-80), min(len(logs), i+len(s)+80)
			ctx := strings.ReplaceAll(logs[from:to], s, "<SECRET>")
			t.Errorf("a secret (%d characters) appears %d time(s) in %s's log, e.g. …%s…", len(s), n, what, ctx)
		}
	}
}
