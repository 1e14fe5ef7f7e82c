package ironic

import (
	"net/http"
	"strings"
	"testing"
)

// TestIronic214_Bodies compares whole answers with what Debian's Ironic
// 21.4 (python3-ironic 21.4.4, started by scripts/with-ironic.sh) answered
// the same requests, bodies stored byte for byte: the openstacksdk lane's
// findings (test/sdk) and the texts around them.
func TestIronic214_Bodies(t *testing.T) {
	e := newEnv(t)
	const node = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	const vif = "200712fc-fdfb-47da-89a6-2d19f76c7618"
	e.createNode(map[string]any{"uuid": node, "name": "n1", "network_interface": "noop"})
	retired := "2d8a3b1e-6d3c-4b8e-9a51-7f0c2e4d5a61"
	e.createNode(map[string]any{"uuid": retired})
	e.setState(retired, "available")

	tests := []struct {
		name, method, path, version string
		body                        any
		status                      int
		want                        string
	}{
		// A version the service lacks, below /v1/: webob's HTTPNotAcceptable.
		// Ironic 21.4's texts name its range, [1.1, 1.82]: the comparison
		// reads ferro's maximum there.
		{"406 version", "GET", "/v1/nodes", "1.116", nil, 406,
			`{"error_message": "{\"code\": 406, \"title\": \"Not Acceptable\", \"description\": \"Version 1.116 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.82].\"}"}`},
		{"406 malformed version", "GET", "/v1/nodes", "abc", nil, 406,
			`{"error_message": "{\"code\": 406, \"title\": \"Not Acceptable\", \"description\": \"Invalid value for X-OpenStack-Ironic-API-Version header\"}"}`},
		// /v1 itself words it as every other error.
		{"406 version on /v1", "GET", "/v1", "1.0", nil, 406,
			`{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Version 1.0 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.82].\", \"debuginfo\": null}"}`},
		{"405 routing", "POST", "/v1/drivers", latest, map[string]any{}, 405,
			`{"error_message": "{\"code\": 405, \"title\": \"Method Not Allowed\", \"description\": \"\"}"}`},
		{"conductors below 1.49", "GET", "/v1/conductors", "1.48", nil, 404,
			`{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Resource could not be found.\", \"debuginfo\": null}"}`},
		{"fake-hardware properties", "GET", "/v1/drivers/fake-hardware/properties", latest, nil, 200,
			`{"B1": "B1 description. Required.", "B2": "B2 description. Required."}`},

		// VIFs on a noop node: accepted and forgotten.
		{"vif attach", "POST", "/v1/nodes/" + node + "/vifs", latest, map[string]any{"id": vif}, 204, ``},
		{"vif list after attach", "GET", "/v1/nodes/" + node + "/vifs", latest, nil, 200, `{"vifs": []}`},
		{"vif detach", "DELETE", "/v1/nodes/" + node + "/vifs/" + vif, latest, nil, 204, ``},
		{"vif attach below 1.28", "POST", "/v1/nodes/" + node + "/vifs", "1.27", map[string]any{"id": vif}, 404,
			`{"error_message": "{\"code\": 404, \"title\": \"Not Found\", \"description\": \"\"}"}`},
		{"vif detach below 1.28", "DELETE", "/v1/nodes/" + node + "/vifs/x", "1.27", nil, 404,
			`{"error_message": "{\"code\": 404, \"title\": \"Not Found\", \"description\": \"\"}"}`},
		{"vif without id", "POST", "/v1/nodes/" + node + "/vifs", latest, map[string]any{"idx": "x"}, 400,
			`{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Schema error for vif: 'id' is a required property\", \"debuginfo\": null}"}`},
		{"vif id not a name", "POST", "/v1/nodes/" + node + "/vifs", latest, map[string]any{"id": "a b"}, 400,
			`{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Expected UUID or name for id: a b\", \"debuginfo\": null}"}`},
		{"vif id a number", "POST", "/v1/nodes/" + node + "/vifs", latest, map[string]any{"id": 5}, 400,
			`{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Schema error for vif: 5 is not of type 'string'\", \"debuginfo\": null}"}`},
		{"vif body a list", "POST", "/v1/nodes/" + node + "/vifs", latest, []any{1}, 400,
			`{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Schema error for vif: [1] is not of type 'object'\", \"debuginfo\": null}"}`},
		{"vif detach bad id", "DELETE", "/v1/nodes/" + node + "/vifs/a%20b", latest, nil, 400,
			`{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Expected UUID or name for vif_id: a b\", \"debuginfo\": null}"}`},
		{"vif attach missing node", "POST", "/v1/nodes/5c9dcd04-2073-49bc-9618-99ae634d8971/vifs", latest, map[string]any{"id": vif}, 404,
			`{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Node 5c9dcd04-2073-49bc-9618-99ae634d8971 could not be found.\", \"debuginfo\": null}"}`},

		// retired on an available node (the conductor's _check_update_retired).
		{"retire available", "PATCH", "/v1/nodes/" + retired, latest, []any{map[string]any{"op": "replace", "path": "/retired", "value": true}}, 409,
			`{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Node ` + retired + ` can not have 'retired' set in provision state 'available', the current state is 'available'\", \"debuginfo\": null}"}`},

		// Volume lists take ?detail= at their first version.
		{"volume connectors detail", "GET", "/v1/volume/connectors?detail=True", "1.32", nil, 200, `{"connectors": []}`},
		{"volume targets detail and fields", "GET", "/v1/volume/targets?detail=True&fields=uuid", "1.32", nil, 400,
			`{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Can't fetch a subset of fields with 'detail' set\", \"debuginfo\": null}"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, tc.path, tc.version, tc.body)
			want := strings.ReplaceAll(tc.want, "[1.1, 1.82]", "[1.1, "+maxVersionString+"]")
			if r.code != tc.status || string(r.body) != want {
				t.Errorf("%s %s (%s): %d %s\nIronic 21.4: %d %s", tc.method, tc.path, tc.version, r.code, r.body, tc.status, want)
			}
		})
	}
	if r := e.must(http.StatusOK, "GET", "/v1/nodes/"+retired, latest, nil).json(t); r["retired"] != false {
		t.Errorf("the refused PATCH changed the node: retired = %v", r["retired"])
	}
}
