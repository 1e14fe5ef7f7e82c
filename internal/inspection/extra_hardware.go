package inspection

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/ferrometal/ferro/internal/pyjson"
)

// extraHardware turns the extra-hardware collector's data, a list of
// [section, item, key, value] records, into nested objects under extra
// and drops data (extra-hardware; extra_hardware, the same in both, with
// [inspector]extra_hardware_strict). Values that read as integers become
// integers.
func extraHardware(_ context.Context, r *Run) error {
	raw, present := r.data["data"]
	if !present {
		r.p.log.Warn("No extra hardware information was received from the ramdisk", "node", r.nodeUUID)
		return nil
	}
	strict := r.p.set.ExtraHardwareStrict
	items, valid := raw.([]any)
	for _, item := range items {
		rec, ok := item.([]any)
		valid = valid && ok && (!strict || len(rec) == 4)
	}
	if !valid {
		r.p.log.Warn("Extra hardware data was not in a recognised format, and will not be forwarded to inspection rules", "node", r.nodeUUID)
		if strict {
			delete(r.data, "data")
		}
		return nil
	}

	converted := map[string]any{}
	for _, item := range items {
		if err := addRecord(converted, item.([]any)); err != nil {
			r.p.log.Warn("Ignoring invalid extra data item", "node", r.nodeUUID, "item", pyjson.Repr(item), "error", err)
		}
	}
	r.data["extra"] = converted
	delete(r.data, "data")
	return nil
}

// addRecord stores one [section, item, key, value] record. Like upstream it
// creates the section and item before finding out that a record is short.
func addRecord(converted map[string]any, rec []any) error {
	if len(rec) == 0 {
		return nil
	}
	level := converted
	for i := range 2 {
		if i >= len(rec) {
			return fmt.Errorf("list index out of range")
		}
		k, err := dictKey(rec[i])
		if err != nil {
			return err
		}
		next, ok := level[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			level[k] = next
		}
		level = next
	}
	if len(rec) < 4 {
		return fmt.Errorf("list index out of range")
	}
	value := rec[3]
	if i, err := pyjson.Int(value); err == nil {
		value = json.Number(strconv.FormatInt(i, 10))
	}
	k, err := dictKey(rec[2])
	if err != nil {
		return err
	}
	level[k] = value
	return nil
}

// dictKey is the JSON object key a Python dict key becomes.
func dictKey(v any) (string, error) {
	switch k := v.(type) {
	case string:
		return k, nil
	case nil:
		return "null", nil
	case bool:
		return strconv.FormatBool(k), nil
	case []any, map[string]any:
		return "", fmt.Errorf("unhashable type: %s", pyjson.Repr(v))
	}
	return pyjson.Str(v), nil
}
