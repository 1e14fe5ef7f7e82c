// Package netboot is ferro's built-in network boot: DHCP (or proxyDHCP)
// that answers only nodes whose ferro-prepared ramdisk is booting, TFTP
// over [pxe]tftp_root, HTTP over [deploy]http_root, and an IPv6 router
// advertisement responder, run together as one service.
//
// The sub-packages are the parts: dhcp (the reply is a pure function of
// request and node), tftp, httpboot, ra, and bootfs (the confined roots
// they share).
package netboot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ferrometal/ferro/internal/netboot/bootfs"
	"github.com/ferrometal/ferro/internal/netboot/dhcp"
	"github.com/ferrometal/ferro/internal/netboot/httpboot"
	"github.com/ferrometal/ferro/internal/netboot/ra"
	"github.com/ferrometal/ferro/internal/netboot/tftp"
)

// Phases recorded through Events.
const (
	PhaseDHCPOffer  = bootfs.PhaseDHCPOffer
	PhaseBootScript = bootfs.PhaseBootScript
	PhaseKernel     = bootfs.PhaseKernel
	PhaseInitramfs  = bootfs.PhaseInitramfs
)

// Events receives per-node netboot progress: phase is one of the Phase
// constants, detail a sentence for the operator. Record must not block
// for long; it is called from the servers' request paths.
type Events interface {
	Record(ctx context.Context, nodeUUID, phase, detail string)
}

// LogEvents is Events that logs.
type LogEvents struct{ Log *slog.Logger }

// Record logs the event.
func (e LogEvents) Record(ctx context.Context, nodeUUID, phase, detail string) {
	e.Log.InfoContext(ctx, "netboot: "+phase, "node", nodeUUID, "phase", phase, "detail", detail)
}

// bothEvents records an event with each of its Events in turn.
type bothEvents []Events

// Record passes the event on to each.
func (b bothEvents) Record(ctx context.Context, nodeUUID, phase, detail string) {
	for _, e := range b {
		e.Record(ctx, nodeUUID, phase, detail)
	}
}

// Options configure the service; cmd/ferro builds them from [netboot],
// [pxe] and [deploy].
type Options struct {
	Interface string
	ServerIP  net.IP
	// Proxy is [netboot]mode=proxy.
	Proxy                bool
	RangeStart, RangeEnd net.IP
	Netmask              net.IPMask
	Router               net.IP
	DNS                  []net.IP
	LeaseTime            time.Duration
	DHCPPort             int
	// TFTPPort 0 disables TFTP.
	TFTPPort         int
	TFTPMaxTransfers int
	TFTPTimeout      time.Duration
	TFTPSinglePort   bool
	// TFTPBlockSize and TFTPWindowSize cap the negotiated blksize and
	// windowsize; TFTPTransferTimeout bounds one transfer (0: the tftp
	// package's defaults).
	TFTPBlockSize, TFTPWindowSize int
	TFTPTransferTimeout           time.Duration
	// TFTPLimits bound forged, abandoned and flooding TFTP clients (zero
	// fields: the tftp package's defaults).
	TFTPLimits tftp.Limits
	// DHCPMaxLeasesPerNode bounds the leases of one node's MACs (0: the
	// dhcp package's default).
	DHCPMaxLeasesPerNode int
	// DHCPDiscovery answers the MACs no port has ([auto_discovery]enabled;
	// dhcp.Answers), with the default boot script.
	DHCPDiscovery bool
	IPv6RA        bool
	// AnyClientReadsNodeFiles serves a node's own boot files (its config,
	// which may hold its token, kernel and initramfs) to any client, as
	// an external TFTP or HTTP server would; by default only addresses
	// leased to (in proxy mode: requested by) one of the node's MACs get
	// them.
	AnyClientReadsNodeFiles bool

	TFTPRoot, HTTPRoot string
	// HTTPURL is [deploy]http_url; HTTPListen, when set, is where the
	// HTTP boot server listens, else the caller mounts HTTPHandler.
	HTTPURL, HTTPListen string
	HTTPPrefix          string

	PXEBootfile, IPXEBootfile, UEFIIPXEBootfile string
	// LoaderDirs are searched for the boot loaders to copy into the roots.
	LoaderDirs []string

	Store  dhcp.Store
	Events Events
	Log    *slog.Logger
}

