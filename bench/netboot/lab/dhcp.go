package lab

import (
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
)

// DHCP is many machines' DHCP client on one socket on the client end of
// the veth pair: the server broadcasts its replies, which are handed to
// the exchange waiting for their transaction id.
type DHCP struct {
	conn    *net.UDPConn
	mu      sync.Mutex
	waiting map[dhcpv4.TransactionID]chan *dhcpv4.DHCPv4
}

// ListenDHCP opens the clients' socket (port 68 on v1) in n.
func (n NS) ListenDHCP() (*DHCP, error) {
	d := &DHCP{waiting: map[dhcpv4.TransactionID]chan *dhcpv4.DHCPv4{}}
	if err := n.Do(func() error {
		c, err := server4.NewIPv4UDPConn("v1", &net.UDPAddr{Port: dhcpv4.ClientPort})
		d.conn = c
		return err
	}); err != nil {
		return nil, err
	}
	go d.read()
	return d, nil
}

func (d *DHCP) read() {
	buf := make([]byte, 1500)
	for {
		k, _, err := d.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		m, err := dhcpv4.FromBytes(buf[:k])
		if err != nil {
			continue
		}
		d.mu.Lock()
		ch := d.waiting[m.TransactionID]
		d.mu.Unlock()
		if ch != nil {
			select {
			case ch <- m:
			default:
			}
		}
	}
}

// Close closes the socket.
func (d *DHCP) Close() error { return d.conn.Close() }

// Exchange broadcasts m until a reply of type want arrives, waiting
// timeout for each of at most tries sends, and returns the reply and how
// many times m was sent again.
func (d *DHCP) Exchange(m *dhcpv4.DHCPv4, want dhcpv4.MessageType, tries int, timeout time.Duration) (*dhcpv4.DHCPv4, int, error) {
	ch := make(chan *dhcpv4.DHCPv4, 4)
	d.mu.Lock()
	d.waiting[m.TransactionID] = ch
	d.mu.Unlock()
	defer func() { d.mu.Lock(); delete(d.waiting, m.TransactionID); d.mu.Unlock() }()
	bcast := &net.UDPAddr{IP: net.IPv4bcast, Port: dhcpv4.ServerPort}
	for try := range tries {
		if _, err := d.conn.WriteTo(m.ToBytes(), bcast); err != nil {
			return nil, try, err
		}
		expire := time.After(timeout)
	wait:
		for {
			select {
			case r := <-ch:
				if r.MessageType() == want {
					return r, try, nil
				}
			case <-expire:
				break wait
			}
		}
	}
	return nil, tries - 1, fmt.Errorf("no %s for %s after %d tries", want, m.ClientHWAddr, tries)
}
