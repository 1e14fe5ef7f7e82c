package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/mdlayher/packet"
)

// lldpMulticast is the nearest-bridge group address LLDP is sent to.
var lldpMulticast = net.HardwareAddr{0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e}

// CaptureLLDP listens on each named interface for up to timeout and returns
// the TLVs of the first LLDP frame heard on each, by interface name. An
// interface that hears nothing is absent from the map; one that cannot be
// listened on is logged and reported in the joined error, the others still
// captured. It returns early once every interface has a frame.
func CaptureLLDP(ctx context.Context, log *slog.Logger, names []string, timeout time.Duration) (map[string][]inventory.TLV, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var (
		mu   sync.Mutex
		out  = map[string][]inventory.TLV{}
		errs []error
		wg   sync.WaitGroup
	)
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tlvs, err := captureOne(ctx, name)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, err)
			case tlvs != nil:
				out[name] = tlvs
				log.Debug("lldp frame", "interface", name, "tlvs", len(tlvs))
			}
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

func captureOne(ctx context.Context, name string) ([]inventory.TLV, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("lldp on %s: %w", name, err)
	}
	c, err := packet.Listen(ifi, packet.Raw, EtherTypeLLDP, nil)
	if err != nil {
		return nil, fmt.Errorf("lldp on %s: listen: %w", name, err)
	}
	defer c.Close()
	// Switches send to a link-local group most NICs filter; join it, and
	// fall back to promiscuous mode as IPA does.
	if err := c.JoinGroup(lldpMulticast); err != nil {
		if err := c.SetPromiscuous(true); err != nil {
			return nil, fmt.Errorf("lldp on %s: join %s: %w", name, lldpMulticast, err)
		}
	}
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Now()) })
	defer stop()
	if dl, ok := ctx.Deadline(); ok {
		c.SetReadDeadline(dl)
	}
	buf := make([]byte, 1600)
	for {
		n, _, err := c.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) || ctx.Err() != nil {
				return nil, nil // nothing heard in time
			}
			return nil, fmt.Errorf("lldp on %s: read: %w", name, err)
		}
		if tlvs, err := ParseLLDPFrame(buf[:n]); err == nil {
			return tlvs, nil
		}
		// a malformed frame: keep listening for a good one
	}
}
