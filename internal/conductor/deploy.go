package conductor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/pyjson"
	"github.com/ferrometal/ferro/internal/store"
)

// DoNodeDeploy starts a deployment (verb active) or a rebuild with the
// user's deploy steps (deploy_steps, as the API checked them against
// Ironic's schema; nil for none), as Ironic's do_node_deploy: the steps,
// the steps of the deploy templates the node's instance traits name and
// the driver's are validated synchronously (an error changes nothing),
// then the worker runs them through the step runner.
func (c *Conductor) DoNodeDeploy(ctx context.Context, ident, verb string, steps []baremetal.DeployStep) error {
	return c.doProvisionAction(ctx, ident, verb, steps)
}

// startDeploy moves the node to deploying once its deploy steps are
// known, as Ironic's start_deploy; the worker runs them (do_node_deploy).
func (c *Conductor) startDeploy(ctx context.Context, t *driver.Task, verb string, user []baremetal.DeployStep) (func(context.Context, *driver.Task), error) {
	n := t.Node
	steps, msg, err := c.deploymentSteps(ctx, n, user)
	if err != nil {
		return nil, err
	}
	if msg != "" {
		return nil, fmt.Errorf("%w: Failed to validate deploy or power info for node %s: %s", driver.ErrInvalidParameter, n.UUID, msg)
	}
	from := n.ProvisionState
	if err := c.fireStep(deployFlow, n, verb); err != nil {
		return nil, err
	}
	n.LastError = ""
	if err := c.save(ctx, t); err != nil {
		return nil, fmt.Errorf("save node %s: %w", n.UUID, err)
	}
	c.observer.ProvisionStateChanged(n, from)
	return func(ctx context.Context, t *driver.Task) {
		n := t.Node
		deployFlow.wipe(n)
		if len(user) > 0 {
			docs := make([]any, len(user))
			for i, s := range user {
				docs[i] = userDeployStep(s)
			}
			n.DriverInternalInfo["user_"+deployFlow.stepsKey()] = docs
		}
		if len(steps) == 0 {
			c.failSteps(ctx, deployFlow, t, "No deploy steps returned by the driver")
			return
		}
		n.DeployStep = baremetal.JSON{}
		n.DriverInternalInfo[deployFlow.stepsKey()] = steps
		c.runSteps(ctx, deployFlow, t, 0)
	}, nil
}

// deploymentSteps is Ironic's _get_all_deployment_steps: the user's steps,
// then the templates' steps the user did not name, then the driver's
// enabled steps neither named; priority 0 disables a step; sorted by
// priority, then interface, the higher first. msg is the validation error.
func (c *Conductor) deploymentSteps(ctx context.Context, n *baremetal.Node, user []baremetal.DeployStep) (steps []any, msg string, err error) {
	traits, msg := instanceTraits(n)
	if msg != "" {
		return nil, msg, nil
	}
	var fromTemplates []baremetal.DeployStep
	var names []string
	for _, name := range traits {
		dt, err := c.store.GetDeployTemplate(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("deploy template %s: %w", name, err)
		}
		names = append(names, dt.Name)
		fromTemplates = append(fromTemplates, dt.Steps...)
	}
	templateSteps, errs := validateDeploySteps(n, fromTemplates)
	if errs != "" {
		return nil, "Validation of deploy steps from deploy templates matching this node's instance traits failed. Matching deploy templates: " +
			strings.Join(names, ",") + ". Errors: " + errs, nil
	}
	userSteps, errs := validateDeploySteps(n, user)
	if errs != "" {
		// Ironic's prefix has no space before the errors.
		return nil, `Validation of deploy steps from "deploy steps" argument failed.` + errs, nil
	}
	named := map[string]bool{}
	for _, s := range userSteps {
		named[s.Interface+"."+s.Step] = true
	}
	for _, s := range templateSteps {
		if !named[s.Interface+"."+s.Step] {
			userSteps = append(userSteps, s)
		}
	}
	for _, s := range userSteps {
		named[s.Interface+"."+s.Step] = true
	}
	type sorted struct {
		doc      baremetal.JSON
		priority int
		iface    string
	}
	var all []sorted
	for _, kind := range slices.SortedFunc(maps.Keys(interfacePriority), func(a, b string) int {
		return interfacePriority[b] - interfacePriority[a]
	}) {
		table := deployFlow.table[[2]string{kind, n.Interfaces[kind]}]
		for _, name := range slices.Sorted(maps.Keys(table)) {
			info := table[name]
			if info.priority == 0 || named[kind+"."+name] {
				continue
			}
			all = append(all, sorted{driverDeployStep(kind, name, info), info.priority, kind})
		}
	}
	for _, s := range userSteps {
		if s.Priority > 0 {
			all = append(all, sorted{userDeployStep(s), s.Priority, s.Interface})
		}
	}
	slices.SortStableFunc(all, func(a, b sorted) int {
		return cmp.Or(cmp.Compare(b.priority, a.priority), cmp.Compare(interfacePriority[b.iface], interfacePriority[a.iface]))
	})
	steps = make([]any, len(all))
	for i, s := range all {
		steps[i] = s.doc
	}
	return steps, "", nil
}

