package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"

	"github.com/ferrometal/ferro/internal/config"
	"github.com/ferrometal/ferro/internal/netboot"
	"github.com/ferrometal/ferro/internal/netboot/dhcp"
	"github.com/ferrometal/ferro/internal/netboot/tftp"
)

// netbootOptions builds the built-in netboot's options from [netboot],
// [pxe] and [deploy]; events records its DHCP and boot-file phases in the
// node history (conductor.Progress).
func netbootOptions(cfg *config.Config, db dhcp.Store, events netboot.Events, log *slog.Logger) (netboot.Options, error) {
	nb := cfg.Netboot
	o := netboot.Options{
		Interface:           nb.Interface,
		Proxy:               nb.Mode == "proxy",
		LeaseTime:           seconds(nb.LeaseTime),
		DHCPPort:            nb.DHCPPort,
		TFTPPort:            nb.TFTPPort,
		TFTPMaxTransfers:    nb.TFTPMaxTransfers,
		TFTPTimeout:         seconds(nb.TFTPTimeout),
		TFTPSinglePort:      nb.TFTPSinglePort,
		TFTPBlockSize:       nb.TFTPBlksize,
		TFTPWindowSize:      nb.TFTPWindowsize,
		TFTPTransferTimeout: seconds(nb.TFTPTransferTimeout),
		TFTPLimits: tftp.Limits{MaxPending: nb.TFTPMaxUnacknowledged, MaxTransfersPerClient: nb.TFTPMaxTransfersPerClient,
			ClientRequestRate: nb.TFTPClientRequestRate, MaxClientTimeout: seconds(nb.TFTPMaxClientTimeout),
			FirstACKTimeout: seconds(nb.TFTPFirstACKTimeout), StallTimeout: seconds(nb.TFTPStallTimeout),
			WindowBytes: nb.TFTPWindowBytes, MaxAmplification: nb.TFTPMaxAmplification},
		DHCPMaxLeasesPerNode:    nb.DHCPMaxLeasesPerNode,
		DHCPDiscovery:           cfg.AutoDiscovery.Enabled,
		AnyClientReadsNodeFiles: nb.NodeFilesAnyClient,
		IPv6RA:                  nb.IPv6RA,
		TFTPRoot:                cfg.PXE.TFTPRoot,
		HTTPRoot:                cfg.Deploy.HTTPRoot,
		HTTPURL:                 cfg.Deploy.HTTPURL,
		HTTPListen:              cfg.Deploy.HTTPListen,
		PXEBootfile:             cfg.PXE.PXEBootfileName,
		IPXEBootfile:            cfg.PXE.IPXEBootfileName,
		UEFIIPXEBootfile:        cfg.PXE.UEFIIPXEBootfileName,
		LoaderDirs:              netboot.DebianLoaderDirs,
		Store:                   db,
		Events:                  events,
		Log:                     log.With("service", "netboot"),
	}
	if nb.TFTPMaxAmplification == 0 {
		o.TFTPLimits.MaxAmplification = -1 // 0 in the file: no bound
	}
	if cfg.PXE.IPXEDir != "" {
		o.LoaderDirs = append([]string{cfg.PXE.IPXEDir}, o.LoaderDirs...)
	}
	var errs []string
	ip := func(opt, v string, required bool) net.IP {
		if v == "" {
			if required {
				errs = append(errs, fmt.Sprintf("[netboot]%s is required", opt))
			}
			return nil
		}
		p := net.ParseIP(v).To4()
		if p == nil {
			errs = append(errs, fmt.Sprintf("[netboot]%s %q is not an IPv4 address", opt, v))
		}
		return p
	}
	if nb.Interface == "" {
		errs = append(errs, "[netboot]interface is required")
	}
	o.ServerIP = ip("listen_address", nb.ListenAddress, true)
	if !o.Proxy {
		o.RangeStart = ip("range_start", nb.RangeStart, true)
		o.RangeEnd = ip("range_end", nb.RangeEnd, true)
		if m := ip("netmask", nb.Netmask, true); m != nil {
			o.Netmask = net.IPMask(m)
		}
		o.Router = ip("router", nb.Router, false)
		for _, d := range nb.DNS {
			if p := ip("dns", d, false); p != nil {
				o.DNS = append(o.DNS, p)
			}
		}
	}
	u, err := url.Parse(cfg.Deploy.HTTPURL)
	switch {
	case cfg.Deploy.HTTPURL == "":
		errs = append(errs, "[deploy]http_url is required: iPXE fetches its script from there")
	case err != nil || u.Scheme != "http" || u.Host == "":
		errs = append(errs, fmt.Sprintf("[deploy]http_url %q is not an http:// URL (iPXE has no HTTPS)", cfg.Deploy.HTTPURL))
	default:
		o.HTTPPrefix = strings.TrimRight(u.Path, "/") + "/"
		if cfg.Deploy.HTTPListen == "" && o.HTTPPrefix == "/" {
			errs = append(errs, "[deploy]http_url needs a path (such as /httpboot) to be served on the API port, or set [deploy]http_listen")
		}
	}
	if len(errs) > 0 {
		return o, errors.New("[dhcp]dhcp_provider=builtin: " + strings.Join(errs, "; "))
	}
	return o, nil
}

// leaseReleaser releases a node's built-in DHCP leases when its inspection
// is torn down (inspect.LeaseReleaser), straight from the store, which any
// ferro process shares with the netboot service.
type leaseReleaser struct {
	store dhcp.LeaseStore
	log   *slog.Logger
}

// ReleaseLeases deletes the node's leases.
func (r leaseReleaser) ReleaseLeases(ctx context.Context, nodeUUID string) error {
	released, err := dhcp.ReleaseNode(ctx, r.store, nodeUUID)
	for _, l := range released {
		r.log.Info("dhcp: lease released on teardown", "node", l.NodeUUID, "mac", l.MAC, "ip", l.IP)
	}
	return err
}

// bootFiles serves [deploy]http_root when the built-in netboot does not
// (any [dhcp]dhcp_provider but builtin): on [deploy]http_listen, or on the
// API port under http_url's path. Nil, with the reason logged, when
// http_url does not say where (unset, or no path and no http_listen): a
// site that serves http_root with its own web server needs nothing here.
func bootFiles(cfg *config.Config, db netboot.NodeGetter, events netboot.Events, log *slog.Logger) (*netboot.BootFiles, error) {
	u, err := url.Parse(cfg.Deploy.HTTPURL)
	if cfg.Deploy.HTTPURL == "" || err != nil || u.Scheme != "http" || u.Host == "" {
		log.Info("[deploy]http_root is not served: [deploy]http_url does not name an http:// URL of ferro's", "http_url", cfg.Deploy.HTTPURL)
		return nil, nil
	}
	prefix := strings.TrimRight(u.Path, "/") + "/"
	if cfg.Deploy.HTTPListen == "" && prefix == "/" {
		log.Info("[deploy]http_root is not served: [deploy]http_url has no path to serve it under on the API port, and [deploy]http_listen is not set", "http_url", cfg.Deploy.HTTPURL)
		return nil, nil
	}
	return netboot.NewBootFiles(netboot.BootFilesOptions{Root: cfg.Deploy.HTTPRoot, Prefix: prefix,
		AnyClientReadsNodeFiles: cfg.Netboot.NodeFilesAnyClient, Store: db, Events: events, Log: log.With("service", "boot-files")})
}
