package pxe

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/ferrometal/ferro/internal/driver"
)

// DeployImages are a node's deploy kernel and ramdisk, validated by the
// same rules as the pxe and ipxe interfaces use. Other boot interfaces
// (redfish-virtual-media) use them through CheckDeployImages and
// FetchDeployImages, so the rules and the download cache exist once.
type DeployImages struct{ kernel, ramdisk image }

// Kernel and Ramdisk are the references, credentials masked, for messages.
func (d *DeployImages) Kernel() string { return d.kernel.display() }

// Ramdisk is the deploy ramdisk reference, credentials masked.
func (d *DeployImages) Ramdisk() string { return d.ramdisk.display() }

// CheckDeployImages validates the node's deploy_kernel and deploy_ramdisk
// (driver_info, else [conductor]). Neither set wraps driver.ErrMissingParameter,
// a bad value driver.ErrInvalidParameter.
func (b *Boot) CheckDeployImages(t *driver.Task) (*DeployImages, error) {
	var pr problems
	k, r := b.checkDeployImages(&pr, t.Node.DriverInfo)
	if err := pr.err(); err != nil {
		return nil, err
	}
	return &DeployImages{kernel: k, ramdisk: r}, nil
}

// FetchDeployImages puts the images at dir/deploy_kernel and
// dir/deploy_ramdisk (hard links, or downloads through the master cache
// under root/master_images) and returns their paths.
func (b *Boot) FetchDeployImages(ctx context.Context, t *driver.Task, d *DeployImages, root, dir string) (kernel, ramdisk string, err error) {
	if err := mkdirs(dir); err != nil {
		return "", "", err
	}
	for _, img := range []image{d.kernel, d.ramdisk} {
		if err := b.fetch(ctx, t, img, root, filepath.Join(dir, img.name)); err != nil {
			return "", "", fmt.Errorf("cache %s %s: %w", img.name, img.display(), err)
		}
	}
	return filepath.Join(dir, d.kernel.name), filepath.Join(dir, d.ramdisk.name), nil
}
