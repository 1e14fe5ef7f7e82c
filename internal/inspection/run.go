package inspection

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/hardware"
	"github.com/ferrometal/ferro/internal/inspection/plan"
	"github.com/ferrometal/ferro/internal/inspection/rules"
	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/lldp"
)

// Run is one report going through a pipeline: Start made it, Finish ends it.
type Run struct {
	p        *Pipeline
	rep      *inventory.Report
	raw      map[string]any
	nodeUUID string
	logs     string
	failures []hookFailure

	// inventory is the raw inventory; read-only, except that
	// ironic-inspector's root_disk_selection replaces it with a copy
	// without the skipped disks.
	inventory map[string]any
	// data is plugin_data being built: the report without inventory and
	// logs, and what the hooks add.
	data map[string]any
	// node is the plan, from Finish on.
	node *plan.Node
	// previous is what the last inspection stored (nil: none, or not
	// loaded: nothing needed it).
	previous       *Previous
	previousLoaded bool

	// What hooks share, in ferro's types.
	all, valid []*nic
	pxeMAC     string
	rootDisk   *inventory.Disk // ironic-inspector's, after root_disk_selection
}

// nic is an inventory interface with a valid MAC: validate-interfaces'
// output, which later hooks read.
type nic struct {
	name     string
	mac      string // lower case
	sentMAC  string // as the inventory has it
	ip       string // IPv4, else IPv6 without scope
	clientID string
	pxe      bool
	// entry is the interface's plugin_data entry, which later hooks
	// complete (lldp_processed).
	entry map[string]any
	lldp  *lldp.Processed
}

func newRun(p *Pipeline, rep *Report, nodeUUID string) *Run {
	r := &Run{p: p, rep: rep.Typed, raw: rep.Raw, nodeUUID: nodeUUID, data: make(map[string]any, len(rep.Raw)+4)}
	for k, v := range rep.Raw {
		switch k {
		case "inventory":
			r.inventory, _ = v.(map[string]any)
		case "logs":
			r.logs, _ = v.(string)
		default:
			r.data[k] = v
		}
	}
	return r
}

// Logs returns the ramdisk's logs ("" if none).
func (r *Run) Logs() string { return r.logs }

// Err returns the preprocess failures, as one *Failure, or nil.
func (r *Run) Err() error {
	if len(r.failures) == 0 {
		return nil
	}
	f := &Failure{Dialect: r.p.opts.Dialect, Stage: StagePreprocess, node: r.nodeUUID}
	for _, hf := range r.failures {
		f.Hooks = append(f.Hooks, hf.hook)
		f.Reasons = append(f.Reasons, hf.render(r.p.opts.Dialect, r.nodeUUID))
	}
	return f
}

// Finish runs the hooks' processing step on the node, then the rules,
// and returns what to apply and store. It fails when Start's Err is not
// nil. On failure the Result, when not nil, carries only the ramdisk logs,
// which upstream stores when hooks fail.
func (r *Run) Finish(ctx context.Context, t Target) (*Result, error) {
	if err := r.Err(); err != nil {
		return &Result{Logs: r.logs}, err
	}
	if t.Node == nil {
		return nil, errors.New("no node to process the report for")
	}
	r.nodeUUID = t.Node.UUID
	ports := make([]baremetal.Port, len(t.Ports))
	for i, p := range t.Ports {
		ports[i] = *p
	}
	node, err := plan.New(*t.Node, ports)
	if err != nil {
		return nil, err
	}
	r.node = node
	if slices.Contains(r.p.HookNames(), "raid-device") {
		if err := r.loadPrevious(ctx, t); err != nil {
			return nil, err
		}
	}
	for _, h := range r.p.hooks {
		if h.process == nil {
			continue
		}
		if err := h.process(ctx, r); err != nil {
			return &Result{Logs: r.logs}, &Failure{Dialect: r.p.opts.Dialect, Stage: StageHooks, node: r.nodeUUID,
				Hooks: []string{h.name}, Reasons: []string{hookFailure{hook: h.name, err: err}.render(r.p.opts.Dialect, r.nodeUUID)}, err: err}
		}
	}
	maps.Copy(r.data, t.PluginData)

	all, err := r.rules(ctx)
	if err != nil {
		return nil, err
	}
	if len(all) > 0 {
		if err := r.offerHardwareChanges(ctx, t); err != nil {
			return nil, err
		}
	}
	applied, err := r.applyRules(ctx, all)
	if err != nil {
		return nil, err
	}
	return &Result{Changes: node.Changes(), Inventory: r.inventory, PluginData: r.data, Logs: r.logs, Rules: applied}, nil
}

