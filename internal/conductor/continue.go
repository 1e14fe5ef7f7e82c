package conductor

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/inspect"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/states"
	"github.com/ferrometal/ferro/internal/store"
)

// Errors of ContinueInspection the API answers in Ironic's words.
var (
	// ErrLookupFailed is every way a report fails to find its node (no
	// match, a conflict, a node in another state, a wrong callback
	// token): one generic 404, so that nothing is disclosed.
	ErrLookupFailed = errors.New("Resource could not be found.")
	// ErrNoLookupInfo: the report has no MAC, no BMC address and no node UUID (400).
	ErrNoLookupInfo = errors.New("No lookup information provided")
)

// Discovery is [auto_discovery]: what a machine no node matches becomes
// when its report arrives.
type Discovery struct {
	// Enabled enrolls such machines; off, their reports get the generic 404.
	Enabled bool
	// Driver is the new node's hardware type; its default inspect
	// interface must be agent (cmd/ferro checks at start).
	Driver string
	// InspectionScope, when set, becomes the new node's
	// properties.inspection_scope.
	InspectionScope string
	// ResourceClass and ConductorGroup are [DEFAULT]default_resource_class
	// and default_conductor_group.
	ResourceClass, ConductorGroup string
}

// AutoDiscoveredKey is plugin_data's flag on a node discovery enrolled
// (Ironic's, for compatibility with ironic-inspector).
const AutoDiscoveredKey = "auto_discovered"

// InspectionReport is an agent's report to POST /v1/continue_inspection,
// decoded and checked against Ironic's schema by the API.
type InspectionReport struct {
	Report *inspection.Report
	// MACs are the inventory's valid MAC addresses, normalised;
	// BMCAddresses its bmc_address and bmc_v6address that are set.
	MACs, BMCAddresses []string
	// NodeUUID is ?node_uuid= (API ≥ 1.84), "" for none.
	NodeUUID string
	// Token is ferro's callback token as presented (X-Ferro-Inspection-Token
	// or the report's inspection_token), "" for none.
	Token string
	// AgentToken asks for Ironic's agent token with the answer (API ≥
	// 1.84: get_node_with_token).
	AgentToken bool
	// Done is called once the report has been processed (its share of the
	// memory budget); only when ContinueInspection returned nil.
	Done func()
}

// Accepted is what the API answers a report with.
type Accepted struct {
	// Node is the node as the report found it (enrolled, for discovery),
	// with AgentToken set in its driver_internal_info when asked for.
	Node *baremetal.Node
	// AgentToken is the token handed out, "******" when the node had one
	// already (Ironic's answer then), "" when none was asked for.
	AgentToken string
}

// ContinueInspection is Ironic's continue_inspection for the agent
// interface, pushed: it finds the report's node (or, with discovery,
// enrolls one), takes its lock, checks that it waits for a report
// (inspect wait), moves it to inspecting and processes the report on a
// worker, which ends the inspection: manageable, or inspect failed with
// the reason, or — a discovered node — enroll. It returns once the worker
// has the report. Whichever process receives the report does this under
// the node's lock; there is no RPC.
func (c *Conductor) ContinueInspection(ctx context.Context, r InspectionReport) (*Accepted, error) {
	if len(r.MACs) == 0 && len(r.BMCAddresses) == 0 && r.NodeUUID == "" {
		return nil, ErrNoLookupInfo
	}
	discovered := false
	n, err := c.lookupReport(ctx, r)
	if errors.Is(err, errNoMatch) && c.o.Discovery.Enabled {
		n, err = c.enroll(ctx, r)
		discovered = err == nil
	}
	if err != nil {
		return nil, err
	}
	t, err := c.acquireRetrying(ctx, n.UUID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, ErrLookupFailed
		}
		return nil, err
	}
	fail := func(err error) (*Accepted, error) {
		c.release(t)
		return nil, err
	}
	want := states.InspectWait
	if discovered {
		want = states.Enroll
	}
	if t.Node.ProvisionState != want {
		t.Log.Error("refusing to process inspection data for a node in this state", "state", t.Node.ProvisionState)
		return fail(ErrLookupFailed)
	}
	if hash, _ := t.Node.DriverInternalInfo[inspect.TokenHashKey].(string); hash != "" && !inspect.TokenMatches(hash, r.Token) {
		t.Log.Warn("report refused: the callback token issued to the node's ferro-agent is missing or wrong")
		return fail(ErrLookupFailed)
	}
	cont, ok := t.Driver.Inspect.(driver.Continuer)
	if !ok {
		t.Log.Error("the node's inspect interface does not process reports posted to /v1/continue_inspection", "inspect_interface", t.Node.Interface("inspect"))
		return fail(ErrLookupFailed)
	}
	if err := c.takeWorker(); err != nil {
		return fail(err)
	}
	acc := &Accepted{}
	if r.AgentToken {
		acc.AgentToken = addAgentToken(t.Node)
	}
	if discovered {
		err = t.SaveNode(ctx) // still enroll, still locked
	} else {
		err = c.transition(ctx, t, states.EventResume, "")
	}
	if err != nil {
		c.giveBackWorker()
		return fail(err)
	}
	acc.Node = cloneForAnswer(t.Node, acc.AgentToken)
	extra := map[string]any(nil)
	if discovered {
		extra = map[string]any{AutoDiscoveredKey: true}
	}
	c.run(t, func(ctx context.Context, t *driver.Task) {
		defer func() {
			if r.Done != nil {
				r.Done()
			}
		}()
		c.processReport(ctx, t, cont, r.Report, extra, discovered)
	})
	return acc, nil
}