// Service is the built-in netboot.
type Service struct {
	o        Options
	tftpRoot *bootfs.Root
	httpRoot *bootfs.Root
	dhcp     *dhcp.Server
	tftp     *tftp.Server
	ra       *ra.Responder
	httpLn   net.Listener
	http     *httpboot.Handler
}

// New prepares the roots (copying the boot loaders in) and the servers.
func New(o Options) (*Service, error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	// Every event is logged; Events (the node history) gets it too.
	if o.Events == nil {
		o.Events = LogEvents{Log: o.Log}
	} else {
		o.Events = bothEvents{LogEvents{Log: o.Log}, o.Events}
	}
	if o.Interface == "" {
		return nil, errors.New("netboot: [netboot]interface is not set")
	}
	for _, d := range []string{o.TFTPRoot, o.HTTPRoot} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("netboot: create boot root: %w", err)
		}
	}
	s := &Service{o: o}
	InstallLoaders(o.TFTPRoot, o.LoaderDirs, o.Log)
	var err error
	if s.tftpRoot, err = bootfs.Open(o.TFTPRoot); err != nil {
		return nil, err
	}
	if s.httpRoot, err = bootfs.Open(o.HTTPRoot); err != nil {
		s.tftpRoot.Close()
		return nil, err
	}
	s.dhcp, err = dhcp.New(dhcp.Options{
		Interface: o.Interface,
		Params: dhcp.Params{ServerIP: o.ServerIP, Proxy: o.Proxy, Netmask: o.Netmask, Router: o.Router, DNS: o.DNS,
			LeaseTime: o.LeaseTime, HTTPURL: o.HTTPURL,
			PXEBootfile: o.PXEBootfile, IPXEBootfile: o.IPXEBootfile, UEFIIPXEBootfile: o.UEFIIPXEBootfile},
		RangeStart: o.RangeStart, RangeEnd: o.RangeEnd, Port: o.DHCPPort, MaxLeasesPerNode: o.DHCPMaxLeasesPerNode,
		Discovery: o.DHCPDiscovery,
		Store:     o.Store, Events: o.Events, Log: o.Log,
	})
	if err != nil {
		s.close()
		return nil, fmt.Errorf("netboot: %w", err)
	}
	var access bootfs.Access = s.dhcp
	if o.AnyClientReadsNodeFiles {
		access = nil
	}
	s.http = &httpboot.Handler{Root: s.httpRoot, Prefix: o.HTTPPrefix, Events: o.Events, Access: access, Log: o.Log}
	if o.TFTPPort != 0 {
		s.tftp, err = tftp.New(tftp.Options{Root: s.tftpRoot, Events: o.Events, Access: access, Log: o.Log,
			MaxTransfers: o.TFTPMaxTransfers, Timeout: o.TFTPTimeout, SinglePort: o.TFTPSinglePort,
			BlockSize: o.TFTPBlockSize, WindowSize: o.TFTPWindowSize, TransferTimeout: o.TFTPTransferTimeout,
			Limits: o.TFTPLimits})
		if err != nil {
			s.close()
			return nil, fmt.Errorf("netboot: %w", err)
		}
	}
	return s, nil
}

func (s *Service) close() {
	s.tftpRoot.Close()
	s.httpRoot.Close()
}

// HTTPHandler serves [deploy]http_root under Options.HTTPPrefix, for the
// API's mux when there is no HTTPListen.
func (s *Service) HTTPHandler() http.Handler { return s.http }

// RouterAdvertisements is how many router advertisements were sent.
func (s *Service) RouterAdvertisements() uint64 {
	if s.ra == nil {
		return 0
	}
	return s.ra.Answered.Load()
}

