package metrics

// Netboot returns the counters the built-in netboot feeds (netboot
// Options.Counters).
func (m *Metrics) Netboot() NetbootCounters { return NetbootCounters{m: m} }

// NetbootCounters counts the built-in DHCP, TFTP and HTTP boot servers'
// replies.
type NetbootCounters struct{ m *Metrics }

// DHCPReply counts a DHCP reply sent: "offer", "ack" or "nak".
func (c NetbootCounters) DHCPReply(msgType string) {
	switch msgType {
	case "offer", "ack", "nak":
	default:
		msgType = "other"
	}
	c.m.dhcpReplies.WithLabelValues(msgType).Inc()
}

// Transfer counts a boot file sent over protocol ("tftp", "http"), the
// bytes sent and whether it failed.
func (c NetbootCounters) Transfer(protocol string, bytes int64, err error) {
	c.m.bootTransfers.WithLabelValues(protocol, result(err)).Inc()
	if bytes > 0 {
		c.m.bootBytes.WithLabelValues(protocol).Add(float64(bytes))
	}
	if err != nil {
		c.m.bootErrors.WithLabelValues(protocol).Inc()
	}
}

// Refused counts a request refused because the server was at its limit.
func (c NetbootCounters) Refused(protocol string) {
	c.m.netbootRefusals.WithLabelValues(protocol).Inc()
}
