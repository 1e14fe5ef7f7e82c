package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func runCmd(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestRun_FlagsAreStrictAndHelpIsReal(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "Usage:"},
		{[]string{"--help"}, 0, "ferro-vbmc serve --config FILE"},
		{[]string{"serve", "--help"}, 0, "-ready-file file"},
		{[]string{"bogus"}, 2, `unknown command "bogus"`},
		{[]string{"serve"}, 2, "--config is required"},
		{[]string{"serve", "--config", "x.json", "extra"}, 2, "unexpected arguments"},
		{[]string{"serve", "--confg", "x.json"}, 2, "flag provided but not defined: -confg"},
		{[]string{"serve", "--config", "x.json", "--log-format", "xml"}, 2, `--log-format "xml"`},
		{[]string{"serve", "--config", filepath.Join(t.TempDir(), "missing.json")}, 1, "read config"},
	}
	for _, tc := range cases {
		code, stdout, stderr := runCmd(t, context.Background(), tc.args...)
		if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("ferro-vbmc %q: exit %d, output %q; want exit %d and %q", tc.args, code, stdout+stderr, tc.code, tc.want)
		}
	}
}

func TestServe_BadConfigNamesTheField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vbmc.json")
	os.WriteFile(path, []byte(`{"username":"a","password":"b","redfish":{"listen":"127.0.0.1:0"},
		"machines":[{"name":"m","backend":"fake","cpus":1,"memory_mb":1000,"macs":["52:54:00:00:00:01"]}]}`), 0o600)
	code, _, stderr := runCmd(t, context.Background(), "serve", "--config", path)
	if code != 1 || !strings.Contains(stderr, "machines[0].memory_mb: 1000 must be a positive multiple of 1024") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestServe_WritesReadyFileAndStopsCleanly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vbmc.json")
	os.WriteFile(path, []byte(`{"username":"admin","password":"pw","redfish":{"listen":"127.0.0.1:0"},
		"machines":[{"name":"m","backend":"fake","ipmi_listen":"127.0.0.1:0","cpus":1,"memory_mb":1024,"macs":["52:54:00:00:00:01"]}]}`), 0o600)
	readyFile := filepath.Join(dir, "ready.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--config", path, "--ready-file", readyFile}, &stdout, &stderr)
	}()
	deadline := time.After(30 * time.Second)
	for !strings.Contains(stdout.String(), ReadyPrefix) {
		select {
		case code := <-done:
			t.Fatalf("exited %d before ready: %s", code, stderr.String())
		case <-deadline:
			t.Fatalf("not ready: %s", stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	var rd struct {
		RedfishURL string            `json:"redfish_url"`
		IPMI       map[string]string `json:"ipmi"`
	}
	data, err := os.ReadFile(readyFile)
	if err != nil || json.Unmarshal(data, &rd) != nil || rd.IPMI["m"] == "" {
		t.Fatalf("ready file %q: %v", data, err)
	}
	line := strings.TrimSpace(strings.TrimPrefix(stdout.String(), ReadyPrefix))
	if line != strings.TrimSpace(string(data)) {
		t.Errorf("ready line %q and ready file %q differ", line, data)
	}
	resp, err := http.Get(rd.RedfishURL + "/redfish/v1/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("service root: %v %v", resp, err)
	}
	resp.Body.Close()
	cancel() // as SIGTERM does
	if code := <-done; code != 0 {
		t.Fatalf("exit %d after the stop signal: %s", code, stderr.String())
	}
	if strings.Contains(stderr.String(), `"pw"`) || strings.Contains(stderr.String(), "=pw ") {
		t.Errorf("the password appears in the log: %s", stderr.String())
	}
}

// Every command and the top level: --help and -h print the usage to stdout
// and exit 0; a flag it does not have exits 2 with the usage on stderr.
func TestRun_EveryCommandHelpAndBadFlag(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string // must contain; "" must be empty
	}{
		{[]string{"--help"}, 0, "Usage:\n  ferro-vbmc serve", ""},
		{[]string{"-h"}, 0, "Usage:\n  ferro-vbmc serve", ""},
		{[]string{"help"}, 0, "Usage:\n  ferro-vbmc serve", ""},
		{[]string{"--no-such-flag"}, 2, "", "Usage:\n  ferro-vbmc serve"},
		{[]string{"serve", "--help"}, 0, "Usage: ferro-vbmc serve --config FILE", ""},
		{[]string{"serve", "-h"}, 0, "Usage: ferro-vbmc serve --config FILE", ""},
		{[]string{"serve", "--no-such-flag"}, 2, "", "Usage: ferro-vbmc serve --config FILE"},
	} {
		code, stdout, stderr := runCmd(t, context.Background(), tc.args...)
		if code != tc.code || !strings.Contains(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) ||
			(tc.stdout == "" && stdout != "") || (tc.stderr == "" && stderr != "") {
			t.Errorf("ferro-vbmc %q: exit %d, stdout %q, stderr %q; want exit %d", tc.args, code, stdout, stderr, tc.code)
		}
	}
}
