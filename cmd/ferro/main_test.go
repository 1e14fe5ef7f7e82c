package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/ini.v1"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestCLI_StrictArgumentsAndHelp(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		code     int
		inStdout string
		inStderr string
	}{
		{[]string{"serve", "bogus"}, 2, "", `unexpected argument "bogus"`},
		{[]string{"serve", "--bogus"}, 2, "", "flag provided but not defined: -bogus"},
		{[]string{"serve", "--help"}, 0, "-data-dir", ""},
		{[]string{"serve", "-h"}, 0, "-log-format", ""},
		{[]string{"config", "--help"}, 0, "-data-dir", ""},
		{[]string{"config", "extra"}, 2, "", `unexpected argument "extra"`},
		{[]string{"version", "extra"}, 2, "", "unexpected argument"},
		{[]string{"version"}, 0, "commit", ""},
		{[]string{"help"}, 0, "ferro serve", ""},
		{[]string{}, 2, "", "Usage"},
		{[]string{"srve"}, 2, "", `unknown command "srve"`},
	} {
		code, stdout, stderr := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(stdout, tc.inStdout) || !strings.Contains(stderr, tc.inStderr) {
			t.Errorf("ferro %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(tc.args, " "), code, tc.code, stdout, stderr)
		}
	}
}

func TestCLI_ServeRefusesNegativeDuration(t *testing.T) {
	t.Setenv("FERRO_CONDUCTOR_INSPECT_WAIT_TIMEOUT", "-5")
	code, _, stderr := runCLI(t, "serve", "--data-dir", t.TempDir())
	if code != 1 || !strings.Contains(stderr, "[conductor]inspect_wait_timeout is -5: it must not be negative") {
		t.Errorf("exit %d, stderr %q; want a refusal naming the option", code, stderr)
	}
}

