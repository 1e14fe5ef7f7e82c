package jsonlimit

import (
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	deep := strings.Repeat("[", 26) + strings.Repeat("]", 26)
	many := "[" + strings.Repeat("{},", 1000) + "{}]"
	tests := []struct {
		name string
		in   string
		l    Limits
		want error
	}{
		{"flat object", `{"a": 1, "b": [1, 2, 3]}`, Limits{MaxDepth: 2, MaxValues: 10}, nil},
		{"too deep", deep, Limits{MaxDepth: 25}, ErrTooDeep},
		{"exactly deep enough", strings.Repeat("[", 25) + strings.Repeat("]", 25), Limits{MaxDepth: 25}, nil},
		{"brackets in strings do not count", `{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "b": "\"[[["}`, Limits{MaxDepth: 1}, nil},
		{"commas in strings do not count", `["a,b,c,d,e,f"]`, Limits{MaxValues: 2}, nil},
		{"too many values", many, Limits{MaxValues: 1000}, ErrTooMany},
		{"no limits", many + deep, Limits{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check([]byte(tt.in), tt.l)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
		})
	}
}

func FuzzCheck(f *testing.F) {
	f.Add([]byte(`{"a":[1,2,{"b":"c\"]"}]}`), 3, 5)
	f.Fuzz(func(t *testing.T, b []byte, depth, values int) {
		_ = Check(b, Limits{MaxDepth: depth % 64, MaxValues: values % 1024})
	})
}

func TestValues(t *testing.T) {
	for in, want := range map[string]int{
		`{}`:                                     2, // one more than there is: an upper bound
		`{"a": 1, "b": [1, 2, 3]}`:               6,
		`["a,b", "c"]`:                           3,
		`[[1],[2],[3]]`:                          7,
		"[" + strings.Repeat("{},", 999) + "{}]": 2001,
	} {
		if got := Values([]byte(in)); got != want {
			t.Errorf("Values(%.40q) = %d, want %d", in, got, want)
		}
	}
}

func TestMember(t *testing.T) {
	for _, tc := range []struct {
		doc, key, want string
		ok             bool
	}{
		{`{"a": 1, "inventory": {"x": [1, "}", {"y": "\"]"}]}, "b": null}`, "inventory", `{"x": [1, "}", {"y": "\"]"}]}`, true},
		{` { "inventory" : "s\"t" } `, "inventory", `"s\"t"`, true},
		{`{"inventory": 1, "inventory": [2]}`, "inventory", `[2]`, true},
		{`{"inventory": -1.5e3}`, "inventory", `-1.5e3`, true},
		{`{"other": {"inventory": 1}}`, "inventory", ``, false},
		{`{"\u0069nventory": 1}`, "inventory", ``, false},
		{`[{"inventory": 1}]`, "inventory", ``, false},
	} {
		got, ok := Member([]byte(tc.doc), tc.key)
		if string(got) != tc.want || ok != tc.ok {
			t.Errorf("Member(%s) = %q, %v; want %q, %v", tc.doc, got, ok, tc.want, tc.ok)
		}
	}
}
