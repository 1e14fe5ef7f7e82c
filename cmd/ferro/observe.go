package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	ferroapi "github.com/ferrometal/ferro/internal/api/ferro"
	inspectorapi "github.com/ferrometal/ferro/internal/api/inspector"
	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/config"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/metrics"
	"github.com/ferrometal/ferro/internal/netboot"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
	"github.com/ferrometal/ferro/internal/web"
)

// observability wires what lets operators see ferro into `ferro serve`:
// the Prometheus metrics ([metrics]), the read-only web view under /ui/
// ([web]) and ferro's own API under /ferro/v1. Its methods hand each part
// the seam it feeds (a nil one when metrics are off) and wrap the API
// port's handler.
type observability struct {
	cfg *config.Config
	log *slog.Logger
	// m is nil when neither [metrics]enabled nor [metrics]listen asks for
	// metrics: nothing is counted then.
	m *metrics.Metrics
}

func newObservability(cfg *config.Config, log *slog.Logger) *observability {
	o := &observability{cfg: cfg, log: log}
	if cfg.Metrics.Enabled || cfg.Metrics.Listen != "" {
		o.m = metrics.New()
	}
	return o
}

// storeOptions are the database's: how many previous inventories it keeps,
// the node list's cache, and the statement timer.
func (o *observability) storeOptions() []sqlstore.Option {
	opts := []sqlstore.Option{sqlstore.WithInventoryHistory(o.cfg.Inventory.KeepPrevious),
		sqlstore.WithNodeCache(o.cfg.API.NodeListCacheMB << 20)}
	if o.m != nil {
		opts = append(opts, sqlstore.WithObserver(o.m.Store()))
	}
	return opts
}

// progress times the inspection phases a recorder writes into the history.
func (o *observability) progress(p driver.ProgressRecorder) driver.ProgressRecorder {
	if o.m == nil {
		return p
	}
	return o.m.Progress(p)
}

// conductorObserver counts inspections and hardware changes.
func (o *observability) conductorObserver() conductor.Observer {
	if o.m == nil {
		return nil
	}
	return o.m.Conductor()
}

// ipmi times IPMI operations.
func (o *observability) ipmi() func(string, time.Duration, error) {
	if o.m == nil {
		return nil
	}
	return o.m.IPMI()
}

// redfish times Redfish requests.
func (o *observability) redfish() func(http.RoundTripper) http.RoundTripper {
	if o.m == nil {
		return nil
	}
	return o.m.Redfish
}

// watch registers the collectors that ask on scrape: nodes by state (one
// query) and the conductor's load.
func (o *observability) watch(db *sqlstore.DB, cond *conductor.Conductor) {
	if o.m == nil {
		return
	}
	o.m.WatchNodes(db)
	o.m.WatchConductor(func() metrics.ConductorLoad {
		s := cond.Stats()
		return metrics.ConductorLoad{Workers: s.Workers, Busy: s.Busy, LockWaiters: s.LockWaiters,
			LockWaits: s.LockWaits, LockConflicts: s.LockConflicts, WorkerRefusals: s.WorkerRefusals}
	})
}

// watchNetboot exposes the built-in netboot's counters.
func (o *observability) watchNetboot(nb *netboot.Service) {
	if o.m == nil || nb == nil {
		return
	}
	o.m.WatchNetboot(func() metrics.NetbootStats {
		var s metrics.NetbootStats
		if d := nb.DHCP(); d != nil {
			ds := d.Stats()
			s.DHCPOffers, s.DHCPAcks, s.DHCPNaks, s.DHCPDropped, s.DHCPErrors = ds.Offers, ds.Acks, ds.Naks, ds.Dropped, ds.Errors
		}
		if t := nb.TFTP(); t != nil {
			ts := t.Stats()
			s.TFTPServed, s.TFTPFailed, s.TFTPRefused, s.TFTPBusy, s.TFTPBytes = ts.Served, ts.Failed, ts.Refused, ts.Busy, ts.Bytes
		}
		hs := nb.HTTP().Stats()
		s.HTTPServed, s.HTTPRefused, s.HTTPBytes = hs.Served, hs.Refused, hs.Bytes
		return s
	})
}

// mount adds ferro's own routes to the API port's mux, inside its
// authentication: /ferro/v1 and, with [metrics]enabled, GET /metrics. It
// returns the mux wrapped so that the metrics learn each request's route.
func (o *observability) mount(mux *http.ServeMux, db *sqlstore.DB) http.Handler {
	mux.Handle(ferroapi.Prefix, ferroapi.New(db, o.log))
	if o.m == nil {
		return mux
	}
	if o.cfg.Metrics.Enabled {
		mux.Handle("GET /metrics", o.m.Handler())
	}
	return metrics.RecordRoute(mux)
}

