package sql

import (
	"encoding/json"
	"errors"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/ferrometal/ferro/internal/baremetal"
)

// Nodes and ports are read far more than they are written (a detailed list
// of 500 nodes decodes 500 bodies), and encoding/json spends most of that
// time in reflection. jsonReader decodes those two bodies directly into
// their structs, with the same results as decodeBody: numbers in free-form
// objects become json.Number. It knows the fields of each struct; a body
// with anything it does not expect (a field added to the struct and not
// here yet, a value of another type) makes it give up, and the caller falls
// back to decodeBody, so it is never wrong, only sometimes not faster.
// TestFastDecode_KnowsEveryField fails when a struct gains a field it
// does not know.

var errFallback = errors.New("fast JSON decoder gave up")

// decodeNode decodes a node body.
func decodeNode(body []byte, n *baremetal.Node, in interner) error {
	r := jsonReader{b: body, intern: in}
	if r.fastNode(n) && r.end() {
		return nil
	}
	*n = baremetal.Node{}
	return decodeBody(body, n)
}

// decodeNodeKept is decodeNode leaving the free-form objects as their
// text (Node.Stored), checked but not decoded: a list that only renders
// them spends most of its decoding on them otherwise. A body the fast
// decoder does not take is decoded whole, as decodeNode does.
func decodeNodeKept(body []byte, n *baremetal.Node, in interner) error {
	r := jsonReader{b: body, intern: in, kept: &baremetal.StoredJSON{}}
	if r.fastNode(n) && r.end() {
		n.Stored = r.kept
		return nil
	}
	*n = baremetal.Node{}
	return decodeBody(body, n)
}

// decodePort decodes a port body.
func decodePort(body []byte, p *baremetal.Port, in interner) error {
	r := jsonReader{b: body, intern: in}
	if r.fastPort(p) && r.end() {
		return nil
	}
	*p = baremetal.Port{}
	return decodeBody(body, p)
}

func (r *jsonReader) fastNode(n *baremetal.Node) bool {
	for key := range r.object() {
		switch string(key) { // compiled without a copy of key
		case "uuid":
			n.UUID = r.str()
		case "name":
			n.Name = r.str()
		case "driver":
			n.Driver = r.str()
		case "description":
			n.Description = r.str()
		case "resource_class":
			n.ResourceClass = r.str()
		case "conductor_group":
			n.ConductorGroup = r.str()
		case "owner":
			n.Owner = r.str()
		case "lessee":
			n.Lessee = r.str()
		case "instance_uuid":
			n.InstanceUUID = r.str()
		case "allocation_uuid":
			n.AllocationUUID = r.str()
		case "chassis_uuid":
			n.ChassisUUID = r.str()
		case "shard":
			n.Shard = r.str()
		case "parent_node":
			n.ParentNode = r.str()
		case "instance_name":
			n.InstanceName = r.str()
		case "health":
			n.Health = r.str()
		case "service_step":
			n.ServiceStep = r.freeForm(n.ServiceStep, baremetal.StoredServiceStep)
		case "firmware":
			n.Firmware = r.firmware()
		case "driver_info":
			n.DriverInfo = r.freeForm(n.DriverInfo, baremetal.StoredDriverInfo)
		case "driver_internal_info":
			n.DriverInternalInfo = r.freeForm(n.DriverInternalInfo, baremetal.StoredDriverInternalInfo)
		case "properties":
			n.Properties = r.freeForm(n.Properties, baremetal.StoredProperties)
		case "extra":
			n.Extra = r.freeForm(n.Extra, baremetal.StoredExtra)
		case "instance_info":
			n.InstanceInfo = r.freeForm(n.InstanceInfo, baremetal.StoredInstanceInfo)
		case "network_data":
			n.NetworkData = r.freeForm(n.NetworkData, baremetal.StoredNetworkData)
		case "target_raid_config":
			n.TargetRAIDConfig = r.freeForm(n.TargetRAIDConfig, baremetal.StoredTargetRAIDConfig)
		case "raid_config":
			n.RAIDConfig = r.freeForm(n.RAIDConfig, baremetal.StoredRAIDConfig)
		case "clean_step":
			n.CleanStep = r.freeForm(n.CleanStep, baremetal.StoredCleanStep)
		case "deploy_step":
			n.DeployStep = r.freeForm(n.DeployStep, baremetal.StoredDeployStep)
		case "interfaces":
			n.Interfaces = r.stringMapInto(n.Interfaces)
		case "traits":
			n.Traits = r.stringSlice()
		case "provision_state":
			n.ProvisionState = r.str()
		case "target_provision_state":
			n.TargetProvisionState = r.str()
		case "power_state":
			n.PowerState = r.str()
		case "target_power_state":
			n.TargetPowerState = r.str()
		case "last_error":
			n.LastError = r.str()
		case "maintenance":
			n.Maintenance = r.boolean()
		case "maintenance_reason":
			n.MaintenanceReason = r.str()
		case "fault":
			n.Fault = r.str()
		case "protected":
			n.Protected = r.boolean()
		case "protected_reason":
			n.ProtectedReason = r.str()
		case "retired":
			n.Retired = r.boolean()
		case "retired_reason":
			n.RetiredReason = r.str()
		case "console_enabled":
			n.ConsoleEnabled = r.boolean()
		case "automated_clean":
			n.AutomatedClean = r.boolPtr()
		case "boot_mode":
			n.BootMode = r.str()
		case "secure_boot":
			n.SecureBoot = r.boolPtr()
		case "disable_power_off":
			n.DisablePowerOff = r.boolean()
		case "conductor_affinity":
			n.ConductorAffinity = r.str()
		case "inspection_started_at":
			n.InspectionStartedAt = r.timePtr()
		case "inspection_finished_at":
			n.InspectionFinishedAt = r.timePtr()
		case "provision_updated_at":
			n.ProvisionUpdatedAt = r.timePtr()
		case "created_at":
			n.CreatedAt = r.time()
		case "updated_at":
			n.UpdatedAt = r.timePtr()
		default:
			r.fail()
		}
	}
	return r.err == nil
}

