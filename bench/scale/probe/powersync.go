package probe

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// PowerRound is one measured round of power-state sync cycles (a cycle of
// each process) with nothing to change.
type PowerRound struct {
	Name string // which nodes were active (not in maintenance)
	// Active is the nodes not in maintenance; Checked the nodes the
	// processes' cycles asked their BMCs about, in all.
	Active, Checked int
	// Corrected and Failed are the nodes the cycles changed and those
	// whose BMC did not answer (0 and 0: nothing changes).
	Corrected, Failed int
	// Cycle is the longest of the processes' cycles; Interval the
	// configured one.
	Cycle, Interval time.Duration
	// DB is the database's work for one cycle of each process, as
	// pg_stat_statements counted it over the measured cycles (the idle
	// rate of the other periodic tasks taken out), scaled by the cycles
	// the database saw begin (Cycles: each lists the node references
	// once).
	DB     DBWork
	Cycles float64
	// CPU is the CPU seconds of all processes in the round.
	CPU     float64
	Seconds float64 // the round's length
}

// powerSync measures the periodic power-state sync at every node: all
// nodes manageable (the sync leaves enroll alone, as Ironic), the
// processes restarted with the sync every PowerInterval. It measures a
// round with every node active, then one with only the IPMI nodes active
// (the Redfish ones in maintenance), then one with only the Redfish ones:
// the cycle per protocol, and what a cycle costs as active nodes change.
func (p *probe) powerSync(ctx context.Context, images string) error {
	began := time.Now()
	var enrolled []node
	st, err := p.states(ctx)
	if err != nil {
		return err
	}
	for _, n := range p.nodes {
		if st[n.uuid] == "enroll" {
			enrolled = append(enrolled, n)
		}
	}
	if err := parallel(ctx, len(enrolled), 12, func(i int) error {
		return p.retryBusy(ctx, p.api(i).url, http.MethodPut, "/v1/nodes/"+enrolled[i].uuid+"/states/provision", map[string]any{"target": "manage"})
	}); err != nil {
		return fmt.Errorf("manage for the power sync: %w", err)
	}
	if err := p.waitState(ctx, enrolled, "manageable", 3*time.Minute); err != nil {
		return err
	}
	p.logf("power sync: %d more nodes managed (their BMCs asked) in %v", len(enrolled), since(began))
	for _, pr := range p.procs {
		pr.stop()
	}
	p.procs = p.procs[:0]
	for i := range p.c.Processes {
		pr, err := startProc(ctx, p.c.Ferro, p.dir, p.dsn, images, i, p.c.Env,
			"FERRO_CONDUCTOR_SYNC_POWER_STATE_INTERVAL="+strconv.Itoa(int(p.c.PowerInterval.Seconds())))
		if err != nil {
			return err
		}
		p.procs = append(p.procs, pr)
	}
	if err := p.waitConductors(ctx, len(p.procs)); err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, p.dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var ipmi, redfish []node
	for i, n := range p.nodes {
		if isIPMI(i) {
			ipmi = append(ipmi, n)
		} else {
			redfish = append(redfish, n)
		}
	}
	maintenance := func(nodes []node, on bool) error {
		return parallel(ctx, len(nodes), 12, func(i int) error {
			path := "/v1/nodes/" + nodes[i].uuid + "/maintenance"
			if on {
				return p.retryBusy(ctx, p.api(i).url, http.MethodPut, path, map[string]any{"reason": "bench/scale power sync"})
			}
			return p.retryBusy(ctx, p.api(i).url, http.MethodDelete, path, nil)
		})
	}
	for _, r := range []struct {
		name   string
		active int
		before func() error
	}{
		{"all nodes (IPMI and Redfish)", len(p.nodes), nil},
		{"IPMI nodes only", len(ipmi), func() error { return maintenance(redfish, true) }},
		{"Redfish nodes only", len(redfish), func() error {
			if err := maintenance(ipmi, true); err != nil {
				return err
			}
			return maintenance(redfish, false)
		}},
	} {
		if r.before != nil {
			if err := r.before(); err != nil {
				return fmt.Errorf("power sync, %s: %w", r.name, err)
			}
		}
		round, err := p.powerRound(ctx, conn, time.Now())
		if err != nil {
			return fmt.Errorf("power sync, %s: %w", r.name, err)
		}
		round.Name, round.Active = r.name, r.active
		p.res.Power = append(p.res.Power, round)
		d := round.DB
		p.logf("power sync, %s: cycle %v (interval %v), %d nodes checked, %d corrected, %d failed; per round (scaled from %.0f cycles the database saw) %.0f statements on nodes returning %.0f references and %.0f rows, %.0f rows written, %.0f pages, %.0f other statements, %.2f CPU s",
			r.name, round.Cycle.Round(time.Millisecond), p.c.PowerInterval, round.Checked, round.Corrected, round.Failed, round.Cycles,
			d.NodeQueries, d.RefRows, d.NodeRows, d.NodeWrites, d.NodePages, d.Other, round.CPU)
	}
	return maintenance(ipmi, false)
}

