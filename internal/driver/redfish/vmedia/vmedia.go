// Package vmedia is the redfish-virtual-media boot interface: for a managed
// inspection it builds, in process, a bootable ISO (BIOS and UEFI) holding
// the deploy kernel, the deploy ramdisk and a boot config whose kernel
// command line carries the inspection parameters; serves it from ferro's
// HTTP boot root under an unguessable per-node name; inserts it in the
// BMC's virtual CD; and sets a one-time boot from CD.
//
// Layout under [deploy]http_root, served at [deploy]http_url:
//
//	vmedia/index.html                 empty, so that a file server never lists the directory
//	vmedia/<node uuid>/index.html     the same
//	vmedia/<node uuid>/<random>.iso   the ISO; its name is 128 random bits
//	master_images/<sha256>            downloads shared with the ipxe interface
//
// Like upstream's, it never falls back to the inspector managing boot:
// anything missing is a validation error. A prebuilt driver_info[deploy_iso]
// cannot carry the per-inspection callback URL and token: the inspector
// interface refuses it; the agent interface uses it as Ironic does, as
// is (the BMC fetches it from its URL), with a warning that the
// per-node kernel parameters are lost — an agent whose image carries the
// callback URL is found by its MACs.
package vmedia

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ferrometal/ferro/internal/baremetal"
	bmc "github.com/ferrometal/ferro/internal/bmc/redfish"
	"github.com/ferrometal/ferro/internal/callback"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/deployimage"
	rfdriver "github.com/ferrometal/ferro/internal/driver/redfish"
	"github.com/ferrometal/ferro/internal/ramdisk"
)

// Name is the interface's name, as Ironic's.
const Name = "redfish-virtual-media"

// InsertedKey in driver_internal_info records that an ISO was inserted,
// so that clean-up ejects even when the BMC rewrote the image URL.
const InsertedKey = "redfish_vmedia_inserted"

// subdir of the HTTP root that holds the ISOs.
const subdir = "vmedia"

// Options configure the interface.
type Options struct {
	// Images validates and fetches the deploy kernel and ramdisk, with the
	// pxe interfaces' rules and download cache.
	Images *deployimage.Fetcher
	// Client is the shared Redfish client.
	Client *bmc.Client
	// AuthType is [redfish]auth_type.
	AuthType string
	// HTTPRoot and HTTPURL are [deploy]http_root and [deploy]http_url.
	HTTPRoot, HTTPURL string
	// KernelAppendParams is [redfish]kernel_append_params.
	KernelAppendParams string
	// Debug adds ipa-debug=1 ([DEFAULT]debug).
	Debug bool
	// ISO sets the boot loader paths; zero means Debian's.
	ISO ramdisk.ISOOptions
	Log *slog.Logger
}

// Boot is the redfish-virtual-media boot interface.
type Boot struct{ o Options }

