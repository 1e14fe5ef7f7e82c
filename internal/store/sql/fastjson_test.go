package sql

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ferrometal/ferro/internal/baremetal"
)

// fill sets every field of the struct v points to a non-zero value, so
// that its JSON has every key.
func fill(v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() || v.Type().Field(i).Tag.Get("json") == "-" {
			continue // not in the body
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString("s-" + v.Type().Field(i).Name)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Map:
			if f.Type().Elem().Kind() == reflect.String {
				f.Set(reflect.ValueOf(map[string]string{"boot": "pxe"}))
			} else {
				f.Set(reflect.ValueOf(baremetal.JSON{"n": json.Number("1"), "o": map[string]any{"l": []any{"x", true, nil}}}))
			}
		case reflect.Slice:
			if f.Type().Elem().Kind() == reflect.String {
				f.Set(reflect.ValueOf([]string{"a", "b"}))
				break
			}
			// A slice of structs: one element, every field set.
			e := reflect.New(f.Type().Elem()).Elem()
			fill(e)
			f.Set(reflect.Append(reflect.MakeSlice(f.Type(), 0, 1), e))
		case reflect.Pointer:
			switch f.Type().Elem() {
			case reflect.TypeFor[bool]():
				f.Set(reflect.ValueOf(new(bool)))
			case reflect.TypeFor[time.Time]():
				t := time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC)
				f.Set(reflect.ValueOf(&t))
			default:
				panic("fill: unhandled pointer field " + v.Type().Field(i).Name)
			}
		case reflect.Struct:
			if f.Type() != reflect.TypeFor[time.Time]() {
				panic("fill: unhandled struct field " + v.Type().Field(i).Name)
			}
			f.Set(reflect.ValueOf(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)))
		default:
			panic("fill: unhandled field " + v.Type().Field(i).Name)
		}
	}
}

func TestFastDecode_KnowsEveryField(t *testing.T) {
	var n baremetal.Node
	fill(reflect.ValueOf(&n).Elem())
	body, _ := encodeBody(&n)
	r := jsonReader{b: []byte(body)}
	var got baremetal.Node
	if !r.fastNode(&got) || !r.end() {
		t.Errorf("the fast decoder gave up on a node with every field set; teach fastNode the new field:\n%s", body)
	}
	var p baremetal.Port
	fill(reflect.ValueOf(&p).Elem())
	body, _ = encodeBody(&p)
	r = jsonReader{b: []byte(body)}
	var gotPort baremetal.Port
	if !r.fastPort(&gotPort) || !r.end() {
		t.Errorf("the fast decoder gave up on a port with every field set; teach fastPort the new field:\n%s", body)
	}
}

// TestFastDecode_SameAsEncodingJSON decodes bodies both ways: the fast
// decoder must agree with encoding/json with UseNumber, or give up.
func TestFastDecode_SameAsEncodingJSON(t *testing.T) {
	var full baremetal.Node
	fill(reflect.ValueOf(&full).Elem())
	fullBody, _ := encodeBody(&full)
	bodies := []string{
		fullBody,
		`{}`,
		` { "uuid" : "u" , "name":null, "traits": [ ], "interfaces": null, "extra": {} } `,
		`{"properties": {"cpus": 4, "big": 18446744073709551617, "f": -1.5e3, "neg": -0, "s": "a\"b\\c\u00e9\n", "e": "",
			"nested": {"list": [1, [2, {"x": null}], "é", false]}}, "driver_info": {"ipmi_password": "p\u0000w"}}`,
		`{"name": "caf\u00e9 \ud83d\ude00", "description": "tab\there"}`,
		`{"created_at": "2025-03-01T10:00:00.123456Z", "updated_at": null, "inspection_started_at": "2025-03-01T11:00:00+01:00"}`,
		`{"automated_clean": false, "secure_boot": null, "maintenance": true}`,
		// Bodies the fast decoder does not take: encoding/json decides.
		`{"unknown_field": 1}`,
		`{"name": 1}`,
		`{"properties": {"x": 1e400}}`,
		`{"traits": ["a"],}`,
		`{"name": "x"} trailing`,
		`{"extra": {"a": 1}, "extra": {"b": 2}}`,
		`{"extra": null, "extra": {"b": 2}}`,
		`{"extra": {"b": 2}, "extra": null}`,
		// Free-form objects a list keeps as text are checked as strictly.
		`{"extra": {"a": "bad \q"}}`,
		`{"extra": {"a": "\u12"}}`,
		`{"extra": {"a": "\u00e9\ud800 \/"}}`,
		`{"extra": {"a": [1, 2,]}}`,
		`{"extra": {"a": 01}}`,
		`{"extra": {"a": tru}}`,
		`{"extra": "text"}`,
		`{"extra": {"a": "ctl` + "\x01" + `"}}`,
	}
	for _, body := range bodies {
		var want baremetal.Node
		wantErr := decodeBody([]byte(body), &want)
		var got baremetal.Node
		gotErr := decodeNode([]byte(body), &got, interner{})
		if (wantErr == nil) != (gotErr == nil) {
			t.Errorf("%s:\nencoding/json error %v, fast decoder error %v", body, wantErr, gotErr)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s:\nfast decoder differs from encoding/json (-want +got):\n%s", body, diff)
		}
		if msg := keptDiffers(want, wantErr, []byte(body)); msg != "" {
			t.Errorf("%s:\n%s", body, msg)
		}
	}
}

