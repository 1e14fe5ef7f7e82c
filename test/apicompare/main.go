// Command apicompare sends the same few thousand requests to two
// `ferro serve` binaries and reports every answer that differs: the
// before/after check of a change that must not change the Ironic API.
//
//	go run ./test/apicompare -a /tmp/ferro-main -b bin/ferro [-out DIR]
//
// Each binary runs on its embedded defaults (a fresh SQLite data directory,
// noauth, fake-hardware enabled) on free loopback ports. The requests
// (script.go) cover every resource, list filter, sort key, marker, limit,
// detail and fields, microversions 1.1 to 1.115 and above the maximum, bad
// input of every kind, PATCH on internal and mandatory fields, other
// methods, provision and power verbs on fake-hardware nodes and the .json
// suffix. Answers are compared after normalisation (normalise.go): status,
// headers but Date, and body, with request ids, times and the UUIDs the
// servers generated replaced by placeholders.
//
// It exits 1 when an answer differs, 2 when it cannot run. With -out, the
// two normalised transcripts are written to DIR/a.txt and DIR/b.txt, for
// diff(1), and to check that a binary compared with itself is stable.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(argv []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("apicompare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	binA := fs.String("a", "", "the `ferro` binary before the change")
	binB := fs.String("b", "", "the `ferro` binary after the change")
	out := fs.String("out", "", "write the normalised transcripts to `DIR`/a.txt and b.txt")
	show := fs.Int("show", 20, "how many differences to print in full")
	only := fs.String("only", "", "run only the steps whose description matches `REGEXP` (and every setup step)")
	if err := fs.Parse(argv); err != nil {
		return 2
	}
	if *binA == "" || *binB == "" {
		fmt.Fprintln(stderr, "usage: apicompare -a FERRO_BEFORE -b FERRO_AFTER [-out DIR] [-show N] [-only REGEXP]")
		return 2
	}
	for _, bin := range []*string{binA, binB} {
		abs, err := filepath.Abs(*bin)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		*bin = abs // the servers run in their data directories
	}
	var filter *regexp.Regexp
	if *only != "" {
		var err error
		if filter, err = regexp.Compile(*only); err != nil {
			fmt.Fprintf(stderr, "-only: %v\n", err)
			return 2
		}
	}
	tmp, err := os.MkdirTemp("", "apicompare-")
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	defer os.RemoveAll(tmp)

	ctx := context.Background()
	a, err := startServer(ctx, "a", *binA, tmp)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	defer a.stop()
	b, err := startServer(ctx, "b", *binB, tmp)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	defer b.stop()

	steps := buildScript()
	c := &comparison{targets: [2]*target{newTarget(a), newTarget(b)}, show: *show, stdout: stdout}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		for i, name := range []string{"a.txt", "b.txt"} {
			f, err := os.Create(filepath.Join(*out, name))
			if err != nil {
				fmt.Fprintln(stderr, err)
				return 2
			}
			defer f.Close()
			c.transcripts[i] = f
		}
	}
	start := time.Now()
	for i, st := range steps {
		if filter != nil && !st.setup && !filter.MatchString(st.describe()) {
			continue
		}
		if err := c.step(i, st); err != nil {
			fmt.Fprintf(stderr, "step %d (%s): %v\n", i, st.describe(), err)
			return 2
		}
	}
	fmt.Fprintf(stdout, "apicompare: %d requests compared (%d steps, %d waits) in %s: %d differ\n",
		c.compared, len(steps), c.waits, time.Since(start).Round(time.Second), c.differ)
	if c.differ > 0 {
		return 1
	}
	return 0
}

// step is one request of the script, or a wait.
type step struct {
	method string
	// path is below the server's root, with the query; {name} is replaced
	// by what capture stored under name on the same server.
	path    string
	version string // X-OpenStack-Ironic-API-Version; "" sends none
	header  map[string]string
	body    string
	note    string
	// setup steps run whatever -only says: later steps need them.
	setup bool
	// capture stores values of the answer for later paths and bodies.
	capture map[string]func(answer) string
	// until makes the step a wait: it is repeated, not compared, until
	// until holds (or a minute has passed, which is a difference).
	until func(answer) bool
}

func (st step) describe() string {
	v := st.version
	if v == "" {
		v = "no version"
	}
	d := st.method + " " + st.path + " (" + v + ")"
	if st.note != "" {
		d += " " + st.note
	}
	return d
}

// target is one server and what the script stored about it.
type target struct {
	srv    *server
	vars   map[string]string
	norm   *normaliser
	client *http.Client
}

