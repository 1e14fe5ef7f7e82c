package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/bougou/go-ipmi/pkg/open"
)

// BMC is what the in-band IPMI interface says about the BMC's LAN channel.
type BMC struct {
	Address   string // IPv4; "0.0.0.0" when no channel has one, as IPA reports
	V6Address string // always "::/0" for now: the IPv6 LAN parameters are not read
	MAC       string
}

// IPMI commands (IPMI v2.0 §23.2, Get LAN Configuration Parameters) and
// the parameters read.
const (
	netFnTransport  = 0x0c
	cmdGetLANConfig = 0x02
	lanParamIP      = 3
	lanParamMAC     = 5
	ipmiTimeout     = 2 * time.Second
	// ccInvalidCommand is the completion code of a command the BMC does
	// not implement.
	ccInvalidCommand = 0xc1
)

// errInvalidCommand is the BMC's "invalid command" completion code.
var errInvalidCommand = errors.New("command not supported by the BMC")

// ReadBMC asks the local BMC over /dev/ipmi0 (OpenIPMI, go-ipmi's open
// interface) for its LAN addresses, trying channels 1–11 like IPA and
// keeping the first with an address. It returns an error wrapping
// errNotFound when the machine has no IPMI device.
func ReadBMC(ctx context.Context) (*BMC, error) {
	var b open.DeviceBackend
	if err := b.Connect(ctx, 0); err != nil {
		if _, serr := os.Stat("/dev/ipmi0"); errors.Is(serr, os.ErrNotExist) {
			return nil, fmt.Errorf("in-band IPMI: %w", errNotFound)
		}
		return nil, fmt.Errorf("open in-band IPMI: %w", err)
	}
	defer b.Close(ctx)
	bmc := &BMC{Address: "0.0.0.0", V6Address: "::/0"}
	for ch := uint8(1); ch <= 11; ch++ {
		ip, err := lanParam(ctx, &b, ch, lanParamIP, 4)
		if errors.Is(err, errInvalidCommand) {
			break // the BMC has no LAN configuration at all
		}
		if err != nil {
			continue
		}
		addr := net.IP(ip).String()
		if addr == "0.0.0.0" {
			continue
		}
		bmc.Address = addr
		if mac, err := lanParam(ctx, &b, ch, lanParamMAC, 6); err == nil {
			bmc.MAC = net.HardwareAddr(mac).String()
		}
		return bmc, nil
	}
	// A BMC without a LAN channel (or that does not implement the
	// command, like QEMU's ipmi-bmc-sim) is still a BMC: report it the
	// way IPA does, with the unset addresses.
	return bmc, nil
}

// lanParam reads one LAN configuration parameter of a channel; want is the
// least number of data bytes expected after the revision byte.
func lanParam(ctx context.Context, b *open.DeviceBackend, channel, param uint8, want int) ([]byte, error) {
	resp, err := b.Send(ctx, &open.Request{
		NetFn: netFnTransport,
		Cmd:   cmdGetLANConfig,
		Data:  []byte{channel, param, 0, 0},
	}, ipmiTimeout)
	if err != nil {
		return nil, fmt.Errorf("get LAN parameter %d of channel %d: %w", param, channel, err)
	}
	if len(resp) > 0 && resp[0] == ccInvalidCommand {
		return nil, fmt.Errorf("get LAN parameter %d of channel %d: %w", param, channel, errInvalidCommand)
	}
	if len(resp) < 1 || resp[0] != 0 {
		cc := -1
		if len(resp) > 0 {
			cc = int(resp[0])
		}
		return nil, fmt.Errorf("get LAN parameter %d of channel %d: completion code %#x", param, channel, cc)
	}
	// resp: completion code, parameter revision, data
	if len(resp) < 2+want {
		return nil, fmt.Errorf("get LAN parameter %d of channel %d: %d bytes, want %d", param, channel, len(resp)-2, want)
	}
	return resp[2 : 2+want], nil
}

// DeviceID asks the BMC for its device ID (IPMI v2.0 §20.1), which every
// BMC implements: proof the in-band interface works even when the LAN
// parameters are not.
func DeviceID(ctx context.Context) (id, fwMajor, fwMinor uint8, err error) {
	var b open.DeviceBackend
	if err := b.Connect(ctx, 0); err != nil {
		return 0, 0, 0, fmt.Errorf("open in-band IPMI: %w", err)
	}
	defer b.Close(ctx)
	resp, err := b.Send(ctx, &open.Request{NetFn: 0x06, Cmd: 0x01}, ipmiTimeout)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("get device ID: %w", err)
	}
	if len(resp) < 5 || resp[0] != 0 {
		return 0, 0, 0, fmt.Errorf("get device ID: short or failed response % x", resp)
	}
	return resp[1], resp[3] & 0x7f, resp[4], nil
}
