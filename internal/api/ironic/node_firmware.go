package ironic

import (
	"net/http"
	"slices"
	"strings"

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// firmwareFields are what ?fields= may name on GET
// /v1/nodes/{node}/firmware (Ironic's index_request_query enum), in that
// order; firmwareDefault what is shown without it, and firmwareIdentity
// what 1.114 adds to the default.
var (
	firmwareFields = []string{"created_at", "updated_at", "component", "initial_version", "current_version",
		"last_version_flashed", "vendor", "model", "serial_number"}
	firmwareDefault  = []string{"component", "initial_version", "current_version", "last_version_flashed"}
	firmwareIdentity = []string{"vendor", "model", "serial_number"}
)

// getFirmware is GET /v1/nodes/{node}/firmware (1.86): the components the
// node's firmware interface last cached.
func (s *server) getFirmware(rq *request) error {
	if rq.minor < v86FirmwareInterface {
		return resourceNotFound()
	}
	// The query's schema (Ironic's index_request_query) words an unknown
	// parameter.
	for k := range rq.r.URL.Query() {
		if k != "fields" && k != "detail" {
			return badRequest("Schema error: Additional properties are not allowed ('%s' was unexpected)", k)
		}
	}
	q, err := rq.queryArgs("fields", "detail")
	if err != nil {
		return err
	}
	var fields []string
	if q.has("fields") {
		fields = q.stringList("fields")
		for _, f := range fields {
			if !slices.Contains(firmwareFields, f) {
				return badRequest("Schema error: %s is not one of %s", pyRepr(f), pyRepr(anySlice(firmwareFields)))
			}
		}
	}
	detail, err := q.boolean("detail")
	if err != nil {
		return err
	}
	n, err := s.node(rq)
	if err != nil {
		return err
	}
	def := firmwareDefault
	if rq.minor >= v114FirmwareIdentity {
		def = append(slices.Clone(firmwareDefault), firmwareIdentity...)
	} else if fields != nil {
		var refused []string
		for _, f := range firmwareIdentity {
			if slices.Contains(fields, f) {
				refused = append(refused, f)
			}
		}
		if len(refused) > 0 {
			slices.Sort(refused)
			return badRequest("Fields %s are not allowed in this API version. They require at least API version 1.%d.",
				strings.Join(refused, ", "), v114FirmwareIdentity)
		}
	}
	// Ironic's get_request_return_fields: ?detail=true alone shows no
	// field but the timestamps.
	switch {
	case fields != nil && detail != nil && *detail:
		return badRequest("Can not specify ?detail=True and fields in the same request.")
	case fields == nil && (detail == nil || !*detail):
		fields = def
	}
	o := newObj(make([]byte, 0, 256+200*len(n.Firmware)))
	o.key("firmware")
	o.b = append(o.b, '[')
	for i := range n.Firmware {
		if i > 0 {
			o.b = append(o.b, ", "...)
		}
		o.b = appendFirmware(o.b, &n.Firmware[i], fields)
	}
	o.b = append(o.b, ']')
	return rq.writeJSON(http.StatusOK, o.end())
}

// appendFirmware writes a component: its timestamps, then fields.
func appendFirmware(b []byte, c *baremetal.FirmwareComponent, fields []string) []byte {
	o := newObj(b)
	o.key("created_at")
	o.b = appendTime(o.b, c.CreatedAt)
	o.key("updated_at")
	o.b = appendNullTime(o.b, c.UpdatedAt)
	for _, f := range fields {
		switch f {
		case "component":
			o.str(f, c.Component)
		case "initial_version":
			o.nullStr(f, c.InitialVersion)
		case "current_version":
			o.nullStr(f, c.CurrentVersion)
		case "last_version_flashed":
			o.nullStr(f, c.LastVersionFlashed)
		case "vendor":
			o.nullStr(f, c.Vendor)
		case "model":
			o.nullStr(f, c.Model)
		case "serial_number":
			o.nullStr(f, c.SerialNumber)
		}
	}
	return o.end()
}

// getChildren is GET /v1/nodes/{node}/children (1.83): the UUIDs of the
// node's children the caller may list, and a link to their list.
func (s *server) getChildren(rq *request) error {
	n, err := s.pathNodeSince(rq, v83ParentNode)
	if err != nil {
		return err
	}
	project, err := rq.listProject(auth.RuleNodeListAll, "")
	if err != nil {
		return err
	}
	kids, err := s.store.ListNodes(rq.ctx(), store.NodeFilter{ParentNode: &n.UUID})
	if err != nil {
		return err
	}
	o := newObj(make([]byte, 0, 128+40*len(kids)))
	o.key("children")
	o.b = append(o.b, '[')
	first := true
	for _, k := range kids {
		if project != "" && k.Owner != project && k.Lessee != project {
			continue
		}
		if !first {
			o.b = append(o.b, ", "...)
		}
		first = false
		o.b = appendString(o.b, k.UUID)
	}
	o.b = append(o.b, ']')
	o.key("links")
	lo := newObj(o.b)
	lo.str("href", rq.base+"/v1/nodes?parent_node="+n.UUID)
	lo.str("rel", "children")
	o.b = lo.end()
	return rq.writeJSON(http.StatusOK, o.end())
}
