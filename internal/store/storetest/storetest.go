// Package storetest is the conformance suite of store.Store: every
// implementation, on every engine, must pass Run.
//
// The suite checks behaviour callers rely on: sentinel errors and their
// messages, uniqueness, cascades, reservation atomicity under contention,
// transaction rollback, paging with markers, filters, and that free-form JSON
// keeps its number types.
package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// Run runs the suite. open must return a new, empty store for the test it
// is given and close it when that test ends. The tests run in parallel, each
// on its own store.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	groups := []struct {
		name  string
		tests []test
	}{
		{"Nodes", nodeTests},
		{"Reservations", reservationTests},
		{"Tx", txTests},
		{"Ports", portTests},
		{"Portgroups", portgroupTests},
		{"Chassis", chassisTests},
		{"Volumes", volumeTests},
		{"DeployTemplates", deployTemplateTests},
		{"InspectionRules", inspectionRuleTests},
		{"Runbooks", runbookTests},
		{"Allocations", allocationTests},
		{"History", historyTests},
		{"Inventory", inventoryTests},
		{"Conductors", conductorTests},
		{"Introspections", introspectionTests},
		{"Rules", ruleTests},
		{"Leases", leaseTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel() // each test has a store of its own
					tc.fn(t, open(t))
				})
			}
		})
	}
}

type test struct {
	name string
	fn   func(t *testing.T, s store.Store)
}

// newNode returns a node as the API would create it, with a fresh UUID.
func newNode(name string) *baremetal.Node {
	return &baremetal.Node{
		UUID:           uuid.NewString(),
		Name:           name,
		Driver:         "fake-hardware",
		ProvisionState: "enroll",
		PowerState:     baremetal.PowerOff,
		Interfaces:     map[string]string{"boot": "fake", "power": "fake"},
	}
}

func createNode(t *testing.T, s store.Store, n *baremetal.Node) *baremetal.Node {
	t.Helper()
	if err := s.CreateNode(t.Context(), n); err != nil {
		t.Fatalf("CreateNode(%s): %v", n.Name, err)
	}
	return n
}

func newPort(nodeUUID, address string) *baremetal.Port {
	return &baremetal.Port{UUID: uuid.NewString(), NodeUUID: nodeUUID, Address: address, PXEEnabled: true}
}

func createPort(t *testing.T, s store.Store, p *baremetal.Port) *baremetal.Port {
	t.Helper()
	if err := s.CreatePort(t.Context(), p); err != nil {
		t.Fatalf("CreatePort(%s): %v", p.Address, err)
	}
	return p
}

// wantErr fails t unless err wraps sentinel and its message contains every
// one of parts.
func wantErr(t *testing.T, err, sentinel error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", sentinel)
	}
	if !errors.Is(err, sentinel) {
		t.Fatalf("got error %q (%T), want one wrapping %v", err, err, sentinel)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// names returns the names of nodes, in order.
func names(nodes []*baremetal.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

// page is a list function for one page, for checkPaging.
type page[T any] func(p store.Page) ([]T, error)

// checkPaging walks all of a list with pages of size limit and markers, and
// checks the concatenation is want (compared by id).
func checkPaging[T any](t *testing.T, list page[T], p store.Page, limit int, id func(T) string, want []string) {
	t.Helper()
	var got []string
	p.Limit = limit
	p.Marker = ""
	for i := 0; ; i++ {
		if i > len(want)+1 {
			t.Fatalf("paging %+v does not end: got %v so far", p, got)
		}
		items, err := list(p)
		if err != nil {
			t.Fatalf("list page %+v: %v", p, err)
		}
		if len(items) > limit {
			t.Fatalf("page %+v has %d items, more than the limit", p, len(items))
		}
		for _, it := range items {
			got = append(got, id(it))
		}
		if len(items) < limit {
			break
		}
		p.Marker = id(items[len(items)-1])
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("paging by %q %s with limit %d:\n got %v\nwant %v", p.SortKey, p.SortDir, limit, got, want)
	}
}
