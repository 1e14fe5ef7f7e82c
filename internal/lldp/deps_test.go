package lldp

import (
	"go/build"
	"strings"
	"testing"
)

// The agent imports this package, so it must stay on the standard library.
func TestImportsOnlyStdlib(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if first, _, _ := strings.Cut(imp, "/"); strings.Contains(first, ".") {
			t.Errorf("imports %s, which is not in the standard library", imp)
		}
	}
}
