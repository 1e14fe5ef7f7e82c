package rules

import (
	"context"
	"slices"
	"strings"

	"github.com/ferrometal/ferro/internal/inspection/plan"
	"github.com/ferrometal/ferro/internal/pyjson"
)

// failAction is the fail action's failure.
type failAction struct{ msg string }

func (f *failAction) Error() string { return f.msg }

// runAction is Ironic's execute_with_loop / execute_action.
func (r *Rule) runAction(ctx context.Context, a *Action, env *Env, vs *vars) error {
	items, loop := loopItems(a.Loop)
	if !loop {
		return r.runOnce(ctx, a, env, vs, false)
	}
	for _, item := range items {
		ivs := *vs
		ivs.item, ivs.hasItem = item, true
		if err := r.runOnce(ctx, a, env, &ivs, true); err != nil {
			return err
		}
	}
	return nil
}

func (r *Rule) runOnce(ctx context.Context, a *Action, env *Env, vs *vars, inLoop bool) error {
	args, err := r.processArgs(actionSigs[a.Op], a.Args, vs, a.Op, inLoop)
	if err != nil {
		return err
	}
	invalidate(env.cache, a.Op, args)
	node := env.Node
	switch a.Op {
	case "fail":
		return &failAction{msg: pyjson.Str(args["msg"])}
	case "log":
		level := "info"
		if l, ok := args["level"]; ok {
			level = strings.ToLower(pyjson.Str(l))
		}
		msg := pyjson.Str(args["msg"])
		switch level {
		case "debug":
			env.Log.Debug(msg, "rule", r.UUID, "node", node.UUID())
		case "info":
			env.Log.Info(msg, "rule", r.UUID, "node", node.UUID())
		case "warning":
			env.Log.Warn(msg, "rule", r.UUID, "node", node.UUID())
		case "error", "critical":
			env.Log.Error(msg, "rule", r.UUID, "node", node.UUID())
		default:
			return executionFailure("Invalid log level: %s. Choose from %s", level, "{'debug', 'info', 'warning', 'error', 'critical'}")
		}
		return nil
	case "set-attribute":
		path := pathParts(args["path"])
		if err := setNodeField(node, path, args["value"]); err != nil {
			return actionFailure("Failed to set attribute %s with value %s: %v", pyjson.Str(args["path"]), pyjson.Str(args["value"]), err)
		}
	case "extend-attribute":
		if err := node.Extend(pathParts(args["path"]), args["value"], pyjson.Truthy(args["unique"])); err != nil {
			return actionFailure("Failed to extend attribute %s: %v", pyjson.Str(args["path"]), err)
		}
	case "del-attribute":
		if err := node.Delete(pathParts(args["path"])); err != nil {
			return actionFailure("Failed to delete attribute at %s: %v", pyjson.Str(args["path"]), err)
		}
	case "set-capability":
		value, ok := args["value"].(string)
		name, nameOK := args["name"].(string)
		if !ok || !nameOK {
			return actionFailure("Failed to set capability %s: sequence item: expected str instance, %s found", pyjson.Str(args["name"]), typeName(args["value"]))
		}
		if err := addCapability(node, name, value); err != nil {
			return actionFailure("Failed to set capability %s: %v", name, err)
		}
	case "unset-capability":
		if err := removeCapability(node, pyjson.Str(args["name"])); err != nil {
			return actionFailure("Failed to unset capability %s: %v", pyjson.Str(args["name"]), err)
		}
	case "add-trait":
		name := pyjson.Str(args["name"])
		if len(node.Traits()) >= maxTraits && !slices.Contains(node.Traits(), name) {
			return actionFailure("Failed to add new trait %s: could not add the trait, the node would have more than %d", name, maxTraits)
		}
		node.AddTrait(name)
	case "remove-trait":
		name := pyjson.Str(args["name"])
		if !slices.Contains(node.Traits(), name) {
			env.Log.Warn("Failed to remove trait: the node does not have it", "trait", name, "node", node.UUID())
		}
		node.RemoveTrait(name)
	case "set-plugin-data":
		if err := setNested(env.PluginData, pluginPath(args["path"]), args["value"]); err != nil {
			return actionFailure("Failed to set plugin data at %s: %v", pyjson.Str(args["path"]), err)
		}
	case "extend-plugin-data":
		path := pluginPath(args["path"])
		current, _ := getNested(env.PluginData, path)
		list, _ := current.([]any)
		if current != nil && list == nil && pyjson.Truthy(current) {
			return actionFailure("Failed to extend plugin data at %s: %s object has no attribute 'append'", pyjson.Str(args["path"]), pyjson.Repr(typeName(current)))
		}
		if !pyjson.Truthy(args["unique"]) || !slices.ContainsFunc(list, func(v any) bool { return pyjson.Equal(v, args["value"]) }) {
			list = append(list, args["value"])
		}
		if err := setNested(env.PluginData, path, list); err != nil {
			return actionFailure("Failed to extend plugin data at %s: %v", pyjson.Str(args["path"]), err)
		}
	case "unset-plugin-data":
		if !unsetNested(env.PluginData, pluginPath(args["path"])) {
			env.Log.Warn("Path not found", "path", pyjson.Str(args["path"]), "node", node.UUID())
		}
	case "set-port-attribute", "extend-port-attribute", "del-port-attribute":
		id := pyjson.Str(args["port_id"])
		mac, ok := node.PortAddress(id)
		if !ok {
			return executionFailure("Port %s could not be found.", id)
		}
		path := pathParts(args["path"])
		var err error
		switch a.Op {
		case "set-port-attribute":
			if err = node.SetPort(mac, path, args["value"]); err != nil {
				return actionFailure("Failed to set attribute %s for port %s: %v", pyjson.Str(args["path"]), id, err)
			}
		case "extend-port-attribute":
			if err = node.ExtendPort(mac, path, args["value"], pyjson.Truthy(args["unique"])); err != nil {
				return actionFailure("Failed to extend attribute %s for port %s: %v", pyjson.Str(args["path"]), id, err)
			}
		default:
			if err = node.DeletePortField(mac, path); err != nil {
				return actionFailure("Failed to delete attribute %s for port %s: %v", pyjson.Str(args["path"]), id, err)
			}
		}
	case "api-call":
		return apiCall(ctx, env, args)
	default:
		return otherError("Unsupported action: '%s'. Supported actions are: %s.", a.Op, strings.Join(ActionOps(), ", "))
	}
	return nil
}

