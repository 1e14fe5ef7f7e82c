package ironic

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// patchOp is one RFC 6902 operation of a PATCH body. Ironic allows add,
// replace and remove.
type patchOp struct {
	Op       string
	Path     string
	Value    any
	HasValue bool
	raw      json.RawMessage
}

var patchPathRE = regexp.MustCompile(`^(/[\w-]+)+$`)

// parsePatch decodes and checks a PATCH body as Ironic's args.patch schema.
func parsePatch(body []byte) ([]patchOp, error) {
	v, err := decodeJSON(body)
	if err != nil {
		return nil, err
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, schemaError("patch", "%s is not of type 'array'", pyRepr(v))
	}
	// Decode again as raw messages, to hand each operation's value to the
	// patch engine unchanged.
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		return nil, badRequest("Malformed JSON in request body: %s", jsonErrText(err))
	}
	ops := make([]patchOp, 0, len(arr))
	for i, e := range arr {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, schemaError("patch", "%s is not of type 'object'", pyRepr(e))
		}
		for k := range m {
			if k != "op" && k != "path" && k != "value" {
				return nil, schemaError("patch", "Additional properties are not allowed (%s was unexpected)", pyRepr(k))
			}
		}
		op := patchOp{raw: raws[i]}
		path, ok := m["path"].(string)
		switch {
		case m["path"] == nil:
			return nil, schemaError("patch", "'path' is a required property")
		case !ok:
			return nil, schemaError("patch", "%s is not of type 'string'", pyRepr(m["path"]))
		case !patchPathRE.MatchString(path):
			return nil, schemaError("patch", "%s does not match '^(/[\\\\w-]+)+$'", pyRepr(path))
		}
		op.Path = path
		o, ok := m["op"].(string)
		switch {
		case m["op"] == nil:
			return nil, schemaError("patch", "'op' is a required property")
		case !ok || (o != "add" && o != "replace" && o != "remove"):
			return nil, schemaError("patch", "%s is not one of ['add', 'replace', 'remove']", pyRepr(m["op"]))
		}
		op.Op = o
		op.Value, op.HasValue = m["value"]
		if op.Op != "remove" && !op.HasValue {
			return nil, badRequest("'add' and 'replace' operations need a value")
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// top is the first segment of the operation's path.
func (op patchOp) top() string {
	s := strings.TrimPrefix(op.Path, "/")
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return s[:i]
	}
	return s
}

// patchValues returns the values set for exactly path, in order.
func patchValues(ops []patchOp, path string) []any {
	var out []any
	for _, op := range ops {
		if op.Path == path && op.Op != "remove" {
			out = append(out, op.Value)
		}
	}
	return out
}

// pathTouched reports whether any operation touches path or below it.
func pathTouched(ops []patchOp, path string) bool {
	for _, op := range ops {
		if op.Path == path || strings.HasPrefix(op.Path, path+"/") {
			return true
		}
	}
	return false
}

// firstOpTouches is Ironic's is_path_updated, quirk included: it looks
// at the first operation only (its loop returns on the first element), so
// a PATCH whose first operation is elsewhere passes its version gates.
// Clients such as tempest depend on that.
func firstOpTouches(ops []patchOp, path string) bool {
	return len(ops) > 0 && (ops[0].Path == path || strings.HasPrefix(ops[0].Path, path+"/"))
}

// pathRemoved reports whether path, or something below it, is removed.
func pathRemoved(ops []patchOp, path string) bool {
	for _, op := range ops {
		if op.Op == "remove" && (op.Path == path || strings.HasPrefix(op.Path, path+"/")) {
			return true
		}
	}
	return false
}

// touchedTops lists the top-level fields the patch changes.
func touchedTops(ops []patchOp) map[string]bool {
	m := make(map[string]bool, len(ops))
	for _, op := range ops {
		m[op.top()] = true
	}
	return m
}

// applyPatch applies ops to a resource's JSON document one at a time, as
// Ironic's apply_jsonpatch: adding a new root attribute is refused, and a
// failing operation is named in the error.
func applyPatch(doc map[string]any, ops []patchOp) (map[string]any, error) {
	for _, op := range ops {
		if op.Op == "add" && strings.Count(op.Path, "/") == 1 {
			if _, ok := doc[op.top()]; !ok {
				return nil, badRequest("Adding a new attribute (%s) to the root of the resource is not allowed", op.Path)
			}
		}
	}
	cur, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	for _, op := range ops {
		one := make([]byte, 0, len(op.raw)+2)
		one = append(one, '[')
		one = append(one, op.raw...)
		one = append(one, ']')
		p, err := jsonpatch.DecodePatch(one)
		if err != nil {
			return nil, patchError(op, err.Error())
		}
		next, err := p.Apply(cur)
		if err != nil {
			return nil, patchError(op, patchReason(op, err))
		}
		cur = next
	}
	dec := json.NewDecoder(bytes.NewReader(cur))
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// patchError is Ironic's PatchError.
func patchError(op patchOp, reason string) *apiError {
	parts := []string{"'op': " + pyRepr(op.Op), "'path': " + pyRepr(op.Path)}
	if op.HasValue {
		parts = append(parts, "'value': "+pyRepr(op.Value))
	}
	return badRequest("Couldn't apply patch '{%s}'. Reason: %s", strings.Join(parts, ", "), reason)
}

// patchReason words a patch failure like Python's jsonpatch.
func patchReason(op patchOp, err error) string {
	msg := err.Error()
	last := op.Path[strings.LastIndexByte(op.Path, '/')+1:]
	switch {
	case strings.Contains(msg, "unable to remove nonexistent key"):
		return "can't remove a non-existent object '" + last + "'"
	case strings.Contains(msg, "replace operation does not apply"):
		return "can't replace a non-existent object '" + last + "'"
	case strings.Contains(msg, "add operation does not apply"):
		return "can't add to a non-existent object '" + last + "'"
	}
	return msg
}
