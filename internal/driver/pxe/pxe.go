// Package pxe is the pxe and ipxe boot interfaces: they boot a node's
// deploy ramdisk over the network for managed inspection.
//
// PrepareRamdisk lays out, under the boot root ([pxe]tftp_root for pxe,
// [deploy]http_root for ipxe):
//
//	<root>/<node uuid>/config          the node's PXELINUX or iPXE script
//	<root>/<node uuid>/deploy_kernel   cached (hard link or download)
//	<root>/<node uuid>/deploy_ramdisk
//	<root>/pxelinux.cfg/01-aa-bb-…     pxe: one symlink per PXE port → ../<uuid>/config
//	<root>/pxelinux.cfg/aa-bb-…        ipxe: the same, named as iPXE's ${mac:hexhyp}
//	<root>/boot.ipxe                   ipxe: chains to pxelinux.cfg/${mac:hexhyp}
//	<root>/master_images/<sha256>      downloads shared by all nodes
//
// then points DHCP at the boot file and sets the next boot device to PXE.
// Everything that reaches a script is validated first: values that could
// break out of a kernel command line, a PXELINUX line or an iPXE command
// are rejected, never escaped.
package pxe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/ferrometal/ferro/internal/baremetal"
	wire "github.com/ferrometal/ferro/internal/callback"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/deployimage"
)

// Kind selects the boot interface: plain PXE (PXELINUX over TFTP) or iPXE
// (scripts and images over HTTP).
type Kind string

// The boot interfaces this package implements, named as in Ironic.
const (
	PXE  Kind = "pxe"
	IPXE Kind = "ipxe"
)

// Options configure the pxe and ipxe interfaces.
type Options struct {
	// Images validates and fetches the deploy kernel and ramdisk; nil
	// means a Fetcher with no allowed file:// paths and no [conductor]
	// images.
	Images *deployimage.Fetcher
	// DHCP is the [dhcp]dhcp_provider; nil means driver.NoDHCP.
	DHCP driver.DHCP
	// TFTPRoot is [pxe]tftp_root, pxe's boot root.
	TFTPRoot string
	// HTTPRoot and HTTPURL are [deploy]http_root, ipxe's boot root, and
	// [deploy]http_url, where it is served.
	HTTPRoot, HTTPURL string
	// TFTPServer is [pxe]tftp_server, put in DHCP options 66, 150 and 255.
	TFTPServer string
	// PXEBootfile and IPXEBootfile are [pxe]pxe_bootfile_name and
	// ipxe_bootfile_name; IPXEBootScript is [pxe]ipxe_boot_script.
	PXEBootfile, IPXEBootfile, IPXEBootScript string
	// KernelAppendParams is [pxe]kernel_append_params.
	KernelAppendParams string
	// Debug adds ipa-debug=1 ([DEFAULT]debug).
	Debug bool
}

// Boot is a pxe or ipxe boot interface. It is safe for concurrent use by
// tasks on different nodes.
type Boot struct {
	kind Kind
	o    Options
}

// New returns the boot interface of the given kind.
func New(kind Kind, o Options) (*Boot, error) {
	if kind != PXE && kind != IPXE {
		return nil, fmt.Errorf("%w: unknown PXE boot interface kind %q", driver.ErrInvalidParameter, kind)
	}
	if o.DHCP == nil {
		o.DHCP = driver.NoDHCP{}
	}
	if o.Images == nil {
		o.Images = deployimage.New(deployimage.Options{})
	}
	return &Boot{kind: kind, o: o}, nil
}

// Register adds the pxe and ipxe boot interfaces to r.
func Register(r *driver.Registry, o Options) error {
	for _, k := range []Kind{PXE, IPXE} {
		b, err := New(k, o)
		if err != nil {
			return err
		}
		r.RegisterBoot(string(k), b)
	}
	return nil
}

// Kind returns which boot interface b is.
func (b *Boot) Kind() Kind { return b.kind }

// Validate checks what booting the deploy ramdisk needs: a missing value
// wraps driver.ErrMissingParameter, an invalid one driver.ErrInvalidParameter.
func (b *Boot) Validate(_ context.Context, t *driver.Task) error {
	_, err := b.plan(t)
	return err
}

// ValidateInspection is Validate, except that anything missing wraps
// driver.ErrUnsupported, so that inspection falls back to the inspector
// managing boot. An invalid value is still an error: a fallback would hide it.
func (b *Boot) ValidateInspection(_ context.Context, t *driver.Task) error {
	_, err := b.plan(t)
	if errors.Is(err, driver.ErrMissingParameter) {
		return fmt.Errorf("%w: %s boot cannot manage inspection of node %s: %s",
			driver.ErrUnsupported, b.kind, t.Node.UUID, missingDetail(err))
	}
	return err
}

