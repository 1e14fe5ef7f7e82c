package hooks

import (
	"context"
	"fmt"
)

// ramdiskError fails the introspection when the ramdisk reported an error
// (upstream's RamdiskErrorHook). Storing the ramdisk logs is the caller's
// business.
type ramdiskError struct{ noBeforeUpdate }

func (ramdiskError) Name() string { return "ramdisk_error" }

func (ramdiskError) BeforeProcessing(_ context.Context, d *Data) error {
	if e := d.Report.Error; e != nil && *e != "" {
		return fmt.Errorf("Ramdisk reported error: %s", *e)
	}
	return nil
}
