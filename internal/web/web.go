// Package web is ferro's read-only web view, under /ui/: the machine list
// (paged, searchable, filtered, updating itself), a machine's page (its
// properties, the hardware its inventory describes, the last inspection's
// phases with their durations, what changed since the previous
// inspection, its history) and a switch view (which machine's NIC is on
// which switch port, from LLDP).
//
// Pages are rendered on the server with html/template from embedded
// files; a little vanilla JavaScript (static/app.js, no framework, nothing
// fetched from elsewhere) refreshes the parts that change. The view reads
// the same store as the API and applies the same policy to the caller the
// authentication layer in front of it put in the request's context.
package web

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	ferroapi "github.com/ferrometal/ferro/internal/api/ferro"
	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/hardware"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// Prefix is the path the view is served under.
const Prefix = "/ui/"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Store is what the view reads.
type Store interface {
	ferroapi.Store
	ListNodes(ctx context.Context, f store.NodeFilter) ([]*baremetal.Node, error)
	ListHistory(ctx context.Context, nodeUUID string) ([]*baremetal.HistoryEvent, error)
	ListPorts(ctx context.Context, f store.PortFilter) ([]*baremetal.Port, error)
}

// Options configure the view.
type Options struct {
	Store Store
	// PageSize is how many machines one page of the list shows ([web]page_size).
	PageSize int
	// Version is shown in the footer.
	Version string
	Log     *slog.Logger
}

// maxHistory is how many of a node's newest history events its page shows.
const maxHistory = 50

type view struct {
	o    Options
	tmpl map[string]*template.Template
}

// View is the web view's handler for everything under Prefix.
type View struct {
	v *view
	h http.Handler
}

// ServeHTTP serves a page.
func (v *View) ServeHTTP(w http.ResponseWriter, r *http.Request) { v.h.ServeHTTP(w, r) }

// Error writes an error page, for the authentication layer in front.
func (v *View) Error(w http.ResponseWriter, r *http.Request, status int, msg string) {
	securityHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { v.v.error(w, r, status, msg) })).ServeHTTP(w, r)
}

// New returns the view.
func New(o Options) (*View, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.PageSize <= 0 {
		o.PageSize = 100
	}
	v := &view{o: o, tmpl: map[string]*template.Template{}}
	for _, page := range []string{"list", "machine", "switches", "error", "login"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+page+".html")
		if err != nil {
			return nil, err
		}
		v.tmpl[page] = t
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ui/{$}", v.list)
	mux.HandleFunc("GET /ui/machines/{node}", v.machine)
	mux.HandleFunc("GET /ui/switches", v.switches)
	mux.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", http.FileServerFS(static)))
	mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		v.error(w, r, http.StatusNotFound, "There is no such page.")
	})
	return &View{v: v, h: securityHeaders(mux)}, nil
}

// securityHeaders forbids framing, sniffing and any script or style from
// elsewhere: the pages load only their own embedded files.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

var funcs = template.FuncMap{
	"size": hardware.Size,
	"time": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			if v.IsZero() {
				return ""
			}
			return v.UTC().Format("2006-01-02 15:04:05Z")
		case *time.Time:
			if v == nil {
				return ""
			}
			return v.UTC().Format("2006-01-02 15:04:05Z")
		}
		return ""
	},
	"dur": func(d time.Duration) string {
		if d < time.Second {
			return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
		}
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	},
	"short": func(s string) string {
		if len(s) > 8 {
			return s[:8]
		}
		return s
	},
	"vlans": func(s hardware.SwitchPort) string {
		var parts []string
		if s.UntaggedVLAN != 0 {
			parts = append(parts, strconv.Itoa(s.UntaggedVLAN)+" (untagged)")
		}
		for _, v := range s.VLANs {
			if v != s.UntaggedVLAN {
				parts = append(parts, strconv.Itoa(v))
			}
		}
		return strings.Join(parts, ", ")
	},
	"stateClass": stateClass,
}

func toString(v any) string {
	switch s := v.(type) {
	case string:
		return s
	default:
		b, _ := json.Marshal(s)
		return string(b)
	}
}

