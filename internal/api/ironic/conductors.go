package ironic

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ferrometal/ferro/internal/store"
)

// conductorSnapshot is the conductor list as of a moment.
type conductorSnapshot struct {
	at    time.Time
	all   []*store.Conductor
	alive map[string]bool
	// byGroup lists the live conductors of each conductor group.
	byGroup map[string][]string
}

// conductorCacheTTL bounds how stale the conductor list in node views is.
const conductorCacheTTL = 2 * time.Second

// conductorSnapshot returns the cached conductor list, reloading it when
// older than conductorCacheTTL. A failed load yields an empty list: the
// conductor field is informational.
func (s *server) conductorSnapshot() *conductorSnapshot {
	now := s.now()
	if c := s.conductors.Load(); c != nil && now.Sub(c.at) < conductorCacheTTL && !now.Before(c.at) {
		return c
	}
	c := &conductorSnapshot{at: now, alive: map[string]bool{}, byGroup: map[string][]string{}}
	cs, err := s.store.ListConductors(context.Background(), time.Time{})
	if err != nil {
		s.log.Warn("cannot list conductors", "error", err)
	}
	timeout := s.opts.HeartbeatTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	for _, cd := range cs {
		if cd.APIOnly {
			continue // an api-only process holds locks but is no conductor
		}
		c.all = append(c.all, cd)
		if cd.Online && now.Sub(cd.LastHeartbeat) < timeout {
			c.alive[cd.Hostname] = true
			g := strings.ToLower(cd.Group)
			c.byGroup[g] = append(c.byGroup[g], cd.Hostname)
		}
	}
	slices.SortFunc(c.all, func(a, b *store.Conductor) int { return strings.Compare(a.Hostname, b.Hostname) })
	s.conductors.Store(c)
	return c
}

// owner picks the conductor of a node's group that serves it, with the
// conductor's rendezvous hashing (the highest FNV-64a of host, 0, uuid).
func (c *conductorSnapshot) owner(nodeUUID, group string) string {
	hosts := c.byGroup[strings.ToLower(group)]
	var best string
	var bestScore uint64
	for _, h := range hosts {
		// FNV-1a of host, NUL, UUID, as hash/fnv's New64a sums them,
		// without allocating a hash per node and host of a long list.
		sc := fnv1a(fnv1a(fnv1a(fnvOffset64, h), "\x00"), nodeUUID)
		if best == "" || sc > bestScore {
			best, bestScore = h, sc
		}
	}
	return best
}

// FNV-1a's 64-bit offset basis and prime.
const fnvOffset64, fnvPrime64 = 14695981039346656037, 1099511628211

