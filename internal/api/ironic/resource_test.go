package ironic

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// A row is a microversion gate: every gated filter of the node list is
// refused one version below its row's and accepted at it, with the
// message its row says. A new row is tested here without a new test.
func TestNodeListParams_EveryGatedRowIsAGate(t *testing.T) {
	e := newEnv(t)
	e.createNode(map[string]any{"name": "gated"})
	valid := map[string]string{"provision_state": "enroll", "fault": "power failure", "sharded": "true"}
	for _, p := range nodeListParams {
		if p.min == 0 {
			continue
		}
		v := valid[p.name]
		if v == "" {
			v = "x"
		}
		path := "/v1/nodes?" + p.name + "=" + url.QueryEscape(v)
		below := e.do("GET", path, minorVersion(p.min-1), nil)
		want := "Request not acceptable. The minimal required API version should be 1." + strconv.Itoa(p.min)
		if p.plain406 {
			want = "Request not acceptable."
		}
		if below.code != http.StatusNotAcceptable || str(below.fault(t), "faultstring") != want {
			t.Errorf("%s at 1.%d: %d %s, want 406 %q", p.name, p.min-1, below.code, below.body, want)
		}
		if at := e.do("GET", path, minorVersion(p.min), nil); at.code != http.StatusOK {
			t.Errorf("%s at 1.%d: %d %s", p.name, p.min, at.code, at.body)
		}
	}
}

func minorVersion(m int) string { return "1." + strconv.Itoa(m) }

// A field's row gates ?fields= and, unless the resource shows it at every
// version, its presence in the view.
func TestResources_FieldRowsGateFieldsAndView(t *testing.T) {
	e := newEnv(t)
	nid := str(e.createNode(map[string]any{"name": "fielded"}), "uuid")
	e.must(http.StatusCreated, "POST", "/v1/ports", latest, map[string]any{"node_uuid": nid, "address": "52:54:00:12:34:56"})
	e.must(http.StatusCreated, "POST", "/v1/portgroups", latest, map[string]any{"node_uuid": nid, "name": "pg"})
	e.must(http.StatusCreated, "POST", "/v1/allocations", latest, map[string]any{"resource_class": "none-such"})
	type table struct {
		path      string
		min       int // the resource's
		fields    []string
		mins      map[string]int
		showBelow []string
	}
	tables := []table{
		{"/v1/nodes", nodeResource.minVersion, names(nodeResource.fields), nodeResource.fieldMin, nodeResource.showBelow},
		{"/v1/ports", portResource.minVersion, names(portResource.fields), portResource.fieldMin, portResource.showBelow},
		{"/v1/portgroups", portgroupResource.minVersion, names(portgroupResource.fields), portgroupResource.fieldMin, portgroupResource.showBelow},
		{"/v1/allocations", allocationResource.minVersion, names(allocationResource.fields), allocationResource.fieldMin, allocationResource.showBelow},
	}
	for _, tb := range tables {
		for _, f := range tb.fields {
			m := tb.mins[f]
			if m <= max(tb.min, v8FieldsSubset) {
				continue
			}
			if r := e.do("GET", tb.path+"?fields="+f, minorVersion(m-1), nil); r.code != http.StatusNotAcceptable {
				t.Errorf("%s?fields=%s at 1.%d: %d, want 406", tb.path, f, m-1, r.code)
			}
			if r := e.do("GET", tb.path+"?fields="+f, minorVersion(m), nil); r.code != http.StatusOK {
				t.Errorf("%s?fields=%s at 1.%d: %d %s", tb.path, f, m, r.code, r.body)
			}
			list := tb.path + "/detail"
			if tb.path == "/v1/allocations" { // no /detail, every field by default
				list = tb.path
			}
			below := string(e.must(http.StatusOK, "GET", list, minorVersion(m-1), nil).body)
			if shown, want := strings.Contains(below, `"`+f+`": `), slices.Contains(tb.showBelow, f); shown != want {
				t.Errorf("%s at 1.%d shows %s: %v, want %v", tb.path, m-1, f, shown, want)
			}
		}
	}
}

func names[T any](fields []viewField[T]) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.name
	}
	return out
}

func TestDescribe_RefusesAFieldTwice(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a description with a field twice was accepted")
		}
	}()
	describe(&resource[baremetal.Chassis, store.Page]{path: "x", noun: "x", fields: []viewField[*baremetal.Chassis]{
		{"uuid", 0, strOf(func(c *baremetal.Chassis) string { return c.UUID })},
		{"uuid", 0, strOf(func(c *baremetal.Chassis) string { return c.UUID })},
	}})
}

