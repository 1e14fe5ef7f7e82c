package rules

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPath(t *testing.T) {
	var doc any
	_ = json.Unmarshal([]byte(`{"a":{"b":[{"c":1},{"c":2},{"d":3}],"x.y":"dotted","o":{"k2":"v2","k1":"v1"}},"n":null,"s":"str"}`), &doc)
	tests := []struct {
		path string
		want []any
	}{
		{"a.b[0].c", []any{1.0}},
		{"$.a.b[1].c", []any{2.0}},
		{"a.b[*].c", []any{1.0, 2.0}},
		{"a.b[1:].c", []any{2.0}},
		{"a.b[:-1].c", []any{1.0, 2.0}},
		{"a.b[7].c", nil},
		{"a.b.c", nil}, // fields do not reach into lists
		{"a.'x.y'", []any{"dotted"}},
		{`a."x.y"`, []any{"dotted"}},
		{"a.o.*", []any{"v1", "v2"}},
		{"a.o[*].k1", []any{"v1"}}, // [*] on an object is the object
		{"s[*]", []any{"str"}},
		{"n[*]", nil},
		{"n", []any{nil}},
		{"missing", nil},
		{"$", []any{doc}},
	}
	for _, tt := range tests {
		p, err := ParsePath(tt.path)
		if err != nil {
			t.Errorf("ParsePath(%q): %v", tt.path, err)
			continue
		}
		if diff := cmp.Diff(tt.want, p.Find(doc)); diff != "" {
			t.Errorf("find(%q) (-want +got):\n%s", tt.path, diff)
		}
	}
	for _, bad := range []string{"", "a.", ".a", "a..b", "a[", "a[x]", "a[-1]", "a b", "a.'b", "$x", "a[0]b"} {
		if _, err := ParsePath(bad); err == nil {
			t.Errorf("ParsePath(%q): no error", bad)
		}
	}
}
