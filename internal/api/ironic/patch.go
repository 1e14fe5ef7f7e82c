package ironic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// patchOp is one RFC 6902 operation of a PATCH body. Ironic allows add,
// replace and remove.
type patchOp struct {
	Op       string
	Path     string
	Value    any
	HasValue bool
}

// patchPathRE is args.patch's '^(/[\w-]+)+$' as Python's re.search reads
// it: \w is Unicode (letters, digits, underscore of any script; Go's \w is
// ASCII only) and $ also matches before a final newline. It
// refuses '~', so the RFC 6901 escapes ~0 and ~1 never pass it: the
// resources whose PATCH Ironic checks with args.patch (all but
// allocations) refuse keys with '~' or '/' at every version, 1.98 or not.
var patchPathRE = regexp.MustCompile(`^(/[\p{L}\p{N}_-]+)+\n?$`)

// readPatchOf reads a request's body as a JSON Patch (Ironic's args.patch)
// whose every operation check accepts.
func (rq *request) readPatchOf(check func(op patchOp) error) ([]patchOp, error) {
	return rq.readPatch(patchPathRE, check)
}

// readAnyPathPatchOf is readPatchOf for a resource whose PATCH schema
// takes any string as a path (Ironic's allocations): keys with '~' or '/'
// are reached through the ~0 and ~1 escapes.
func (rq *request) readAnyPathPatchOf(check func(op patchOp) error) ([]patchOp, error) {
	return rq.readPatch(nil, check)
}

func (rq *request) readPatch(pathRE *regexp.Regexp, check func(op patchOp) error) ([]patchOp, error) {
	body, err := rq.readBody()
	if err != nil {
		return nil, err
	}
	ops, err := parsePatchPaths(body, pathRE)
	if err != nil {
		return nil, err
	}
	for _, op := range ops {
		if err := check(op); err != nil {
			return nil, err
		}
	}
	return ops, nil
}

// onlyPatching is the check of a PATCH that may touch the named top-level
// fields only. From 1.98 Ironic unescapes the top segment before this
// check; no field name holds '~' or '/', so that changes no answer and
// ferro compares the segment as written at every version.
func onlyPatching(allowed ...string) func(op patchOp) error {
	return func(op patchOp) error {
		if !strings.HasPrefix(op.Path, "/") || !slices.Contains(allowed, op.top()) {
			return badRequest("Cannot patch %s. Only the following can be updated: %s", op.Path, strings.Join(allowed, ", "))
		}
		return nil
	}
}

// parsePatch decodes and checks a PATCH body as Ironic's args.patch schema.
func parsePatch(body []byte) ([]patchOp, error) { return parsePatchPaths(body, patchPathRE) }

