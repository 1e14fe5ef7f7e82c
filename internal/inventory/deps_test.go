package inventory

import (
	"go/build"
	"strings"
	"testing"
)

// The agent imports this package, so it must stay on the standard library
// (and ferro's own standard-library-only leaves).
func TestImportsOnlyStdlib(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if imp == "github.com/ferrometal/ferro/internal/jsonlimit" {
			continue
		}
		if first, _, _ := strings.Cut(imp, "/"); strings.Contains(first, ".") {
			t.Errorf("imports %s, which is not in the standard library", imp)
		}
	}
}
