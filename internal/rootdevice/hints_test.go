package rootdevice

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"foo", []string{"foo"}},
		{"foo bar", []string{"foo"}},
		{"s== foo", []string{"s==", "foo"}},
		{"==10", []string{"==", "10"}},
		{">= 10", []string{">=", "10"}},
		{"<= 10", []string{"<=", "10"}},
		{"< 10", []string{"<", "10"}},
		{"= 10", []string{"=", "10"}},
		{"<in> abc", []string{"<in>", "abc"}},
		{"<or> a <or> b", []string{"<or>", "a", "b"}},
		{"<all-in> a b", []string{"<all-in>", "a", "b"}},
		{"<range-in> [ 1 2 ]", []string{"<range-in>", "[", "1", "2", "]"}},
		{"<or>", []string{"<", "or>"}}, // as pyparsing does
	}
	for _, tt := range tests {
		got, err := parseSpec(tt.in)
		if err != nil {
			t.Errorf("parseSpec(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseSpec(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
	for _, bad := range []string{"", "==", "s== <in>", "=< 5"} {
		if got, err := parseSpec(bad); err == nil {
			t.Errorf("parseSpec(%q) = %q, want an error", bad, got)
		}
	}
}

func TestNormalizeHintExpression(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Foo Bar", "foo%20bar"},
		{"<or> foo bar <or> bar", "<or> foo%20bar <or> bar"},
		{"s== /dev/sda", "s== /dev/sda"},
		{"<in> 2:0:0", "<in> 2%3A0%3A0"},
		{"naïve", "na%C3%AFve"},
	}
	for _, tt := range tests {
		got, err := normalizeHintExpression(tt.in, "model")
		if err != nil || got != tt.want {
			t.Errorf("normalizeHintExpression(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
