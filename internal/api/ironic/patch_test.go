package ironic

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustPatch(t testing.TB, ops string) []patchOp {
	t.Helper()
	p, err := parsePatch([]byte(ops))
	if err != nil {
		t.Fatalf("parsePatch(%s): %v", ops, err)
	}
	return p
}

func TestApplyPatch_Operations(t *testing.T) {
	doc := func() map[string]any {
		return map[string]any{
			"extra":      map[string]any{"a": "1", "list": []any{"x", "y"}},
			"properties": map[string]any{},
			"name":       nil,
		}
	}
	tests := []struct {
		name    string
		ops     string
		want    map[string]any
		wantErr string
	}{
		{"add key", `[{"op":"add","path":"/extra/b","value":2}]`,
			map[string]any{"extra": map[string]any{"a": "1", "b": json.Number("2"), "list": []any{"x", "y"}}, "properties": map[string]any{}, "name": nil}, ""},
		{"replace root", `[{"op":"replace","path":"/name","value":"n"}]`,
			map[string]any{"extra": map[string]any{"a": "1", "list": []any{"x", "y"}}, "properties": map[string]any{}, "name": "n"}, ""},
		{"append and insert", `[{"op":"add","path":"/extra/list/-","value":"z"},{"op":"add","path":"/extra/list/0","value":"w"}]`,
			map[string]any{"extra": map[string]any{"a": "1", "list": []any{"w", "x", "y", "z"}}, "properties": map[string]any{}, "name": nil}, ""},
		{"remove from list", `[{"op":"remove","path":"/extra/list/0"}]`,
			map[string]any{"extra": map[string]any{"a": "1", "list": []any{"y"}}, "properties": map[string]any{}, "name": nil}, ""},
		{"add then change the added value", `[{"op":"add","path":"/extra/m","value":{}},{"op":"add","path":"/extra/m/k","value":1}]`,
			map[string]any{"extra": map[string]any{"a": "1", "list": []any{"x", "y"}, "m": map[string]any{"k": json.Number("1")}}, "properties": map[string]any{}, "name": nil}, ""},
		{"remove missing", `[{"op":"remove","path":"/extra/nope"}]`, nil, "can't remove a non-existent object 'nope'"},
		{"replace missing", `[{"op":"replace","path":"/extra/nope","value":1}]`, nil, "can't replace a non-existent object 'nope'"},
		{"add below missing", `[{"op":"add","path":"/extra/no/deeper","value":1}]`, nil, "can't add to a non-existent object 'deeper'"},
		{"insert outside list", `[{"op":"add","path":"/extra/list/5","value":1}]`, nil, "can't insert outside of list"},
		{"replace outside list", `[{"op":"replace","path":"/extra/list/2","value":1}]`, nil, "can't replace outside of list"},
		{"bad index", `[{"op":"replace","path":"/extra/list/x","value":1}]`, nil, "'x' is not a valid sequence index"},
		{"new root attribute", `[{"op":"add","path":"/nosuch","value":1}]`, nil, "Adding a new attribute (/nosuch) to the root of the resource is not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := doc()
			got, err := applyPatch(orig, mustPatch(t, tt.ops))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
			if d := cmp.Diff(doc(), orig); d != "" {
				t.Errorf("the patched document changed its source (-before +after):\n%s", d)
			}
		})
	}
}