// firmware reads a node's cached firmware components.
func (r *jsonReader) firmware() []baremetal.FirmwareComponent {
	var out []baremetal.FirmwareComponent
	for range r.array() {
		var c baremetal.FirmwareComponent
		for key := range r.object() {
			switch string(key) {
			case "component":
				c.Component = r.str()
			case "initial_version":
				c.InitialVersion = r.str()
			case "current_version":
				c.CurrentVersion = r.str()
			case "last_version_flashed":
				c.LastVersionFlashed = r.str()
			case "vendor":
				c.Vendor = r.str()
			case "model":
				c.Model = r.str()
			case "serial_number":
				c.SerialNumber = r.str()
			case "created_at":
				c.CreatedAt = r.time()
			case "updated_at":
				c.UpdatedAt = r.timePtr()
			default:
				r.fail()
			}
		}
		out = append(out, c)
	}
	return out
}

func (r *jsonReader) fastPort(p *baremetal.Port) bool {
	for key := range r.object() {
		switch string(key) {
		case "uuid":
			p.UUID = r.str()
		case "address":
			p.Address = r.str()
		case "node_uuid":
			p.NodeUUID = r.str()
		case "portgroup_uuid":
			p.PortgroupUUID = r.str()
		case "local_link_connection":
			p.LocalLinkConnection = r.jsonObjectInto(p.LocalLinkConnection)
		case "pxe_enabled":
			p.PXEEnabled = r.boolean()
		case "physical_network":
			p.PhysicalNetwork = r.str()
		case "extra":
			p.Extra = r.jsonObjectInto(p.Extra)
		case "internal_info":
			p.InternalInfo = r.jsonObjectInto(p.InternalInfo)
		case "is_smartnic":
			p.IsSmartNIC = r.boolean()
		case "name":
			p.Name = r.str()
		case "description":
			p.Description = r.str()
		case "vendor":
			p.Vendor = r.str()
		case "category":
			p.Category = r.str()
		case "available_for_dynamic_portgroup":
			p.AvailableForDynamicPortgroup = r.boolPtr()
		case "created_at":
			p.CreatedAt = r.time()
		case "updated_at":
			p.UpdatedAt = r.timePtr()
		default:
			r.fail()
		}
	}
	return r.err == nil
}

