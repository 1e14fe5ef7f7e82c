// Package deployimage validates and fetches a node's deploy kernel and
// ramdisk for the boot interfaces (pxe, ipxe, redfish-virtual-media), so
// the rules and the download cache exist once.
//
// An image is driver_info[deploy_kernel] and [deploy_ramdisk], or, only
// when driver_info has neither, [conductor]deploy_kernel and
// deploy_ramdisk: an http(s):// URL, downloaded through a master cache
// under <root>/master_images/<sha256 of the URL> that many nodes share and
// that is revalidated with If-Modified-Since on every use; or a file://
// URL inside [conductor]file_url_allowed_paths and outside the system
// directories, hard-linked (copied across file systems).
package deployimage

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"time"
)

// File names of the fetched images in a node's directory, as Ironic lays
// them out, and of the master cache under a boot root.
const (
	KernelName  = "deploy_kernel"
	RamdiskName = "deploy_ramdisk"
	MasterDir   = "master_images"
)

// Defaults of Options.DownloadTimeout and Options.MaxSize.
const (
	DefaultDownloadTimeout = 20 * time.Minute
	DefaultMaxSize         = 4 << 30
)

// Options configure a Fetcher.
type Options struct {
	// AllowedPaths is [conductor]file_url_allowed_paths: the directories
	// file:// images may come from.
	AllowedPaths []string
	// DefaultKernel and DefaultRamdisk are [conductor]deploy_kernel and
	// deploy_ramdisk, for a node whose driver_info names neither image.
	DefaultKernel, DefaultRamdisk string
	// CacheSize bounds the master cache, in bytes ([pxe]image_cache_size);
	// 0 means no bound.
	CacheSize int64
	// HTTPClient downloads http(s) images; nil means one that waits at
	// most a minute for the response headers. Its redirects are followed
	// only as RedirectHosts allows.
	HTTPClient *http.Client
	// RedirectHosts are the hosts (host or host:port) an image server may
	// redirect a download to besides its own origin
	// ([conductor]image_redirect_hosts); none by default. A redirect from
	// https to http is never followed.
	RedirectHosts []string
	// DownloadTimeout bounds one download; 0 means DefaultDownloadTimeout.
	DownloadTimeout time.Duration
	// MaxSize refuses larger images; 0 means DefaultMaxSize.
	MaxSize int64
}

// Fetcher validates and fetches deploy images. It is safe for concurrent
// use; the boot interfaces of a process share one, so that two nodes
// needing the same download wait for one another.
type Fetcher struct {
	o Options

	mu       sync.Mutex
	fetching map[string]*sync.Mutex // master cache entry → its download lock
}

// New returns a Fetcher.
func New(o Options) *Fetcher {
	if o.DownloadTimeout <= 0 {
		o.DownloadTimeout = DefaultDownloadTimeout
	}
	if o.MaxSize <= 0 {
		o.MaxSize = DefaultMaxSize
	}
	if o.HTTPClient == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.ResponseHeaderTimeout = time.Minute
		o.HTTPClient = &http.Client{Transport: tr}
	}
	hc := *o.HTTPClient
	hc.CheckRedirect = redirectPolicy(o.RedirectHosts)
	o.HTTPClient = &hc
	return &Fetcher{o: o, fetching: map[string]*sync.Mutex{}}
}

// Images are a node's deploy kernel and ramdisk, validated.
type Images struct{ kernel, ramdisk image }

// Kernel is the deploy kernel reference, credentials masked, for messages.
func (d *Images) Kernel() string { return d.kernel.display() }

// Ramdisk is the deploy ramdisk reference, credentials masked.
func (d *Images) Ramdisk() string { return d.ramdisk.display() }

// Problems are what validation found, in the words of the messages:
// Missing (nothing set: a boot interface may fall back) and Invalid
// (something set is wrong: an error).
type Problems struct{ Missing, Invalid []string }

func (p *Problems) missingf(format string, a ...any) {
	p.Missing = append(p.Missing, fmt.Sprintf(format, a...))
}

func (p *Problems) invalidf(format string, a ...any) {
	p.Invalid = append(p.Invalid, fmt.Sprintf(format, a...))
}

// Check validates the deploy kernel and ramdisk of a node's driver_info:
// both from driver_info, or, only when driver_info has neither, both from
// the defaults. The images are usable only when Problems is empty.
func (f *Fetcher) Check(driverInfo map[string]any) (*Images, Problems) {
	var pr Problems
	k, r := f.check(&pr, driverInfo)
	return &Images{kernel: k, ramdisk: r}, pr
}

// Fetch puts the images at dir/deploy_kernel and dir/deploy_ramdisk (hard
// links, or downloads through the master cache under root/master_images)
// and returns their paths. log is the node's logger; nil means slog's
// default.
func (f *Fetcher) Fetch(ctx context.Context, log *slog.Logger, d *Images, root, dir string) (kernel, ramdisk string, err error) {
	if log == nil {
		log = slog.Default()
	}
	if err := mkdirs(dir); err != nil {
		return "", "", err
	}
	for _, img := range []image{d.kernel, d.ramdisk} {
		if err := f.fetch(ctx, log, img, root, filepath.Join(dir, img.name)); err != nil {
			return "", "", fmt.Errorf("cache %s %s: %w", img.name, img.display(), err)
		}
	}
	return filepath.Join(dir, d.kernel.name), filepath.Join(dir, d.ramdisk.name), nil
}
