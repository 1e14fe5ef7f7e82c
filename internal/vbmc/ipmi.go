package vbmc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/bougou/go-ipmi/pkg/bmc"
	"github.com/bougou/go-ipmi/pkg/hal"
	"github.com/bougou/go-ipmi/pkg/server"
	"github.com/bougou/go-ipmi/pkg/transport/udp"
	"github.com/bougou/go-ipmi/pkg/types"
	"github.com/google/uuid"
)

// ipmiCipherSuites are the RMCP+ cipher suites each BMC offers: 3
// (HMAC-SHA1, AES-CBC-128; ipmitool's and Ironic's usual) and 17
// (HMAC-SHA256, AES-CBC-128).
var ipmiCipherSuites = []types.CipherSuiteID{types.CipherSuiteID3, types.CipherSuiteID17}

// ipmiEndpoint is one machine's IPMI server: go-ipmi's RMCP+ and v1.5 LAN
// stack on its own UDP socket, its chassis backed by the Machine.
type ipmiEndpoint struct {
	machine *Machine
	conn    *udp.Conn
	srv     *server.Server
}

// listenIPMI binds the machine's IPMI socket and builds its server.
func listenIPMI(m *Machine, username, password string, log *slog.Logger) (*ipmiEndpoint, error) {
	conn, err := udp.Listen(m.Config.IPMIListen)
	if err != nil {
		return nil, fmt.Errorf("ipmi of %s: %w", m.Name(), err)
	}
	info := bmc.DeviceInfo{
		DeviceID:       0x20,
		DeviceRevision: 1,
		FirmwareMajor:  1,
		FirmwareMinor:  0,
		IPMIVersion:    0x20,
		ManufacturerID: m.Config.IPMIManufacturerID, // 0: unknown
		ProductID:      0x0001,
	}
	var guid [16]byte
	if u, err := uuid.Parse(m.UUID); err == nil {
		guid = u
	}
	b := bmc.New(info, guid, &machineHAL{chassis: &ipmiChassis{m: m, log: log}},
		bmc.WithCipherSuites(ipmiCipherSuites))
	user, err := b.Users.Add(2, username)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("ipmi of %s: add user: %w", m.Name(), err)
	}
	user.SetPassword([]byte(password))
	user.Enabled = true
	user.ChannelAccess[1] = bmc.UserChannelAccess{MaxPrivilege: bmc.PrivilegeLevelAdministrator, Enabled: true}
	return &ipmiEndpoint{machine: m, conn: conn, srv: server.NewServer(b, newLimitedConn(conn, m.latency()))}, nil
}

// Addr is the bound UDP address.
func (e *ipmiEndpoint) Addr() *net.UDPAddr { return e.conn.LocalAddr().(*net.UDPAddr) }

// machineHAL is a BMC with a chassis and nothing else (no sensors, FRU,
// console).
type machineHAL struct{ chassis *ipmiChassis }

func (h *machineHAL) Chassis() hal.ChassisHAL { return h.chassis }
func (h *machineHAL) Sensors() hal.SensorHAL  { return nil }
func (h *machineHAL) Storage() hal.StorageHAL { return nil }
func (h *machineHAL) Network() hal.NetworkHAL { return nil }
func (h *machineHAL) GPIO() hal.GPIOHAL       { return nil }
func (h *machineHAL) I2C() hal.I2CHAL         { return nil }
func (h *machineHAL) Console() hal.ConsoleHAL { return nil }
func (h *machineHAL) Close() error            { return nil }

// ipmiChassis maps Chassis Control and the boot flags onto the Machine.
// go-ipmi dispatches "power soft" as WarmReset and "power reset" as
// ColdReset.
type ipmiChassis struct {
	m   *Machine
	log *slog.Logger

	mu  sync.Mutex
	ack *types.BootOptionParam_BootInfoAcknowledge
}

func (c *ipmiChassis) logged(op string, err error) error {
	c.m.record("ipmi", "chassis control "+op, 0)
	if err != nil {
		c.log.Warn("ipmi chassis control failed", "machine", c.m.Name(), "op", op, "error", err)
	} else {
		c.log.Debug("ipmi chassis control", "machine", c.m.Name(), "op", op)
	}
	return err
}

func (c *ipmiChassis) PowerState(ctx context.Context) (bool, error) {
	c.m.record("ipmi", "get chassis status", 0)
	return c.m.PowerState(ctx)
}

func (c *ipmiChassis) SetPower(ctx context.Context, on bool) error {
	if on {
		return c.logged("on", c.m.PowerOn(ctx))
	}
	return c.logged("off", c.m.PowerOff(ctx))
}

func (c *ipmiChassis) PowerCycle(ctx context.Context) error {
	return c.logged("cycle", c.m.PowerCycle(ctx))
}

func (c *ipmiChassis) ColdReset(ctx context.Context) error {
	return c.logged("reset", c.m.Reset(ctx))
}

func (c *ipmiChassis) WarmReset(ctx context.Context) error {
	return c.logged("soft", c.m.Shutdown(ctx))
}

func (c *ipmiChassis) Identify(context.Context, uint8) error { return nil }

func (c *ipmiChassis) IntrusionState(context.Context) (bool, error) {
	return false, hal.ErrNotSupported
}

