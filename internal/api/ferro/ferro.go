// Package ferro is ferro's own API, for what Ironic's has no place for,
// under /ferro/v1 (Ironic's and the inspector's namespace is /v1, and
// Ironic serves a path without a version prefix as under /v1, so no route
// of theirs can start with /ferro). It is served on the API port behind
// the same authentication and policy, answers in JSON, and reports errors
// in Ironic's error body.
//
//	GET /ferro/v1/nodes/{node}/hardware/changes
//
// returns what changed on the machine between its previous inspection and
// its last one (internal/hardware), under the node's inventory policy
// (baremetal:node:inventory:get):
//
//	{"node_uuid": "…", "previous_inspection": "2026-01-02T03:04:05Z",
//	 "changes": [{"component": "disk", "id": "0x5000c500…", "change": "removed",
//	              "old": "/dev/sdb, 10 GiB, serial Z1"}]}
//
// previous_inspection is null and changes empty when the node has one
// inventory only (or [inventory]keep_previous is 0); 404 when it has none.
package ferro

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/ferrometal/ferro/internal/api/ironic"
	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/hardware"
	"github.com/ferrometal/ferro/internal/store"
)

// Prefix is the path prefix of every route of this API.
const Prefix = "/ferro/"

// Store is what the API reads.
type Store interface {
	GetNode(ctx context.Context, ident string) (*baremetal.Node, error)
	GetInventory(ctx context.Context, nodeUUID string) (*baremetal.Inventory, error)
	ListInventoryHistory(ctx context.Context, nodeUUID string) ([]*store.InventoryRecord, error)
}

// New returns the API's handler.
func New(s Store, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &api{store: s, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ferro/v1/nodes/{node}/hardware/changes", a.changes)
	mux.HandleFunc("/ferro/", func(w http.ResponseWriter, r *http.Request) {
		ironic.WriteError(w, http.StatusNotFound, "The resource could not be found.")
	})
	return mux
}

type api struct {
	store Store
	log   *slog.Logger
}

// Changes is the answer of GET /ferro/v1/nodes/{node}/hardware/changes.
type Changes struct {
	NodeUUID           string            `json:"node_uuid"`
	PreviousInspection *time.Time        `json:"previous_inspection"`
	Changes            []hardware.Change `json:"changes"`
}

// NodeChanges computes a node's changes since its previous inventory; the
// web view shows the same. store.ErrNotFound when it has no inventory.
func NodeChanges(ctx context.Context, s Store, nodeUUID string) (*Changes, error) {
	cur, err := s.GetInventory(ctx, nodeUUID)
	if err != nil {
		return nil, err
	}
	prev, err := s.ListInventoryHistory(ctx, nodeUUID)
	if err != nil {
		return nil, err
	}
	out := &Changes{NodeUUID: nodeUUID, Changes: []hardware.Change{}}
	if len(prev) > 0 {
		if !prev[0].SavedAt.IsZero() {
			t := prev[0].SavedAt.UTC()
			out.PreviousInspection = &t
		}
		if c := hardware.Compare(hardware.Read(&prev[0].Inventory), hardware.Read(cur)); c != nil {
			out.Changes = c
		}
	}
	return out, nil
}

func (a *api) changes(w http.ResponseWriter, r *http.Request) {
	ident := r.PathValue("node")
	n, err := a.store.GetNode(r.Context(), ident)
	if err != nil {
		a.fail(w, err, "Node "+ident+" could not be found.")
		return
	}
	creds := auth.FromContext(r.Context())
	const rule = "baremetal:node:inventory:get"
	if !auth.Allowed(auth.RuleNodeGet, creds, auth.Target{Owner: n.Owner, Lessee: n.Lessee}) {
		// As Ironic: a node the caller may not see does not exist.
		ironic.WriteError(w, http.StatusNotFound, "Node "+ident+" could not be found.")
		return
	}
	if !auth.Allowed(rule, creds, auth.Target{Owner: n.Owner, Lessee: n.Lessee}) {
		ironic.WriteError(w, http.StatusForbidden, rule+" is disallowed by policy")
		return
	}
	c, err := NodeChanges(r.Context(), a.store, n.UUID)
	if err != nil {
		a.fail(w, err, "Node inventory record for node "+n.UUID+" could not be found.")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(c)
}

func (a *api) fail(w http.ResponseWriter, err error, notFound string) {
	if errors.Is(err, store.ErrNotFound) {
		ironic.WriteError(w, http.StatusNotFound, notFound)
		return
	}
	a.log.Error("ferro API", "error", err)
	ironic.WriteError(w, http.StatusInternalServerError, "Internal error.")
}