// ferro config prints INI that loads back, with effective values, secrets
// masked and where each value came from.
func TestCLI_ConfigIsPasteableINI(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ferro.conf")
	os.WriteFile(file, []byte("[api]\nport = 7000\n[neutron]\npassword = n3utron\n[pci_devices]\nalias = `{\"name\": \"a\"};{\"name\": \"b\"}`\n"), 0o600)
	t.Setenv("FERRO_DATABASE_CONNECTION", "postgresql://ferro:db-s3cret@db.example:5432/ferro?sslmode=disable")
	t.Setenv("FERRO_INSPECTOR_PASSWORD", "insp3ctor")
	code, stdout, stderr := runCLI(t, "config", "--config", file, "--data-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, secret := range []string{"db-s3cret", "n3utron", "insp3ctor"} {
		if strings.Contains(stdout, secret) {
			t.Errorf("ferro config shows the secret %q:\n%s", secret, stdout)
		}
	}
	f, err := ini.LoadSources(ini.LoadOptions{AllowBooleanKeys: true}, []byte(stdout))
	if err != nil {
		t.Fatalf("the output is not INI: %v\n%s", err, stdout)
	}
	for key, want := range map[string]string{
		"api.port":                "7000",
		"database.connection":     "postgresql://ferro:******@db.example:5432/ferro?sslmode=disable",
		"neutron.password":        "******",
		"pxe.tftp_root":           filepath.Join(dir, "tftpboot"),
		"deploy.http_root":        filepath.Join(dir, "httpboot"),
		"pci_devices.alias":       `{"name": "a"};{"name": "b"}`,
		"conductor.deploy_kernel": "",
	} {
		sec, opt, _ := strings.Cut(key, ".")
		if got := f.Section(sec).Key(opt).String(); got != want {
			t.Errorf("[%s]%s = %q, want %q", sec, opt, got, want)
		}
	}
	for _, want := range []string{
		"# file " + file + "\nport = 7000",
		"# env FERRO_DATABASE_CONNECTION, password masked\nconnection = ",
		"# file " + file + ", secret (masked)\npassword = ******",
		"# default, under --data-dir " + dir + "\ntftp_root = ",
		"# default\nhost_ip = 127.0.0.1",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

// ferro serve and ferro config refuse a mistyped section, option or
// variable alike, exit 1, naming each with the closest valid name.
func TestCLI_ServeAndConfigRefuseUnknownNamesAlike(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ferro.conf")
	os.WriteFile(file, []byte("[api]\nprot = 33385\n[databse]\nconnection = sqlite:///tmp/x.db\n"), 0o600)
	t.Setenv("FERRO_API_HOST_IPP", "0.0.0.0")
	var errs []string
	for _, cmd := range []string{"serve", "config"} {
		code, stdout, stderr := runCLI(t, cmd, "--config", file, "--data-dir", dir)
		if code != 1 || stdout != "" {
			t.Errorf("ferro %s: exit %d, stdout %q; want 1 and nothing", cmd, code, stdout)
		}
		for _, want := range []string{
			file + ":2: [api] has no option prot; did you mean [api]port?",
			file + ":3: ferro has no section [databse] (it sets connection); did you mean [database]?",
			"FERRO_API_HOST_IPP: no such option (FERRO_<SECTION>_<OPTION>); did you mean FERRO_API_HOST_IP?",
			"ignored_options = [api]prot, [databse], FERRO_API_HOST_IPP",
		} {
			if !strings.Contains(stderr, want) {
				t.Errorf("ferro %s: stderr lacks %q:\n%s", cmd, want, stderr)
			}
		}
		errs = append(errs, stderr)
	}
	if errs[0] != errs[1] {
		t.Errorf("serve and config disagree:\n%s\n---\n%s", errs[0], errs[1])
	}
}

// Every command: --help and -h print its usage to stdout and exit 0; a flag
// it does not have prints the error and the usage to stderr and exits 2.
// The flag lists are accurate: each flag's argument is one word (a
// back-quoted phrase in a flag's text would become its argument name).
func TestCLI_EveryCommandHelpAndBadFlag(t *testing.T) {
	type call struct {
		args           []string
		code           int
		stdout, stderr string // each must contain it; "" means must be empty
	}
	var calls []call
	for _, c := range commands {
		words := strings.Fields(c.name)
		usage := "Usage: ferro " + c.name
		if c.name == "help" {
			usage = "Usage:\n  ferro serve"
		}
		for _, h := range []string{"--help", "-h"} {
			calls = append(calls, call{append(slices.Clone(words), h), 0, usage, ""})
		}
		calls = append(calls, call{append(slices.Clone(words), "--no-such-flag"), 2, "", "flag provided but not defined: -no-such-flag"})
		if c.name != "help" {
			calls = append(calls, call{append([]string{"help"}, words...), 0, usage, ""})
		}
	}
	for _, group := range []string{"ramdisk", "lab"} {
		calls = append(calls,
			call{[]string{group, "--help"}, 0, "Usage:\n  ferro " + group + " ", ""},
			call{[]string{group}, 2, "", "Usage:\n  ferro " + group + " "},
			call{[]string{group, "bogus"}, 2, "", `unknown subcommand "bogus"`})
	}
	calls = append(calls, call{[]string{"--help"}, 0, "ferro lab up", ""}, call{[]string{"-h"}, 0, "ferro ramdisk build", ""})
	oneWord := regexp.MustCompile(`^  -[a-z-]+( [A-Za-z_]+)?$`)
	for _, tc := range calls {
		code, stdout, stderr := runCLI(t, tc.args...)
		name := "ferro " + strings.Join(tc.args, " ")
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", name, code, tc.code, stdout, stderr)
		}
		for _, o := range []struct{ got, want, which string }{{stdout, tc.stdout, "stdout"}, {stderr, tc.stderr, "stderr"}} {
			if (o.want == "" && o.got != "") || !strings.Contains(o.got, o.want) {
				t.Errorf("%s: %s = %q, want it to contain %q", name, o.which, o.got, o.want)
			}
		}
		if tc.code == 2 && tc.stderr != "" && !strings.Contains(stderr, "Usage:") {
			t.Errorf("%s: no usage on stderr: %q", name, stderr)
		}
		for _, line := range strings.Split(stdout, "\n") {
			if strings.HasPrefix(line, "  -") && !oneWord.MatchString(line) {
				t.Errorf("%s: flag line %q: its argument is not one word", name, line)
			}
		}
	}
}