// stateClass is the CSS class of a provision state: ok, busy or bad.
func stateClass(s string) string {
	switch {
	case strings.HasSuffix(s, "failed") || s == states.Error:
		return "bad"
	case states.IsTransient(s) || strings.HasSuffix(s, "wait") || s == states.DeployWait:
		return "busy"
	}
	return "ok"
}

// page is what every template gets.
type page struct {
	Title   string
	Nav     string
	Version string
	Data    any
}

func (v *view) render(w http.ResponseWriter, status int, name, title string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := v.tmpl[name].Execute(w, page{Title: title, Nav: name, Version: v.o.Version, Data: data}); err != nil {
		v.o.Log.Error("web: render page", "page", name, "error", err)
	}
}

func (v *view) error(w http.ResponseWriter, _ *http.Request, status int, msg string) {
	v.render(w, status, "error", http.StatusText(status), struct {
		Status  int
		Message string
	}{status, msg})
}

func (v *view) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrNotFound) {
		v.error(w, r, http.StatusNotFound, "Not found.")
		return
	}
	if errors.Is(err, store.ErrInvalidInput) {
		v.error(w, r, http.StatusBadRequest, err.Error())
		return
	}
	v.o.Log.Error("web", "path", r.URL.Path, "error", err)
	v.error(w, r, http.StatusInternalServerError, "The page could not be built; the server log says why.")
}

// listData is the machine list page.
type listData struct {
	Nodes   []*baremetal.Node
	Query   listQuery
	States  []string
	Next    string // the next page's URL, or ""
	First   string // the first page's URL when this is not it
	Updated time.Time
}

type listQuery struct {
	Search, State, ResourceClass, Driver, Maintenance string
}

// provisionStates offered by the state filter.
var provisionStates = []string{states.Enroll, states.Verifying, states.Manageable, states.Inspecting, states.InspectWait,
	states.InspectFailed, states.Available, states.Active, states.Cleaning, states.CleanWait, states.CleanFailed, states.Error}

func (v *view) list(w http.ResponseWriter, r *http.Request) {
	creds := auth.FromContext(r.Context())
	if !auth.Allowed("baremetal:node:list", creds, auth.Target{}) {
		v.error(w, r, http.StatusForbidden, "You may not list nodes (baremetal:node:list).")
		return
	}
	q := r.URL.Query()
	lq := listQuery{Search: strings.TrimSpace(q.Get("q")), State: q.Get("state"), ResourceClass: q.Get("resource_class"),
		Driver: q.Get("driver"), Maintenance: q.Get("maintenance")}
	// In enrolment order: the store's index pages it, so a page (and each
	// live refresh of it) reads PageSize rows however large the fleet.
	f := store.NodeFilter{Page: store.Page{Limit: v.o.PageSize + 1, Marker: q.Get("marker")},
		Search: lq.Search, ResourceClass: lq.ResourceClass, Driver: lq.Driver}
	if len(lq.Search) > 255 {
		v.error(w, r, http.StatusBadRequest, "The search is too long.")
		return
	}
	if lq.State != "" {
		f.ProvisionState = []string{lq.State}
	}
	if lq.Maintenance != "" {
		m := lq.Maintenance == "true"
		f.Maintenance = &m
	}
	if !auth.Allowed(auth.RuleNodeListAll, creds, auth.Target{}) {
		if creds == nil || creds.ProjectID == "" {
			v.error(w, r, http.StatusForbidden, "You may not list all nodes and have no project.")
			return
		}
		f.Project = creds.ProjectID
	}
	nodes, err := v.o.Store.ListNodes(r.Context(), f)
	if err != nil {
		v.fail(w, r, err)
		return
	}
	d := listData{Query: lq, States: provisionStates, Updated: time.Now()}
	if len(nodes) > v.o.PageSize {
		nodes = nodes[:v.o.PageSize]
		next := cloneQuery(q)
		next.Set("marker", nodes[len(nodes)-1].UUID)
		d.Next = "?" + next.Encode()
	}
	if q.Get("marker") != "" {
		first := cloneQuery(q)
		first.Del("marker")
		d.First = "?" + first.Encode()
	}
	d.Nodes = nodes
	v.render(w, http.StatusOK, "list", "Machines", d)
}