// jsonReader reads one JSON document. The first thing it does not expect
// sets err; from then on every method returns a zero value.
type jsonReader struct {
	b      []byte
	i      int
	err    error
	intern interner
	// kept, when set, receives the text of the free-form objects, which
	// are then not decoded (freeForm).
	kept *baremetal.StoredJSON
}

// interner hands out one string for equal byte sequences: the nodes of a
// list repeat the same keys and many of the same values (interface names,
// states, driver_info keys), and sharing them saves most allocations.
// It keeps each string boxed as an interface value, which the values of
// free-form objects are: boxing a string or number allocates, and that was
// a third of a list's allocations. Strings and boxes are immutable, so
// sharing is safe. A nil interner copies.
type interner map[string]any

// maxInterned bounds an interner, and maxInternLen what it keeps: long
// strings are rarely repeated.
const (
	maxInterned  = 4096
	maxInternLen = 64
)

func (in interner) get(b []byte) string {
	if in == nil || len(b) > maxInternLen {
		return string(b)
	}
	return in.box(b, false).(string)
}

// box returns b as a string, or as a json.Number when number, in an
// interface. Numbers are kept under their text behind a NUL, which no
// interned string has (one with a NUL is escaped and never interned),
// and a hit of the other type is not reused.
func (in interner) box(b []byte, number bool) any {
	if in == nil || len(b) > maxInternLen {
		if number {
			return json.Number(b)
		}
		return string(b)
	}
	var key string
	if number {
		var buf [maxInternLen + 1]byte
		k := append(append(buf[:0], 0), b...)
		if v, ok := in[string(k)]; ok {
			if _, ok := v.(json.Number); ok {
				return v
			}
		}
		key = string(k)
		var v any = json.Number(key[1:])
		if len(in) < maxInterned {
			in[key] = v
		}
		return v
	}
	if v, ok := in[string(b)]; ok {
		if _, ok := v.(string); ok {
			return v
		}
	}
	key = string(b)
	var v any = key
	if len(in) < maxInterned {
		in[key] = v
	}
	return v
}

func (r *jsonReader) fail() {
	if r.err == nil {
		r.err = errFallback
	}
}

// ws skips white space and reports the next byte, or 0 at the end.
func (r *jsonReader) ws() byte {
	for r.i < len(r.b) {
		switch c := r.b[r.i]; c {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return c
		}
	}
	return 0
}

// end reports whether only white space is left.
func (r *jsonReader) end() bool {
	return r.err == nil && r.ws() == 0
}

// literal consumes word ("null", "true", "false") if it comes next.
func (r *jsonReader) literal(word string) bool {
	if r.err != nil || r.ws() != word[0] || len(r.b)-r.i < len(word) || string(r.b[r.i:r.i+len(word)]) != word {
		return false
	}
	r.i += len(word)
	return true
}

// object iterates over the keys of an object, or of nothing for null; the
// loop body must read each key's value. A key is valid until the next one.
func (r *jsonReader) object() func(yield func([]byte) bool) {
	return func(yield func([]byte) bool) {
		if r.err != nil || r.literal("null") {
			return
		}
		if r.ws() != '{' {
			r.fail()
			return
		}
		r.i++
		if r.ws() == '}' {
			r.i++
			return
		}
		for {
			key := r.key()
			if r.err != nil || r.ws() != ':' {
				r.fail()
				return
			}
			r.i++
			if !yield(key) || r.err != nil {
				return
			}
			switch r.ws() {
			case ',':
				r.i++
			case '}':
				r.i++
				return
			default:
				r.fail()
				return
			}
		}
	}
}