// parsePatchPaths is parsePatch with paths matched by pathRE (nil: any
// string).
func parsePatchPaths(body []byte, pathRE *regexp.Regexp) ([]patchOp, error) {
	v, err := decodeJSON(body)
	if err != nil {
		return nil, err
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, schemaError("patch", "%s is not of type 'array'", pyRepr(v))
	}
	if len(arr) > maxPatchOps {
		return nil, badRequest("A patch may have at most %d operations, this one has %d", maxPatchOps, len(arr))
	}
	ops := make([]patchOp, 0, len(arr))
	for _, e := range arr {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, schemaError("patch", "%s is not of type 'object'", pyRepr(e))
		}
		for k := range m {
			if k != "op" && k != "path" && k != "value" {
				return nil, schemaError("patch", "Additional properties are not allowed (%s was unexpected)", pyRepr(k))
			}
		}
		var op patchOp
		path, ok := m["path"].(string)
		switch {
		case m["path"] == nil:
			return nil, schemaError("patch", "'path' is a required property")
		case !ok:
			return nil, schemaError("patch", "%s is not of type 'string'", pyRepr(m["path"]))
		case pathRE != nil && !pathRE.MatchString(path):
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

// maxPatchOps bounds the operations of one PATCH. Ironic has no such cap;
// ferro is stricter so that a request's work stays bounded (a real client
// sends a handful).
const maxPatchOps = 1000

// applyPatch applies ops to a copy of a resource's JSON document, as
// Ironic's apply_jsonpatch: adding a new root attribute is refused, and a
// failing operation is named in the error with Python jsonpatch's reason.
// The document is copied once and every operation changes the copy in
// place, so a patch costs its size plus the document's, not one
// encode-apply-decode round per operation.
func applyPatch(doc map[string]any, ops []patchOp) (map[string]any, error) {
	for _, op := range ops {
		if op.Op == "add" && strings.Count(op.Path, "/") == 1 {
			if _, ok := doc[op.top()]; !ok {
				return nil, badRequest("Adding a new attribute (%s) to the root of the resource is not allowed", op.Path)
			}
		}
	}
	root, err := copyValue(doc)
	if err != nil {
		return nil, err
	}
	for _, op := range ops {
		root, err = applyOp(root, op)
		if err != nil {
			return nil, patchError(op, err.Error())
		}
	}
	out, ok := root.(map[string]any)
	if !ok {
		return nil, badRequest("Patch result is not an object")
	}
	return out, nil
}

// copyValue copies generic JSON values, so that patching never changes the
// maps of the resource the document was built from. Values of other Go types
// go through encoding/json, as the document's JSON form would have them.
func copyValue(v any) (any, error) {
	switch t := v.(type) {
	case nil, string, bool, json.Number:
		return v, nil
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			c, err := copyValue(e)
			if err != nil {
				return nil, err
			}
			m[k] = c
		}
		return m, nil
	case []any:
		a := make([]any, len(t))
		for i, e := range t {
			c, err := copyValue(e)
			if err != nil {
				return nil, err
			}
			a[i] = c
		}
		return a, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// invalidEscapeRE finds what RFC 6901 does not allow after '~' (Python
// jsonpointer's check, which Ironic's PATCH reports).
var invalidEscapeRE = regexp.MustCompile(`~[^01]|~$`)

// applyOp applies one operation to root and returns the new root.
func applyOp(root any, op patchOp) (any, error) {
	if m := invalidEscapeRE.FindString(op.Path); m != "" {
		return nil, fmt.Errorf("Found invalid escape %s", m)
	}
	parts := strings.Split(op.Path, "/")[1:]
	for i, p := range parts {
		if strings.IndexByte(p, '~') >= 0 {
			parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		}
	}
	parent := root
	for _, p := range parts[:len(parts)-1] {
		next, ok := child(parent, p)
		if !ok {
			return nil, fmt.Errorf("can't %s a non-existent object '%s'", opVerb(op.Op), parts[len(parts)-1])
		}
		parent = next
	}
	last := parts[len(parts)-1]
	value, err := copyValue(op.Value)
	if err != nil {
		return nil, err
	}
	switch c := parent.(type) {
	case map[string]any:
		_, exists := c[last]
		switch op.Op {
		case "add":
			c[last] = value
		case "replace":
			if !exists {
				return nil, fmt.Errorf("can't replace a non-existent object '%s'", last)
			}
			c[last] = value
		case "remove":
			if !exists {
				return nil, fmt.Errorf("can't remove a non-existent object '%s'", last)
			}
			delete(c, last)
		}
		return root, nil
	case []any:
		if op.Op == "add" && last == "-" {
			return setChild(root, parts[:len(parts)-1], append(c, value)), nil
		}
		idx, err := strconv.Atoi(last)
		if err != nil || idx < 0 || strconv.Itoa(idx) != last {
			return nil, fmt.Errorf("'%s' is not a valid sequence index", last)
		}
		switch op.Op {
		case "add":
			if idx > len(c) {
				return nil, errors.New("can't insert outside of list")
			}
			c = append(c, nil)
			copy(c[idx+1:], c[idx:])
			c[idx] = value
			return setChild(root, parts[:len(parts)-1], c), nil
		case "replace":
			if idx >= len(c) {
				return nil, errors.New("can't replace outside of list")
			}
			c[idx] = value
		case "remove":
			if idx >= len(c) {
				return nil, fmt.Errorf("can't remove a non-existent object '%s'", last)
			}
			c = append(c[:idx], c[idx+1:]...)
			return setChild(root, parts[:len(parts)-1], c), nil
		}
		return root, nil
	}
	return nil, fmt.Errorf("can't %s a non-existent object '%s'", opVerb(op.Op), last)
}

func opVerb(op string) string {
	if op == "add" {
		return "add to"
	}
	return op
}

// child returns the member p of an object or array.
func child(v any, p string) (any, bool) {
	switch c := v.(type) {
	case map[string]any:
		e, ok := c[p]
		return e, ok
	case []any:
		i, err := strconv.Atoi(p)
		if err != nil || i < 0 || i >= len(c) {
			return nil, false
		}
		return c[i], true
	}
	return nil, false
}

// setChild stores v at path below root (a slice that grew or shrank has a
// new header its parent must hold) and returns the root.
func setChild(root any, path []string, v any) any {
	if len(path) == 0 {
		return v
	}
	parent := root
	for _, p := range path[:len(path)-1] {
		parent, _ = child(parent, p)
	}
	last := path[len(path)-1]
	switch c := parent.(type) {
	case map[string]any:
		c[last] = v
	case []any:
		i, _ := strconv.Atoi(last)
		c[i] = v
	}
	return root
}

// patchError is Ironic's PatchError of one operation.
func patchError(op patchOp, reason string) *apiError {
	return badRequest("Couldn't apply patch '%s'. Reason: %s", op.pyRepr(), reason)
}

// wholePatchError is Ironic's PatchError of the whole patch (a
// controller's own check, not one operation's failure).
func wholePatchError(ops []patchOp, reason string) *apiError {
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = op.pyRepr()
	}
	return badRequest("Couldn't apply patch '[%s]'. Reason: %s", strings.Join(parts, ", "), reason)
}

// pyRepr is the operation as Python prints its dict.
func (op patchOp) pyRepr() string {
	parts := []string{"'op': " + pyRepr(op.Op), "'path': " + pyRepr(op.Path)}
	if op.HasValue {
		parts = append(parts, "'value': "+pyRepr(op.Value))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