// loadPrevious reads what the node's last inspection stored, once.
func (r *Run) loadPrevious(ctx context.Context, t Target) error {
	if r.previousLoaded || t.Previous == nil {
		return nil
	}
	r.previousLoaded = true
	prev, err := t.Previous(ctx)
	if err != nil {
		return fmt.Errorf("read the previous inventory: %w", err)
	}
	r.previous = prev
	return nil
}

// offerHardwareChanges puts what changed since the previous inspection
// under plugin_data's hardware.PluginDataKey, for the rules ("fail when a
// disk was removed"). A first inspection offers no changes, counted, so
// that a rule reading the counts works on every inspection.
func (r *Run) offerHardwareChanges(ctx context.Context, t Target) error {
	if err := r.loadPrevious(ctx, t); err != nil {
		return err
	}
	if r.previous == nil {
		r.data[hardware.PluginDataKey] = hardware.PluginData("", nil)
		return nil
	}
	changes := hardware.Compare(
		hardware.Read(&baremetal.Inventory{Inventory: r.previous.Inventory, PluginData: r.previous.PluginData}),
		hardware.Read(&baremetal.Inventory{Inventory: r.inventory, PluginData: r.data}))
	var since string
	if !r.previous.Inspected.IsZero() {
		since = r.previous.Inspected.UTC().Format(time.RFC3339)
	}
	r.data[hardware.PluginDataKey] = hardware.PluginData(since, changes)
	return nil
}

// rules are the stored rules of this entry point and the built-in ones.
func (r *Run) rules(ctx context.Context) ([]*rules.Rule, error) {
	var all []*rules.Rule
	if r.p.opts.Rules != nil {
		stored, err := r.p.opts.Rules.Rules(ctx)
		if err != nil {
			return nil, fmt.Errorf("load inspection rules: %w", err)
		}
		all = append(all, stored...)
	}
	return append(all, r.p.opts.BuiltInRules...), nil
}

func (r *Run) applyRules(ctx context.Context, all []*rules.Rule) ([]string, error) {
	if len(all) == 0 {
		return nil, nil
	}
	order := rules.Sequential
	if r.p.opts.Dialect == Inspector {
		order = rules.ConditionsFirst
	}
	env := &rules.Env{
		Node: r.node, Inventory: r.inventory, PluginData: r.data,
		Mask: r.p.opts.MaskSecrets, HTTP: r.p.opts.HTTPClient, Log: r.p.log,
	}
	applied, err := rules.Apply(ctx, all, env, order)
	if err != nil {
		return nil, &Failure{Dialect: r.p.opts.Dialect, Stage: StageRules, node: r.nodeUUID, err: err}
	}
	uuids := make([]string, len(applied))
	for i, rule := range applied {
		uuids[i] = rule.UUID
	}
	return uuids, nil
}

// Stages of processing, for Failure.
const (
	StagePreprocess = "preprocess"
	StageHooks      = "hooks"
	StageRules      = "rules"
)

// Failure is why processing a report failed. Its message is upstream's,
// in the pipeline's dialect; the entry points add their own prefixes as
// upstream's do (Ironic's agent interface "failed to run inspection
// hooks: …", its conductor "Failed to finish inspection: …").
type Failure struct {
	Dialect Dialect
	Stage   string
	// Hooks are the hooks that failed (preprocess: each; hooks: the one).
	Hooks []string
	// Reasons are their messages, one a hook.
	Reasons []string
	node    string
	err     error // the hook's or the rule engine's error
}

