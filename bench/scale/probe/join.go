package probe

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// JoinResult is what adding a process under load measured.
type JoinResult struct {
	// Owned is the time from the new process's start until every live
	// process has logged a hash ring with it (the periodic tasks share
	// the nodes with it from then on) and every process's API names the
	// same live conductor for each node.
	Owned time.Duration
	// Share is the nodes the new process owns then.
	Share int
	// Inspections were started just before the process was added;
	// Survived ended manageable; RunTwice started more than once on a
	// node (in all processes' logs).
	Inspections, Survived, RunTwice int
}

// join starts inspections of fresh nodes through the live processes and,
// while they run, a new process: it times until the ring of every
// process has taken the new one in and every node has one live owner,
// then waits for the inspections, each answered by a simulated agent, and
// counts those that ended manageable and the tasks run twice.
func (p *probe) join(ctx context.Context, images string) error {
	first := min(p.c.Nodes, p.c.Inspections+p.c.Rounds+50) // after the kill's nodes
	batch := p.nodes[first:min(p.c.Nodes, first+max(p.c.Inspections/10, 10))]
	if len(batch) == 0 {
		return nil
	}
	if err := parallel(ctx, len(batch), 12, func(i int) error {
		return p.retryBusy(ctx, p.api(i).url, http.MethodPut, "/v1/nodes/"+batch[i].uuid+"/states/provision", map[string]any{"target": "manage"})
	}); err != nil {
		return fmt.Errorf("join: manage: %w", err)
	}
	if err := p.waitState(ctx, batch, "manageable", 2*time.Minute); err != nil {
		return fmt.Errorf("join: %w", err)
	}
	live := p.live()
	owner := make([]*proc, len(batch))
	for i := range batch {
		owner[i] = live[i%len(live)]
	}
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	for i, n := range batch {
		wg.Go(func() {
			if err := p.retryBusy(ctx, owner[i].url, http.MethodPut, "/v1/nodes/"+n.uuid+"/states/provision", map[string]any{"target": "inspect"}); err != nil {
				failed.CompareAndSwap(nil, &err)
			}
		})
	}
	// The agents, as in inspectUnderLoad: each node in inspect wait gets
	// its report once.
	agentsDone := make(chan struct{})
	go func() {
		defer close(agentsDone)
		reported := map[string]bool{}
		byUUID := map[string]int{}
		for i, n := range batch {
			byUUID[n.uuid] = i
		}
		var agents sync.WaitGroup
		deadline := time.Now().Add(3 * time.Minute)
		for loops := 0; len(reported) < len(batch) && loops < 20000 && time.Now().Before(deadline) && ctx.Err() == nil; loops++ {
			var out struct {
				Nodes []struct {
					UUID string `json:"uuid"`
				} `json:"nodes"`
			}
			if err := p.do(ctx, live[loops%len(live)].url, http.MethodGet, "/v1/nodes?provision_state=inspect%20wait&fields=uuid&limit=1000", nil, &out); err == nil {
				for _, w := range out.Nodes {
					i, ok := byUUID[w.UUID]
					if !ok || reported[w.UUID] {
						continue
					}
					reported[w.UUID] = true
					agents.Go(func() {
						if err := p.agent(ctx, owner[i], batch[i]); err != nil {
							failed.CompareAndSwap(nil, &err)
						}
					})
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		agents.Wait()
	}()

	started := time.Now()
	pr, err := startProc(ctx, p.c.Ferro, p.dir, p.dsn, images, len(p.procs), p.c.Env)
	if err != nil {
		return err
	}
	p.procs = append(p.procs, pr)
	res := &JoinResult{Inspections: len(batch)}
	for try := 0; ; try++ {
		if try > 1200 || ctx.Err() != nil {
			return fmt.Errorf("join: the ring did not take %s in within %v", pr.host, since(started))
		}
		if !p.ringsHave(pr.host) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		share, ok, err := p.ringAgrees(ctx, pr.host)
		if err != nil {
			return err
		}
		if ok {
			res.Owned, res.Share = time.Since(started), share
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.logf("join: %s owns %d nodes in every process's view %v after its start", pr.host, res.Share, res.Owned.Round(time.Millisecond))
	wg.Wait()
	<-agentsDone
	if e := failed.Load(); e != nil {
		return fmt.Errorf("join: inspections: %w", *e)
	}
	if err := p.waitState(ctx, batch, "manageable", 2*time.Minute); err != nil {
		p.logf("join: %v", err)
	}
	res.Survived = p.countState(ctx, batch, "manageable")
	res.RunTwice, _ = p.startedTwice(batch, "event=inspect state=inspecting")
	p.res.Join = res
	p.logf("join: %d of %d inspections started before it ended manageable, %d run twice", res.Survived, res.Inspections, res.RunTwice)
	return nil
}

var ringLine = regexp.MustCompile(`msg="hash ring changed".* conductors=(\S+)`)

// ringsHave reports whether every live process has logged a hash ring
// with host in it: their periodic tasks then share the nodes with it.
func (p *probe) ringsHave(host string) bool {
	for _, pr := range p.live() {
		b, _ := os.ReadFile(pr.log)
		ms := ringLine.FindAllSubmatch(b, -1)
		if len(ms) == 0 || !slices.Contains(strings.Split(string(ms[len(ms)-1][1]), ","), host) {
			return false
		}
	}
	return true
}

// ringAgrees reports whether every live process names host the conductor
// of some nodes, the same owner for every node as the others do, and a
// live one; and how many nodes host owns.
func (p *probe) ringAgrees(ctx context.Context, host string) (int, bool, error) {
	alive := map[string]bool{}
	for _, pr := range p.live() {
		alive[pr.host] = true
	}
	var want map[string]string
	for _, pr := range p.live() {
		got := map[string]string{}
		path := "/v1/nodes?fields=uuid,conductor&limit=1000"
		for pages := 0; path != "" && pages < p.c.Nodes/1000+2; pages++ {
			var page struct {
				Nodes []struct {
					UUID      string  `json:"uuid"`
					Conductor *string `json:"conductor"`
				} `json:"nodes"`
				Next string `json:"next"`
			}
			if err := p.do(ctx, pr.url, http.MethodGet, path, nil, &page); err != nil {
				return 0, false, err
			}
			for _, n := range page.Nodes {
				if n.Conductor == nil || !alive[*n.Conductor] {
					return 0, false, nil
				}
				got[n.UUID] = *n.Conductor
			}
			path = nextPath(page.Next)
		}
		if want == nil {
			want = got
			continue
		}
		for id, c := range got {
			if want[id] != c {
				return 0, false, nil
			}
		}
	}
	share := 0
	for _, c := range want {
		if c == host {
			share++
		}
	}
	return share, share > 0, nil
}
