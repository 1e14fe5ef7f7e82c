package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	inspectorapi "github.com/ferrometal/ferro/internal/api/inspector"
	"github.com/ferrometal/ferro/internal/api/ironic"
	"github.com/ferrometal/ferro/internal/baremetal"
	bmcipmi "github.com/ferrometal/ferro/internal/bmc/ipmi"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/config"
	"github.com/ferrometal/ferro/internal/driver/inspect"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/inspector"
	"github.com/ferrometal/ferro/internal/netboot"
	"github.com/ferrometal/ferro/internal/service"
	"github.com/ferrometal/ferro/internal/store"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
	"golang.org/x/net/netutil"
)

// Roles a ferro process can run.
const (
	roleAPI       = "api"
	roleConductor = "conductor"
	roleInspector = "inspector"
)

var allRoles = []string{roleAPI, roleConductor, roleInspector}

func loadConfig(path string) (*config.Config, []string, error) {
	return config.Load(path, os.Environ(), configHardware())
}

func parseRoles(s string) ([]string, error) {
	var roles []string
	for _, r := range strings.Split(s, ",") {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		if !slices.Contains(allRoles, r) {
			return nil, fmt.Errorf("unknown role %q (roles: %s)", r, strings.Join(allRoles, ", "))
		}
		if !slices.Contains(roles, r) {
			roles = append(roles, r)
		}
	}
	if len(roles) == 0 {
		return nil, errors.New("--role needs at least one role")
	}
	return roles, nil
}

func newLogger(w io.Writer, format string, debug bool) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if debug {
		opts.Level = slog.LevelDebug
	}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("unknown --log-format %q (text or json)", format)
}

func serve(ctx context.Context, c command, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	cfgPath := fs.String("config", "", "INI configuration file (Ironic's section and option names)")
	dataDir := fs.String("data-dir", "ferro-data", "directory for the embedded SQLite database and other state")
	rolesFlag := fs.String("role", strings.Join(allRoles, ","), "comma-separated roles to run: api, conductor, inspector")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	if code, done := parseFlags(fs, c, args, stdout, stderr); done {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "ferro:", err)
		return 1
	}
	roles, err := parseRoles(*rolesFlag)
	if err != nil {
		return fail(err)
	}
	cfg, ignored, err := loadConfig(*cfgPath)
	if err != nil {
		return fail(err)
	}
	log, err := newLogger(stderr, *logFormat, cfg.Default.Debug)
	if err != nil {
		return fail(err)
	}
	if len(ignored) > 0 {
		log.Info("configuration names ignored as [DEFAULT]ignored_options says", "names", strings.Join(ignored, ", "))
	}
	if err := checkCallback(cfg, roles, log); err != nil {
		return fail(err)
	}
	warnAgentCallback(cfg, log)
	sigs := subscribeSignals()
	defer sigs.stop()
	if err := runServer(ctx, cfg, roles, *dataDir, log, sigs); err != nil {
		log.Error("ferro stopped with an error", "error", err)
		return 1
	}
	return 0
}