func newTarget(s *server) *target {
	return &target{
		srv:  s,
		vars: map[string]string{},
		norm: newNormaliser(chosenUUID),
		client: &http.Client{
			Timeout:       2 * time.Minute,
			Transport:     &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

var varRE = regexp.MustCompile(`\{[a-z][a-z0-9_]*\}`)

// expand replaces {name} by the target's value of name.
func (t *target) expand(s string) string {
	return varRE.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := t.vars[m[1:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// linkHost is the Host every request carries, so that both servers' links
// are the same text whatever port they listen on.
const linkHost = "ferro.test:6385"

// send makes one request. The path goes out as written (no cleaning, no
// escaping), which lets the script send odd paths.
func (t *target) send(st step) (answer, error) {
	path, query, _ := strings.Cut(t.expand(st.path), "?")
	base, _ := url.Parse(t.srv.url)
	body := t.expand(st.body)
	req := &http.Request{
		Method: st.method,
		URL:    &url.URL{Scheme: base.Scheme, Host: base.Host, Opaque: path, RawQuery: query},
		Header: http.Header{},
		Host:   linkHost,
	}
	if strings.Contains(st.path, "?") && query == "" {
		req.URL.ForceQuery = true
	}
	if st.body != "" {
		req.Body = io.NopCloser(strings.NewReader(body))
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", "application/json")
	}
	if st.version != "" {
		req.Header.Set("X-OpenStack-Ironic-API-Version", st.version)
	}
	for k, v := range st.header {
		req.Header.Set(k, v)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, err
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: b,
		chunked: len(resp.TransferEncoding) > 0 && resp.TransferEncoding[0] == "chunked"}, nil
}

// comparison runs the script on both targets.
type comparison struct {
	targets         [2]*target
	transcripts     [2]io.Writer
	compared, waits int
	differ, show    int
	stdout          io.Writer
}

func (c *comparison) step(i int, st step) error {
	if st.until != nil {
		c.waits++
		for _, t := range c.targets {
			if err := c.wait(t, st); err != nil {
				c.differ++
				fmt.Fprintf(c.stdout, "--- step %d, %s: server %s: %v\n", i, st.describe(), t.srv.name, err)
			}
		}
		return nil
	}
	var texts [2]string
	for k, t := range c.targets {
		ans, err := t.send(st)
		if err != nil {
			return fmt.Errorf("server %s: %w", t.srv.name, err)
		}
		for name, get := range st.capture {
			t.vars[name] = get(ans)
		}
		texts[k] = t.norm.render(ans)
		if w := c.transcripts[k]; w != nil {
			fmt.Fprintf(w, "### %d %s\n%s%s\n\n", i, st.describe(), requestBody(st.body), texts[k])
		}
	}
	c.compared++
	if texts[0] != texts[1] {
		c.differ++
		if c.differ <= c.show {
			fmt.Fprintf(c.stdout, "--- step %d differs: %s\n%s\n", i, st.describe(), showDiff(texts[0], texts[1]))
		}
	}
	return nil
}

// wait repeats a wait step on t until its condition holds.
func (c *comparison) wait(t *target, st step) error {
	deadline := time.Now().Add(time.Minute)
	for {
		ans, err := t.send(st)
		if err != nil {
			return err
		}
		if st.until(ans) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still not there after a minute: HTTP %d %s", ans.status, ans.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// requestBody is the start of a request's body, for a transcript.
func requestBody(b string) string {
	if b == "" {
		return ""
	}
	if len(b) > 300 {
		b = b[:300] + "…"
	}
	return "> " + b + "\n"
}

// showDiff shows two texts around their first difference.
func showDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-300)
	cut := func(s string) string {
		to := min(len(s), i+300)
		pre := ""
		if from > 0 {
			pre = "…"
		}
		return pre + s[from:to]
	}
	return "a: " + cut(a) + "\nb: " + cut(b) + "\n"
}

// jsonField is a capture of a string member of the answer's JSON body,
// named by a path of keys and list indexes ("conductors", "0", "hostname").
func jsonField(path ...string) func(answer) string {
	return func(a answer) string {
		v, ok := jsonAt(a.body, path...)
		if !ok {
			return ""
		}
		s, _ := v.(string)
		return s
	}
}

// jsonAt is the value at path in a JSON body.
func jsonAt(body []byte, path ...string) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[p]; !ok {
				return nil, false
			}
		case []any:
			var n int
			if _, err := fmt.Sscan(p, &n); err != nil || n < 0 || n >= len(x) {
				return nil, false
			}
			v = x[n]
		default:
			return nil, false
		}
	}
	return v, true
}
