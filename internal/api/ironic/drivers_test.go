package ironic

import "testing"

// driver_info is masked by Ironic's rule (mask.go), not by the hardware
// types' schemas; every key a schema calls secret must be one the rule
// hides, or a new type's credential would be shown.
func TestMaskDriverInfo_CoversEverySchemaSecret(t *testing.T) {
	for _, ht := range testHardwareTypes {
		for _, p := range ht.Properties {
			if p.Secret && !maskDriverInfo(p.Name) {
				t.Errorf("%s: driver_info[%s] is secret but the API shows it", ht.Name, p.Name)
			}
		}
	}
}
