package localfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestRead_OnlyRegularFilesWithinTheBound(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("0123456789"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(small, link)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	devLink := filepath.Join(dir, "zero")
	os.Symlink("/dev/zero", devLink)
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("x"), 0o000)

	for _, tc := range []struct {
		path string
		max  int64
		ok   bool
	}{
		{small, 10, true},
		{link, 10, true}, // symlinks to regular files are fine
		{small, 9, false},
		{fifo, 10, false}, // would block a plain open
		{"/dev/zero", 1 << 20, false},
		{devLink, 1 << 20, false},
		{dir, 10, false},
		{filepath.Join(dir, "missing"), 10, false},
	} {
		b, err := Read(tc.path, tc.max)
		if tc.ok && (err != nil || string(b) != "0123456789") {
			t.Errorf("%s: %q, %v", tc.path, b, err)
		}
		if !tc.ok && !errors.Is(err, ErrUnusable) {
			t.Errorf("%s: %q, %v; want ErrUnusable", tc.path, b, err)
		}
	}
	if os.Geteuid() != 0 {
		if _, err := Read(secret, 10); !errors.Is(err, ErrUnusable) {
			t.Errorf("unreadable file: %v", err)
		}
	}
}

func TestStatAndNames(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	if k, err := Stat(dir); err != nil || k != Directory {
		t.Errorf("Stat(dir) = %v, %v", k, err)
	}
	if k, err := Stat(filepath.Join(dir, "a")); err != nil || k != Regular {
		t.Errorf("Stat(file) = %v, %v", k, err)
	}
	for _, p := range []string{"/dev/null", "/dev/zero", filepath.Join(dir, "missing")} {
		if _, err := Stat(p); !errors.Is(err, ErrUnusable) {
			t.Errorf("Stat(%s) = %v", p, err)
		}
	}
	if names, err := Names(dir, 3); err != nil || len(names) != 3 {
		t.Errorf("Names(3) = %v, %v", names, err)
	}
	if _, err := Names(dir, 2); !errors.Is(err, ErrUnusable) {
		t.Errorf("Names(2) of 3 entries = %v", err)
	}
}
