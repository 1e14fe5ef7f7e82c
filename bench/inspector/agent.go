package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/api/ironic"
	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/driver/inspect"
	"github.com/ferrometal/ferro/internal/driver/network"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// The agent path (-path agent): the same report posted to the bare metal
// API's /v1/continue_inspection, which the conductor processes in a
// worker with the agent inspect interface and the Ironic pipeline. The
// hooks are Ironic's counterparts of the inspector's defaults, so that
// both paths do the same work: $default_hooks plus cpus, memory,
// root-device, boot-mode, cpu-capabilities, pci-devices, parse-lldp and
// local-link-connection.
var agentHooks = []string{"ramdisk-error", "validate-interfaces", "ports", "architecture", "cpus", "memory", "root-device",
	"boot-mode", "cpu-capabilities", "pci-devices", "parse-lldp", "local-link-connection"}

// agentLab is the bare metal API and conductor with the agent interface.
type agentLab struct {
	db   store.Store
	cond *conductor.Conductor
	srv  *httptest.Server
}

func startAgentLab(db store.Store, storeData bool) (*agentLab, error) {
	types := []driver.HardwareType{fake.HardwareType}
	e := driver.EnableAll(types)
	reg := driver.NewRegistry(types, e)
	fake.Register(reg)
	reg.RegisterNetwork("noop", network.Noop{})
	po := inspection.DefaultOptions(inspection.Ironic)
	po.Hooks = agentHooks
	po.Rules = inspection.StoredRules{Store: db}
	p, err := inspection.New(po)
	if err != nil {
		return nil, err
	}
	reg.RegisterInspect("agent", inspect.NewAgent(inspect.AgentOptions{Pipeline: p, Store: db, StoreInventory: storeData,
		PowerOff: true, PowerTimeout: time.Minute, Interfaces: reg.DefaultInterfaces}))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cond := conductor.New(conductor.Options{Store: db, Registry: reg, Log: quiet, Host: "bench-agent", Workers: 100,
		PowerTimeout: time.Minute, HeartbeatTimeout: time.Minute, InspectWaitTimeout: 30 * time.Minute})
	if err := cond.Start(context.Background()); err != nil {
		return nil, err
	}
	api := ironic.New(ironic.Options{Store: db, Conductor: cond, Log: quiet, Ramdisk: ironic.RamdiskOptions{Reports: cond}})
	return &agentLab{db: db, cond: cond, srv: httptest.NewServer(api)}, nil
}

func (l *agentLab) stop() {
	l.srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l.cond.Stop(ctx)
}

// enrollAgent creates a node in inspect wait with the agent interface
// (unmanaged: fake boot) and a port of its first NIC's MAC for each body
// (made by bodies, the same as the inspector's), offset so that its MACs
// differ from the inspector lab's.
func enrollAgent(l *agentLab, count int) ([]string, error) {
	ctx := context.Background()
	ifs := map[string]string{}
	for _, k := range driver.Kinds {
		ifs[k] = "fake"
	}
	ifs["network"], ifs["inspect"] = "noop", "agent"
	var ids []string
	for n := range count {
		started := time.Now().UTC()
		node := &baremetal.Node{UUID: uuid.NewString(), Name: fmt.Sprintf("bench-agent-%04d", n), Driver: "fake-hardware",
			ProvisionState: states.InspectWait, PowerState: baremetal.PowerOn, Interfaces: ifs, DriverInfo: baremetal.JSON{},
			// What InspectHardware caches: the node's BMC address, the
			// report's bmc_address (makeBodies).
			DriverInternalInfo: baremetal.JSON{inspect.ManageBootKey: false, inspect.LookupBMCAddressesKey: []any{bmcAddress(n)}},
			Properties:         baremetal.JSON{}, Extra: baremetal.JSON{},
			InstanceInfo: baremetal.JSON{}, InspectionStartedAt: &started}
		if err := l.db.CreateNode(ctx, node); err != nil {
			return nil, err
		}
		port := &baremetal.Port{UUID: uuid.NewString(), Address: mac(n, 0), NodeUUID: node.UUID, PXEEnabled: true,
			LocalLinkConnection: baremetal.JSON{}, Extra: baremetal.JSON{}, InternalInfo: baremetal.JSON{}}
		if err := l.db.CreatePort(ctx, port); err != nil {
			return nil, err
		}
		ids = append(ids, node.UUID)
	}
	return ids, nil
}

// restartAgent puts every node back in inspect wait for another round.
func restartAgent(l *agentLab, nodes []string) error {
	ctx := context.Background()
	for i, id := range nodes {
		n, err := l.db.GetNode(ctx, id)
		if err != nil {
			return err
		}
		started := time.Now().UTC()
		n.ProvisionState, n.TargetProvisionState, n.InspectionStartedAt = states.InspectWait, states.Manageable, &started
		n.DriverInternalInfo[inspect.ManageBootKey] = false
		n.DriverInternalInfo[inspect.LookupBMCAddressesKey] = []any{bmcAddress(i)}
		if err := l.db.UpdateNode(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// waitAgent waits until every node has left inspect wait and inspecting,
// and returns, per node, how long after the first post of the round it
// reached manageable (its provision_updated_at): report → manageable.
func waitAgent(l *agentLab, nodes []string, posted map[string]time.Time, limit time.Duration) ([]time.Duration, error) {
	ctx := context.Background()
	deadline := time.Now().Add(limit)
	for {
		busy := 0
		for _, id := range nodes {
			n, err := l.db.GetNode(ctx, id)
			if err != nil {
				return nil, err
			}
			if n.ProvisionState == states.InspectWait || n.ProvisionState == states.Inspecting || n.Reservation != "" {
				busy++
			}
		}
		if busy == 0 {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d nodes still being processed after %v", busy, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var out []time.Duration
	for _, id := range nodes {
		n, err := l.db.GetNode(ctx, id)
		if err != nil {
			return nil, err
		}
		if n.ProvisionState != states.Manageable || n.ProvisionUpdatedAt == nil {
			return nil, fmt.Errorf("node %s is %q: %s", id, n.ProvisionState, n.LastError)
		}
		if t, ok := posted[id]; ok {
			out = append(out, n.ProvisionUpdatedAt.Sub(t))
		}
	}
	slices.Sort(out)
	return out, nil
}

// checkAgent makes sure the reports did their work on a sample of nodes:
// properties, the switch port and the stored inventory.
func checkAgent(l *agentLab, nodes []string, storeData bool) error {
	ctx := context.Background()
	for i, id := range nodes {
		if i%97 != 0 {
			continue
		}
		n, err := l.db.GetNode(ctx, id)
		if err != nil {
			return err
		}
		if n.Properties["cpus"] == nil || n.Properties["local_gb"] == nil {
			return fmt.Errorf("node %s properties %v", id, n.Properties)
		}
		ports, err := l.db.ListPorts(ctx, store.PortFilter{NodeUUID: id})
		if err != nil {
			return err
		}
		if len(ports) != 1 || ports[0].LocalLinkConnection["switch_id"] == nil {
			return fmt.Errorf("node %s ports %+v", id, ports)
		}
		if _, err := l.db.GetInventory(ctx, id); storeData && err != nil {
			return fmt.Errorf("node %s inventory: %w", id, err)
		}
	}
	return nil
}