// runServer builds the roles' parts and runs them under one
// service.Group until ctx ends, a signal stops them or one of them fails.
// Start-up does everything that can refuse to start first (certificate,
// database, sockets, recovery); the group then stops the parts in the
// reverse order of their start: the HTTP servers stop accepting requests
// and finish those in flight, the netboot and the inspector's periodic
// work stop, the conductor finishes or cancels its tasks and releases
// their locks (all within [conductor]graceful_shutdown_timeout), then the
// BMC sessions, the inspector's background work and the database close.
func runServer(ctx context.Context, cfg *config.Config, roles []string, dataDir string, log *slog.Logger, sigs *signals) error {
	has := func(r string) bool { return slices.Contains(roles, r) }
	if cfg.Database.Connection == "" {
		if err := os.MkdirAll(dataDir, 0o750); err != nil {
			return fmt.Errorf("create data directory: %w", err)
		}
	}
	if err := cfg.ResolvePaths(dataDir); err != nil {
		return err
	}
	var listeners []string
	if has(roleAPI) {
		listeners = append(listeners, net.JoinHostPort(cfg.API.HostIP, strconv.Itoa(cfg.API.Port)))
	}
	if has(roleInspector) && cfg.Inspector.ListenPort != 0 {
		listeners = append(listeners, net.JoinHostPort(cfg.Inspector.ListenAddress, strconv.Itoa(cfg.Inspector.ListenPort)))
	}
	sec, err := newSecurity(cfg, listeners, log)
	if err != nil {
		return err
	}
	log.Info("authentication", "auth_strategy", cfg.Default.AuthStrategy, "tls", cfg.API.EnableSSLAPI)
	obs := newObservability(cfg, log)
	// A database that is not up yet (under systemd it often starts later)
	// is waited for as oslo.db does; SIGTERM or SIGINT meanwhile stops
	// the start at once.
	startCtx, started := sigs.duringStart(ctx)
	db, err := sqlstore.Open(startCtx, cfg.Database.Connection, append(obs.storeOptions(), sqlstore.WithLogger(log),
		sqlstore.WithConnectRetries(cfg.Database.MaxRetries, seconds(cfg.Database.RetryInterval)))...)
	if sig := started(); sig != nil {
		if err == nil {
			db.Close()
		}
		log.Info("ferro stopped during start-up", "signal", sig.String())
		return nil
	}
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer db.Close()

	// The conductor exists in every process: the API and the in-process
	// inspector take node locks through it even when the conductor role
	// (periodic tasks, recovery) runs elsewhere.
	var (
		cond    *conductor.Conductor
		insp    *inspector.Service
		inspAPI http.Handler
	)
	// One budget for every API that takes reports: the inspector's
	// /v1/continue and the bare metal API's /v1/continue_inspection.
	budget, err := inspectorapi.NewReportBudget(int64(cfg.Processing.ReportMemoryBudget) << 20)
	if err != nil {
		return err
	}
	if has(roleInspector) {
		bm, err := inspectorBareMetal(cfg, db, func() *conductor.Conductor { return cond }, has(roleAPI))
		if err != nil {
			return err
		}
		// A process that runs a conductor (api-only too) finishes the nodes
		// whose reports its inspector took at once, not at a status poll.
		notify := func(string) {}
		if has(roleConductor) || has(roleAPI) {
			notify = func(uuid string) { cond.NotifyInspectionFinished(uuid) }
		}
		pipeline, err := pipelineOptions(cfg, inspection.Inspector, log)
		if err != nil {
			return err
		}
		o := inspectorOptions(cfg)
		o.Store, o.BareMetal, o.Log, o.Notify, o.Pipeline = db, bm, log, notify, &pipeline
		o.Progress = obs.progress(conductor.NewProgress(db, cfg.Default.Host, log))
		o.ExclusiveStore = strings.HasPrefix(cfg.Database.Connection, "sqlite")
		insp, err = inspector.New(o)
		if err != nil {
			return err
		}
		// After the group: the manage_boot reboots and power-offs it runs
		// in the background had the conductor's drain to finish.
		defer insp.Close()
		inspAPI = inspectorapi.New(inspectorapi.Options{Service: insp, Rules: db, Log: log, MaxLimit: cfg.API.MaxLimit,
			MaxConcurrentReports: cfg.Processing.MaxConcurrentReports, Budget: budget,
			ReportReadTimeout: seconds(cfg.Default.ClientSocketTimeout)})
	}

	// The agent inspect interface's pipeline ([inspector]hooks, the
	// inspection rules and the built-in ones): a hook that is unknown or
	// lacks a dependency refuses the start, as Ironic's conductor refuses
	// to load the interface.
	agentPipeline, err := agentPipeline(cfg, db, log)
	if err != nil {
		return err
	}

	inspectClient, err := inspectorClient(cfg, inspAPI)
	if err != nil {
		return err
	}
	// One IPMI client for every BMC: its sessions are shared by all tasks
	// and closed at shutdown, after the conductor stopped.
	ipmiClient := bmcipmi.New(bmcipmi.Options{
		CommandRetryTimeout: seconds(cfg.IPMI.CommandRetryTimeout),
		MinCommandInterval:  time.Duration(cfg.IPMI.MinCommandInterval * float64(time.Second)),
		Log:                 log,
		Observe:             obs.ipmi(),
	})
	defer ipmiClient.Close()
	reg, err := newRegistry(cfg, db, inspectClient, agentPipeline, ipmiClient, log, obs)
	if err != nil {
		return err
	}
	co := conductorOptions(cfg)
	co.Store, co.Registry, co.Log, co.APIOnly = db, reg, log, !has(roleConductor)
	co.Observer = obs.conductorObserver()
	cond = conductor.New(co)
	obs.watch(db, cond)

	// The built-in netboot runs beside the API: its HTTP boot files are on
	// the API port unless [deploy]http_listen is set.
	var nb *netboot.Service
	var nbOpts netboot.Options
	if cfg.DHCP.DHCPProvider == "builtin" {
		progress := obs.progress(conductor.NewProgress(db, cfg.Default.Host, log))
		if nbOpts, err = netbootOptions(cfg, db, progress, log); err != nil {
			return err
		}
		if nb, err = netboot.New(nbOpts); err != nil {
			return err
		}
		obs.watchNetboot(nb)
	}
	var files *netboot.BootFiles
	if nb == nil {
		progress := obs.progress(conductor.NewProgress(db, cfg.Default.Host, log))
		if files, err = bootFiles(cfg, db, progress, log); err != nil {
			return err
		}
		if files != nil {
			defer files.Close()
		}
	}

	// Bind every socket before anything runs, so that a busy port, a
	// missing interface or a bad address refuses the start with nothing
	// else begun; until the group runs they are closed on failure.
	var servers []httpPart
	running := false
	defer func() {
		if !running {
			for _, s := range servers {
				s.Listener.Close()
			}
		}
	}()
	if has(roleAPI) {
		mux := http.NewServeMux()
		io := ironicOptions(cfg, db, cond, log)
		io.Ramdisk.Budget = budget
		mux.Handle("/", ironic.New(io))
		if inspAPI != nil {
			// All-in-one: the inspector's routes on the main port too, so one open port is enough.
			for _, p := range inspectorapi.Paths() {
				mux.Handle(p, inspAPI)
			}
		}
		h := sec.apiHandler(obs.mount(mux, db))
		// Boot files are read by firmware, BMCs and the ramdisk, which have
		// no credentials: they are served beside the authentication.
		if nb != nil && nbOpts.HTTPListen == "" {
			outer := http.NewServeMux()
			outer.Handle(nbOpts.HTTPPrefix, nb.HTTPHandler())
			outer.Handle("/", h)
			h = outer
		} else if files != nil && cfg.Deploy.HTTPListen == "" {
			outer := http.NewServeMux()
			outer.Handle(files.Prefix, files)
			outer.Handle("/", h)
			h = outer
		}
		if h, err = obs.wrap(h, db, sec); err != nil {
			return err
		}
		addr := net.JoinHostPort(cfg.API.HostIP, strconv.Itoa(cfg.API.Port))
		srv, err := listen(addr, h, sec.tlsConfig(), listenLimits(cfg), log, "api")
		if err != nil {
			return err
		}
		servers = append(servers, srv)
	}
	if inspAPI != nil && cfg.Inspector.ListenPort != 0 {
		addr := net.JoinHostPort(cfg.Inspector.ListenAddress, strconv.Itoa(cfg.Inspector.ListenPort))
		srv, err := listen(addr, obs.instrument(sec.inspectorHandler(obs.route(inspAPI))), sec.tlsConfig(), listenLimits(cfg), log, "inspector")
		if err != nil {
			return err
		}
		servers = append(servers, srv)
	}
	if srv, err := obs.metricsListener(sec, listenLimits(cfg)); err != nil {
		return err
	} else if srv != nil {
		servers = append(servers, *srv)
	}
	if nb != nil {
		if err := nb.Listen(); err != nil {
			return err
		}
	}
	if files != nil && cfg.Deploy.HTTPListen != "" {
		srv, err := listen(cfg.Deploy.HTTPListen, files, nil, listenLimits(cfg), log, "boot files")
		if err != nil {
			return err
		}
		servers = append(servers, srv)
	}

	// The api role takes node locks and runs the work of its requests
	// itself (there is no RPC between roles), so a process with it starts a
	// conductor too: without the conductor role, an api-only one that only
	// heart-beats (conductor.Options.APIOnly). Its recovery is done before
	// the API serves.
	runsConductor := has(roleConductor) || has(roleAPI)
	if runsConductor {
		if err := cond.Start(ctx); err != nil {
			return err
		}
	}
	if insp != nil {
		// Reports a crashed run was processing: finish them now.
		insp.Recover(ctx)
	}

	// The parts stop in the reverse order of these calls.
	g := &service.Group{Grace: seconds(cfg.Conductor.GracefulShutdownTimeout), Log: log}
	g.Go("signals", sigs.part(sec.reload))
	if runsConductor {
		g.Go("conductor", cond.Run)
	}
	if insp != nil {
		g.Go("inspector", insp.Run)
	}
	if nb != nil {
		g.Go("netboot", nb.Serve)
	}
	for _, s := range servers {
		g.Go(s.name+" server", s.Run)
	}
	running = true
	log.Info("ferro started", "roles", strings.Join(roles, ","), "version", buildVersion())
	return g.Run(ctx)
}

