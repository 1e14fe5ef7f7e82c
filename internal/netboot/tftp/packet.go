package tftp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Opcodes (RFC 1350, RFC 2347).
const (
	opRRQ   = 1
	opWRQ   = 2
	opDATA  = 3
	opACK   = 4
	opERROR = 5
	opOACK  = 6
)

// Error codes (RFC 1350, RFC 2347).
const (
	errNotDefined   = 0
	errNotFound     = 1
	errAccess       = 2
	errIllegalOp    = 4
	errUnknownTID   = 5
	errOptionRefuse = 8
)

// Bounds of a request: a name is at most 1024 bytes (bootfs.Clean's
// limit), at most maxOptions options of at most 64 bytes each.
const (
	maxRequest  = 2048
	maxOptions  = 16
	maxOptField = 64
)

// request is a parsed RRQ or WRQ.
type request struct {
	op       uint16
	filename string
	mode     string // lower case
	// options in the order asked, names lower case; a repeated name keeps
	// its first value.
	options []option
}

type option struct{ name, value string }

func (r *request) option(name string) (string, bool) {
	for _, o := range r.options {
		if o.name == name {
			return o.value, true
		}
	}
	return "", false
}

var errMalformed = errors.New("malformed request")

// parseRequest parses an RRQ or WRQ: opcode, filename NUL, mode NUL, then
// option name NUL value NUL pairs (RFC 2347). A trailing unpaired field
// is refused; so is anything past the bounds above.
func parseRequest(b []byte) (*request, error) {
	if len(b) < 4 || len(b) > maxRequest {
		return nil, fmt.Errorf("%w: %d bytes", errMalformed, len(b))
	}
	op := binary.BigEndian.Uint16(b)
	if op != opRRQ && op != opWRQ {
		return nil, fmt.Errorf("%w: opcode %d", errMalformed, op)
	}
	fields := strings.Split(string(b[2:]), "\x00")
	// The packet ends with NUL, so the last field is empty.
	if len(fields) < 3 || fields[len(fields)-1] != "" {
		return nil, fmt.Errorf("%w: fields not NUL-terminated", errMalformed)
	}
	fields = fields[:len(fields)-1]
	r := &request{op: op, filename: fields[0], mode: strings.ToLower(fields[1])}
	if r.filename == "" {
		return nil, fmt.Errorf("%w: empty file name", errMalformed)
	}
	switch r.mode {
	case "octet", "netascii":
	default:
		return nil, fmt.Errorf("%w: mode %q", errMalformed, r.mode)
	}
	rest := fields[2:]
	if len(rest)%2 != 0 {
		return nil, fmt.Errorf("%w: option without a value", errMalformed)
	}
	if len(rest)/2 > maxOptions {
		return nil, fmt.Errorf("%w: more than %d options", errMalformed, maxOptions)
	}
	for i := 0; i < len(rest); i += 2 {
		name, value := strings.ToLower(rest[i]), rest[i+1]
		if name == "" || len(name) > maxOptField || len(value) > maxOptField {
			return nil, fmt.Errorf("%w: option %q", errMalformed, name)
		}
		if _, dup := r.option(name); dup {
			continue
		}
		r.options = append(r.options, option{name, value})
	}
	return r, nil
}

// encode is the request's wire form (used by the fuzz test's round trip).
func (r *request) encode() []byte {
	b := binary.BigEndian.AppendUint16(nil, r.op)
	b = append(append(b, r.filename...), 0)
	b = append(append(b, r.mode...), 0)
	for _, o := range r.options {
		b = append(append(b, o.name...), 0)
		b = append(append(b, o.value...), 0)
	}
	return b
}

func errorPacket(code uint16, msg string) []byte {
	b := binary.BigEndian.AppendUint16(nil, opERROR)
	b = binary.BigEndian.AppendUint16(b, code)
	return append(append(b, msg...), 0)
}

func oackPacket(opts []option) []byte {
	b := binary.BigEndian.AppendUint16(nil, opOACK)
	for _, o := range opts {
		b = append(append(b, o.name...), 0)
		b = append(append(b, o.value...), 0)
	}
	return b
}