// TFTP is the TFTP server (for its Stats), nil when TFTPPort is 0.
func (s *Service) TFTP() *tftp.Server { return s.tftp }

// HTTP is the HTTP boot file handler (for its Stats).
func (s *Service) HTTP() *httpboot.Handler { return s.http }

// DHCP is the DHCP server (for its Stats and Release).
func (s *Service) DHCP() *dhcp.Server { return s.dhcp }

// Listen opens every socket, so that a busy port fails start-up and a
// caller in a network namespace can open them on its thread.
func (s *Service) Listen() error {
	if err := s.dhcp.Listen(); err != nil {
		return err
	}
	if s.tftp != nil {
		if err := s.tftp.Listen(net.JoinHostPort(s.o.ServerIP.String(), strconv.Itoa(s.o.TFTPPort))); err != nil {
			return err
		}
	}
	if s.o.HTTPListen != "" {
		ln, err := net.Listen("tcp", s.o.HTTPListen)
		if err != nil {
			return fmt.Errorf("netboot: listen for HTTP boot on %s: %w", s.o.HTTPListen, err)
		}
		s.httpLn = ln
	}
	if s.o.IPv6RA {
		r, err := ra.Listen(s.o.Interface, s.o.Log)
		if err != nil {
			// Not fatal: iPXE only waits longer for IPv6.
			s.o.Log.Warn("netboot: no IPv6 router advertisements", "error", err)
		} else {
			s.ra = r
		}
	}
	return nil
}

// Serve runs the servers opened by Listen until ctx ends or one fails.
func (s *Service) Serve(ctx context.Context) error {
	defer s.close()
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.dhcp.Serve(ctx) })
	if s.tftp != nil {
		g.Go(func() error { return s.tftp.Serve(ctx) })
	}
	if s.ra != nil {
		g.Go(func() error { return s.ra.Serve(ctx) })
	}
	if s.httpLn != nil {
		srv := &http.Server{
			Handler:           s.http,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			IdleTimeout:       60 * time.Second,
			ErrorLog:          slog.NewLogLogger(s.o.Log.Handler(), slog.LevelWarn),
		}
		g.Go(func() error {
			if err := srv.Serve(s.httpLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("netboot: http boot server: %w", err)
			}
			return nil
		})
		g.Go(func() error {
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return srv.Shutdown(sctx)
		})
		s.o.Log.Info("http boot server started", "address", s.httpLn.Addr().String(), "root", s.o.HTTPRoot)
	}
	return g.Wait()
}

// Run is Listen then Serve.
func (s *Service) Run(ctx context.Context) error {
	if err := s.Listen(); err != nil {
		s.close()
		return err
	}
	return s.Serve(ctx)
}

// DebianLoaderDirs are where Debian's ipxe, pxelinux and syslinux-common
// packages put the boot loaders.
var DebianLoaderDirs = []string{"/usr/lib/ipxe", "/usr/lib/PXELINUX", "/usr/lib/syslinux/modules/bios"}

// Loaders are the files copied into the TFTP root: iPXE for BIOS and UEFI,
// PXELINUX and the library it loads.
var Loaders = []string{"undionly.kpxe", "snponly.efi", "ipxe.efi", "pxelinux.0", "ldlinux.c32"}

// InstallLoaders copies each of Loaders found in dirs (first match wins)
// into root, replacing an older copy. A missing loader is logged: only the
// machines that need it are affected.
func InstallLoaders(root string, dirs []string, log *slog.Logger) {
	for _, name := range Loaders {
		var src string
		for _, d := range dirs {
			if fi, err := os.Stat(filepath.Join(d, name)); err == nil && fi.Mode().IsRegular() {
				src = filepath.Join(d, name)
				break
			}
		}
		if src == "" {
			log.Warn("netboot: boot loader not found", "file", name, "searched", dirs)
			continue
		}
		if err := copyFile(src, filepath.Join(root, name)); err != nil {
			log.Warn("netboot: copy boot loader", "file", name, "error", err)
		}
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, in)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}