// limits bound what one client of a listener may hold.
type limits struct {
	// socketTimeout bounds reading one request, writing one response and an
	// idle keep-alive connection.
	socketTimeout  time.Duration
	maxHeaderBytes int
	maxConns       int
}

func listenLimits(cfg *config.Config) limits {
	return limits{
		socketTimeout:  seconds(cfg.Default.ClientSocketTimeout),
		maxHeaderBytes: cfg.Default.MaxHeaderLine,
		maxConns:       cfg.API.MaxConnections,
	}
}

// httpPart is a bound HTTP server and the name it is logged by.
type httpPart struct {
	name string
	service.HTTPServer
}

// listen binds addr now, so that a busy port fails start-up; the part
// serves once the group runs. Every connection has a read deadline
// (headers within 10 s, the whole request within the socket timeout), a
// write deadline and an idle timeout, and the listener accepts at most
// maxConns at once, so slow or idle clients cannot pile up.
func listen(addr string, h http.Handler, tlsConf *tls.Config, lim limits, log *slog.Logger, name string) (httpPart, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return httpPart{}, fmt.Errorf("listen for %s on %s: %w", name, addr, err)
	}
	ln = netutil.LimitListener(ln, lim.maxConns)
	if tlsConf != nil {
		ln = tls.NewListener(ln, tlsConf)
	}
	srv := &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: min(10*time.Second, lim.socketTimeout),
		ReadTimeout:       lim.socketTimeout,
		WriteTimeout:      lim.socketTimeout,
		IdleTimeout:       lim.socketTimeout,
		MaxHeaderBytes:    lim.maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		TLSConfig:         tlsConf,
	}
	log.Info("listening", "server", name, "address", ln.Addr().String())
	return httpPart{name: name, HTTPServer: service.HTTPServer{Server: srv, Listener: ln}}, nil
}