// SetBootFlags takes parameter 5 as ipmitool's `chassis bootdev` and Ironic
// send it: valid bit, persistent bit, EFI bit and the device selector.
func (c *ipmiChassis) SetBootFlags(_ context.Context, f *types.BootOptionParam_BootFlags) error {
	c.m.record("ipmi", "set boot flags", 0)
	b := BootOverride{Target: BootNone, Enabled: BootDisabled, Mode: BootLegacy}
	if f.BIOSBootType == types.BIOSBootTypeEFI {
		b.Mode = BootUEFI
	}
	if f.BootFlagsValid {
		switch f.BootDeviceSelector {
		case types.BootDeviceSelectorNoOverride:
			b.Target = BootNone
		case types.BootDeviceSelectorForcePXE:
			b.Target = BootPxe
		case types.BootDeviceSelectorForceHardDrive, types.BootDeviceSelectorForceHardDriveSafe:
			b.Target = BootHdd
		case types.BootDeviceSelectorForceCDROM, types.BootDeviceSelectorForceRemoteCDROM:
			b.Target = BootCd
		case types.BootDeviceSelectorForceBIOSSetup:
			b.Target = BootBiosSetup
		default:
			return fmt.Errorf("boot device selector %#x: %w", uint8(f.BootDeviceSelector), hal.ErrNotSupported)
		}
		b.Enabled = BootOnce
		if f.Persist {
			b.Enabled = BootContinuous
		}
	}
	c.m.SetBoot(b)
	c.log.Debug("ipmi boot flags", "machine", c.m.Name(), "target", b.Target, "enabled", b.Enabled, "mode", b.Mode)
	return nil
}

// GetBootFlags reads the override back; a one-time override already used
// reads as not valid.
func (c *ipmiChassis) GetBootFlags(context.Context) (*types.BootOptionParam_BootFlags, error) {
	c.m.record("ipmi", "get boot flags", 0)
	b := c.m.Boot()
	f := &types.BootOptionParam_BootFlags{
		BootFlagsValid: b.Enabled != BootDisabled,
		Persist:        b.Enabled == BootContinuous,
		BIOSBootType:   b.Mode == BootUEFI,
	}
	switch b.Target {
	case BootPxe:
		f.BootDeviceSelector = types.BootDeviceSelectorForcePXE
	case BootHdd:
		f.BootDeviceSelector = types.BootDeviceSelectorForceHardDrive
	case BootCd:
		f.BootDeviceSelector = types.BootDeviceSelectorForceCDROM
	case BootBiosSetup:
		f.BootDeviceSelector = types.BootDeviceSelectorForceBIOSSetup
	default:
		f.BootDeviceSelector = types.BootDeviceSelectorNoOverride
	}
	return f, nil
}

func (c *ipmiChassis) SetBootInfoAcknowledge(_ context.Context, ack *types.BootOptionParam_BootInfoAcknowledge) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp := *ack
	c.ack = &cp
	return nil
}

func (c *ipmiChassis) GetBootInfoAcknowledge(context.Context) (*types.BootOptionParam_BootInfoAcknowledge, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ack == nil {
		return nil, hal.ErrNotSupported
	}
	cp := *c.ack
	return &cp, nil
}

// serve runs the endpoint until ctx ends.
func (e *ipmiEndpoint) serve(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		e.srv.Close()
	}()
	if err := e.srv.Serve(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("ipmi of %s: %w", e.machine.Name(), err)
	}
	return nil
}

// Packet budget of one IPMI endpoint. go-ipmi's server handles each packet
// in its own goroutine; dropping what exceeds the budget bounds the
// goroutines (and memory) a flood can pin. ipmitool sends a few packets per
// command, so the budget is far above any client's need.
const (
	ipmiPacketsPerSecond = 2000
	ipmiPacketBurst      = 200
)

// limitedConn drops packets beyond a token bucket, as a busy BMC would.
// With a latency (Faults.LatencyMS) every reply leaves that much later.
type limitedConn struct {
	*udp.Conn
	tokens  float64
	last    time.Time
	latency time.Duration
}

func newLimitedConn(c *udp.Conn, latency time.Duration) *limitedConn {
	return &limitedConn{Conn: c, tokens: ipmiPacketBurst, last: time.Now(), latency: latency}
}

// WriteTo sends a reply after the latency. go-ipmi answers each packet in
// its own goroutine, so a slow reply holds up no other.
func (c *limitedConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	if c.latency > 0 {
		time.Sleep(c.latency)
	}
	return c.Conn.WriteTo(b, addr)
}

// ReadFrom returns the next packet within budget. Only the server's one
// read loop calls it, so the bucket needs no lock.
func (c *limitedConn) ReadFrom(buf []byte) (int, net.Addr, error) {
	for {
		n, addr, err := c.Conn.ReadFrom(buf)
		if err != nil {
			return n, addr, err
		}
		now := time.Now()
		c.tokens = min(ipmiPacketBurst, c.tokens+now.Sub(c.last).Seconds()*ipmiPacketsPerSecond)
		c.last = now
		if c.tokens >= 1 {
			c.tokens--
			return n, addr, nil
		}
	}
}
