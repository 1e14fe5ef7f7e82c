package ironic

import (
	"time"
	"unicode/utf8"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// chassisResource is Ironic's chassis: a group of nodes, present in every
// microversion.
var chassisResource = describe(&resource[baremetal.Chassis, store.Page]{
	path:      "chassis",
	noun:      "chassis",
	idField:   "chassis_uuid",
	asWritten: true,
	fields: append([]viewField[*baremetal.Chassis]{
		{"uuid", 0, strOf(func(c *baremetal.Chassis) string { return c.UUID })},
		{"description", 0, nullStrOf(func(c *baremetal.Chassis) string { return c.Description })},
		{"extra", 0, objOf(func(c *baremetal.Chassis) baremetal.JSON { return c.Extra })},
	}, stampFields(func(c *baremetal.Chassis) time.Time { return c.CreatedAt },
		func(c *baremetal.Chassis) *time.Time { return c.UpdatedAt })...),
	defaults:    []string{"uuid", "description"},
	invalidSort: []string{"extra"},
	sortColumns: chassisSortColumns,
	internal:    []string{"created_at", "id", "links", "nodes", "updated_at", "uuid"},
	subLinks:    []subLink{{"nodes", 0}},
	doc: func(c *baremetal.Chassis) map[string]any {
		return map[string]any{"uuid": c.UUID, "description": nullable(c.Description), "extra": emptyIfNil(c.Extra)}
	},
	check:  func(doc map[string]any, c *baremetal.Chassis, _ writeCtx) error { return checkChassisDoc(doc, c) },
	uuid:   func(c *baremetal.Chassis) string { return c.UUID },
	setNew: func(c *baremetal.Chassis, id string, now time.Time) { c.UUID, c.CreatedAt = id, now },
	inUse: func(id string) *apiError {
		return badRequest("Cannot complete the requested action because chassis %s contains nodes.", id)
	},
	storeOps: storeOps[baremetal.Chassis, store.Page]{store.Store.GetChassis, store.Store.ListChassis,
		store.Store.CreateChassis, store.Store.UpdateChassis, store.Store.DeleteChassis},
	page: pageOf,
})

// chassisSchema lists a chassis's writable attributes (Ironic's
// CHASSIS_SCHEMA).
var chassisSchema = map[string]fieldKind{"uuid": kString, "description": kString, "extra": kObject}

// checkChassisDoc validates a chassis document, with the messages of
// Ironic's chassis API (wsme types, not jsonschema), and fills c from it.
func checkChassisDoc(doc map[string]any, c *baremetal.Chassis) error {
	if err := checkDocKinds(doc, chassisSchema, "chassis", false); err != nil {
		return err
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
