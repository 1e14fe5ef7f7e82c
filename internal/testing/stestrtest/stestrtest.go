// Package stestrtest reads what the Python lanes' test runner (stestr,
// with subunit2csv) reports, for the lanes that run OpenStack's own test
// suites against ferro and compare them with a stored Ironic baseline
// (test/tempest, test/sdk).
package stestrtest

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// ParseCSV reads subunit2csv's output (test,status,start_time,stop_time)
// into status by test id, without the attributes in brackets
// ("…test_x[id-…,smoke]" is "…test_x"). Tempest's class-level setUpClass
// failures appear as a pseudo-test named after the class; they are kept,
// so that a class that cannot start shows.
func ParseCSV(r io.Reader) (map[string]string, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("parse subunit2csv's output: %w", err)
	}
	results := map[string]string{}
	for i, row := range rows {
		if i == 0 || len(row) < 2 {
			continue // header
		}
		id := row[0]
		if j := strings.IndexByte(id, '['); j >= 0 {
			id = id[:j]
		}
		results[id] = row[1]
	}
	return results, nil
}

// ReadList reads a baseline: one test id per line, # comments and blank
// lines skipped.
func ReadList(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			ids = append(ids, line)
		}
	}
	return ids, sc.Err()
}

// LogFailures logs the tracebacks of the failed tests of the stestr
// repository in dir (stestr failing).
func LogFailures(t *testing.T, dir, python string, env []string) {
	cmd := exec.Command(python, "-m", "stestr", "failing")
	cmd.Dir = dir
	cmd.Env = env
	out, _ := cmd.CombinedOutput()
	t.Logf("stestr failing:\n%s", Tail(string(out), 60000))
}

// Tail is the last n bytes of s, marked when cut.
func Tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