// A patch is bounded: at most maxPatchOps operations, each applied in place.
func TestParsePatch_OperationCap(t *testing.T) {
	ops := func(n int) string {
		var b strings.Builder
		b.WriteString("[")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"op":"add","path":"/extra/k%d","value":"%d"}`, i, i)
		}
		b.WriteString("]")
		return b.String()
	}
	p := mustPatch(t, ops(maxPatchOps))
	got, err := applyPatch(map[string]any{"extra": map[string]any{}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got["extra"].(map[string]any)); n != maxPatchOps {
		t.Errorf("extra has %d keys, want %d", n, maxPatchOps)
	}
	if _, err := parsePatch([]byte(ops(maxPatchOps + 1))); err == nil || !strings.Contains(err.Error(), "at most 1000 operations") {
		t.Errorf("parsePatch with %d ops: err = %v", maxPatchOps+1, err)
	}
}

func BenchmarkApplyPatch_1000Ops(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[")
	for i := range maxPatchOps {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"op":"add","path":"/extra/k%d","value":"%s"}`, i, strings.Repeat("v", 300))
	}
	sb.WriteString("]")
	body := []byte(sb.String())
	doc := map[string]any{"extra": map[string]any{}}
	for b.Loop() {
		ops, err := parsePatch(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := applyPatch(doc, ops); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzApplyPatch(f *testing.F) {
	f.Add([]byte(`[{"op":"add","path":"/extra/list/-","value":[1,{"a":2}]}]`))
	f.Add([]byte(`[{"op":"remove","path":"/extra/list/0"},{"op":"replace","path":"/name","value":null}]`))
	f.Add([]byte(`[{"op":"add","path":"/extra/a/0/b","value":1}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ops, err := parsePatch(body)
		if err != nil {
			return
		}
		src := func() map[string]any {
			return map[string]any{"extra": map[string]any{"a": []any{map[string]any{}}, "list": []any{"x"}}, "name": "n"}
		}
		orig := src()
		_, _ = applyPatch(orig, ops)
		if d := cmp.Diff(src(), orig); d != "" {
			t.Fatalf("applyPatch changed its source document:\n%s", d)
		}
	})
}

// Ironic 1.98 unescapes the top segment of a PATCH path before checking
// it is patchable; the escapes themselves never pass args.patch's path
// pattern, so nodes, ports and the rest refuse them at 1.97 and 1.98
// alike, and allocations (whose schema takes any path) reach keys with '~'
// and '/' at both.
func TestPatch_EscapedKeysAsIronicMaster(t *testing.T) {
	e := newEnv(t)
	n := e.createNode(map[string]any{"name": "esc"})
	port := str(e.must(201, "POST", "/v1/ports", latest, map[string]any{"node_uuid": str(n, "uuid"), "address": "52:54:00:00:20:01"}).json(t), "uuid")
	e.must(201, "POST", "/v1/allocations", latest, map[string]any{"resource_class": "x", "name": "esc-alloc"})

	before := e.snapshot()
	for _, v := range []string{"1.97", "1.98", "1.115"} {
		for _, path := range []string{"/v1/nodes/esc", "/v1/ports/" + port} {
			for _, p := range []string{"/extra/a~1b", "/extra/c~0d", "/ex~0tra"} {
				f := e.must(400, "PATCH", path, v, []map[string]any{{"op": "add", "path": p, "value": 1}}).fault(t)
				if want := "Schema error for patch: '" + p + `' does not match '^(/[\\w-]+)+$'`; f["faultstring"] != want {
					t.Errorf("%s %s %s: %v, want %s", v, path, p, f["faultstring"], want)
				}
			}
		}
		for _, c := range []struct{ path, want string }{
			{"/extra/a~2b", "Couldn't apply patch '{'op': 'add', 'path': '/extra/a~2b', 'value': 1}'. Reason: Found invalid escape ~2"},
			{"/extra/a~", "Couldn't apply patch '{'op': 'add', 'path': '/extra/a~', 'value': 1}'. Reason: Found invalid escape ~"},
			{"/ex~1tra", "Cannot patch /ex~1tra. Only the following can be updated: name, extra"},
			{"extra", "Cannot patch extra. Only the following can be updated: name, extra"},
		} {
			f := e.must(400, "PATCH", "/v1/allocations/esc-alloc", v, []map[string]any{{"op": "add", "path": c.path, "value": 1}}).fault(t)
			if f["faultstring"] != c.want {
				t.Errorf("%s allocation %s: %v, want %s", v, c.path, f["faultstring"], c.want)
			}
		}
	}
	if d := cmp.Diff(before, e.snapshot()); d != "" {
		t.Fatalf("refused patches changed the store:\n%s", d)
	}

	for i, v := range []string{"1.97", "1.98"} {
		got := e.must(200, "PATCH", "/v1/allocations/esc-alloc", v, []map[string]any{
			{"op": "add", "path": "/extra/a~1b", "value": i},
			{"op": "add", "path": "/extra/~0c~01", "value": i},
		}).json(t)["extra"]
		if d := cmp.Diff(map[string]any{"a/b": json.Number(strconv.Itoa(i)), "~c~1": json.Number(strconv.Itoa(i))}, got); d != "" {
			t.Errorf("%s: extra (-want +got):\n%s", v, d)
		}
	}

	// args.patch's pattern is Python's: letters of any script pass, and
	// so does a final newline ($ matches before it).
	got := e.must(200, "PATCH", "/v1/nodes/esc", "1.98", []map[string]any{{"op": "add", "path": "/extra/café_Ⅻ", "value": "x"},
		{"op": "add", "path": "/extra/nl\n", "value": "y"}}).json(t)["extra"]
	if d := cmp.Diff(map[string]any{"café_Ⅻ": "x", "nl\n": "y"}, got); d != "" {
		t.Errorf("unicode key (-want +got):\n%s", d)
	}
}
