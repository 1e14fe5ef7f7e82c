package ironic

import (
	"context"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// chassisResource is Ironic's chassis: a group of nodes, present in every
// microversion.
var chassisResource = &resource[*baremetal.Chassis]{
	path:        "chassis",
	key:         "chassis",
	what:        "chassis",
	noun:        "chassis",
	wildcard:    "chassis",
	idField:     "chassis_uuid",
	asWritten:   true,
	defaults:    []string{"uuid", "description"},
	invalidSort: []string{"extra"},
	sortColumns: chassisSortColumns,
	fieldMin:    fieldMinOf(0, "uuid", "description", "extra", "created_at", "updated_at"),
	internal:    []string{"created_at", "id", "links", "nodes", "updated_at", "uuid"},
	subLinks:    []string{"nodes"},
	view: func(o *objWriter, c *baremetal.Chassis, fs fieldSet, _ int) {
		if fs.want("uuid") {
			o.str("uuid", c.UUID)
		}
		if fs.want("description") {
			o.key("description")
			o.b = appendNullString(o.b, c.Description)
		}
		if fs.want("extra") {
			o.key("extra")
			o.b = appendObject(o.b, c.Extra)
		}
		appendStamps(o, c.CreatedAt, c.UpdatedAt, fs)
	},
	doc: func(c *baremetal.Chassis) map[string]any {
		return map[string]any{"uuid": c.UUID, "description": nullable(c.Description), "extra": emptyIfNil(c.Extra)}
	},
	check:  func(doc map[string]any, c *baremetal.Chassis, _ writeCtx) error { return checkChassisDoc(doc, c) },
	uuid:   func(c *baremetal.Chassis) string { return c.UUID },
	setNew: func(c *baremetal.Chassis, id string, now time.Time) { c.UUID, c.CreatedAt = id, now },
	inUse: func(id string) *apiError {
		return badRequest("Cannot complete the requested action because chassis %s contains nodes.", id)
	},
	newT:  func() *baremetal.Chassis { return &baremetal.Chassis{} },
	clone: clonePtr[baremetal.Chassis],
	get: func(ctx context.Context, s store.Store, id string) (*baremetal.Chassis, error) {
		return s.GetChassis(ctx, id)
	},
	list: func(ctx context.Context, s store.Store, f listFilter) ([]*baremetal.Chassis, error) {
		return s.ListChassis(ctx, f.page)
	},
	create: func(ctx context.Context, s store.Store, c *baremetal.Chassis) error { return s.CreateChassis(ctx, c) },
	update: func(ctx context.Context, s store.Store, c *baremetal.Chassis) error { return s.UpdateChassis(ctx, c) },
	delete: func(ctx context.Context, s store.Store, id string) error { return s.DeleteChassis(ctx, id) },
}

// chassisSchema lists a chassis's writable attributes (Ironic's
// CHASSIS_SCHEMA).
var chassisSchema = map[string]fieldKind{"uuid": kString, "description": kString, "extra": kObject}

// checkChassisDoc validates a chassis document, with the messages of
// Ironic's chassis API (wsme types, not jsonschema), and fills c from it.
func checkChassisDoc(doc map[string]any, c *baremetal.Chassis) error {
	for _, k := range slices.Sorted(mapsKeys(doc)) {
		kind, ok := chassisSchema[k]
		if !ok {
			return badRequest("Unknown attribute for argument chassis: %s", k)
		}
		v := doc[k]
		switch kind {
		case kString:
			if _, ok := v.(string); !ok && v != nil {
				return invalidInput(k, v, "Wrong type. Expected '<class 'str'>', got '"+pyTypeName(v)+"'")
			}
		case kObject:
			if _, ok := v.(map[string]any); !ok && v != nil {
				return invalidInput(k, v, "Wrong type. Expected '<class 'dict'>', got '"+pyTypeName(v)+"'")
			}
		}
	}
	if _, err := docUUID(doc); err != nil {
		return err
	}
	d := strField(doc["description"])
	if utf8.RuneCountInString(d) > 255 {
		return invalidInput("description", d, "Value should have a maximum character requirement of 255")
	}
	c.Description = d
	c.Extra = objField(doc["extra"])
	return nil
}

// nullable is s, or nil for "": an unset string field in a PATCH document.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