// keptDiffers says how decodeNodeKept's node, its kept texts decoded by
// encoding/json, differs from want (decodeBody's node; an absent or null
// object may be the empty one, which renders the same).
func keptDiffers(want baremetal.Node, wantErr error, body []byte) string {
	var got baremetal.Node
	gotErr := decodeNodeKept(body, &got, interner{})
	if (wantErr == nil) != (gotErr == nil) {
		return fmt.Sprintf("encoding/json error %v, kept decoder error %v", wantErr, gotErr)
	}
	if gotErr != nil {
		return ""
	}
	for i, m := range []*baremetal.JSON{
		baremetal.StoredDriverInfo: &got.DriverInfo, baremetal.StoredDriverInternalInfo: &got.DriverInternalInfo,
		baremetal.StoredProperties: &got.Properties, baremetal.StoredExtra: &got.Extra,
		baremetal.StoredInstanceInfo: &got.InstanceInfo, baremetal.StoredNetworkData: &got.NetworkData,
		baremetal.StoredTargetRAIDConfig: &got.TargetRAIDConfig, baremetal.StoredRAIDConfig: &got.RAIDConfig,
		baremetal.StoredCleanStep: &got.CleanStep, baremetal.StoredDeployStep: &got.DeployStep,
		baremetal.StoredServiceStep: &got.ServiceStep,
	} {
		text := got.Stored.Text(i)
		if text == nil {
			continue
		}
		if *m != nil {
			return fmt.Sprintf("field %d has both a map and a text", i)
		}
		if err := decodeBody(text, m); err != nil {
			return fmt.Sprintf("kept text %q: %v", text, err)
		}
	}
	got.Stored = nil
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		return "kept decoder differs from encoding/json (-want +got):\n" + diff
	}
	return ""
}

func TestFastDecode_Port(t *testing.T) {
	body := `{"uuid": "u", "address": "52:54:00:00:00:01", "node_uuid": "n", "local_link_connection": {"port_id": "Eth1"},
		"pxe_enabled": true, "extra": null, "internal_info": {"vif": "x"}, "created_at": "2025-03-01T10:00:00Z"}`
	var want, got baremetal.Port
	if err := decodeBody([]byte(body), &want); err != nil {
		t.Fatal(err)
	}
	if err := decodePort([]byte(body), &got, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func FuzzFastDecode(f *testing.F) {
	var full baremetal.Node
	fill(reflect.ValueOf(&full).Elem())
	body, _ := encodeBody(&full)
	f.Add(body)
	f.Add(`{"properties": {"a": [1, {"b": "c\n"}], "d": -0.5e-3}}`)
	f.Fuzz(func(t *testing.T, body string) {
		var want, got baremetal.Node
		wantErr := decodeBody([]byte(body), &want)
		gotErr := decodeNode([]byte(body), &got, interner{})
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("encoding/json error %v, fast decoder error %v", wantErr, gotErr)
		}
		if wantErr == nil {
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("fast decoder differs from encoding/json (-want +got):\n%s", diff)
			}
		}
		if msg := keptDiffers(want, wantErr, []byte(body)); msg != "" {
			t.Fatal(msg)
		}
	})
}
