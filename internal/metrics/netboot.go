package metrics

import "github.com/prometheus/client_golang/prometheus"

// NetbootStats is what the built-in netboot's servers counted so far
// (netboot's dhcp, tftp and httpboot Stats), read at each scrape.
type NetbootStats struct {
	// DHCP replies sent, and requests dropped because every worker and
	// the queue were busy, and replies that could not be sent.
	DHCPOffers, DHCPAcks, DHCPNaks, DHCPDropped, DHCPErrors uint64
	// TFTP transfers served, failed and refused (Busy of them for
	// [netboot]tftp_max_transfers), and the bytes of the files served.
	TFTPServed, TFTPFailed, TFTPRefused, TFTPBusy, TFTPBytes uint64
	// HTTP boot files served and refused, and their bytes.
	HTTPServed, HTTPRefused, HTTPBytes uint64
}

// WatchNetboot exposes the netboot's counters, read from stats at each
// scrape: the servers count with the atomics they already keep, so the
// request paths carry no metrics code.
func (m *Metrics) WatchNetboot(stats func() NetbootStats) {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("ferro_netboot_"+name, help, labels, nil)
	}
	m.reg.MustRegister(&netbootCollector{stats: stats,
		dhcp:      d("dhcp_replies_total", "DHCP replies the built-in server sent, by message type.", "type"),
		transfers: d("transfers_total", "Boot files served over TFTP and HTTP, by protocol and result (ok, failed, refused).", "protocol", "result"),
		bytes:     d("transferred_bytes_total", "Bytes of the boot files served, by protocol.", "protocol"),
		errors:    d("errors_total", "DHCP replies that could not be sent and TFTP transfers that failed, by protocol.", "protocol"),
		busy:      d("busy_refusals_total", "Requests refused or dropped because the server was at its limit, by protocol.", "protocol"),
	})
}

type netbootCollector struct {
	stats                                func() NetbootStats
	dhcp, transfers, bytes, errors, busy *prometheus.Desc
}

func (c *netbootCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.dhcp, c.transfers, c.bytes, c.errors, c.busy} {
		ch <- d
	}
}

func (c *netbootCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	n := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	n(c.dhcp, s.DHCPOffers, "offer")
	n(c.dhcp, s.DHCPAcks, "ack")
	n(c.dhcp, s.DHCPNaks, "nak")
	n(c.transfers, s.TFTPServed, "tftp", "ok")
	n(c.transfers, s.TFTPFailed, "tftp", "failed")
	n(c.transfers, s.TFTPRefused, "tftp", "refused")
	n(c.transfers, s.HTTPServed, "http", "ok")
	n(c.transfers, s.HTTPRefused, "http", "refused")
	n(c.bytes, s.TFTPBytes, "tftp")
	n(c.bytes, s.HTTPBytes, "http")
	n(c.errors, s.DHCPErrors, "dhcp")
	n(c.errors, s.TFTPFailed, "tftp")
	n(c.busy, s.DHCPDropped, "dhcp")
	n(c.busy, s.TFTPBusy, "tftp")
}
