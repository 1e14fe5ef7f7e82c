package main

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// answer is one response, as it is compared.
type answer struct {
	status  int
	header  http.Header
	body    []byte
	chunked bool
}

var (
	uuidRE      = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	requestIDRE = regexp.MustCompile(`req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRE      = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:[+-]\d\d:\d\d|Z)?`)
)

// ignoredHeaders differ on every answer and say nothing about the API.
var ignoredHeaders = []string{"Date"}

// normaliser rewrites one server's answers so that two servers given the
// same requests answer the same text: request ids and times become
// placeholders, and every UUID the harness did not choose becomes
// <uuid-N>, numbered in the order the server first showed it.
type normaliser struct {
	chosen func(uuid string) bool
	seen   map[string]string
}

func newNormaliser(chosen func(string) bool) *normaliser {
	return &normaliser{chosen: chosen, seen: map[string]string{}}
}

// text normalises a piece of an answer.
func (n *normaliser) text(s string) string {
	s = requestIDRE.ReplaceAllString(s, "req-<id>")
	s = timeRE.ReplaceAllString(s, "<time>")
	return uuidRE.ReplaceAllStringFunc(s, func(u string) string {
		if n.chosen(u) {
			return u
		}
		key := strings.ToLower(u)
		tok, ok := n.seen[key]
		if !ok {
			tok = "<uuid-" + strconv.Itoa(len(n.seen)+1) + ">"
			n.seen[key] = tok
		}
		return tok
	})
}

// render is the answer as the text that is compared: the status, the
// headers that matter (sorted, Content-Length as whether it is present
// and right), and the body.
func (n *normaliser) render(a answer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %d\n", a.status)
	names := make([]string, 0, len(a.header))
	for k := range a.header {
		if !slices.Contains(ignoredHeaders, k) {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		for _, v := range a.header[k] {
			switch k {
			case "Content-Length":
				if v == strconv.Itoa(len(a.body)) {
					v = "<length of the body>"
				} else {
					v += " (the body has " + strconv.Itoa(len(a.body)) + ")"
				}
			default:
				v = n.text(v)
			}
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	if a.chunked {
		b.WriteString("(chunked)\n")
	}
	b.WriteString("\n")
	b.WriteString(n.text(string(a.body)))
	return b.String()
}
