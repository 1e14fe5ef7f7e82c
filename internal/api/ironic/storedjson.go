package ironic

import (
	"bytes"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// A node list reads its nodes with their free-form objects left as the
// JSON text the store keeps (baremetal.Node.Stored): decoding them into
// maps and encoding the maps again was more than half of a detailed list.
// appendStored writes such a text as appendMap writes the object it
// holds, byte for byte: Python's separators, keys in order, strings
// escaped as appendString does, secrets masked. The store writes objects
// with encoding/json, whose keys come sorted and whose strings and
// numbers come as appendMap would write them; a text that is not so (keys
// out of order or twice, an escaped key: a struct or an older writer
// stored it) is decoded and written by appendMap instead.

// appendStored appends the object whose JSON text is text (checked by
// the store) as appendMap would append it decoded, with mask.
func appendStored(b []byte, text []byte, mask masker) []byte {
	start := len(b)
	w := storedWriter{text: text}
	if out, ok := w.object(b, mask); ok && w.end() {
		return out
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		// The store checked the text; only a store that did not can
		// get here.
		return append(b[:start], "{}"...)
	}
	return appendMap(b[:start], m, mask)
}

// storedWriter walks a JSON text, copying it to the output.
type storedWriter struct {
	text    []byte
	i       int
	scratch []byte // a decoded string
}

func (w *storedWriter) ws() byte {
	for w.i < len(w.text) {
		switch c := w.text[w.i]; c {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return c
		}
	}
	return 0
}

func (w *storedWriter) end() bool { return w.ws() == 0 }

// object writes the object that comes next; false when appendMap must
// write it (see appendStored).
func (w *storedWriter) object(b []byte, mask masker) ([]byte, bool) {
	if w.ws() != '{' {
		return b, false
	}
	w.i++
	if w.ws() == '}' {
		w.i++
		return append(b, "{}"...), true
	}
	b = append(b, '{')
	var prev []byte
	for first := true; ; first = false {
		if w.ws() != '"' {
			return b, false
		}
		key, ok := w.plainString()
		if !ok || (!first && bytes.Compare(prev, key) >= 0) {
			return b, false
		}
		prev = key
		if !first {
			b = append(b, ", "...)
		}
		b = append(b, '"')
		b = append(b, key...)
		b = append(b, `": `...)
		if w.ws() != ':' {
			return b, false
		}
		w.i++
		if c := w.ws(); c != '{' && mask != nil && mask(unsafe.String(unsafe.SliceData(key), len(key))) {
			b = append(b, `"******"`...)
			if !w.skip() {
				return b, false
			}
		} else if b, ok = w.value(b, mask); !ok {
			return b, false
		}
		switch w.ws() {
		case ',':
			w.i++
		case '}':
			w.i++
			return append(b, '}'), true
		default:
			return b, false
		}
	}
}

// value writes the value that comes next.
func (w *storedWriter) value(b []byte, mask masker) ([]byte, bool) {
	switch c := w.ws(); c {
	case '{':
		return w.object(b, mask)
	case '[':
		w.i++
		if w.ws() == ']' {
			w.i++
			return append(b, "[]"...), true
		}
		b = append(b, '[')
		for first := true; ; first = false {
			if !first {
				b = append(b, ", "...)
			}
			var ok bool
			if b, ok = w.value(b, mask); !ok {
				return b, false
			}
			switch w.ws() {
			case ',':
				w.i++
			case ']':
				w.i++
				return append(b, ']'), true
			default:
				return b, false
			}
		}
	case '"':
		return w.str(b, mask)
	default:
		// A number, true, false or null: appendValue writes a stored
		// number's text as it is, and these words as they are.
		start := w.i
		for w.i < len(w.text) {
			switch w.text[w.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return append(b, w.text[start:w.i]...), w.i > start
			}
			w.i++
		}
		return b, false
	}
}

// str writes the string that comes next, masked as appendValue masks it.
func (w *storedWriter) str(b []byte, mask masker) ([]byte, bool) {
	start := w.i
	if s, ok := w.plainString(); ok {
		if mask == nil {
			return append(append(append(b, '"'), s...), '"'), true
		}
		v := unsafe.String(unsafe.SliceData(s), len(s))
		if masked := maskString(v); masked != v {
			return appendString(b, masked), true
		}
		return append(append(append(b, '"'), s...), '"'), true
	}
	// Escapes or other than printable ASCII: decoded, then written as
	// appendValue writes the decoded string.
	w.i = start
	var ok bool
	if w.scratch, ok = w.unquote(w.scratch[:0]); !ok {
		return b, false
	}
	v := unsafe.String(unsafe.SliceData(w.scratch), len(w.scratch))
	if mask != nil {
		v = maskString(v)
	}
	return appendString(b, v), true
}

// unquote reads the string at w.i and appends its value to out, as
// encoding/json decodes it: escapes resolved (a surrogate pair is one
// character, a lone surrogate U+FFFD), invalid UTF-8 made U+FFFD.
func (w *storedWriter) unquote(out []byte) ([]byte, bool) {
	t := w.text
	i := w.i + 1
	for i < len(t) {
		switch c := t[i]; {
		case c == '"':
			w.i = i + 1
			return out, true
		case c == '\\':
			if i+1 >= len(t) {
				return out, false
			}
			switch e := t[i+1]; e {
			case '"', '\\', '/', '\'':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(t, i+2)
				if !ok {
					return out, false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2, ok := hex4(t, i+2); ok && t[i] == '\\' && t[i+1] == 'u' {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							out = utf8.AppendRune(out, d)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
				continue
			default:
				return out, false
			}
			i += 2
		case c < 0x20:
			return out, false
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(t[i:])
			out = utf8.AppendRune(out, r)
			i += size
		}
	}
	return out, false
}

// hex4 reads the four hex digits at t[i:] as a character.
func hex4(t []byte, i int) (rune, bool) {
	if i+4 > len(t) {
		return 0, false
	}
	var r rune
	for _, c := range t[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// plainString reads the string that comes next when it is printable
// ASCII without escapes, which appendString writes as it is, and returns
// its bytes; otherwise it reads nothing and returns false.
func (w *storedWriter) plainString() ([]byte, bool) {
	start := w.i + 1
	for i := start; i < len(w.text); i++ {
		switch c := w.text[i]; {
		case c == '"':
			w.i = i + 1
			return w.text[start:i], true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, false
		}
	}
	return nil, false
}

// stringEnd is the end of the string at w.i (after its closing quote),
// or -1.
func (w *storedWriter) stringEnd() int {
	for i := w.i + 1; i < len(w.text); i++ {
		switch w.text[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skip passes over the value that comes next.
func (w *storedWriter) skip() bool {
	depth := 0
	for w.i < len(w.text) {
		switch w.text[w.i] {
		case '"':
			end := w.stringEnd()
			if end < 0 {
				return false
			}
			w.i = end
			if depth == 0 {
				return true
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return true // the end of the enclosing object
			}
			depth--
			if depth == 0 {
				w.i++
				return true
			}
		case ',':
			if depth == 0 {
				return true
			}
		}
		w.i++
	}
	return false
}
