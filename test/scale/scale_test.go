// Package scale is the CI lane of bench/scale: its probe at 250 and at
// 1,000 nodes (three `ferro serve` processes on a throwaway PostgreSQL
// cluster, inspections at once, a process SIGKILLed), asserting that
// nothing fails and nothing is left behind, and that what a node costs
// does not grow with the number of nodes: each figure per node at 1,000
// is compared with the same at 250, never with a wall-clock bound, so the
// lane holds on a loaded machine and still catches an O(n²) (a cost per
// node four times higher).
package scale_test

import (
	"context"
	"testing"
	"time"

	"github.com/ferrometal/ferro/bench/scale/probe"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
	"github.com/ferrometal/ferro/internal/testing/pgtest"
)

// maxGrowth is how much more a node may cost at four times the nodes:
// linear work stays near 1, quadratic is 4; the wall-time figures swing
// with the machine's other load, which the margin leaves room for.
const maxGrowth = 3.0

func TestScale_PerNodeCostFlat(t *testing.T) {
	if !pgtest.Available() {
		ferrotest.SkipOrFail(t, "scale lane: PostgreSQL server binaries not found (Debian's postgresql package)")
	}
	bin := ferrotest.Binary(t)
	run := func(nodes, inspections int, kill bool) *probe.Result {
		t.Helper()
		res, err := probe.Run(context.Background(), probe.Config{Ferro: bin, Nodes: nodes, Inspections: inspections,
			Processes: 3, Rounds: 20, Kill: kill, Limit: 5 * time.Minute, Log: testLog{t}})
		if err != nil {
			t.Fatalf("probe at %d nodes: %v", nodes, err)
		}
		if res.InspectFailed != 0 || res.LocksLeft != 0 || res.StuckNodes != 0 || res.RunTwice != 0 {
			t.Errorf("probe at %d nodes: %d inspections failed, %d locks of the killed process left, %d nodes left verifying, %d tasks run twice",
				nodes, res.InspectFailed, res.LocksLeft, res.StuckNodes, res.RunTwice)
		}
		return res
	}
	small := run(250, 25, false)
	large := run(1000, 100, true)

	list := func(r *probe.Result) float64 {
		return float64(probe.Percentile(r.Latency["GET /v1/nodes/detail?limit=1000"], 50)) / float64(min(r.Config.Nodes, 1000))
	}
	for _, c := range []struct {
		what         string
		small, large float64
	}{
		{"enrolment CPU per node", small.EnrollCPU / 250, large.EnrollCPU / 1000},
		{"detailed list time per node listed (p50)", list(small), list(large)},
		{"CPU per inspection", small.CPUPerInspect, large.CPUPerInspect},
		{"time to all manageable per inspection", small.InspectAll.Seconds() / 25, large.InspectAll.Seconds() / 100},
		// The periodic tasks' reads with nothing to do follow the nodes
		// that have something going on (locked, in inspect wait), not all
		// of them: in all, not per node, they stay flat as nodes are
		// added (four times the reads would be a scan of every node).
		// Below 50 rows a second it is noise.
		{"idle database rows read per second, in all", max(small.IdleRowsPerSec, 50), large.IdleRowsPerSec},
	} {
		t.Logf("%s: %.3g at 250 nodes, %.3g at 1,000 (×%.2f)", c.what, c.small, c.large, c.large/c.small)
		if c.small > 0 && c.large/c.small > maxGrowth {
			t.Errorf("%s grows ×%.2f from 250 to 1,000 nodes (more than ×%.1f): something costs more than linear in the nodes",
				c.what, c.large/c.small, maxGrowth)
		}
	}
	if large.Takeover <= 0 {
		t.Error("the take-over after SIGKILL was not measured")
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(string(p))
	return len(p), nil
}