// fnv1a continues the 64-bit FNV-1a hash h over s.
func fnv1a(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

// hostsFor lists the live conductors that run a hardware type. A
// conductor that does not list its drivers runs all of them. With no
// conductor registered yet (an API started alone), this host is named.
func (c *conductorSnapshot) hostsFor(s *server, hwType string) []string {
	hosts := []string{}
	for _, cd := range c.all {
		if !c.alive[cd.Hostname] {
			continue
		}
		if len(cd.Drivers) == 0 || slices.Contains(cd.Drivers, hwType) {
			hosts = append(hosts, cd.Hostname)
		}
	}
	if len(hosts) == 0 && len(c.alive) == 0 && s.opts.Host != "" {
		hosts = append(hosts, s.opts.Host)
	}
	return hosts
}

var defaultConductorFields = []string{"hostname", "conductor_group", "alive"}
var conductorFieldNames = []string{"hostname", "conductor_group", "alive", "drivers", "created_at", "updated_at"}

func (c *conductorSnapshot) appendConductor(b []byte, cd *store.Conductor, base string, fs fieldSet) []byte {
	o := newObj(b)
	if fs.want("hostname") {
		o.str("hostname", cd.Hostname)
	}
	if fs.want("conductor_group") {
		o.str("conductor_group", cd.Group)
	}
	if fs.want("alive") {
		o.boolean("alive", c.alive[cd.Hostname])
	}
	if fs.want("drivers") {
		o.key("drivers")
		d := cd.Drivers
		if d == nil {
			d = []string{}
		}
		o.b = appendStrings(o.b, d)
	}
	if fs.want("created_at") {
		o.key("created_at")
		o.b = appendTime(o.b, cd.CreatedAt)
	}
	if fs.want("updated_at") {
		o.key("updated_at")
		t := cd.LastHeartbeat
		o.b = appendNullTime(o.b, &t)
	}
	o.key("links")
	o.b = appendLinks(o.b, base, "conductors", cd.Hostname)
	return o.end()
}

// listConductors is GET /v1/conductors (1.49).
func (s *server) listConductors(rq *request) error {
	if rq.minor < v49Conductors {
		return versionNotFound()
	}
	a, err := rq.queryArgs("marker", "limit", "sort_key", "sort_dir", "fields", "detail")
	if err != nil {
		return err
	}
	p, err := s.paging(a, nil, true)
	if err != nil {
		return err
	}
	if err := rq.returnFields(a, &p, defaultConductorFields); err != nil {
		return err
	}
	for _, f := range p.fields {
		if !slices.Contains(conductorFieldNames, f) {
			return badRequest("Field(s) \"%s\" are not valid", f)
		}
	}
	c := s.freshConductors()
	list := slices.Clone(c.all)
	switch p.sortKey {
	case "id", "hostname":
	case "conductor_group":
		slices.SortStableFunc(list, func(a, b *store.Conductor) int { return strings.Compare(a.Group, b.Group) })
	case "created_at":
		slices.SortStableFunc(list, func(a, b *store.Conductor) int { return a.CreatedAt.Compare(b.CreatedAt) })
	case "alive", "drivers": // conductor.py's invalid_sort_key_list
		return badRequest("The sort_key value %s is an invalid field for sorting", p.sortKey)
	default: // no column of models.Conductor, or one ferro does not sort on
		return badRequest("The sort_key value \"%s\" is an invalid field for sorting", p.sortKey)
	}
	if p.sortDir == "desc" {
		slices.Reverse(list)
	}
	list, err = pageAfter(list, p, func(cd *store.Conductor) string { return cd.Hostname }, conductorNotFound)
	if err != nil {
		return err
	}
	fs := newFieldSet(p.fields)
	b := append(make([]byte, 0, 256*len(list)+64), `{"conductors": [`...)
	for i, cd := range list {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = c.appendConductor(b, cd, rq.base, fs)
	}
	b = append(b, ']')
	var last string
	if len(list) > 0 {
		last = list[len(list)-1].Hostname
	}
	return rq.writeJSON(http.StatusOK, appendListEnd(b, rq.nextLink("conductors", p, len(list), last)))
}

// getConductor is GET /v1/conductors/{hostname} (1.49).
func (s *server) getConductor(rq *request) error {
	if rq.minor < v49Conductors {
		return versionNotFound()
	}
	a, err := rq.queryArgs("fields")
	if err != nil {
		return err
	}
	fields, err := rq.fieldsArg(a)
	if err != nil {
		return err
	}
	for _, f := range fields {
		if !slices.Contains(conductorFieldNames, f) {
			return badRequest("Field(s) \"%s\" are not valid", f)
		}
	}
	host := rq.r.PathValue("hostname")
	c := s.freshConductors()
	for _, cd := range c.all {
		if cd.Hostname == host {
			return rq.writeJSON(http.StatusOK, c.appendConductor(nil, cd, rq.base, newFieldSet(fields)))
		}
	}
	return conductorNotFound(host)
}

func conductorNotFound(host string) *apiError {
	return notFound("Conductor %s could not be found.", host)
}

// freshConductors reloads the conductor list now, for the conductor
// endpoints themselves.
func (s *server) freshConductors() *conductorSnapshot {
	s.conductors.Store(nil)
	return s.conductorSnapshot()
}