// listParam.apply, row by row: when the version is checked, when read
// runs, and which 406 answers.
func TestListParam_Apply(t *testing.T) {
	type rec struct {
		v     string
		given bool
	}
	var got []rec
	read := func(_ *listQuery[baremetal.Node, store.NodeFilter], v string, given bool) error {
		got = append(got, rec{v, given})
		if v == "bad" {
			return badRequest("bad value")
		}
		return nil
	}
	tests := []struct {
		name   string
		p      listParam[baremetal.Node, store.NodeFilter]
		query  string
		minor  int
		status int // 0: accepted
		reads  []rec
	}{
		{"absent: nothing", listParam[baremetal.Node, store.NodeFilter]{name: "f", min: 10, read: read}, "", 5, 0, nil},
		{"below: 406 naming the version", listParam[baremetal.Node, store.NodeFilter]{name: "f", min: 10, read: read}, "f=x", 9, 406, nil},
		{"at: read", listParam[baremetal.Node, store.NodeFilter]{name: "f", min: 10, read: read}, "f=x", 10, 0, []rec{{"x", true}}},
		{"below, bad value: 406 first", listParam[baremetal.Node, store.NodeFilter]{name: "f", min: 10, read: read}, "f=bad", 9, 406, nil},
		{"valueFirst: the value's 400 first", listParam[baremetal.Node, store.NodeFilter]{name: "f", min: 10, valueFirst: true, read: read}, "f=bad", 9, 400, []rec{{"bad", true}}},
		{"ifSet: empty passes below", listParam[baremetal.Node, store.NodeFilter]{name: "f", min: 10, ifSet: true, read: read}, "f=", 9, 0, []rec{{"", true}}},
		{"ifSet: a value does not", listParam[baremetal.Node, store.NodeFilter]{name: "f", min: 10, ifSet: true, read: read}, "f=x", 9, 406, nil},
		{"always: read without it", listParam[baremetal.Node, store.NodeFilter]{name: "f", min: 10, always: true, read: read}, "", 5, 0, []rec{{"", false}}},
		{"nameless: always", listParam[baremetal.Node, store.NodeFilter]{read: read}, "f=x", 5, 0, []rec{{"", false}}},
		{"no read: accepted only", listParam[baremetal.Node, store.NodeFilter]{name: "f"}, "f=x", 5, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got = nil
			v, _ := url.ParseQuery(tc.query)
			q := &listQuery[baremetal.Node, store.NodeFilter]{rq: &request{minor: tc.minor, r: httptest.NewRequest("GET", "/", nil)}, args: args{v: v}}
			err := tc.p.apply(q)
			status := 0
			if err != nil {
				status = errorFor(err).status
			}
			if status != tc.status {
				t.Errorf("status %d (%v), want %d", status, err, tc.status)
			}
			if len(got) != len(tc.reads) || (len(got) > 0 && got[0] != tc.reads[0]) {
				t.Errorf("reads %v, want %v", got, tc.reads)
			}
		})
	}
}

// Where a resource differs from the generic steps, the difference is a
// field of its description; each is shown by the request that tells it
// apart.
func TestResources_DifferencesFromTheGenericSteps(t *testing.T) {
	e := newEnv(t)
	e.createNode(map[string]any{"name": "differs"})
	missing := "00000000-0000-4000-8000-00000000dead"
	tests := []struct {
		why              string
		path, version    string
		status           int
		faultstringStart string
	}{
		{"nodes' own wording of an unknown field (fieldError)", "/v1/nodes?fields=bogus", latest, 400, "Field bogus is not a valid field."},
		{"others' common wording", "/v1/ports?fields=bogus", latest, 400, `Field(s) "bogus" are not valid`},
		{"nodes check ?fields= before the sort key (listChecks)", "/v1/nodes?fields=bogus&sort_key=owner", "1.49", 400, "Field bogus"},
		{"ports check the sort key's version first", "/v1/ports?fields=bogus&sort_key=is_smartnic", "1.52", 406, "Request not acceptable."},
		{"nodes leave unknown sort keys to the store (no sortColumns)", "/v1/nodes?sort_key=bogus", latest, 400, ""},
		{"allocations check the model's columns first (listChecks)", "/v1/allocations?sort_key=bogus&fields=bogus", latest, 400, `The sort_key value "bogus"`},
		{"allocations sort by owner below 1.60 (no checkSortField)", "/v1/allocations?sort_key=owner", "1.52", 200, ""},
		{"allocations check ?fields= before the lookup (fieldsBeforeLookup)", "/v1/allocations/" + missing + "?fields=bogus", latest, 400, `Field(s) "bogus"`},
		{"other resources look up first", "/v1/ports/" + missing + "?fields=bogus", latest, 404, "Port " + missing},
		{"allocations' own 404 below their version (tooOld; webob's body, TestAllocations_BelowTheirVersion)", "/v1/allocations", "1.51", 404, ""},
		{"allocations have no ?detail= (noDetail)", "/v1/allocations?detail=true", latest, 400, "Unexpected arguments: detail"},
		{"a node's name is an identifier from 1.5 (find)", "/v1/nodes/differs", "1.4", 404, "Node differs could not be found."},
		{"portgroups show mode below 1.26 (showBelow)", "/v1/portgroups?fields=mode", "1.25", 406, "Request not acceptable."},
	}
	for _, tc := range tests {
		r := e.do("GET", tc.path, tc.version, nil)
		if r.code != tc.status {
			t.Errorf("%s: GET %s at %s: %d %s, want %d", tc.why, tc.path, tc.version, r.code, r.body, tc.status)
			continue
		}
		if tc.faultstringStart != "" && !strings.HasPrefix(str(r.fault(t), "faultstring"), tc.faultstringStart) {
			t.Errorf("%s: GET %s: %s, want a fault starting %q", tc.why, tc.path, r.body, tc.faultstringStart)
		}
	}
}
