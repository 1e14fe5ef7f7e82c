package ironic

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/auth"
)

// TestNodePatchRules: the rules of a node PATCH, as Ironic's
// _authorize_patch_and_get_node maps paths to them.
func TestNodePatchRules(t *testing.T) {
	op := func(o, path string, v any) patchOp {
		return patchOp{Op: o, Path: path, Value: v, HasValue: o != "remove"}
	}
	for _, tc := range []struct {
		ops  []patchOp
		want []string
	}{
		{nil, []string{"baremetal:node:update"}},
		{[]patchOp{op("add", "/extra/a", 1)}, []string{"baremetal:node:update_extra"}},
		{[]patchOp{op("add", "/driver_info/deploy_kernel", "x")}, []string{"baremetal:node:update:driver_info"}},
		{[]patchOp{op("replace", "/driver", "ipmi")}, []string{"baremetal:node:update:driver_interfaces"}},
		{[]patchOp{op("replace", "/boot_interface", "pxe")}, []string{"baremetal:node:update:driver_interfaces"}},
		{[]patchOp{op("replace", "/retired_reason", "x")}, []string{"baremetal:node:update:retired"}},
		{[]patchOp{op("replace", "/instance_info", map[string]any{})}, []string{"baremetal:node:update_instance_info"}},
		{[]patchOp{op("replace", "/automated_clean", false)}, []string{"baremetal:node:disable_cleaning"}},
		{[]patchOp{op("replace", "/automated_clean", "off")}, []string{"baremetal:node:disable_cleaning"}},
		{[]patchOp{op("replace", "/automated_clean", true)}, []string{"baremetal:node:update"}},
		{[]patchOp{op("remove", "/automated_clean", nil)}, []string{"baremetal:node:update"}},
		{[]patchOp{op("replace", "/maintenance", true), op("replace", "/owner", "p")},
			[]string{"baremetal:node:update:owner", "baremetal:node:update"}},
		{[]patchOp{op("add", "/extra/a", 1), op("add", "/extra/b", 2)}, []string{"baremetal:node:update_extra"}},
	} {
		if got := nodePatchRules(tc.ops); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.ops, got, tc.want)
		}
		for _, r := range nodePatchRules(tc.ops) {
			if !auth.Known(r) {
				t.Errorf("%s is not a rule of internal/auth's table", r)
			}
		}
	}
}

// asPersona sends a request with credentials, as the auth middleware would.
func (e *env) asPersona(c *auth.Credentials, method, path string, body any) resp {
	e.t.Helper()
	return e.asPersonaAt(c, latest, method, path, body)
}

// TestNodeView_Redaction: fields a project caller's rules do not cover are
// replaced by Ironic's words, in a show, a list and with ?fields=; system
// readers and callers without policy (noauth, http_basic) see them.
func TestNodeView_Redaction(t *testing.T) {
	e := newEnv(t)
	id := str(e.createNode(map[string]any{"name": "leased", "owner": "pa", "lessee": "pb",
		"driver_info": map[string]any{"ipmi_address": "192.0.2.1", "ipmi_password": "pw"}}), "uuid")
	lessee := &auth.Credentials{ProjectID: "pb", Roles: []string{"admin", "member", "reader"}}
	owner := &auth.Credentials{ProjectID: "pa", Roles: []string{"reader"}}
	sysReader := &auth.Credentials{System: true, Roles: []string{"reader"}}
	basic := &auth.Credentials{Unrestricted: true}
	for _, path := range []string{"/v1/nodes/" + id, "/v1/nodes/" + id + "?fields=driver_info,last_error,reservation,driver_internal_info"} {
		n := e.asPersona(lessee, "GET", path, nil).json(t)
		if di, _ := n["driver_info"].(map[string]any); di["content"] != redactedDriverInfo || len(di) != 1 {
			t.Errorf("lessee GET %s: driver_info %v", path, n["driver_info"])
		}
		if n["last_error"] != redactedLastError || n["reservation"] != redactedReservation {
			t.Errorf("lessee GET %s: last_error %v, reservation %v", path, n["last_error"], n["reservation"])
		}
		if di, _ := n["driver_internal_info"].(map[string]any); di["content"] != redactedInternalInfo {
			t.Errorf("lessee GET %s: driver_internal_info %v", path, n["driver_internal_info"])
		}
		for _, c := range []*auth.Credentials{owner, sysReader, basic, nil} {
			n := e.asPersona(c, "GET", path, nil).json(t)
			if di, _ := n["driver_info"].(map[string]any); di["ipmi_address"] != "192.0.2.1" || di["ipmi_password"] != "******" {
				t.Errorf("%+v GET %s: driver_info %v", c, path, n["driver_info"])
			}
			if n["last_error"] != nil {
				t.Errorf("%+v GET %s: last_error %v", c, path, n["last_error"])
			}
		}
	}
	list := e.asPersona(lessee, "GET", "/v1/nodes/detail", nil)
	if strings.Contains(string(list.body), "192.0.2.1") || !strings.Contains(string(list.body), redactedDriverInfo) {
		t.Errorf("lessee's detailed list: %s", list.body)
	}
}

// TestNodeLink_SameOwnerForEveryCaller: a port moves only to a node with
// its node's owner, whoever asks (Ironic's authorize_node_link compares
// owners whatever the auth strategy), and the refusal is worded as for a
// node that is not there.
func TestNodeLink_SameOwnerForEveryCaller(t *testing.T) {
	e := newEnv(t)
	a1 := str(e.createNode(map[string]any{"name": "a1", "owner": "pa"}), "uuid")
	a2 := str(e.createNode(map[string]any{"name": "a2", "owner": "pa"}), "uuid")
	b := str(e.createNode(map[string]any{"name": "b", "owner": "pb"}), "uuid")
	port := str(e.must(201, "POST", "/v1/ports", latest, map[string]any{"node_uuid": a1, "address": "52:54:00:00:09:01"}).json(t), "uuid")
	move := func(to string) []map[string]any {
		return []map[string]any{{"op": "replace", "path": "/node_uuid", "value": to}}
	}
	want := "Unable to apply the requested node_uuid '" + b + "'. Requested value was invalid."
	for _, c := range []*auth.Credentials{nil, {Unrestricted: true}, {System: true, Roles: []string{"admin", "member", "reader"}}} {
		r := e.asPersona(c, "PATCH", "/v1/ports/"+port, move(b))
		if r.code != http.StatusBadRequest || r.fault(t)["faultstring"] != want {
			t.Errorf("%+v moves the port to b's node: %d %s", c, r.code, r.body)
		}
	}
	if r := e.asPersona(nil, "PATCH", "/v1/ports/"+port, move(a2)); r.code != http.StatusOK {
		t.Errorf("noauth moves the port to a node of the same owner: %d %s", r.code, r.body)
	}
}