// New returns the interface.
func New(o Options) *Boot {
	if o.Client == nil {
		o.Client = bmc.New(bmc.Options{Log: o.Log})
	}
	if o.AuthType == "" {
		o.AuthType = bmc.AuthAuto
	}
	return &Boot{o: o}
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// plan is what validation learned.
type plan struct {
	ep      bmc.Endpoint
	images  *deployimage.Images
	root    string // absolute http_root
	baseURL string // http_url without a trailing slash
	dir     string // root/vmedia/<uuid>
	// iso is a prebuilt deploy_iso the agent interface boots as is.
	iso string
}

// check validates everything that does not need the BMC.
func (b *Boot) check(t *driver.Task) (*plan, error) {
	var missing, invalid []string
	p := &plan{}
	if !uuidRE.MatchString(t.Node.UUID) {
		invalid = append(invalid, fmt.Sprintf("node UUID %q is not a UUID", t.Node.UUID))
	}
	ep, err := rfdriver.Endpoint(t, b.o.AuthType)
	switch {
	case errors.Is(err, driver.ErrMissingParameter):
		missing = append(missing, err.Error())
	case err != nil:
		invalid = append(invalid, err.Error())
	}
	p.ep = ep
	for _, key := range []string{"deploy_iso", "redfish_deploy_iso"} {
		v, ok := t.Node.DriverInfo[key]
		if !ok || v == nil || v == "" {
			continue
		}
		if t.Node.Interface("inspect") != "agent" {
			invalid = append(invalid, "driver_info["+key+"] is set, but a prebuilt ISO cannot carry the inspection callback URL and token: "+
				"ferro builds the ISO itself from deploy_kernel and deploy_ramdisk; unset "+key+" (the agent inspect interface boots it as is)")
			continue
		}
		s, _ := v.(string)
		if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			invalid = append(invalid, fmt.Sprintf("driver_info[%s] %v is not an http(s) URL the BMC can fetch", key, v))
			continue
		}
		if p.iso == "" {
			p.iso = s
		}
	}
	if p.iso != "" {
		// Nothing else to check: the ISO is the BMC's to fetch.
	} else if b.o.Images == nil {
		invalid = append(invalid, "no deploy image support configured")
	} else {
		imgs, pr := b.o.Images.Check(t.Node.DriverInfo)
		// An invalid image hides a missing one, as in the pxe interfaces.
		switch {
		case len(pr.Invalid) > 0:
			invalid = append(invalid, strings.Join(pr.Invalid, "; "))
		case len(pr.Missing) > 0:
			missing = append(missing, strings.Join(pr.Missing, "; "))
		}
		p.images = imgs
	}
	switch root := b.o.HTTPRoot; {
	case root == "":
		missing = append(missing, "[deploy]http_root is not set")
	case !filepath.IsAbs(root):
		invalid = append(invalid, fmt.Sprintf("[deploy]http_root %q is not an absolute path", root))
	default:
		p.root = filepath.Clean(root)
		p.dir = filepath.Join(p.root, subdir, t.Node.UUID)
	}
	if raw := b.o.HTTPURL; raw == "" {
		missing = append(missing, "[deploy]http_url is not set: the BMC fetches the ISO from it")
	} else if u, err := url.Parse(raw); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" {
		invalid = append(invalid, fmt.Sprintf("[deploy]http_url %q must be an http(s) URL without credentials or query", raw))
	} else {
		p.baseURL = strings.TrimRight(raw, "/")
	}
	if err := ramdisk.CheckLoaders(b.o.ISO); err != nil && p.iso == "" {
		invalid = append(invalid, err.Error())
	}
	if t.Driver == nil || t.Driver.Management == nil {
		invalid = append(invalid, "the node has no management interface to set the boot device")
	}
	if len(invalid) > 0 {
		return nil, fmt.Errorf("%w: %s boot: %s", driver.ErrInvalidParameter, Name, strings.Join(append(invalid, missing...), "; "))
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s boot: %s", driver.ErrMissingParameter, Name, strings.Join(missing, "; "))
	}
	return p, nil
}

// Validate checks driver_info, the deploy images and the HTTP boot root.
func (b *Boot) Validate(_ context.Context, t *driver.Task) error {
	_, err := b.check(t)
	return err
}

// ValidateInspection is Validate plus a look at the BMC for a virtual CD.
// Nothing here is ErrUnsupported: virtual media never falls back.
func (b *Boot) ValidateInspection(ctx context.Context, t *driver.Task) error {
	p, err := b.check(t)
	if err != nil {
		return err
	}
	cds, err := b.o.Client.CDs(ctx, p.ep)
	if err != nil {
		return fmt.Errorf("%s boot: %w", Name, err)
	}
	if len(cds) == 0 {
		return fmt.Errorf("%w: %s boot: redfish BMC %s: %v", driver.ErrInvalidParameter, Name, p.ep.Address, bmc.ErrNoVirtualMedia)
	}
	return nil
}

// cmdline is [redfish]kernel_append_params, ipa-debug=1 with [DEFAULT]debug, then params.
func (b *Boot) cmdline(params driver.RamdiskParams) (string, error) {
	tokens := strings.Fields(b.o.KernelAppendParams)
	if b.o.Debug {
		tokens = append(tokens, "ipa-debug=1")
	}
	for _, prm := range params {
		if prm.Key == "" || strings.ContainsAny(prm.Key, "= ") {
			return "", fmt.Errorf("%w: kernel parameter name %q", driver.ErrInvalidParameter, prm.Key)
		}
		if prm.Flag {
			tokens = append(tokens, prm.Key)
		} else {
			if strings.ContainsAny(prm.Value, " \t") {
				return "", fmt.Errorf("%w: kernel parameter %s has whitespace in its value", driver.ErrInvalidParameter, prm.Key)
			}
			tokens = append(tokens, prm.Key+"="+prm.Value)
		}
	}
	line := strings.Join(tokens, " ")
	if err := ramdisk.CheckCmdline(line); err != nil {
		return "", fmt.Errorf("%w: %v", driver.ErrInvalidParameter, err)
	}
	return line, nil
}