// validateDeploySteps is Ironic's _validate_user_steps for deploy steps,
// as start_deploy runs it (skip_missing: a step no interface offers is
// left out, waiting for an agent's steps that never come here). Reserved
// steps are kept, as ferro keeps them for cleaning and servicing.
func validateDeploySteps(n *baremetal.Node, steps []baremetal.DeployStep) ([]baremetal.DeployStep, string) {
	var errs []string
	var out []baremetal.DeployStep
	count := map[string]int{}
	for _, s := range steps {
		if isReservedStep(s.Step) {
			out = append(out, s)
			continue
		}
		info, ok := deployFlow.table[[2]string{s.Interface, n.Interfaces[s.Interface]}][s.Step]
		if !ok {
			continue
		}
		// A disabled step needs none of its required arguments.
		errs = append(errs, argErrors("deploy", stepRepr(userDeployStep(s)), info, s.Args, s.Priority > 0)...)
		// The core step may only be disabled.
		if s.Priority > 0 && s.Interface == "deploy" && s.Step == "deploy" {
			errs = append(errs, fmt.Sprintf("deploy step %s on interface %s is a core step and cannot be overridden by user steps. It may be disabled by setting the priority to 0", s.Step, s.Interface))
		}
		count[s.Interface+"."+s.Step]++
		out = append(out, s)
	}
	var dups []string
	for _, id := range slices.Sorted(maps.Keys(count)) {
		if count[id] > 1 {
			dups = append(dups, id)
		}
	}
	if len(dups) > 0 {
		errs = append(errs, "deploy steps from all deploy templates matching this node's instance traits cannot have the same interface and step. Duplicate deploy steps for "+strings.Join(dups, ", "))
	}
	return out, strings.Join(errs, "; ")
}

// instanceTraits is Ironic's validate_instance_info_traits: the
// instance_info traits, a list of strings the node has, or the error.
func instanceTraits(n *baremetal.Node) ([]string, string) {
	v := n.InstanceInfo["traits"]
	if !pyjson.Truthy(v) {
		return nil, ""
	}
	invalid := fmt.Sprintf("Error parsing traits from Node %s instance_info field. A list of strings is expected.", n.UUID)
	raw, ok := v.([]any)
	if !ok {
		return nil, invalid
	}
	traits := make([]string, 0, len(raw))
	var missing []string
	for _, r := range raw {
		s, ok := r.(string)
		if !ok {
			return nil, invalid
		}
		traits = append(traits, s)
		if !slices.Contains(n.Traits, s) && !slices.Contains(missing, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Sprintf("Cannot specify instance traits that are not also set on the node. Node %s is missing traits %s", n.UUID, strings.Join(missing, ", "))
	}
	return traits, ""
}

// userDeployStep is a user's or a template's step as Ironic stores it.
func userDeployStep(s baremetal.DeployStep) baremetal.JSON {
	args := s.Args
	if args == nil {
		args = baremetal.JSON{}
	}
	return baremetal.JSON{"interface": s.Interface, "step": s.Step, "args": args, "priority": s.Priority}
}

// driverDeployStep is an interface's step as Ironic's get_deploy_steps
// gives it.
func driverDeployStep(kind, name string, info stepInfo) baremetal.JSON {
	var argsinfo any
	if len(info.args) > 0 {
		m := baremetal.JSON{}
		for a, desc := range info.args {
			m[a] = baremetal.JSON{"description": desc, "required": slices.Contains(info.required, a)}
		}
		argsinfo = m
	}
	return baremetal.JSON{"step": name, "priority": info.priority, "abortable": info.abortable, "argsinfo": argsinfo, "interface": kind}
}
