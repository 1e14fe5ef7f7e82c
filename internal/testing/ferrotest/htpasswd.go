package ferrotest

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// Htpasswd writes an Apache user file with Debian's htpasswd (apache2-utils)
// for the user/password pairs, hashed with bcrypt (-B) as http_basic
// requires, and returns its path. Other flags (-m for MD5) may be given
// first: Htpasswd(t, []string{"-m"}, "u", "p").
func Htpasswd(t testing.TB, flags []string, userPasswords ...string) string {
	t.Helper()
	bin := RequireTool(t, "htpasswd")
	if flags == nil {
		flags = []string{"-B"}
	}
	path := filepath.Join(t.TempDir(), "htpasswd")
	for i := 0; i+1 < len(userPasswords); i += 2 {
		args := append([]string{"-b"}, flags...)
		if i == 0 {
			args = append(args, "-c")
		}
		args = append(args, path, userPasswords[i], userPasswords[i+1])
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("htpasswd %v: %v: %s", args[:len(args)-1], err, out)
		}
	}
	return path
}
