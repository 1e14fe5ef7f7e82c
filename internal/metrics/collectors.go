package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ferrometal/ferro/internal/store"
)

// NodeCounter counts the nodes by provision and power state in one query
// (store/sql's CountNodes).
type NodeCounter interface {
	CountNodes(ctx context.Context) ([]store.NodeCount, error)
}

// WatchNodes exposes ferro_nodes{provision_state, power_state}, counted by
// one query at each scrape (bounded by a 5 s timeout); a failed query
// exposes nothing for that scrape and counts as a store error.
func (m *Metrics) WatchNodes(c NodeCounter) {
	m.reg.MustRegister(&nodesCollector{m: m, c: c,
		desc: prometheus.NewDesc("ferro_nodes", "Nodes by provision state and power state.", []string{"provision_state", "power_state"}, nil)})
}

type nodesCollector struct {
	m    *Metrics
	c    NodeCounter
	desc *prometheus.Desc
}

func (n *nodesCollector) Describe(ch chan<- *prometheus.Desc) { ch <- n.desc }

func (n *nodesCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := n.c.CountNodes(ctx)
	if err != nil {
		n.m.storeErrors.WithLabelValues("count_nodes").Inc()
		return
	}
	for _, c := range counts {
		ch <- prometheus.MustNewConstMetric(n.desc, prometheus.GaugeValue, float64(c.Count),
			labelValue(c.ProvisionState), labelValue(c.PowerState))
	}
}

// ConductorLoad is a snapshot of a conductor's load (conductor.Stats).
type ConductorLoad struct {
	Workers, Busy, LockWaiters               int
	LockWaits, LockConflicts, WorkerRefusals uint64
}

// WatchConductor exposes the conductor's worker pool and node locks, read
// from load at each scrape.
func (m *Metrics) WatchConductor(load func() ConductorLoad) {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("ferro_conductor_"+name, help, nil, nil)
	}
	m.reg.MustRegister(&conductorCollector{load: load,
		workers:   d("workers", "Size of the conductor's worker pool ([conductor]workers_pool_size)."),
		busy:      d("workers_busy", "Workers running a task."),
		waiters:   d("lock_waiters", "Requests waiting now for a node another task of this process holds (the pool does not queue: a full pool refuses)."),
		waits:     d("lock_waits_total", "Waits for a node another task of this process held."),
		conflicts: d("lock_conflicts_total", "Lock requests refused because another task or conductor held the node (409)."),
		refusals:  d("worker_refusals_total", "Tasks refused because every worker was busy (503)."),
	})
}

type conductorCollector struct {
	load                                               func() ConductorLoad
	workers, busy, waiters, waits, conflicts, refusals *prometheus.Desc
}

func (c *conductorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.workers, c.busy, c.waiters, c.waits, c.conflicts, c.refusals} {
		ch <- d
	}
}

func (c *conductorCollector) Collect(ch chan<- prometheus.Metric) {
	l := c.load()
	ch <- prometheus.MustNewConstMetric(c.workers, prometheus.GaugeValue, float64(l.Workers))
	ch <- prometheus.MustNewConstMetric(c.busy, prometheus.GaugeValue, float64(l.Busy))
	ch <- prometheus.MustNewConstMetric(c.waiters, prometheus.GaugeValue, float64(l.LockWaiters))
	ch <- prometheus.MustNewConstMetric(c.waits, prometheus.CounterValue, float64(l.LockWaits))
	ch <- prometheus.MustNewConstMetric(c.conflicts, prometheus.CounterValue, float64(l.LockConflicts))
	ch <- prometheus.MustNewConstMetric(c.refusals, prometheus.CounterValue, float64(l.WorkerRefusals))
}

// Store returns the callback store/sql calls for every statement and
// transaction (sql.WithObserver): op is "exec", "query", "query_row" or
// "transaction".
func (m *Metrics) Store() func(op string, d time.Duration, err error) {
	return func(op string, d time.Duration, err error) {
		m.storeDuration.WithLabelValues(op).Observe(d.Seconds())
		if err != nil {
			m.storeErrors.WithLabelValues(op).Inc()
		}
	}
}
