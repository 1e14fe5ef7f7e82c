package inspector

import (
	"testing"
	"time"
)

func TestRamdiskLogsName_AsIronicInspectorFormats(t *testing.T) {
	dt := time.Date(2026, 12, 1, 9, 5, 7, 123456789, time.UTC)
	fields := map[string]string{"uuid": "u-1", "mac": "525400aabb01", "bmc": "192.0.2.9"}
	for format, want := range map[string]string{
		// ironic-inspector's default ramdisk_logs_filename_format
		"{uuid}_{dt:%Y%m%d-%H%M%S.%f}.tar.gz": "u-1_20261201-090507.123456.tar.gz",
		"{mac}-{bmc}.tgz":                     "525400aabb01-192.0.2.9.tgz",
		"{dt}":                                "2026-12-01 09:05:07.123456",
		"{{literal}}-{uuid}-{nope}":           "{literal}-u-1-{nope}",
		"{dt:%j %s %% %q}":                    "335 " + "1796115907" + " % %q",
	} {
		if got := ramdiskLogsName(format, fields, dt); got != want {
			t.Errorf("%q → %q, want %q", format, got, want)
		}
	}
	// A value from the report cannot add a directory.
	if got := ramdiskLogsName("{bmc}.tgz", map[string]string{"bmc": "../../etc/x"}, dt); got != ".._.._etc_x.tgz" {
		t.Errorf("bmc with slashes → %q", got)
	}
}
