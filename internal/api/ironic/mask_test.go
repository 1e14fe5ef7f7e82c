package ironic

import (
	"slices"
	"strings"
	"testing"
)

func TestSecretAnchors_CoverSanitizeKeys(t *testing.T) {
	for _, k := range sanitizeKeys {
		if !slices.ContainsFunc(secretAnchors, func(a string) bool { return strings.Contains(k, a) }) {
			t.Errorf("sanitize key %q contains none of secretAnchors: namesSecret would miss it", k)
		}
	}
}

// namesSecret with its anchor scan answers as the plain search of every
// word does.
func TestNamesSecret_AsPlainSearch(t *testing.T) {
	plain := func(s string) bool {
		lower := strings.ToLower(s)
		return slices.ContainsFunc(sanitizeKeys, func(k string) bool { return strings.Contains(lower, k) })
	}
	cases := []string{"", "http://images.example/ipa.kernel", "nofb console=ttyS0", "PaSsWoRd=1", "\u0130pass", "İ", "sha256:00ab", "--Password x", "ipmi_PASSWORD=x",
		"\u212Aey=1", "s", "keystone", "cephMonKey: y", "x-auth-token", "tok", "pswd", "ConfigDrive", "fsi", "ünïcode secret"}
	cases = append(cases, sanitizeKeys...)
	for _, k := range sanitizeKeys {
		cases = append(cases, strings.ToUpper(k)+"=1", "a"+k[:len(k)-1])
	}
	for _, s := range cases {
		if got, want := namesSecret(s), plain(s); got != want {
			t.Errorf("namesSecret(%q) = %v, want %v", s, got, want)
		}
	}
}

// hasSecretAnchor's letter switch finds every anchor, and nothing shorter.
func TestHasSecretAnchor(t *testing.T) {
	for _, a := range secretAnchors {
		if !hasSecretAnchor(a) || !hasSecretAnchor("x-"+a+"-y") || !hasSecretAnchor(strings.ToUpper(a)) {
			t.Errorf("hasSecretAnchor misses %q", a)
		}
		if hasSecretAnchor(a[:len(a)-1]) || hasSecretAnchor(a[1:]) {
			t.Errorf("hasSecretAnchor finds a part of %q", a)
		}
	}
}