// processReport is the worker of ContinueInspection.
func (c *Conductor) processReport(ctx context.Context, t *driver.Task, cont driver.Continuer, rep *inspection.Report, extra map[string]any, discovered bool) {
	ctx = context.WithoutCancel(ctx)
	err := cont.ContinueInspection(ctx, t, rep, extra)
	if discovered {
		// A discovered node stays in enroll, inspected or not (Ironic).
		if err != nil {
			t.Node.LastError = "Failed to finish inspection: " + err.Error()
			c.history(ctx, t.Node, "inspect", t.Node.LastError, baremetal.SeverityError)
		}
		if serr := c.save(ctx, t); serr != nil {
			t.Log.Error("cannot save the discovered node", "error", serr)
		}
		t.Log.Info("auto-discovery of the node finished", "error", err)
		return
	}
	now := c.now().UTC()
	t.Node.InspectionFinishedAt = &now
	if err != nil {
		c.failNode(ctx, t, "inspect", "Failed to finish inspection: "+err.Error())
		return
	}
	// Under the node's lock: the next inspection cannot store its
	// inventory before this one was compared.
	c.recordHardwareChanges(ctx, t.Node)
	c.cacheFirmware(ctx, t)
	if err := c.transition(ctx, t, states.EventDone, ""); err != nil {
		t.Log.Error("cannot finish inspection", "error", err)
	}
}

// errNoMatch is a lookup that found no node at all (Ironic's
// AutoEnrollPossible): the generic 404, or discovery.
var errNoMatch = fmt.Errorf("%w (no node matches)", ErrLookupFailed)

// lookupReport finds the node a report belongs to, as Ironic's
// lookup_node: by UUID if given, then by the ports' MACs (one node only,
// the UUID's if given), which must be in inspect wait, then by the BMC
// addresses cached on the nodes in inspect wait (which must agree with
// the node found so far, or name one node if none was). Every failure is
// ErrLookupFailed, logged with its reason.
func (c *Conductor) lookupReport(ctx context.Context, r InspectionReport) (*baremetal.Node, error) {
	var node *baremetal.Node
	if r.NodeUUID != "" {
		n, err := c.store.GetNode(ctx, r.NodeUUID)
		if errors.Is(err, store.ErrNotFound) {
			c.log.Error("inspection lookup: no node with the given UUID", "node", r.NodeUUID)
			return nil, ErrLookupFailed
		}
		if err != nil {
			return nil, err
		}
		node = n
	}
	if len(r.MACs) > 0 {
		ports, err := c.store.ListPorts(ctx, store.PortFilter{Addresses: r.MACs})
		if err != nil {
			return nil, err
		}
		var owners []string
		for _, p := range ports {
			if !slices.Contains(owners, p.NodeUUID) {
				owners = append(owners, p.NodeUUID)
			}
		}
		switch {
		case len(owners) > 1:
			c.log.Error("conflict on inspection lookup: several nodes match the MAC addresses", "macs", r.MACs, "nodes", owners)
			return nil, ErrLookupFailed
		case len(owners) == 1:
			if node != nil && node.UUID != owners[0] {
				c.log.Error("conflict on inspection lookup: the MAC addresses belong to another node than the given UUID",
					"node", node.UUID, "other_node", owners[0], "macs", r.MACs)
				return nil, ErrLookupFailed
			}
			n, err := c.store.GetNode(ctx, owners[0])
			if err != nil {
				if errors.Is(err, store.ErrNotFound) {
					return nil, ErrLookupFailed
				}
				return nil, err
			}
			node = n
		}
	}
	// A node still in inspecting may be the one whose start is moving it
	// to inspect wait right now (a fast agent): it is checked again under
	// its lock, which that start holds until then.
	if node != nil && node.ProvisionState != states.InspectWait && node.ProvisionState != states.Inspecting {
		c.log.Error("inspection lookup found a node that is not waiting for inspection", "node", node.UUID, "state", node.ProvisionState, "macs", r.MACs)
		return nil, ErrLookupFailed
	}
	// The BMC addresses can only contradict a node found by MAC whose own
	// cached addresses have none of them (Ironic's conflict: other nodes
	// match, this one does not); when it has one there is nothing to list.
	if len(r.BMCAddresses) > 0 && (node == nil || !slices.ContainsFunc(inspect.CachedLookupAddresses(node),
		func(a string) bool { return slices.Contains(r.BMCAddresses, a) })) {
		waiting, err := c.store.ListNodes(ctx, store.NodeFilter{ProvisionState: []string{states.InspectWait}})
		if err != nil {
			return nil, err
		}
		var byBMC []*baremetal.Node
		for _, n := range waiting {
			if slices.ContainsFunc(inspect.CachedLookupAddresses(n), func(a string) bool { return slices.Contains(r.BMCAddresses, a) }) {
				byBMC = append(byBMC, n)
			}
		}
		switch {
		case node != nil && len(byBMC) > 0 && !slices.ContainsFunc(byBMC, func(n *baremetal.Node) bool { return n.UUID == node.UUID }):
			c.log.Error("conflict on inspection lookup: the MAC addresses and the BMC addresses name different nodes",
				"node", node.UUID, "bmc", r.BMCAddresses)
			return nil, ErrLookupFailed
		case node == nil && len(byBMC) > 1:
			c.log.Error("several nodes match the BMC addresses, none the MAC addresses: ports must be created", "bmc", r.BMCAddresses)
			return nil, ErrLookupFailed
		case node == nil && len(byBMC) == 1:
			node = byBMC[0]
		}
	}
	if node == nil {
		c.log.Error("no node matches the report's MAC and BMC addresses", "macs", r.MACs, "bmc", r.BMCAddresses)
		return nil, errNoMatch
	}
	return node, nil
}

