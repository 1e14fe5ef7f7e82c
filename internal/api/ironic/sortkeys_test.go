package ironic

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// upstreamSort is what upstream Ironic answers for the sort keys of one
// collection, written from its code, not from ferro's tables:
//   - columns: the resource's model columns in ironic/db/sqlalchemy/models.py
//     (IronicBase adds created_at, updated_at and version), with the
//     microversion the get_all handler requires of that field (0: none);
//   - refused: the controller's invalid_sort_key_list in
//     ironic/api/controllers/v1/<resource>.py, answered 400 "The sort_key
//     value %(key)s is an invalid field for sorting";
//   - unknown: names that are no column (oslo.db's InvalidSortKey, worded by
//     _paginate_query in ironic/db/sqlalchemy/api.py with the key quoted).
type upstreamSort struct {
	path    string
	list    string // the collection's key in the response
	columns map[string]int
	refused []string
	unknown []string
	create  []map[string]any
}

func TestSortKeysMatchIronic(t *testing.T) {
	e := newEnv(t)
	nid := str(e.createNode(map[string]any{"name": "sorted"}), "uuid")
	other := str(e.createNode(map[string]any{"name": "sorted-2", "resource_class": "gold"}), "uuid")
	pg := str(e.must(201, "POST", "/v1/portgroups", latest, map[string]any{"node_uuid": other, "name": "bond1"}).json(t), "uuid")
	steps := []map[string]any{{"interface": "bios", "step": "apply_configuration", "args": map[string]any{}, "priority": 10}}
	base := map[string]int{"id": 0, "uuid": 0, "created_at": 0, "updated_at": 0, "version": 0}
	with := func(m map[string]int) map[string]int {
		out := map[string]int{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	cases := []upstreamSort{{
		// models.Chassis: id uuid extra description; chassis.py refuses extra.
		path: "/v1/chassis", list: "chassis",
		columns: with(map[string]int{"description": 0}),
		refused: []string{"extra"},
		unknown: []string{"foo", "nodes", "name"},
		create:  []map[string]any{{"description": "b"}, {}, {"description": "a"}},
	}, {
		// models.DeployTemplate: id uuid name extra (steps a relationship);
		// deploy_template.py refuses extra and steps.
		path: "/v1/deploy_templates", list: "deploy_templates",
		columns: with(map[string]int{"name": 0}),
		refused: []string{"extra", "steps"},
		unknown: []string{"foo", "description"},
		create:  []map[string]any{{"name": "CUSTOM_B", "steps": steps}, {"name": "CUSTOM_A", "steps": steps}},
	}, {
		// models.VolumeConnector: id uuid node_id type connector_id extra.
		path: "/v1/volume/connectors", list: "connectors",
		columns: with(map[string]int{"node_id": 0, "type": 0, "connector_id": 0}),
		refused: []string{"extra"},
		unknown: []string{"foo", "node_uuid"},
		create: []map[string]any{
			{"node_uuid": other, "type": "iqn", "connector_id": "iqn.2026-12.test:b"},
			{"node_uuid": nid, "type": "ip", "connector_id": "192.0.2.1"},
		},
	}, {
		// models.VolumeTarget: id uuid node_id volume_type properties
		// boot_index volume_id extra; volume_target.py refuses extra, properties.
		path: "/v1/volume/targets", list: "targets",
		columns: with(map[string]int{"node_id": 0, "volume_type": 0, "boot_index": 0, "volume_id": 0}),
		refused: []string{"extra", "properties"},
		unknown: []string{"foo", "node_uuid"},
		create: []map[string]any{
			{"node_uuid": other, "volume_type": "iscsi", "volume_id": "v2", "boot_index": 0},
			{"node_uuid": nid, "volume_type": "fibre_channel", "volume_id": "v1", "boot_index": 1},
		},
	}, {
		// models.Port; port.py refuses extra, internal_info and
		// local_link_connection; _check_allowed_port_fields gates
		// pxe_enabled (1.19), physical_network (1.34), is_smartnic (1.53),
		// name (1.88), description (1.97), vendor (1.100), category (1.101),
		// available_for_dynamic_portgroup (1.111).
		path: "/v1/ports", list: "ports",
		columns: with(map[string]int{
			"address": 0, "node_id": 0, "portgroup_id": 0, "pxe_enabled": 19,
			"physical_network": 34, "is_smartnic": 53, "name": 88, "description": 97,
			"vendor": 100, "category": 101, "available_for_dynamic_portgroup": 111,
		}),
		refused: []string{"extra", "internal_info", "local_link_connection"},
		unknown: []string{"foo", "node_uuid", "portgroup_uuid"},
		create: []map[string]any{
			{"node_uuid": other, "address": "52:54:00:00:00:02", "portgroup_uuid": pg, "physical_network": "b"},
			{"node_uuid": nid, "address": "52:54:00:00:00:01", "pxe_enabled": false},
		},
	}, {
		// models.Portgroup; portgroup.py refuses extra, internal_info and
		// properties; check_allowed_portgroup_fields gates mode (1.26) and
		// dynamic_portgroup (1.111).
		path: "/v1/portgroups", list: "portgroups",
		columns: with(map[string]int{
			"name": 0, "node_id": 0, "address": 0, "standalone_ports_supported": 0,
			"mode": 26, "physical_network": 0, "category": 0, "dynamic_portgroup": 111,
		}),
		refused: []string{"extra", "internal_info", "properties"},
		unknown: []string{"foo", "node_uuid"},
		create:  []map[string]any{{"node_uuid": nid, "name": "bond0", "mode": "802.3ad", "standalone_ports_supported": false}},
	}, {
		// models.Allocation; allocation.py refuses extra, candidate_nodes, traits.
		path: "/v1/allocations", list: "allocations",
		columns: with(map[string]int{
			"name": 0, "node_id": 0, "state": 0, "owner": 0, "last_error": 0,
			"resource_class": 0, "conductor_affinity": 0,
		}),
		refused: []string{"extra", "candidate_nodes", "traits"},
		unknown: []string{"foo", "node_uuid"},
		create:  []map[string]any{{"resource_class": "gold", "name": "b"}, {"resource_class": "silver"}},
	}}
	for _, tc := range cases {
		for _, body := range tc.create {
			e.must(201, "POST", tc.path, latest, body)
		}
		all := len(e.must(200, "GET", tc.path, latest, nil).json(t)[tc.list].([]any))
		if all < 2 && tc.list != "portgroups" {
			t.Fatalf("%s: %d objects, want at least 2", tc.path, all)
		}
		keys := make([]string, 0, len(tc.columns))
		for k := range tc.columns {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			min := tc.columns[k]
			t.Run(strings.TrimPrefix(tc.path, "/v1/")+"/"+k, func(t *testing.T) {
				if min > 0 {
					e.must(406, "GET", tc.path+"?sort_key="+k, fmt.Sprintf("1.%d", min-1), nil)
				}
				if min > maxMinor {
					e.must(406, "GET", tc.path+"?sort_key="+k, "latest", nil)
					return
				}
				// Both directions, one object a page: every page follows
				// the previous one's next link (its marker), and together
				// they are every object once.
				for _, dir := range []string{"asc", "desc"} {
					seen := map[string]bool{}
					next := tc.path + "?limit=1&sort_dir=" + dir + "&sort_key=" + k
					for range all + 1 {
						page := e.must(200, "GET", next, "latest", nil).json(t)
						items := page[tc.list].([]any)
						for _, it := range items {
							u := str(it.(map[string]any), "uuid")
							if seen[u] {
								t.Fatalf("%s: %s twice", next, u)
							}
							seen[u] = true
						}
						n, _ := page["next"].(string)
						if n == "" {
							break
						}
						pu, err := url.Parse(n)
						if err != nil {
							t.Fatal(err)
						}
						next = pu.RequestURI()
					}
					if len(seen) != all {
						t.Errorf("sort_key=%s sort_dir=%s: %d objects over the pages, want %d", k, dir, len(seen), all)
					}
				}
			})
		}
		for _, k := range tc.refused {
			r := e.must(400, "GET", tc.path+"?sort_key="+k, latest, nil)
			if got, want := r.fault(t)["faultstring"], "The sort_key value "+k+" is an invalid field for sorting"; got != want {
				t.Errorf("%s sort_key=%s: %q, want %q", tc.path, k, got, want)
			}
		}
		for _, k := range tc.unknown {
			r := e.must(400, "GET", tc.path+"?sort_key="+k, latest, nil)
			if got, want := r.fault(t)["faultstring"], `The sort_key value "`+k+`" is an invalid field for sorting`; got != want {
				t.Errorf("%s sort_key=%s: %q, want %q", tc.path, k, got, want)
			}
		}
	}
}

// The store orders on body fields and on the other table's id as Ironic
// orders on those columns.
func TestSortOnBodyFieldsAndForeignIDs(t *testing.T) {
	e := newEnv(t)
	for _, d := range []any{"b", nil, "a"} {
		body := map[string]any{}
		if d != nil {
			body["description"] = d
		}
		e.must(201, "POST", "/v1/chassis", latest, body)
	}
	order := func(path, list, field string) []any {
		var out []any
		for _, it := range e.must(200, "GET", path, latest, nil).json(t)[list].([]any) {
			out = append(out, it.(map[string]any)[field])
		}
		return out
	}
	// None sorts first, as on Ironic's MySQL and SQLite.
	if got, want := order("/v1/chassis?sort_key=description", "chassis", "description"), []any{nil, "a", "b"}; !slices.Equal(got, want) {
		t.Errorf("chassis by description: %v, want %v", got, want)
	}
	if got, want := order("/v1/chassis?sort_key=description&sort_dir=desc", "chassis", "description"), []any{"b", "a", nil}; !slices.Equal(got, want) {
		t.Errorf("chassis by description desc: %v, want %v", got, want)
	}
	// node_id is the nodes' creation order, not their UUIDs' order.
	first := str(e.createNode(map[string]any{"name": "first", "uuid": "ffffffff-0000-4000-8000-000000000000"}), "uuid")
	second := str(e.createNode(map[string]any{"name": "second", "uuid": "00000000-0000-4000-8000-000000000000"}), "uuid")
	e.must(201, "POST", "/v1/ports", latest, map[string]any{"node_uuid": second, "address": "52:54:00:00:00:01"})
	e.must(201, "POST", "/v1/ports", latest, map[string]any{"node_uuid": first, "address": "52:54:00:00:00:02"})
	if got, want := order("/v1/ports?sort_key=node_id&fields=uuid,node_uuid", "ports", "node_uuid"), []any{first, second}; !slices.Equal(got, want) {
		t.Errorf("ports by node_id: %v, want %v", got, want)
	}
	if got, want := order("/v1/ports?sort_key=pxe_enabled&fields=uuid,address", "ports", "address"), []any{"52:54:00:00:00:01", "52:54:00:00:00:02"}; !slices.Equal(got, want) {
		t.Errorf("ports by pxe_enabled (both true, then id): %v, want %v", got, want)
	}
}
