//go:build linux

package main

import (
	"bytes"
	"strings"
	"testing"
)

// ferro-agent has no flags: --help and -h print its usage to stdout and
// exit 0, anything else exits 2 with the usage on stderr, and nothing
// runs; as PID 1 the kernel's leftover words are not refused.
func TestCheckArgs_HelpAndStrayArguments(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		pid1     bool
		code     int
		done     bool
		out, err string
	}{
		{[]string{"--help"}, false, 0, true, "Usage: ferro-agent", ""},
		{[]string{"-h"}, false, 0, true, "Usage: ferro-agent", ""},
		{[]string{"--no-such-flag"}, false, 2, true, "", `unexpected argument "--no-such-flag"`},
		{[]string{"nofb"}, true, 0, false, "", ""},
		{nil, false, 0, false, "", ""},
	} {
		var stdout, stderr bytes.Buffer
		code, done := checkArgs(tc.args, tc.pid1, &stdout, &stderr)
		if code != tc.code || done != tc.done || !strings.Contains(stdout.String(), tc.out) || !strings.Contains(stderr.String(), tc.err) ||
			(tc.out == "" && stdout.Len() > 0) || (tc.err == "" && stderr.Len() > 0) {
			t.Errorf("ferro-agent %q (pid1 %v): exit %d, done %v, stdout %q, stderr %q", tc.args, tc.pid1, code, done, stdout.String(), stderr.String())
		}
		if tc.code == 2 && !strings.Contains(stderr.String(), "Usage: ferro-agent") {
			t.Errorf("ferro-agent %q: no usage on stderr", tc.args)
		}
	}
}