// array iterates over the elements of an array, or of nothing for null;
// the loop body must read each element.
func (r *jsonReader) array() func(yield func() bool) {
	return func(yield func() bool) {
		if r.err != nil || r.literal("null") {
			return
		}
		if r.ws() != '[' {
			r.fail()
			return
		}
		r.i++
		if r.ws() == ']' {
			r.i++
			return
		}
		for {
			if !yield() || r.err != nil {
				return
			}
			switch r.ws() {
			case ',':
				r.i++
			case ']':
				r.i++
				return
			default:
				r.fail()
				return
			}
		}
	}
}

// key reads an object key, without copying it when it has no escapes.
func (r *jsonReader) key() []byte {
	if r.ws() != '"' {
		r.fail()
		return nil
	}
	for i := r.i + 1; i < len(r.b); i++ {
		switch c := r.b[i]; {
		case c == '"':
			key := r.b[r.i+1 : i]
			r.i = i + 1
			return key
		case c == '\\', c < 0x20, c >= utf8.RuneSelf:
			return []byte(r.str())
		}
	}
	r.fail()
	return nil
}

// str reads a string; null reads as "".
func (r *jsonReader) str() string {
	raw, s := r.rawStr()
	if raw != nil {
		if r.kept != nil {
			// A node that is only rendered: its strings may share the
			// body's memory, which nothing writes (textBytes).
			return unsafe.String(unsafe.SliceData(raw), len(raw))
		}
		return r.intern.get(raw)
	}
	return s
}

// strAny is str as the interface value a free-form object holds.
func (r *jsonReader) strAny() any {
	raw, s := r.rawStr()
	if raw != nil {
		return r.intern.box(raw, false)
	}
	return s
}

// rawStr reads a string: its bytes in the body when they are the string
// (no escapes, valid UTF-8), else nil and the decoded string.
func (r *jsonReader) rawStr() ([]byte, string) {
	if r.err != nil || r.literal("null") {
		return nil, ""
	}
	if r.ws() != '"' {
		r.fail()
		return nil, ""
	}
	start := r.i
	ascii := true
	for i := start + 1; i < len(r.b); i++ {
		switch c := r.b[i]; {
		case c == '"':
			if !ascii && !utf8.Valid(r.b[start+1:i]) {
				return nil, r.escapedString(start) // invalid UTF-8 becomes U+FFFD
			}
			r.i = i + 1
			return r.b[start+1 : i : i], ""
		case c == '\\':
			return nil, r.escapedString(start)
		case c < 0x20:
			r.fail()
			return nil, ""
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	r.fail()
	return nil, ""
}

// skipString reads a string without keeping it: it must be one that
// encoding/json takes (no control characters, only JSON's escapes).
func (r *jsonReader) skipString() {
	if r.ws() != '"' {
		r.fail()
		return
	}
	for i := r.i + 1; i < len(r.b); i++ {
		switch c := r.b[i]; {
		case c == '"':
			r.i = i + 1
			return
		case c < 0x20:
			r.fail()
			return
		case c == '\\':
			i++
			if i >= len(r.b) {
				r.fail()
				return
			}
			switch r.b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(r.b) || !isHex4(r.b[i+1:i+5]) {
					r.fail()
					return
				}
				i += 4
			default:
				r.fail()
				return
			}
		}
	}
	r.fail()
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// escapedString reads the string at start, which has escapes or invalid
// UTF-8, as encoding/json does.
func (r *jsonReader) escapedString(start int) string {
	i := start + 1
	for ; i < len(r.b) && r.b[i] != '"'; i++ {
		if r.b[i] == '\\' {
			i++
		}
	}
	if i >= len(r.b) {
		r.fail()
		return ""
	}
	var s string
	if err := json.Unmarshal(r.b[start:i+1], &s); err != nil {
		r.fail()
		return ""
	}
	r.i = i + 1
	return s
}

// boolean reads true or false; null reads as false.
func (r *jsonReader) boolean() bool {
	switch {
	case r.literal("true"):
		return true
	case r.literal("false"), r.literal("null"):
		return false
	}
	r.fail()
	return false
}

func (r *jsonReader) boolPtr() *bool {
	if r.literal("null") {
		return nil
	}
	b := r.boolean()
	return &b
}

// number reads a number as encoding/json's UseNumber does: its text,
// which must follow JSON's grammar, as an interface value.
func (r *jsonReader) number() any {
	text := r.numberText()
	if text == nil {
		return nil
	}
	return r.intern.box(text, true)
}

// numberText reads a number, which must follow JSON's grammar, and
// returns its text; nil when there is none.
func (r *jsonReader) numberText() []byte {
	b, start := r.b, r.i
	i := start
	digits := func() bool {
		from := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > from
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		r.fail()
		return nil
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			r.fail()
			return nil
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			r.fail()
			return nil
		}
	}
	r.i = i
	return b[start:i]
}

// time reads a timestamp as time.Time's UnmarshalJSON does; null leaves
// the zero time.
func (r *jsonReader) time() time.Time {
	if r.literal("null") {
		return time.Time{}
	}
	s := r.str()
	if r.err != nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		r.fail()
	}
	return t
}

