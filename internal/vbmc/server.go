package vbmc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"
)

// Options are the knobs of a Server that are not in the configuration file.
type Options struct {
	// Logger receives the server's log; nil discards it.
	Logger *slog.Logger
	// FetchTimeout bounds the download of a virtual media image (default 5m).
	FetchTimeout time.Duration
	// ShutdownTimeout bounds the wait for Redfish requests in flight at exit
	// (default 5s).
	ShutdownTimeout time.Duration
	// SessionTimeout is a Redfish session's idle lifetime (default 30m).
	SessionTimeout time.Duration
	// MaxSessions bounds the Redfish sessions open at once (default 1024).
	MaxSessions int
}

// Ready says where a started Server listens.
type Ready struct {
	// RedfishURL is the Redfish service's base URL (http://host:port).
	RedfishURL string `json:"redfish_url"`
	// IPMI maps each machine with an IPMI endpoint to its UDP host:port.
	IPMI map[string]string `json:"ipmi"`
}

// Server is ferro-vbmc: the machines, their IPMI endpoints and the Redfish
// service in front of them.
type Server struct {
	cfg      Config
	opts     Options
	log      *slog.Logger
	stateDir string
	tempDir  bool

	machines map[string]*Machine // read-only once built: no lock
	order    []*Machine
	sessions *sessionStore
}

// New builds a Server for cfg (which must have passed Validate): it creates
// the state directory and each machine's backend, but binds nothing yet.
func New(cfg Config, opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.FetchTimeout <= 0 {
		opts.FetchTimeout = 5 * time.Minute
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = 5 * time.Second
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = 30 * time.Minute
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = 1024
	}
	s := &Server{
		cfg:      cfg,
		opts:     opts,
		log:      opts.Logger,
		machines: make(map[string]*Machine, len(cfg.Machines)),
		sessions: newSessionStore(opts.SessionTimeout, opts.MaxSessions),
	}
	if cfg.StateDir == "" {
		dir, err := os.MkdirTemp("", "ferro-vbmc-")
		if err != nil {
			return nil, fmt.Errorf("create state directory: %w", err)
		}
		s.stateDir, s.tempDir = dir, true
	} else {
		if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
			return nil, fmt.Errorf("create state directory: %w", err)
		}
		s.stateDir = cfg.StateDir
	}
	for _, mc := range cfg.Machines {
		dir := filepath.Join(s.stateDir, mc.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			s.closeMachines()
			return nil, fmt.Errorf("machine %s: create its directory: %w", mc.Name, err)
		}
		var backend Backend
		switch mc.Backend {
		case BackendFake:
			backend = &fakeBackend{}
		case BackendQEMU:
			q, err := newQEMUBackend(mc, nameUUID(mc.Name), dir, s.log.With("machine", mc.Name))
			if err != nil {
				s.closeMachines()
				return nil, fmt.Errorf("machine %s: %w", mc.Name, err)
			}
			backend = q
		default:
			s.closeMachines()
			return nil, fmt.Errorf("machine %s: unknown backend %q", mc.Name, mc.Backend)
		}
		m := newMachine(mc, dir, backend)
		s.machines[mc.Name] = m
		s.order = append(s.order, m)
	}
	return s, nil
}

// Machine returns the machine named name, or nil.
func (s *Server) Machine(name string) *Machine { return s.machines[name] }

// Run binds every listener, calls ready with their addresses, and serves
// until ctx ends; then it stops the listeners, powers every machine off
// (killing its VM) and removes a temporary state directory. A listener that
// cannot be bound fails Run before ready is called.
func (s *Server) Run(ctx context.Context, ready func(Ready)) (err error) {
	defer func() {
		if cerr := s.closeMachines(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()

	ln, err := net.Listen("tcp", s.cfg.Redfish.Listen)
	if err != nil {
		return fmt.Errorf("redfish: %w", err)
	}
	var endpoints []*ipmiEndpoint
	closeAll := func() {
		ln.Close()
		for _, e := range endpoints {
			e.srv.Close()
		}
	}
	for _, m := range s.order {
		if m.Config.IPMIListen == "" {
			continue
		}
		e, err := listenIPMI(m, s.cfg.Username, s.cfg.Password, s.log)
		if err != nil {
			closeAll()
			return err
		}
		endpoints = append(endpoints, e)
	}

	hs := &http.Server{
		Handler:           s.redfishHandler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// An InsertMedia request waits for its image to download.
		WriteTimeout:   s.opts.FetchTimeout + 30*time.Second,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	rd := Ready{RedfishURL: "http://" + ln.Addr().String(), IPMI: map[string]string{}}
	for _, e := range endpoints {
		rd.IPMI[e.machine.Name()] = e.Addr().String()
	}

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("redfish: %w", err)
		}
		return nil
	})
	for _, e := range endpoints {
		g.Go(func() error { return e.serve(gctx) })
	}
	g.Go(func() error {
		<-gctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
		defer cancel()
		if err := hs.Shutdown(sctx); err != nil {
			hs.Close()
		}
		return nil
	})
	s.log.Info("ferro-vbmc ready", "redfish", rd.RedfishURL, "machines", len(s.order), "ipmi_endpoints", len(endpoints))
	if ready != nil {
		ready(rd)
	}
	return g.Wait()
}

// closeMachines stops every machine's backend and removes a temporary state
// directory.
func (s *Server) closeMachines() error {
	var errs []error
	for _, m := range s.order {
		if err := m.close(); err != nil {
			errs = append(errs, fmt.Errorf("stop machine %s: %w", m.Name(), err))
		}
	}
	s.order = nil
	if s.tempDir {
		if err := os.RemoveAll(s.stateDir); err != nil {
			errs = append(errs, fmt.Errorf("remove state directory: %w", err))
		}
		s.tempDir = false
	}
	return errors.Join(errs...)
}
