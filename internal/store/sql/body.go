package sql

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
)

// encodeBody is the JSON kept in a body column. HTML is not escaped: the
// body is data, not markup, and stays readable in a database shell.
func encodeBody(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte{'\n'})), nil
}

// decodeBody reads a body column. Numbers decode as json.Number, so 4 stays
// 4 and 480103981056 stays exact instead of becoming a float64.
func decodeBody(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode stored %T: %w", v, err)
	}
	return nil
}

// emptyJSON makes a nil free-form field the empty object clients expect.
func emptyJSON(m *baremetal.JSON) {
	if *m == nil {
		*m = baremetal.JSON{}
	}
}

func emptySlice(s *[]string) {
	if *s == nil {
		*s = []string{}
	}
}

// timeScanner scans a timestamp column: time.Time from PostgreSQL, the
// fixed-width text of sqliteTimeLayout from SQLite. NULL leaves it untouched.
type timeScanner struct{ t *time.Time }

func (s timeScanner) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		return nil
	case time.Time:
		*s.t = normTime(v)
		return nil
	case string:
		return s.parse(v)
	case []byte:
		return s.parse(string(v))
	}
	return fmt.Errorf("cannot scan %T into a timestamp", src)
}

func (s timeScanner) parse(v string) error {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return fmt.Errorf("stored timestamp %q: %w", v, err)
	}
	*s.t = t.UTC()
	return nil
}

// nullString is the argument for an optional column: NULL when empty, so
// that unique constraints ignore unset values.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
