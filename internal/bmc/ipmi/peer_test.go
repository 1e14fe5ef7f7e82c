package ipmi_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/bmc/ipmi"
	"github.com/ferrometal/ferro/internal/testing/ipmisim"
)

// relay stands between the client and ipmi_sim: it forwards the client's
// packets to the simulator and sends the simulator's answers back from its
// own address, or, with fromElsewhere, from another port of the host.
func relay(t *testing.T, sim *ipmisim.Sim, fromElsewhere bool) (port int, forwarded *atomic.Int32) {
	front, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	other, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	back, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.ParseIP(sim.Address), Port: sim.Port})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { front.Close(); other.Close(); back.Close() })
	forwarded = &atomic.Int32{}
	var client atomic.Pointer[net.UDPAddr]
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := front.ReadFromUDP(buf)
			if err != nil {
				return
			}
			client.Store(from)
			back.Write(buf[:n])
		}
	}()
	go func() {
		buf := make([]byte, 2048)
		for {
			n, err := back.Read(buf)
			if err != nil {
				return
			}
			to := client.Load()
			if to == nil {
				continue
			}
			out := front
			if fromElsewhere {
				out = other
			}
			out.WriteToUDP(buf[:n], to)
			forwarded.Add(1)
		}
	}()
	return front.LocalAddr().(*net.UDPAddr).Port, forwarded
}

// The client accepts answers only from the BMC's address and port: go-ipmi
// uses a connected UDP socket, so the kernel drops datagrams from anyone
// else. An answer sent from another port of the same host, with the right
// bytes in it, is never read.
func TestPeerAddress_AnswersFromElsewhereAreIgnored(t *testing.T) {
	sim := ipmisim.Start(t)
	for _, elsewhere := range []bool{false, true} {
		port, forwarded := relay(t, sim, elsewhere)
		c := newClient(t, ipmi.Options{CommandRetryTimeout: 2 * time.Second, MinCommandInterval: 50 * time.Millisecond,
			ExchangeTimeout: 300 * time.Millisecond})
		tg := target(sim, ipmi.Protocol20, 3)
		tg.Port = port
		cctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		_, err := c.PowerStatus(cctx, tg)
		cancel()
		switch {
		case !elsewhere && err != nil:
			t.Fatalf("through a relay answering from the BMC's port: %v", err)
		case elsewhere && err == nil:
			t.Fatalf("the client accepted answers sent from another port")
		case elsewhere && forwarded.Load() == 0:
			t.Fatalf("the relay sent no answer from elsewhere: the test proves nothing")
		}
	}
}
