// Package iparelease gives tests the report every ironic-python-agent
// release from 9.4 to 12.0 posts, with the headers it posts it with
// (testdata/ipa/releases, written by its generate.py from IPA's own code at
// each release tag).
package iparelease

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Release is one IPA release's report.
type Release struct {
	Release string `json:"release"` // the tag, e.g. "9.8.0"
	File    string `json:"file"`
	// Headers are those call_inspector sends, Content-Length aside:
	// without Content-Type before 9.9.
	Headers map[string]string `json:"headers"`
	// Paths are the callback paths the release posts to: /v1/continue
	// (ipa-inspection-callback-url), and from 9.10
	// /v1/continue_inspection under ipa-api-url.
	Paths []string `json:"paths"`
	// MACs are the NICs' addresses, the PXE NIC first.
	MACs []string `json:"macs"`
	// BMCAddress is inventory.bmc_address, nil when the release sends null.
	BMCAddress *string `json:"bmc_address"`
}

// Dir is the directory of the fixtures.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "ipa", "releases")
}

// All returns every release, oldest first.
func All(tb testing.TB) []Release {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), "releases.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var rs []Release
	if err := json.Unmarshal(b, &rs); err != nil {
		tb.Fatal(err)
	}
	if len(rs) == 0 {
		tb.Fatal("no IPA releases in releases.json")
	}
	return rs
}

// Body returns the release's report, byte for byte as the agent posts it.
func (r Release) Body(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), r.File))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Header returns the request headers.
func (r Release) Header() http.Header {
	h := http.Header{}
	for k, v := range r.Headers {
		h.Set(k, v)
	}
	return h
}

// AtLeast reports whether the release is major.minor or later.
func (r Release) AtLeast(major, minor int) bool {
	parts := strings.Split(r.Release, ".")
	ma, _ := strconv.Atoi(parts[0])
	mi := 0
	if len(parts) > 1 {
		mi, _ = strconv.Atoi(parts[1])
	}
	return ma > major || ma == major && mi >= minor
}
