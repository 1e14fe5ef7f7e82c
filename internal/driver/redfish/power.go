package redfish

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	bmc "github.com/ferrometal/ferro/internal/bmc/redfish"
	"github.com/ferrometal/ferro/internal/driver"
)

// Power targets beyond baremetal's, named as Ironic's.
const (
	PowerSoftOff    = "soft power off"
	PowerSoftReboot = "soft rebooting"
)

// Power is the redfish power interface: ComputerSystem.Reset with a reset
// type the System advertises, confirmed by polling PowerState.
type Power struct{ o Options }

// NewPower returns the interface.
func NewPower(o Options) *Power {
	o.defaults()
	return &Power{o: o}
}

// Validate checks driver_info; it does not reach the BMC.
func (p *Power) Validate(_ context.Context, t *driver.Task) error {
	_, err := Endpoint(t, p.o.AuthType)
	return err
}

// powerStates maps Redfish PowerState onto Ironic's, as Ironic's redfish power.
func powerState(s string) string {
	switch s {
	case "On", "PoweringOn":
		return baremetal.PowerOn
	case "Off", "PoweringOff":
		return baremetal.PowerOff
	}
	return baremetal.PowerError
}

// PowerState reads the System's PowerState.
func (p *Power) PowerState(ctx context.Context, t *driver.Task) (string, error) {
	ep, err := Endpoint(t, p.o.AuthType)
	if err != nil {
		return "", err
	}
	info, err := p.o.Client.System(ctx, ep)
	if err != nil {
		return "", err
	}
	return powerState(info.PowerState), nil
}

// resetFor picks the reset type for a target from those the System
// advertises (all, when it advertises none), in order of preference.
func resetFor(target string, current string, advertised []string) (reset, want string, err error) {
	var prefs []string
	switch target {
	case baremetal.PowerOn:
		prefs, want = []string{"On", "ForceOn"}, baremetal.PowerOn
	case baremetal.PowerOff:
		prefs, want = []string{"ForceOff", "GracefulShutdown"}, baremetal.PowerOff
	case PowerSoftOff:
		prefs, want = []string{"GracefulShutdown"}, baremetal.PowerOff
	case baremetal.PowerReboot:
		if current == baremetal.PowerOff {
			prefs = []string{"On", "ForceOn"}
		} else {
			prefs = []string{"ForceRestart", "PowerCycle", "GracefulRestart"}
		}
		want = baremetal.PowerOn
	case PowerSoftReboot:
		prefs, want = []string{"GracefulRestart"}, baremetal.PowerOn
	default:
		return "", "", fmt.Errorf("%w: unknown power state %q", driver.ErrInvalidParameter, target)
	}
	if len(advertised) == 0 {
		return prefs[0], want, nil
	}
	for _, r := range prefs {
		if slices.Contains(advertised, r) {
			return r, want, nil
		}
	}
	return "", "", fmt.Errorf("%w: the System advertises reset types %v, none of which can reach %q (wanted one of %v)",
		driver.ErrUnsupported, advertised, target, prefs)
}

// SetPowerState resets the System towards state and waits up to timeout
// for PowerState to show it: some BMCs take seconds after the Reset
// returns. Switching on a System that is on, or off one that is off, does
// nothing.
func (p *Power) SetPowerState(ctx context.Context, t *driver.Task, state string, timeout time.Duration) error {
	ep, err := Endpoint(t, p.o.AuthType)
	if err != nil {
		return err
	}
	info, err := p.o.Client.System(ctx, ep)
	if err != nil {
		return err
	}
	current := powerState(info.PowerState)
	reset, want, err := resetFor(state, current, info.ResetTypes)
	if err != nil {
		return &bmc.Error{BMC: ep.Address, Step: "power " + state, Err: err}
	}
	if info.PowerState == "On" && state == baremetal.PowerOn || info.PowerState == "Off" && (state == baremetal.PowerOff || state == PowerSoftOff) {
		return nil
	}
	if err := p.o.Client.Reset(ctx, ep, reset); err != nil {
		return err
	}
	logger(t).InfoContext(ctx, "redfish reset sent", "bmc", ep.Address, "reset_type", reset, "target", state)
	if state == baremetal.PowerReboot || state == PowerSoftReboot {
		// A restart may never show Off: On again is all there is to see.
		if current == baremetal.PowerOn {
			return nil
		}
	}
	return p.waitFor(ctx, t, ep, want, timeout, "power "+state)
}

// waitFor polls PowerState until it is want or timeout passes.
func (p *Power) waitFor(ctx context.Context, t *driver.Task, ep bmc.Endpoint, want string, timeout time.Duration, step string) error {
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	wctx, cancel := waitCtx(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(p.o.PollInterval)
	defer tick.Stop()
	last := ""
	for {
		info, err := p.o.Client.System(wctx, ep)
		if err == nil {
			last = info.PowerState
			if powerState(last) == want && last != "PoweringOn" && last != "PoweringOff" {
				return nil
			}
		} else if wctx.Err() == nil && !errors.Is(err, context.Canceled) {
			logger(t).WarnContext(ctx, "cannot read the power state while waiting", "bmc", ep.Address, "error", err)
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &bmc.Error{BMC: ep.Address, Step: step, Err: fmt.Errorf("the System still reports PowerState %q after %v", last, timeout)}
		case <-tick.C:
		}
	}
}