// PrepareRamdisk builds the node's ISO with params on the kernel command
// line, serves it, ejects whatever the virtual CD holds, inserts the ISO
// and sets a one-time boot from CD. On failure the caller's teardown
// (CleanUpRamdisk) removes what was done.
func (b *Boot) PrepareRamdisk(ctx context.Context, t *driver.Task, params driver.RamdiskParams) error {
	p, err := b.check(t)
	if err != nil {
		return fmt.Errorf("prepare ramdisk for node %s: %w", t.Node.UUID, err)
	}
	if p.iso != "" {
		return b.insertPrebuilt(ctx, t, p)
	}
	cmdline, err := b.cmdline(params)
	if err != nil {
		return fmt.Errorf("prepare ramdisk for node %s: %w", t.Node.UUID, err)
	}
	for _, d := range []string{filepath.Join(p.root, subdir), p.dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("prepare ramdisk for node %s: %w", t.Node.UUID, err)
		}
		// An empty index keeps file servers from listing the ISO names.
		if err := os.WriteFile(filepath.Join(d, "index.html"), nil, 0o644); err != nil {
			return fmt.Errorf("prepare ramdisk for node %s: %w", t.Node.UUID, err)
		}
	}
	work, err := os.MkdirTemp(p.dir, ".images-*")
	if err != nil {
		return fmt.Errorf("prepare ramdisk for node %s: %w", t.Node.UUID, err)
	}
	defer os.RemoveAll(work)
	kernel, initrd, err := b.o.Images.Fetch(ctx, logger(t), p.images, p.root, work)
	if err != nil {
		return fmt.Errorf("prepare ramdisk for node %s: %w", t.Node.UUID, err)
	}
	name := strings.ToLower(rand.Text()) + ".iso"
	opts := b.o.ISO
	opts.Kernel, opts.Initramfs, opts.Cmdline, opts.TempDir = kernel, initrd, cmdline, work
	// Built in the private work directory and moved into place: an ISO
	// whose kernel line holds the callback token is readable by ferro's
	// user only from the first byte (the BMC fetches it over HTTP, which
	// the file's mode does not restrict).
	built := filepath.Join(work, name)
	if err := ramdisk.BuildISO(ctx, built, opts); err != nil {
		return fmt.Errorf("prepare ramdisk for node %s: %w", t.Node.UUID, err)
	}
	if strings.Contains(cmdline, callback.TokenParam+"=") {
		if err := os.Chmod(built, 0o600); err != nil {
			return fmt.Errorf("prepare ramdisk for node %s: %w", t.Node.UUID, err)
		}
	}
	if err := os.Rename(built, filepath.Join(p.dir, name)); err != nil {
		return fmt.Errorf("prepare ramdisk for node %s: %w", t.Node.UUID, err)
	}
	// Only the new ISO stays: an earlier preparation's is replaced.
	if entries, err := os.ReadDir(p.dir); err == nil {
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".iso") && e.Name() != name {
				os.Remove(filepath.Join(p.dir, e.Name()))
			}
		}
	}
	image := p.baseURL + "/" + subdir + "/" + t.Node.UUID + "/" + name
	if t.Node.DriverInternalInfo == nil {
		t.Node.DriverInternalInfo = map[string]any{}
	}
	// Set before the insertion: a failed or half-done one is ejected too.
	t.Node.DriverInternalInfo[InsertedKey] = true
	if err := b.o.Client.InsertCD(ctx, p.ep, image); err != nil {
		return fmt.Errorf("prepare ramdisk for node %s: %w", t.Node.UUID, err)
	}
	if err := t.Driver.Management.SetBootDevice(ctx, t, baremetal.BootDeviceCDROM, false); err != nil {
		return fmt.Errorf("prepare ramdisk for node %s: set boot device to cdrom: %w", t.Node.UUID, err)
	}
	logger(t).InfoContext(ctx, "virtual media ramdisk inserted", "bmc", p.ep.Address)
	return nil
}