func (r *jsonReader) timePtr() *time.Time {
	if r.literal("null") {
		return nil
	}
	t := r.time()
	return &t
}

// jsonObjectInto reads a free-form object into m, a struct field: like
// encoding/json, into the map already there if the key came before, and
// null makes it nil.
func (r *jsonReader) jsonObjectInto(m baremetal.JSON) baremetal.JSON {
	if r.literal("null") {
		return nil
	}
	if m == nil {
		m = baremetal.JSON{}
	}
	for key := range r.object() {
		m[r.intern.get(key)] = r.value()
	}
	return m
}

// freeForm reads a free-form object of a node: into m as jsonObjectInto
// does, or, when the reader keeps them, as its text into r.kept[field],
// checked as JSON and m left nil; null is kept as {}, which is what the
// field reads as then. A key that comes twice, which
// encoding/json would merge, makes the reader give up.
func (r *jsonReader) freeForm(m baremetal.JSON, field int) baremetal.JSON {
	if r.kept == nil {
		return r.jsonObjectInto(m)
	}
	text := &r.kept[field]
	if *text != nil || m != nil {
		r.fail()
		return nil
	}
	if r.literal("null") {
		*text = emptyObject
		return nil
	}
	if r.ws() != '{' {
		r.fail()
		return nil
	}
	start := r.i
	r.skip()
	if r.err == nil {
		*text = r.b[start:r.i:r.i]
	}
	return nil
}

// emptyObject is the text a kept field has for null: the empty object
// the field reads as.
var emptyObject = []byte("{}")

// skip reads any value without keeping it, as strictly as value does.
func (r *jsonReader) skip() {
	switch r.ws() {
	case '{':
		for range r.object() {
			r.skip()
		}
	case '[':
		for range r.array() {
			r.skip()
		}
	case '"':
		r.skipString()
	case 't', 'f':
		r.boolean()
	case 'n':
		if !r.literal("null") {
			r.fail()
		}
	default:
		r.numberText()
	}
}

// value reads any value the way encoding/json decodes into an interface
// with UseNumber.
func (r *jsonReader) value() any {
	switch r.ws() {
	case '{':
		return map[string]any(r.jsonObjectInto(nil))
	case '[':
		s := []any{}
		for range r.array() {
			s = append(s, r.value())
		}
		return s
	case '"':
		return r.strAny()
	case 't', 'f':
		return r.boolean()
	case 'n':
		if !r.literal("null") {
			r.fail()
		}
		return nil
	}
	return r.number()
}

func (r *jsonReader) stringMapInto(m map[string]string) map[string]string {
	if r.literal("null") {
		return nil
	}
	if m == nil {
		m = map[string]string{}
	}
	for key := range r.object() {
		m[r.intern.get(key)] = r.str()
	}
	return m
}

func (r *jsonReader) stringSlice() []string {
	if r.literal("null") {
		return nil
	}
	s := []string{}
	for range r.array() {
		s = append(s, r.str())
	}
	return s
}