func (f *Failure) Error() string {
	switch {
	case f.Stage == StageRules:
		if f.Dialect == Inspector {
			return rules.InspectorMessage(f.err)
		}
		return f.err.Error()
	case f.Dialect == Inspector:
		// ironic-inspector: the caller words the preprocess list; a hook
		// failure names the hook as upstream names the exception.
		if f.Stage == StagePreprocess {
			return strings.Join(f.Reasons, "\n")
		}
		return f.Reasons[0]
	case f.Stage == StagePreprocess:
		return hardwareFailure(fmt.Sprintf("The following failures happened while running preprocess hooks for node %s:\n%s",
			f.node, strings.Join(f.Reasons, "\n")))
	default:
		return f.Reasons[0]
	}
}

// Unwrap returns the hook's or the rule engine's error.
func (f *Failure) Unwrap() error { return f.err }

// RuleFailure returns the rule engine's failure when a rule failed the
// report.
func (f *Failure) RuleFailure() (*rules.Failure, bool) {
	var rf *rules.Failure
	ok := errors.As(f.err, &rf)
	return rf, ok
}

// hookFailure is a hook's error with the hook's name and its step.
type hookFailure struct {
	hook       string
	err        error
	preprocess bool
}

// render words the failure as upstream does.
func (hf hookFailure) render(d Dialect, nodeUUID string) string {
	var he *hookError
	if !errors.As(hf.err, &he) {
		he = &hookError{kind: unexpected, class: "Exception", msg: hf.err.Error()}
	}
	if d == Inspector {
		if hf.preprocess {
			return fmt.Sprintf("Preprocessing hook %s: %s", hf.hook, he.msg)
		}
		return fmt.Sprintf("Unexpected exception %s during processing: %s", hf.hook, he.msg)
	}
	return he.ironic(hf.hook, nodeUUID, hf.preprocess)
}

type errKind int

const (
	// inspectionFailure is Ironic's HardwareInspectionFailure.
	inspectionFailure errKind = iota
	// invalidInventory is Ironic's InvalidNodeInventory.
	invalidInventory
	// unexpected is any other exception; class names it.
	unexpected
)

// hookError is what a hook fails with: the message, and for the Ironic
// dialect the exception upstream raises.
type hookError struct {
	kind  errKind
	class string
	msg   string
}

func (e *hookError) Error() string { return e.msg }

func failuref(format string, a ...any) error {
	return &hookError{kind: inspectionFailure, msg: fmt.Sprintf(format, a...)}
}

func invalidf(format string, a ...any) error {
	return &hookError{kind: invalidInventory, msg: fmt.Sprintf(format, a...)}
}

func unexpectedf(class, format string, a ...any) error {
	return &hookError{kind: unexpected, class: class, msg: fmt.Sprintf(format, a...)}
}

func hardwareFailure(reason string) string { return "Failed to inspect hardware. Reason: " + reason }

// ironic words the error as Ironic's run_inspection_hooks does.
func (e *hookError) ironic(hook, nodeUUID string, preprocess bool) string {
	text, class := e.msg, e.class
	switch e.kind {
	case inspectionFailure:
		text = hardwareFailure(e.msg)
	case invalidInventory:
		text, class = fmt.Sprintf("Inventory for node %s is invalid: %s", nodeUUID, e.msg), "InvalidNodeInventory"
	}
	if preprocess {
		if e.kind == inspectionFailure {
			return fmt.Sprintf("Error in preprocess hook %s: %s", hook, text)
		}
		return fmt.Sprintf("Unexpected exception %s during preprocess hook %s: %s", class, hook, text)
	}
	if e.kind == inspectionFailure {
		return text
	}
	return hardwareFailure(fmt.Sprintf("Unexpected exception %s during processing for node: %s. Error: %s", class, nodeUUID, text))
}