// insertPrebuilt inserts a prebuilt deploy_iso as is (Ironic's
// prepare_remote_image with the http download source) and sets a
// one-time boot from CD.
func (b *Boot) insertPrebuilt(ctx context.Context, t *driver.Task, p *plan) error {
	logger(t).WarnContext(ctx, "using a pre-built ISO: the per-node kernel parameters (callback URL, token, extra parameters) are not available; the agent must find the callback itself", "iso", p.iso)
	if t.Node.DriverInternalInfo == nil {
		t.Node.DriverInternalInfo = map[string]any{}
	}
	t.Node.DriverInternalInfo[InsertedKey] = true
	if err := b.o.Client.InsertCD(ctx, p.ep, p.iso); err != nil {
		return fmt.Errorf("prepare ramdisk for node %s: %w", t.Node.UUID, err)
	}
	if err := t.Driver.Management.SetBootDevice(ctx, t, baremetal.BootDeviceCDROM, false); err != nil {
		return fmt.Errorf("prepare ramdisk for node %s: set boot device to cdrom: %w", t.Node.UUID, err)
	}
	return nil
}

// overrideClearer is a management interface that can undo a one-time boot
// override the BMC kept as Continuous.
type overrideClearer interface {
	ClearBootOverride(ctx context.Context, t *driver.Task) error
}

// CleanUpRamdisk ejects the node's ISO and removes it. Every step runs;
// it is safe to call any number of times, also when nothing was prepared.
func (b *Boot) CleanUpRamdisk(ctx context.Context, t *driver.Task) error {
	uuid := t.Node.UUID
	if !uuidRE.MatchString(uuid) {
		return fmt.Errorf("clean up ramdisk for node %s: %w: node UUID is not a UUID", uuid, driver.ErrInvalidParameter)
	}
	var errs []error
	ep, epErr := rfdriver.Endpoint(t, b.o.AuthType)
	inserted, _ := t.Node.DriverInternalInfo[InsertedKey].(bool)
	if epErr == nil {
		prefix := strings.TrimRight(b.o.HTTPURL, "/") + "/" + subdir + "/" + uuid + "/"
		err := b.o.Client.EjectCDs(ctx, ep, func(image string) bool {
			return inserted || (b.o.HTTPURL != "" && strings.HasPrefix(image, prefix))
		})
		if err != nil {
			errs = append(errs, err)
		} else {
			delete(t.Node.DriverInternalInfo, InsertedKey)
		}
		if t.Driver != nil {
			if c, ok := t.Driver.Management.(overrideClearer); ok {
				if err := c.ClearBootOverride(ctx, t); err != nil {
					errs = append(errs, fmt.Errorf("clear the boot override: %w", err))
				}
			}
		}
	} else if inserted {
		errs = append(errs, fmt.Errorf("cannot eject the virtual media: %w", epErr))
	}
	if root := b.o.HTTPRoot; root != "" && filepath.IsAbs(root) {
		if err := os.RemoveAll(filepath.Join(filepath.Clean(root), subdir, uuid)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("clean up ramdisk for node %s: %w", uuid, err)
	}
	logger(t).InfoContext(ctx, "virtual media ramdisk cleaned up")
	return nil
}

// SweepBootFiles removes the ISO directories of nodes keep rejects; a
// conductor calls it at start (the BMC side is the next clean-up's job).
func (b *Boot) SweepBootFiles(ctx context.Context, keep func(ctx context.Context, nodeUUID string) bool) ([]string, error) {
	root := b.o.HTTPRoot
	if root == "" || !filepath.IsAbs(root) {
		return nil, nil
	}
	dir := filepath.Join(root, subdir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sweep virtual media under %s: %w", dir, err)
	}
	var swept []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !uuidRE.MatchString(e.Name()) || keep(ctx, e.Name()) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, err)
			continue
		}
		swept = append(swept, e.Name())
	}
	return swept, errors.Join(errs...)
}

var (
	_ driver.Boot            = (*Boot)(nil)
	_ driver.BootFileSweeper = (*Boot)(nil)
)

func logger(t *driver.Task) *slog.Logger {
	if t.Log != nil {
		return t.Log
	}
	return slog.Default().With("node", t.Node.UUID)
}