// inspectorClient is how the conductor's inspector interface reaches an
// inspector: [inspector]endpoint_override, else the same-process inspector
// through its handler (no socket), else none.
func inspectorClient(cfg *config.Config, local http.Handler) (inspect.Client, error) {
	o := inspect.ClientOptions{Endpoint: cfg.Inspector.EndpointOverride, Auth: clientAuth(cfg, cfg.Inspector.ClientAuth)}
	if o.Endpoint == "" {
		if local == nil {
			return nil, nil
		}
		o.Endpoint = "http://inspector.in-process"
		o.HTTPClient = &http.Client{Transport: inspect.HandlerTransport{Handler: local}}
	}
	return inspect.NewHTTPClient(o)
}

// inspectorBareMetal is how the inspector reaches the bare metal API:
// [ironic]endpoint_override over HTTP, else in-process when this process
// has the API role.
func inspectorBareMetal(cfg *config.Config, db store.Store, cond func() *conductor.Conductor, hasAPI bool) (inspector.BareMetal, error) {
	if cfg.Ironic.EndpointOverride != "" {
		return inspector.NewHTTPBareMetal(inspector.HTTPOptions{Endpoint: cfg.Ironic.EndpointOverride, Auth: clientAuth(cfg, cfg.Ironic.ClientAuth)})
	}
	if !hasAPI {
		return nil, errors.New("the inspector role without the api role needs [ironic]endpoint_override")
	}
	return &inspector.Local{Store: db, Locker: lazyConductor(cond), Power: lazyConductor(cond), LockedNodeErr: conductor.ErrNodeLocked}, nil
}

// lazyConductor defers to the conductor built after the inspector.
type lazyConductor func() *conductor.Conductor

func (l lazyConductor) WithNodeLock(ctx context.Context, ident string, fn func(context.Context, store.Store, *baremetal.Node) error) error {
	return l().WithNodeLock(ctx, ident, fn)
}

func (l lazyConductor) ChangePowerState(ctx context.Context, ident, target string, timeout time.Duration) error {
	return l().ChangePowerState(ctx, ident, target, timeout)
}

func (l lazyConductor) SetBootDevice(ctx context.Context, ident, device string, persistent bool) error {
	return l().SetBootDevice(ctx, ident, device, persistent)
}