// enroll creates the node of a machine discovery found: the configured
// driver with its default interfaces, in enroll.
func (c *Conductor) enroll(ctx context.Context, r InspectionReport) (*baremetal.Node, error) {
	d := c.o.Discovery
	ifaces, err := c.reg.DefaultInterfaces(d.Driver)
	if err != nil {
		c.log.Error("cannot enroll a discovered machine", "driver", d.Driver, "error", err)
		return nil, ErrLookupFailed
	}
	now := c.now().UTC()
	n := &baremetal.Node{
		UUID: uuid.NewString(), Driver: d.Driver, Interfaces: ifaces, ProvisionState: states.Enroll,
		ResourceClass: d.ResourceClass, ConductorGroup: d.ConductorGroup, CreatedAt: now,
		Properties: baremetal.JSON{}, DriverInfo: baremetal.JSON{}, DriverInternalInfo: baremetal.JSON{},
		InstanceInfo: baremetal.JSON{}, Extra: baremetal.JSON{},
	}
	if d.InspectionScope != "" {
		n.Properties["inspection_scope"] = d.InspectionScope
	}
	if err := c.store.CreateNode(ctx, n); err != nil {
		c.log.Error("cannot enroll a discovered machine", "error", err)
		return nil, ErrLookupFailed
	}
	c.log.Info("enrolling the newly discovered node", "node", n.UUID, "driver", n.Driver, "macs", r.MACs, "bmc", r.BMCAddresses)
	c.history(ctx, n, "discovery", fmt.Sprintf("enrolled by auto-discovery (MAC addresses %v, BMC addresses %v)", r.MACs, r.BMCAddresses), baremetal.SeverityInfo)
	return n, nil
}

// acquireRetrying takes a node's lock, retrying for about 2.5 s while
// another task holds it: the task moving the node to inspect wait may
// still hold it when a fast agent reports. After that the caller answers
// 409, which the agent retries.
func (c *Conductor) acquireRetrying(ctx context.Context, ident string) (*driver.Task, error) {
	delay := 5 * time.Millisecond
	for {
		t, err := c.acquire(ctx, ident)
		if err == nil || !errors.Is(err, ErrNodeLocked) || delay > 2*time.Second {
			return t, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(delay):
			delay *= 2
		}
	}
}

// agentTokenMask is what Ironic answers when the node has a token already.
const agentTokenMask = "******"

// addAgentToken gives the node Ironic's agent token (add_secret_token)
// unless it has one, and returns the token to hand out.
func addAgentToken(n *baremetal.Node) string {
	if v, ok := n.DriverInternalInfo[inspect.AgentTokenKey]; ok && v != nil {
		return agentTokenMask
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	token := base64.RawURLEncoding.EncodeToString(b)
	n.DriverInternalInfo[inspect.AgentTokenKey] = token
	delete(n.DriverInternalInfo, "agent_secret_token_pregenerated")
	return token
}

// cloneForAnswer copies what the lookup answer shows of the node
// (uuid, properties, instance_info, driver_internal_info, and the
// management interface its config depends on), so that the
// worker may change the task's node meanwhile.
func cloneForAnswer(n *baremetal.Node, token string) *baremetal.Node {
	out := &baremetal.Node{UUID: n.UUID, Properties: cloneJSON(n.Properties), InstanceInfo: cloneJSON(n.InstanceInfo),
		DriverInternalInfo: cloneJSON(n.DriverInternalInfo), Interfaces: map[string]string{"management": n.Interface("management")}}
	if token != "" {
		out.DriverInternalInfo[inspect.AgentTokenKey] = token
	}
	return out
}

func cloneJSON(m baremetal.JSON) baremetal.JSON {
	out := make(baremetal.JSON, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
