package ironic

import "testing"

// Below 1.91 (asked in X-OpenStack-Ironic-API-Version) a path's .json is
// stripped, and an item not found without it is looked for with it
// (Ironic's JsonExtensionMiddleware and _get_with_suffix); from 1.91, and
// with no header, .json is part of the name.
func TestJSONSuffix_Before191(t *testing.T) {
	e := newEnv(t)
	test := str(e.createNode(map[string]any{"name": "test"}), "uuid")
	dotted := str(e.createNode(map[string]any{"name": "x.json"}), "uuid")
	for _, tc := range []struct {
		path, version string
		want          int
		uuid          string
	}{
		{"/v1/nodes.json", "1.90", 200, ""},
		{"/v1/nodes.json", "1.91", 404, ""},
		{"/v1/nodes.json", "", 404, ""},
		{"/v1/nodes/test.json", "1.90", 200, test},
		{"/v1/nodes/test.json", "1.91", 404, ""},
		{"/v1/nodes/x.json", "1.90", 200, dotted},
		{"/v1/nodes/x.json", "1.91", 200, dotted},
		{"/v1/nodes/" + test + ".json", "1.90", 200, test},
		{"/v1/nodes/" + test + ".json", "1.91", 404, ""},
		{"/v1/chassis.json", "1.20", 200, ""},
	} {
		r := e.do("GET", tc.path, tc.version, nil)
		if r.code != tc.want {
			t.Errorf("GET %s at %q: %d %s, want %d", tc.path, tc.version, r.code, r.body, tc.want)
			continue
		}
		if tc.uuid != "" && str(r.json(t), "uuid") != tc.uuid {
			t.Errorf("GET %s at %q: %s", tc.path, tc.version, r.body)
		}
	}
	// Writes find the node the same way.
	e.must(200, "PATCH", "/v1/nodes/x.json", "1.90", []map[string]any{{"op": "add", "path": "/extra/a", "value": "b"}})
	e.must(200, "PATCH", "/v1/nodes/"+test+".json", "1.90", []map[string]any{{"op": "add", "path": "/extra/a", "value": "b"}})
	e.must(404, "DELETE", "/v1/nodes/"+test+".json", "1.91", nil)
	e.must(204, "DELETE", "/v1/nodes/x.json", "1.90", nil)
	e.must(204, "DELETE", "/v1/nodes/"+test+".json", "1.90", nil)
}