// wrap is the API port's outermost handler: the web view beside the API's
// authentication (it has its own, with the same authenticator and
// HTML refusals), and the request metrics around everything.
func (o *observability) wrap(api http.Handler, db *sqlstore.DB, sec *security) (http.Handler, error) {
	h := api
	if o.cfg.Web.Enabled {
		view, err := web.New(web.Options{Store: db, PageSize: o.cfg.Web.PageSize, Version: buildVersion(), Log: o.log})
		if err != nil {
			return nil, fmt.Errorf("web view: %w", err)
		}
		outer := http.NewServeMux()
		outer.Handle(web.Prefix, sec.webHandler(view, metrics.RecordRoute(view)))
		if sec.strategy == config.AuthKeystone {
			// The sign-in form must be reachable without a token.
			outer.Handle("/ui/login", view.Login())
			outer.Handle("/ui/logout", view.Login())
		}
		outer.Handle("/", api)
		h = outer
	}
	if o.m == nil {
		return h, nil
	}
	return o.m.HTTP(apiOf, h), nil
}

// instrument counts and times the requests of a listener other than the
// API port's (the inspector's own); route marks where its routes are
// matched, inside any layer that copies the request.
func (o *observability) instrument(h http.Handler) http.Handler {
	if o.m == nil {
		return h
	}
	return o.m.HTTP(apiOf, h)
}

func (o *observability) route(h http.Handler) http.Handler {
	if o.m == nil {
		return h
	}
	return metrics.RecordRoute(h)
}

// apiOf names the API a request belongs to, for the metrics' api label.
func apiOf(r *http.Request) string {
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, web.Prefix):
		return "web"
	case strings.HasPrefix(p, ferroapi.Prefix):
		return "ferro"
	case p == "/metrics":
		return "metrics"
	case inspectorapi.IsPath(p):
		return "inspector"
	}
	return "ironic"
}

// metricsListener is [metrics]listen: a listener of its own that serves
// only /metrics, behind the API's authentication unless
// [metrics]listen_auth is false. It refuses, as the API does, to serve
// without authentication beyond loopback under auth_strategy=noauth
// unless [api]allow_insecure_noauth.
func (o *observability) metricsListener(sec *security, lim limits) (*httpPart, error) {
	addr := o.cfg.Metrics.Listen
	if addr == "" || o.m == nil {
		return nil, nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", o.m.Handler())
	var h http.Handler = mux
	if o.cfg.Metrics.ListenAuth && sec.authn != nil {
		h = auth.Middleware(mux, auth.Options{Authenticator: sec.authn, Log: o.log,
			Deny: func(w http.ResponseWriter, _ *http.Request, status int, msg string) { http.Error(w, msg, status) }})
	}
	if o.cfg.Metrics.ListenAuth && sec.authn == nil && !isLoopback(addr) && !o.cfg.API.AllowInsecureNoauth {
		return nil, fmt.Errorf("refusing to serve metrics without authentication on %s ([metrics]listen) with auth_strategy=noauth: bind it to loopback, set [metrics]listen_auth=false to serve it to anyone on purpose, or set [api]allow_insecure_noauth", addr)
	}
	srv, err := listen(addr, o.m.HTTP(func(*http.Request) string { return "metrics" }, h), sec.tlsConfig(), lim, o.log, "metrics")
	if err != nil {
		return nil, err
	}
	return &srv, nil
}

// webHandler puts the API's authentication in front of the web view, with
// refusals as pages: under http_basic a 401 with the Basic challenge (the
// browser asks for a user and password), under keystone a redirect to the
// sign-in form; the Keystone token comes from the view's cookie
// (web.KeystoneCookie).
func (s *security) webHandler(view *web.View, h http.Handler) http.Handler {
	if s.authn == nil {
		return h
	}
	mw := auth.Middleware(h, auth.Options{
		Authenticator: s.authn, Log: s.log,
		Deny: func(w http.ResponseWriter, r *http.Request, status int, msg string) {
			if status == http.StatusUnauthorized && s.strategy == config.AuthKeystone {
				w.Header().Del("WWW-Authenticate")
				http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
				return
			}
			view.Error(w, r, status, msg)
		},
	})
	if s.strategy == config.AuthKeystone {
		return web.KeystoneCookie(mw)
	}
	return mw
}