// maxTraits is Ironic's limit of traits on a node.
const maxTraits = 50

// setNodeField is set-attribute: the driver's change resets the
// interfaces, as a PATCH of the driver does.
func setNodeField(node *plan.Node, path []string, value any) error {
	if err := node.Set(path, value); err != nil {
		return err
	}
	if len(path) == 1 && path[0] == "driver" {
		node.ResetInterfaces()
	}
	return nil
}

// pathParts splits an attribute path, "/a/b" or "a.b" (Ironic's
// normalize_path).
func pathParts(v any) []string {
	p := pyjson.Str(v)
	if strings.Contains(p, "/") {
		return strings.Split(strings.Trim(p, "/"), "/")
	}
	return strings.Split(p, ".")
}

// pluginPath splits a plugin-data path, dotted (Ironic's
// update_nested_dict).
func pluginPath(v any) []string { return strings.Split(pyjson.Str(v), ".") }

func getNested(d map[string]any, keys []string) (any, bool) {
	var cur any = d
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// setNested is update_nested_dict: objects created on the way.
func setNested(d map[string]any, keys []string, value any) error {
	cur := d
	for _, k := range keys[:len(keys)-1] {
		next, ok := cur[k]
		if !ok {
			m := map[string]any{}
			cur[k] = m
			cur = m
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return otherError("%s object has no attribute 'setdefault'", pyjson.Repr(typeName(next)))
		}
		cur = m
	}
	cur[keys[len(keys)-1]] = value
	return nil
}

// unsetNested is Ironic's _unset_nested_dict: a key that leaves its
// object empty removes the object too.
func unsetNested(d map[string]any, keys []string) bool {
	cur := d
	for _, k := range keys[:len(keys)-1] {
		m, ok := cur[k].(map[string]any)
		if !ok {
			return false
		}
		cur = m
	}
	last := keys[len(keys)-1]
	if _, ok := cur[last]; !ok {
		return false
	}
	if len(cur) == 1 && len(keys) > 1 {
		parent, _ := getNested(d, keys[:len(keys)-2])
		delete(parent.(map[string]any), keys[len(keys)-2])
	} else {
		delete(cur, last)
	}
	return true
}

// addCapability is Ironic's add_node_capability: "name:value" appended,
// a duplicate name included.
func addCapability(node *plan.Node, name, value string) error {
	caps, _ := node.Properties()["capabilities"].(string)
	entry := name + ":" + value
	if caps != "" {
		entry = caps + "," + entry
	}
	return node.SetProperty("capabilities", entry)
}

// removeCapability is Ironic's remove_node_capability.
func removeCapability(node *plan.Node, name string) error {
	v, present := node.Properties()["capabilities"]
	caps, ok := v.(string)
	if present && !ok {
		return otherError("%s object has no attribute 'split'", pyjson.Repr(typeName(v)))
	}
	var kept []string
	for _, c := range strings.Split(caps, ",") {
		if !strings.HasPrefix(c, name+":") {
			kept = append(kept, c)
		}
	}
	return node.SetProperty("capabilities", strings.Join(kept, ","))
}

// invalidate drops the cached fields an action may change: under
// plugin_data for the plugin-data actions, under the node for those that
// change the node, each only below the top-level key the action writes;
// the inventory does not change, nor do the fields a port action writes.
func invalidate(cache map[fieldKey]string, op string, args map[string]any) {
	var root, key string
	switch op {
	case "set-plugin-data", "extend-plugin-data", "unset-plugin-data":
		root, key = "plugin_data", pluginPath(args["path"])[0]
	case "set-attribute", "extend-attribute", "del-attribute":
		root, key = "node", pathParts(args["path"])[0]
		if key == "driver" {
			key = "" // interfaces reset too
		}
	case "set-capability", "unset-capability":
		root, key = "node", "properties"
	case "add-trait", "remove-trait":
		root, key = "node", "traits"
	default:
		return
	}
	for k := range cache {
		if strings.HasPrefix(k.field, root) {
			if top, ok := firstKey(k.field[len(root):]); key == "" || !ok || top == key {
				delete(cache, k)
			}
		}
	}
}

// firstKey is the first accessor of a field after its variable:
// "[all_interfaces][eth0]" gives all_interfaces, ".extra[x]" extra.
func firstKey(rest string) (string, bool) {
	if rest == "" {
		return "", false
	}
	switch rest[0] {
	case '[':
		if end := strings.IndexByte(rest, ']'); end > 0 {
			return rest[1:end], true
		}
	case '.':
		rest = rest[1:]
		if end := strings.IndexAny(rest, ".[!:"); end >= 0 {
			rest = rest[:end]
		}
		return rest, true
	}
	return "", false
}