// powerRound measures a round after a change made before since: it waits
// until every process has ended a cycle after since (so that its next one
// began after the change, even when cycles run back to back), then
// measures the next cycle of each (three when cycles are short): the
// longest, the nodes checked, the processes' CPU, and the database's
// statements over them.
//
// pg_stat_statements counts a statement when it ends, so the window needs
// no wait for statistics. A cycle's reads are at its start and take well
// under a second; the window opens and closes a second after a cycle's
// end was logged, so that a cycle begun right at that end has read on one
// side of it only. The database's own count of cycles (each lists the
// node references once) scales the figures to one cycle of each process.
func (p *probe) powerRound(ctx context.Context, conn *pgx.Conn, since time.Time) (PowerRound, error) {
	// The maintenance flags just written left the nodes' pages not
	// all-visible, which an index-only scan then checks in the table;
	// autovacuum would clear that within a minute or so.
	if _, err := conn.Exec(ctx, "VACUUM (ANALYZE) nodes"); err != nil {
		return PowerRound{}, err
	}
	perProc := time.Duration(len(p.nodes)/max(len(p.procs), 1)) * p.c.BMCLatency * 10 // an IPMI query is a few messages
	// waitCycles waits until every process logged a cycle that ended
	// after its cycle at[i] and n-1 more; it returns the last of each.
	waitCycles := func(after func(i int, cs []powerCycle) int, n int) ([]int, []powerCycle, error) {
		deadline := time.Now().Add(time.Duration(n+1)*(p.c.PowerInterval+perProc) + time.Minute)
		for {
			var at []int
			var out []powerCycle
			for i, pr := range p.procs {
				cs := pr.powerCycles()
				if k := after(i, cs) + n; k < len(cs) {
					at, out = append(at, k), append(out, cs[k])
				}
			}
			if len(out) == len(p.procs) {
				return at, out, nil
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return nil, nil, fmt.Errorf("%d of %d processes logged %d more cycles in time", len(out), len(p.procs), n)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	endedAfter := func(_ int, cs []powerCycle) int {
		k := 0
		for k < len(cs) && !cs[k].ended.After(since) {
			k++
		}
		return k
	}
	at, settled, err := waitCycles(endedAfter, 0)
	if err != nil {
		return PowerRound{}, err
	}
	measure := 3
	for _, c := range settled {
		if c.took > p.c.PowerInterval/2 {
			measure = 1
		}
	}
	time.Sleep(time.Second)
	if err := resetWork(ctx, conn); err != nil {
		return PowerRound{}, err
	}
	t0, cpu0 := time.Now(), p.cpu()
	_, cycles, err := waitCycles(func(i int, _ []powerCycle) int { return at[i] }, measure)
	if err != nil {
		return PowerRound{}, err
	}
	time.Sleep(time.Second)
	w, err := readWork(ctx, conn)
	if err != nil {
		return PowerRound{}, err
	}
	secs := time.Since(t0).Seconds()
	r := PowerRound{Interval: p.c.PowerInterval, Seconds: secs, CPU: p.cpu() - cpu0, Cycles: w.Refs}
	if w.Refs == 0 {
		return r, fmt.Errorf("the database saw no power sync cycle begin in %.0f s", secs)
	}
	r.DB = w.minus(p.res.IdleDB.times(secs)).times(float64(len(p.procs)) / w.Refs)
	r.CPU *= float64(len(p.procs)) / w.Refs
	for _, c := range cycles {
		r.Cycle = max(r.Cycle, c.took)
		r.Checked += c.checked
		r.Corrected += c.corrected
		r.Failed += c.failed
	}
	return r, nil
}
