package ironic

import (
	"bytes"
	"encoding/json"
	"runtime"
	"testing"
)

// A long list rendered in parallel pieces is the same bytes as rendered
// on one CPU, node views (with their conductor) and port views alike.
func TestRenderList_ParallelSameBytes(t *testing.T) {
	e := newEnv(t)
	for i := range 3 * parallelRenderMin {
		r := e.must(201, "POST", "/v1/nodes", latest, json.RawMessage(nodeBody(i)))
		if i%2 == 0 {
			e.must(201, "POST", "/v1/ports", latest, map[string]any{"node_uuid": str(r.json(t), "uuid"),
				"address": "52:54:00:00:" + string("0123456789abcdef"[i/16%16]) + string("0123456789abcdef"[i%16]) + ":01"})
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, path := range []string{"/v1/nodes/detail", "/v1/nodes", "/v1/nodes?fields=uuid,conductor,driver_info&limit=150", "/v1/ports/detail"} {
		runtime.GOMAXPROCS(1)
		one := e.must(200, "GET", path, latest, nil).body
		runtime.GOMAXPROCS(4)
		four := e.must(200, "GET", path, latest, nil).body
		if !bytes.Equal(one, four) {
			t.Errorf("GET %s: rendered on four CPUs (%d bytes) differs from one (%d bytes)", path, len(four), len(one))
		}
		if n := bytes.Count(one, []byte(`"uuid": `)); n < parallelRenderMin {
			t.Errorf("GET %s: %d items, too few for the parallel path", path, n)
		}
	}
}
