package inspection

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/lldp"
)

// lldp_processed is built from the parsed fields directly; it must be what
// encoding the lldp.Processed and decoding it again gives, every field set
// or none, empty lists kept.
func TestLLDPProcessedValue_MatchesJSONRoundTrip(t *testing.T) {
	for name, p := range processedCases(t) {
		t.Run(name, func(t *testing.T) {
			want := jsonValue(&p)
			if diff := cmp.Diff(want, any(lldpProcessedValue(&p))); diff != "" {
				t.Errorf("(-round trip +direct):\n%s", diff)
			}
		})
	}
}

// processedCases are lldp.Processed values that exercise every field.
func processedCases(t *testing.T) map[string]lldp.Processed {
	s, n, n64, yes := "x", 7, int64(1<<40), true
	full := lldp.Processed{}
	v := reflect.ValueOf(&full).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch p := f.Addr().Interface().(type) {
		case **string:
			*p = &s
		case **int:
			*p = &n
		case **int64:
			*p = &n64
		case **bool:
			*p = &yes
		case *[]string:
			*p = []string{"a", "b-c"}
		case *[]int:
			*p = []int{1, -2}
		case *[]lldp.VLAN:
			*p = []lldp.VLAN{{ID: 100, Name: "prov"}, {}}
		default:
			t.Fatalf("field %s: type %s not covered by this test", v.Type().Field(i).Name, f.Type())
		}
	}
	return map[string]lldp.Processed{
		"full":          full,
		"none":          {},
		"empty lists":   {CapabilitiesSupport: []string{}, PortVLANs: []lldp.VLAN{}, PortProtocolVLANIDs: []int{}},
		"escaped text":  {SystemName: ptr("<sw & \"r12\">\u2028"), PortVLANs: []lldp.VLAN{{ID: 1, Name: "café"}}},
		"invalid UTF-8": {SystemName: ptr("sw\xff01"), MgmtAddresses: []string{"\xfe"}},
	}
}
func ptr[T any](v T) *T { return &v }