// PrepareRamdisk makes the node boot the deploy ramdisk with params on its
// kernel command line, next boot only. Calling it again rewrites everything.
func (b *Boot) PrepareRamdisk(ctx context.Context, t *driver.Task, params driver.RamdiskParams) error {
	p, err := b.plan(t)
	if err != nil {
		return fmt.Errorf("prepare ramdisk for node %s: %w", t.Node.UUID, err)
	}
	if t.Driver == nil || t.Driver.Management == nil {
		return fmt.Errorf("prepare ramdisk for node %s: %w: node has no management interface to set the boot device",
			t.Node.UUID, driver.ErrUnsupported)
	}
	cmdline, err := b.cmdline(p, params)
	if err != nil {
		return fmt.Errorf("prepare ramdisk for node %s: %w", t.Node.UUID, err)
	}
	if err := b.writeBootFiles(ctx, t, p, cmdline); err != nil {
		return fmt.Errorf("prepare ramdisk for node %s: %w", t.Node.UUID, err)
	}
	// DHCP after the files, so that it never points at a missing one.
	if err := b.o.DHCP.UpdateDHCPOptions(ctx, t, b.dhcpOptions(p)); err != nil {
		return fmt.Errorf("prepare ramdisk for node %s: update DHCP options: %w", t.Node.UUID, err)
	}
	if err := t.Driver.Management.SetBootDevice(ctx, t, baremetal.BootDevicePXE, false); err != nil {
		return fmt.Errorf("prepare ramdisk for node %s: set boot device to pxe: %w", t.Node.UUID, err)
	}
	logger(t).InfoContext(ctx, "ramdisk prepared", "boot_interface", string(b.kind),
		"ports", len(p.macs))
	return nil
}

func (b *Boot) writeBootFiles(ctx context.Context, t *driver.Task, p *plan, cmdline string) error {
	nodeDir := filepath.Join(p.root, p.uuid)
	if _, _, err := b.o.Images.Fetch(ctx, logger(t), p.images, p.root, nodeDir); err != nil {
		return err
	}
	conf, err := b.render(p, cmdline)
	if err != nil {
		return err
	}
	// A config with a callback token is readable by ferro's user only:
	// anyone who reads the token can post the node's report.
	mode := os.FileMode(0o644)
	if strings.Contains(cmdline, wire.TokenParam+"=") {
		mode = 0o600
	}
	if err := writeFileAtomicMode(filepath.Join(nodeDir, configName), conf, mode); err != nil {
		return err
	}
	if b.kind == IPXE {
		if err := b.writeBootScript(p.root); err != nil {
			return err
		}
	}
	return linkMACs(p.root, p.uuid, b.macEntries(p.macs))
}

// CleanUpRamdisk removes the node's config, per-MAC entries and cached
// images. Missing files are fine; it is safe to call any number of times.
// DHCP options need no cleanup: they live on the inspection ports, which
// the network interface removes.
func (b *Boot) CleanUpRamdisk(ctx context.Context, t *driver.Task) error {
	uuid := t.Node.UUID
	if !uuidRE.MatchString(uuid) {
		return fmt.Errorf("clean up ramdisk for node %s: %w: node UUID is not a UUID", uuid, driver.ErrInvalidParameter)
	}
	root := b.root()
	if root == "" || !filepath.IsAbs(root) {
		// Nothing can have been prepared without a valid root.
		return nil
	}
	var names []string
	for _, port := range t.Ports {
		if mac, ok := parseMAC(port.Address); ok {
			names = append(names, b.macEntries([]string{mac})...)
		}
	}
	var errs []error
	if err := unlinkMACs(root, uuid, names); err != nil {
		errs = append(errs, err)
	}
	if err := os.RemoveAll(filepath.Join(root, uuid)); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("clean up ramdisk for node %s: %w", uuid, err)
	}
	logger(t).InfoContext(ctx, "ramdisk cleaned up", "boot_interface", string(b.kind))
	return nil
}

// root is the directory this kind serves boot files from.
func (b *Boot) root() string {
	if b.kind == IPXE {
		return b.o.HTTPRoot
	}
	return b.o.TFTPRoot
}

// logger is the task's logger, which carries the node attribute; the
// default logger gets it added.
func logger(t *driver.Task) *slog.Logger {
	if t.Log != nil {
		return t.Log
	}
	return slog.Default().With("node", t.Node.UUID)
}