func cloneQuery(q url.Values) url.Values {
	out := url.Values{}
	for k, vs := range q {
		if len(vs) > 0 && vs[0] != "" {
			out.Set(k, vs[0])
		}
	}
	return out
}

// machineData is a machine's page.
type machineData struct {
	Node *baremetal.Node
	// Live: the node is in a state that changes by itself; the page polls.
	Live         bool
	ShowError    bool
	HasInventory bool
	Machine      hardware.Machine
	Root         *hardware.Disk
	Timeline     []phase
	Changes      *ferroapi.Changes
	History      []*baremetal.HistoryEvent
	HistoryShown bool
	Interfaces   []kv
	Properties   []kv
}

type kv struct{ K, V string }

// phase is one row of the inspection timeline.
type phase struct {
	Name, Detail string
	At           time.Time
	Took         time.Duration
}

func (v *view) machine(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	creds := auth.FromContext(ctx)
	n, err := v.o.Store.GetNode(ctx, r.PathValue("node"))
	if err != nil {
		v.fail(w, r, err)
		return
	}
	target := auth.Target{Owner: n.Owner, Lessee: n.Lessee}
	if !auth.Allowed(auth.RuleNodeGet, creds, target) {
		v.error(w, r, http.StatusNotFound, "Not found.")
		return
	}
	d := machineData{Node: n, Live: states.IsTransient(n.ProvisionState) || n.ProvisionState == states.InspectWait,
		ShowError: auth.Allowed("baremetal:node:get:last_error", creds, target)}
	for _, k := range slices.Sorted(maps.Keys(n.Interfaces)) {
		d.Interfaces = append(d.Interfaces, kv{k, n.Interfaces[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(n.Properties)) {
		d.Properties = append(d.Properties, kv{k, toString(n.Properties[k])})
	}
	if auth.Allowed("baremetal:node:inventory:get", creds, target) {
		inv, err := v.o.Store.GetInventory(ctx, n.UUID)
		switch {
		case err == nil:
			d.HasInventory = true
			d.Machine = hardware.Read(inv)
			d.Root = d.Machine.RootDisk()
			if d.Changes, err = ferroapi.NodeChanges(ctx, v.o.Store, n.UUID); err != nil {
				v.fail(w, r, err)
				return
			}
		case !errors.Is(err, store.ErrNotFound):
			v.fail(w, r, err)
			return
		}
	}
	if auth.Allowed("baremetal:node:history:get", creds, target) {
		events, err := v.o.Store.ListHistory(ctx, n.UUID)
		if err != nil {
			v.fail(w, r, err)
			return
		}
		d.HistoryShown = true
		d.Timeline = timeline(n, events)
		if len(events) > maxHistory {
			events = events[len(events)-maxHistory:]
		}
		slices.Reverse(events)
		d.History = events
	}
	v.render(w, http.StatusOK, "machine", cmp.Or(n.Name, n.UUID), d)
}

// timeline is the last inspection's phases, from the node history, each
// with the time it took from the one before (the first from the start).
func timeline(n *baremetal.Node, events []*baremetal.HistoryEvent) []phase {
	if n.InspectionStartedAt == nil {
		return nil
	}
	start := n.InspectionStartedAt.Truncate(time.Second)
	out := []phase{{Name: "started", At: *n.InspectionStartedAt}}
	prev := *n.InspectionStartedAt
	for _, e := range events {
		if e.EventType != driver.ProgressEventType || e.CreatedAt.Before(start) {
			continue
		}
		name, detail, _ := strings.Cut(e.Event, ": ")
		out = append(out, phase{Name: name, Detail: detail, At: e.CreatedAt, Took: max(e.CreatedAt.Sub(prev), 0)})
		prev = e.CreatedAt
	}
	if f := n.InspectionFinishedAt; f != nil && !f.Before(*n.InspectionStartedAt) {
		name := "finished"
		if n.ProvisionState == states.InspectFailed {
			name = "failed"
		}
		out = append(out, phase{Name: name, At: *f, Took: max(f.Sub(prev), 0)})
	}
	return out
}

// switchData is the switch view: the switch ports the NICs of one page of
// machines are on, grouped by switch.
type switchData struct {
	Switches []switchGroup
	// Unknown counts the page's machines with no inventory or no LLDP.
	Unknown int
	Next    string
	First   string
}

type switchGroup struct {
	Name, ChassisID string
	Ports           []switchPort
}

type switchPort struct {
	PortID, VLANs    string
	NIC, MAC         string
	NodeUUID, NodeID string // NodeID: the node's name, else its UUID
	// Recorded is the port_id the node's port record (local_link_connection)
	// holds when it differs from what LLDP said last: the inspector's
	// local_link_connection hook, as upstream's, never overwrites one.
	Recorded string
}

// switches reads one page of machines (as the list, [web]page_size) and
// their inventories: a bounded amount of work however large the fleet.
func (v *view) switches(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	creds := auth.FromContext(ctx)
	if !auth.Allowed(auth.RuleNodeListAll, creds, auth.Target{}) {
		v.error(w, r, http.StatusForbidden, "The switch view shows every machine: it needs baremetal:node:list_all.")
		return
	}
	q := r.URL.Query()
	nodes, err := v.o.Store.ListNodes(ctx, store.NodeFilter{Page: store.Page{Limit: v.o.PageSize + 1, Marker: q.Get("marker")}})
	if err != nil {
		v.fail(w, r, err)
		return
	}
	d := switchData{}
	if len(nodes) > v.o.PageSize {
		nodes = nodes[:v.o.PageSize]
		d.Next = "?marker=" + url.QueryEscape(nodes[len(nodes)-1].UUID)
	}
	if q.Get("marker") != "" {
		d.First = "?"
	}
	type seen struct {
		n   *baremetal.Node
		nic hardware.NIC
	}
	var found []seen
	var macs []string
	for _, n := range nodes {
		inv, err := v.o.Store.GetInventory(ctx, n.UUID)
		if errors.Is(err, store.ErrNotFound) {
			d.Unknown++
			continue
		}
		if err != nil {
			v.fail(w, r, err)
			return
		}
		any := false
		for _, nic := range hardware.Read(inv).NICs {
			if nic.Switch.Known() {
				found = append(found, seen{n, nic})
				macs = append(macs, nic.MAC)
				any = true
			}
		}
		if !any {
			d.Unknown++
		}
	}
	recorded := map[string]string{}
	if len(macs) > 0 {
		ports, err := v.o.Store.ListPorts(ctx, store.PortFilter{Addresses: macs})
		if err != nil {
			v.fail(w, r, err)
			return
		}
		for _, p := range ports {
			if id, _ := p.LocalLinkConnection["port_id"].(string); id != "" {
				recorded[strings.ToLower(p.Address)] = id
			}
		}
	}
	groups := map[string]*switchGroup{}
	for _, f := range found {
		sw := f.nic.Switch
		key := sw.Switch()
		g := groups[key]
		if g == nil {
			g = &switchGroup{Name: key, ChassisID: sw.ChassisID}
			groups[key] = g
		}
		sp := switchPort{PortID: sw.PortID, VLANs: funcs["vlans"].(func(hardware.SwitchPort) string)(sw),
			NIC: f.nic.Name, MAC: f.nic.MAC, NodeUUID: f.n.UUID, NodeID: cmp.Or(f.n.Name, f.n.UUID)}
		if rec := recorded[f.nic.MAC]; rec != "" && rec != sw.PortID {
			sp.Recorded = rec
		}
		g.Ports = append(g.Ports, sp)
	}
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		slices.SortFunc(g.Ports, func(a, b switchPort) int { return naturalCompare(a.PortID, b.PortID) })
		d.Switches = append(d.Switches, *g)
	}
	v.render(w, http.StatusOK, "switches", "Switches", d)
}

// naturalCompare orders "swp2" before "swp10".
func naturalCompare(a, b string) int {
	ta, tb := strings.TrimRightFunc(a, isDigit), strings.TrimRightFunc(b, isDigit)
	if ta == tb {
		na, _ := strconv.Atoi(a[len(ta):])
		nb, _ := strconv.Atoi(b[len(tb):])
		if na != nb {
			return na - nb
		}
	}
	return strings.Compare(a, b)
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }
