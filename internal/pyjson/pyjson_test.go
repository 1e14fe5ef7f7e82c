package pyjson

import (
	"encoding/json"
	"math"
	"testing"
)

func TestStrAndRepr(t *testing.T) {
	tests := []struct {
		v         any
		str, repr string
	}{
		{nil, "None", "None"},
		{true, "True", "True"},
		{"it's", "it's", `"it's"`},
		{"a'b\"c", `a'b"c`, `'a\'b"c'`},
		{"tab\t", "tab\t", `'tab\t'`},
		{json.Number("32"), "32", "32"},
		{json.Number("2.50"), "2.5", "2.5"},
		{json.Number("1e3"), "1000.0", "1000.0"},
		{json.Number("1e16"), "1e+16", "1e+16"},
		{json.Number("0.00001"), "1e-05", "1e-05"},
		{json.Number("123456789012345678901234567890"), "123456789012345678901234567890", "123456789012345678901234567890"},
		{3.0, "3.0", "3.0"},
		{7, "7", "7"},
		{[]any{"a", json.Number("1"), nil}, "['a', 1, None]", "['a', 1, None]"},
		{map[string]any{"b": true, "a": []any{}}, "{'a': [], 'b': True}", "{'a': [], 'b': True}"},
	}
	for _, tt := range tests {
		if got := Str(tt.v); got != tt.str {
			t.Errorf("Str(%#v) = %q, want %q", tt.v, got, tt.str)
		}
		if got := Repr(tt.v); got != tt.repr {
			t.Errorf("Repr(%#v) = %q, want %q", tt.v, got, tt.repr)
		}
	}
}

func TestInt(t *testing.T) {
	tests := []struct {
		v    any
		want int64
		ok   bool
	}{
		{" 42 ", 42, true},
		{"-1_000", -1000, true},
		{"1.5", 0, false},
		{"", 0, false},
		{"0x10", 0, false},
		{json.Number("7"), 7, true},
		{json.Number("7.9"), 7, true},
		{json.Number("-7.9"), -7, true},
		{true, 1, true},
		{nil, 0, false},
		{[]any{}, 0, false},
		{math.Inf(1), 0, false},
	}
	for _, tt := range tests {
		got, err := Int(tt.v)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("Int(%#v) = %d, %v; want %d, ok=%v", tt.v, got, err, tt.want, tt.ok)
		}
	}
}

func TestFloat(t *testing.T) {
	tests := []struct {
		v    any
		want float64
		ok   bool
	}{
		{"2.5", 2.5, true},
		{" 1e3 ", 1000, true},
		{"inf", math.Inf(1), true},
		{"abc", 0, false},
		{"0x1p3", 0, false},
		{json.Number("3"), 3, true},
		{false, 0, true},
		{nil, 0, false},
	}
	for _, tt := range tests {
		got, err := Float(tt.v)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("Float(%#v) = %v, %v; want %v, ok=%v", tt.v, got, err, tt.want, tt.ok)
		}
	}
}

func TestEqualAndCompare(t *testing.T) {
	eq := []struct {
		a, b any
		want bool
	}{
		{json.Number("1"), 1.0, true},
		{true, json.Number("1"), true},
		{json.Number("1"), "1", false},
		{nil, nil, true},
		{nil, "", false},
		{[]any{json.Number("1"), "a"}, []any{1, "a"}, true},
		{map[string]any{"a": json.Number("1")}, map[string]any{"a": 1.0}, true},
		{map[string]any{}, []any{}, false},
	}
	for _, tt := range eq {
		if got := Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("Equal(%#v, %#v) = %v", tt.a, tt.b, got)
		}
	}
	cmp := []struct {
		a, b any
		want int
		ok   bool
	}{
		{json.Number("2"), 10, -1, true},
		{"b", "a", 1, true},
		{"10", "9", -1, true},
		{[]any{1, 2}, []any{1, 3}, -1, true},
		{[]any{1, 2}, []any{1}, 1, true},
		{"1", 1, 0, false},
		{nil, 1, 0, false},
	}
	for _, tt := range cmp {
		got, err := Compare(tt.a, tt.b)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("Compare(%#v, %#v) = %d, %v", tt.a, tt.b, got, err)
		}
	}
}

func TestTruthy(t *testing.T) {
	for _, v := range []any{nil, "", json.Number("0"), 0.0, false, []any{}, map[string]any{}} {
		if Truthy(v) {
			t.Errorf("Truthy(%#v)", v)
		}
	}
	for _, v := range []any{"0", json.Number("0.1"), true, []any{nil}, map[string]any{"a": nil}} {
		if !Truthy(v) {
			t.Errorf("!Truthy(%#v)", v)
		}
	}
}
