// Package redfish is the redfish hardware type's power, management and
// (out-of-band) inspect interfaces, thin over internal/bmc/redfish.
package redfish

import (
	"context"
	"log/slog"
	"strings"
	"time"

	bmc "github.com/ferrometal/ferro/internal/bmc/redfish"
	"github.com/ferrometal/ferro/internal/driver"
)

// Options configure the interfaces.
type Options struct {
	// Client is shared by every interface and node (its session cache is per BMC).
	Client *bmc.Client
	// AuthType is [redfish]auth_type, the default of driver_info[redfish_auth_type].
	AuthType string
	// PollInterval is how often PowerState is read while waiting for a
	// reset to show; default 1 s.
	PollInterval time.Duration
	// DefaultBootMode is [deploy]default_boot_mode, for nodes that name none.
	DefaultBootMode string
	Log             *slog.Logger
}

func (o *Options) defaults() {
	if o.Client == nil {
		o.Client = bmc.New(bmc.Options{Log: o.Log})
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.AuthType == "" {
		o.AuthType = bmc.AuthAuto
	}
	if o.DefaultBootMode == "" {
		o.DefaultBootMode = driver.BootModeUEFI
	}
}

// Endpoint parses the node's driver_info into the BMC it names
// (ParseDriverInfo).
func Endpoint(t *driver.Task, authType string) (bmc.Endpoint, error) {
	return ParseDriverInfo(t.Node.DriverInfo, authType)
}

func logger(t *driver.Task) *slog.Logger {
	if t.Log != nil {
		return t.Log
	}
	return slog.Default().With("node", t.Node.UUID)
}

// capability returns the value of name in properties.capabilities, or "".
func capability(t *driver.Task, name string) string {
	s, _ := t.Node.Properties["capabilities"].(string)
	for _, e := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(e, ":"); ok && k == name {
			return v
		}
	}
	return ""
}

// setCapability sets name:value in properties.capabilities, keeping the others in order.
func setCapability(t *driver.Task, name, value string) {
	s, _ := t.Node.Properties["capabilities"].(string)
	var parts []string
	found := false
	for _, e := range strings.Split(s, ",") {
		if e == "" {
			continue
		}
		if k, _, ok := strings.Cut(e, ":"); ok && k == name {
			e, found = name+":"+value, true
		}
		parts = append(parts, e)
	}
	if !found {
		parts = append(parts, name+":"+value)
	}
	if t.Node.Properties == nil {
		t.Node.Properties = map[string]any{}
	}
	t.Node.Properties["capabilities"] = strings.Join(parts, ",")
}

// waitCtx returns ctx bounded by timeout (when positive).
func waitCtx(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, timeout)
}
