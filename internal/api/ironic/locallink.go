package ironic

import (
	"slices"
	"strings"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inventory"
)

// local_link_connection's schema, as Ironic master's LOCAL_LINK_CONN_SCHEMA:
// an object of these string members, valid when it is one of the
// llcShapes (anyOf). The OVN VTEP pair (1.90) stays in the schema at
// every version; only creating a port with it is gated (vtepAllowed).
var llcProperties = []string{"port_id", "switch_id", "hostname", "switch_info", "network_type",
	vtepLogical, vtepPhysical}

const (
	vtepLogical  = "vtep-logical-switch"
	vtepPhysical = "vtep-physical-switch"
)

// llcShape is one branch of the anyOf: its required members, and whether
// it is the bare {"type": "object", "additionalProperties": false} branch.
type llcShape struct {
	required  []string
	unmanaged bool // network_type may only be "unmanaged"
	bare      bool
}

var llcShapes = []llcShape{
	{required: []string{"port_id", "switch_id"}},
	{required: []string{"port_id", "hostname"}}, // Smart NIC
	{required: []string{"network_type"}, unmanaged: true},
	{required: []string{"port_id", vtepLogical, vtepPhysical}}, // OVN VTEP
	{bare: true},
}

// vtepAllowed is Ironic's allow_ovn_vtep_version: the OVN VTEP members
// may be given on port create from 1.90 and no longer from 1.105, which
// removed the feature.
func vtepAllowed(minor int) bool {
	return minor >= v90OVNVTEP && minor < v105RemoveOVNVTEP
}

// hasVTEP reports whether a local_link_connection carries an OVN VTEP member.
func hasVTEP(llc map[string]any) bool {
	_, l := llc[vtepLogical]
	_, p := llc[vtepPhysical]
	return l || p
}

// llcView is a port's local_link_connection as a version sees it: outside
// 1.90–1.104 one holding OVN VTEP members is shown as {} (Ironic's
// hide_fields_in_newer_versions; such a port may be made by PATCH, which
// Ironic does not gate).
func llcView(b []byte, p *baremetal.Port, rc *renderCtx) []byte {
	if !vtepAllowed(rc.minor) && hasVTEP(p.LocalLinkConnection) {
		return append(b, "{}"...)
	}
	return appendObject(b, p.LocalLinkConnection)
}

// llcError is one error of one branch, as jsonschema ranks it: at a
// member (path) or at the object itself, and whether the member's value is
// of the wrong type.
type llcError struct {
	path     string // "" at the object itself
	mismatch bool
	msg      string
}

// less orders errors as heapq.nsmallest over jsonschema's relevance key
// does: a member error before one at the object, then by member name, a
// right-typed value before a wrong-typed one.
func (a llcError) less(b llcError) bool {
	if (a.path != "") != (b.path != "") {
		return a.path != ""
	}
	if a.path != b.path {
		return a.path < b.path
	}
	return !a.mismatch && b.mismatch
}

// validateLocalLink checks local_link_connection against the schema and
// normalises switch_id, with the message Ironic's jsonschema gives:
// best_match descends from the anyOf into the least relevant error when
// one is alone in being so (network_type "managed", which only the
// unmanaged branch refuses); otherwise the anyOf is reported, with the
// first error at the object itself as its root cause.
func validateLocalLink(llc map[string]any) error {
	var all []llcError
	for _, sh := range llcShapes {
		errs := sh.errors(llc)
		if len(errs) == 0 {
			return normalizeSwitchID(llc)
		}
		all = append(all, errs...)
	}
	least := slices.MinFunc(all, func(a, b llcError) int {
		switch {
		case a.less(b):
			return -1
		case b.less(a):
			return 1
		}
		return 0
	})
	n := 0
	for _, e := range all {
		if !e.less(least) && !least.less(e) {
			n++
		}
	}
	if n == 1 {
		return badRequest("Schema error for local_link_connection: %s", least.msg)
	}
	cause := ""
	for _, e := range all {
		if e.path == "" {
			cause = e.msg
			break
		}
	}
	// The bare branch refuses any member at the object itself, so a
	// cause is always found.
	return badRequest("Schema error for local_link_connection: %s is not valid under any of the given schemas. Possible root cause: %s",
		pyRepr(llc), cause)
}

// errors validates llc against one branch, in jsonschema's keyword order
// (properties, additionalProperties, dependentRequired, required).
func (sh llcShape) errors(llc map[string]any) []llcError {
	var errs []llcError
	var extras []string
	if !sh.bare {
		for _, k := range llcProperties {
			v, ok := llc[k]
			if !ok {
				continue
			}
			_, isStr := v.(string)
			if !isStr {
				errs = append(errs, llcError{k, true, pyRepr(v) + " is not of type 'string'"})
			}
			if k != "network_type" {
				continue
			}
			enum := []any{"managed", "unmanaged"}
			if sh.unmanaged {
				enum = []any{"unmanaged"}
			}
			if !slices.Contains(enum, v) {
				errs = append(errs, llcError{k, !isStr, pyRepr(v) + " is not one of " + pyRepr(enum)})
			}
		}
	}
	for k := range llc {
		if sh.bare || !slices.Contains(llcProperties, k) {
			extras = append(extras, k)
		}
	}
	if len(extras) > 0 {
		slices.Sort(extras)
		q := make([]string, len(extras))
		for i, e := range extras {
			q[i] = pyRepr(e)
		}
		verb := "was"
		if len(extras) > 1 {
			verb = "were"
		}
		errs = append(errs, llcError{msg: "Additional properties are not allowed (" + strings.Join(q, ", ") + " " + verb + " unexpected)"})
	}
	if sh.bare {
		return errs
	}
	for _, pair := range [][2]string{{vtepLogical, vtepPhysical}, {vtepPhysical, vtepLogical}} {
		_, has := llc[pair[0]]
		_, other := llc[pair[1]]
		if has && !other {
			errs = append(errs, llcError{msg: pyRepr(pair[1]) + " is a dependency of " + pyRepr(pair[0])})
		}
	}
	for _, k := range sh.required {
		if _, ok := llc[k]; !ok {
			errs = append(errs, llcError{msg: pyRepr(k) + " is a required property"})
		}
	}
	return errs
}

// normalizeSwitchID is Ironic's local_link_normalize: switch_id, when
// given, is a MAC address or an OpenFlow datapath ID, stored lower case.
func normalizeSwitchID(llc map[string]any) error {
	sw, ok := llc["switch_id"].(string)
	if !ok {
		return nil
	}
	if mac, ok := inventory.NormalizeMAC(sw); ok {
		llc["switch_id"] = mac
	} else if isDatapathID(sw) {
		llc["switch_id"] = strings.ToLower(sw)
	} else {
		return badRequest("Expected a MAC address or OpenFlow datapath ID but received %s.", sw)
	}
	return nil
}
