package neutron

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ferrometal/ferro/internal/dhcpopt"
)

type fakePorts struct {
	ports   map[string]Port
	getErr  map[string]error
	updErr  map[string]error
	updates map[string][]dhcpopt.Option
}

func (f *fakePorts) GetPort(_ context.Context, id string) (Port, error) {
	if err := f.getErr[id]; err != nil {
		return Port{}, err
	}
	p, ok := f.ports[id]
	if !ok {
		return Port{}, ErrNotFound
	}
	return p, nil
}

func (f *fakePorts) UpdatePort(_ context.Context, id string, u PortUpdate) (Port, error) {
	if err := f.updErr[id]; err != nil {
		return Port{}, err
	}
	if f.updates == nil {
		f.updates = map[string][]dhcpopt.Option{}
	}
	f.updates[id] = u.ExtraDHCPOpts
	return f.ports[id], nil
}

var bootOpts = []dhcpopt.Option{
	{Name: "tag:!ipxe,67", Value: "undionly.kpxe", IPVersion: 4},
	{Name: "tag:ipxe,67", Value: "http://10.0.0.1:8080/boot.ipxe", IPVersion: 4},
	{Name: "66", Value: "10.0.0.1"}, // no version: IPv4
	{Name: "59", Value: "http://[fd00::1]:8080/boot.ipxe", IPVersion: 6},
}

func TestFilterDHCPOptions_KeepsThePortsIPVersions(t *testing.T) {
	v4 := []dhcpopt.Option{bootOpts[0], bootOpts[1], bootOpts[2]}
	v6 := []dhcpopt.Option{bootOpts[3]}
	for _, tc := range []struct {
		name string
		ips  []FixedIP
		want []dhcpopt.Option
	}{
		{"IPv4", []FixedIP{{IPAddress: "10.0.0.5"}}, v4},
		{"IPv6", []FixedIP{{IPAddress: "fd00::5"}}, v6},
		{"DualStack", []FixedIP{{IPAddress: "fd00::5"}, {IPAddress: "10.0.0.5"}}, bootOpts},
		{"NoAddressMeansIPv4", nil, v4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := FilterDHCPOptions(bootOpts, Port{FixedIPs: tc.ips})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func vifs(ids ...string) []VIF {
	var out []VIF
	for i, id := range ids {
		out = append(out, VIF{Port: string(rune('a' + i)), ID: id})
	}
	return out
}

func TestUpdateDHCPOptions_SetsOptionsOnEachVIF(t *testing.T) {
	f := &fakePorts{ports: map[string]Port{
		"vif-4": {ID: "vif-4", FixedIPs: []FixedIP{{IPAddress: "10.0.0.5"}}},
		"vif-6": {ID: "vif-6", FixedIPs: []FixedIP{{IPAddress: "fd00::6"}}},
	}}
	if err := NewDHCPProvider(f, 0).UpdateDHCPOptions(context.Background(), "node-1", vifs("vif-4", "vif-6"), bootOpts, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string][]dhcpopt.Option{"vif-4": bootOpts[:3], "vif-6": bootOpts[3:]}
	if diff := cmp.Diff(want, f.updates); diff != "" {
		t.Errorf("updates (-want +got):\n%s", diff)
	}
}

func TestUpdateDHCPOptions_Failures(t *testing.T) {
	ports := map[string]Port{"vif-1": {ID: "vif-1"}, "vif-2": {ID: "vif-2"}}
	boom := errors.New("HTTP 500")
	for _, tc := range []struct {
		name    string
		vifs    []string
		getErr  map[string]error
		updErr  map[string]error
		wantErr bool
	}{
		{name: "NoVIF", wantErr: true},
		{name: "SomeFail", vifs: []string{"vif-1", "vif-2"}, updErr: map[string]error{"vif-1": boom}},
		{name: "AllFail", vifs: []string{"vif-1", "vif-2"}, updErr: map[string]error{"vif-1": boom, "vif-2": boom}, wantErr: true},
		{name: "PortGone", vifs: []string{"vif-gone"}, wantErr: true},
		{name: "GetFails", vifs: []string{"vif-1"}, getErr: map[string]error{"vif-1": boom}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakePorts{ports: ports, getErr: tc.getErr, updErr: tc.updErr}
			err := NewDHCPProvider(f, 0).UpdateDHCPOptions(context.Background(), "node-1", vifs(tc.vifs...), bootOpts, nil)
			if (err != nil) != tc.wantErr {
				t.Errorf("UpdateDHCPOptions = %v, want error: %v", err, tc.wantErr)
			}
		})
	}
}

func TestUpdateDHCPOptions_WaitsPortSetupDelay(t *testing.T) {
	f := &fakePorts{ports: map[string]Port{"vif-1": {ID: "vif-1"}}}
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := NewDHCPProvider(f, 15*time.Second).UpdateDHCPOptions(context.Background(), "node-1", vifs("vif-1"), bootOpts, nil); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 15*time.Second {
			t.Errorf("waited %v, want port_setup_delay 15s", waited)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		err := NewDHCPProvider(f, time.Minute).UpdateDHCPOptions(ctx, "node-1", vifs("vif-1"), bootOpts, nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("UpdateDHCPOptions = %v, want the context's error", err)
		}
		if waited := time.Since(start); waited != 2*time.Second {
			t.Errorf("waited %v, want to stop with the context after 2s", waited)
		}
	})
}
