"""Runs introspection steps with openstacksdk's baremetal_introspection proxy.

Reads {"endpoint": URL, "steps": [{"name", "op", "node", ...}]} on stdin and
prints one JSON object: step name -> {"ok": result} or {"error": {...}}, what
a program using the SDK sees. Run by test/inspectorapi with Debian's
python3-openstacksdk.
"""
import json
import sys

import openstack
from openstack import exceptions


def introspection(res):
    return {"id": res.id, "state": res.state, "is_finished": res.is_finished,
            "error": res.error, "started_at": res.started_at,
            "finished_at": res.finished_at}


def run(conn, step):
    proxy = conn.baremetal_introspection
    op, node = step["op"], step.get("node")
    if op == "start_introspection":
        res = proxy.start_introspection(node, manage_boot=step.get("manage_boot"))
        return {"id": res.id}
    if op == "get_introspection":
        return introspection(proxy.get_introspection(node))
    if op == "abort_introspection":
        return proxy.abort_introspection(node, ignore_missing=step.get("ignore_missing", True))
    if op == "get_introspection_data":
        data = proxy.get_introspection_data(node, processed=step.get("processed", True))
        return {"keys_include_logs": "logs" in data, "has_inventory": "inventory" in data}
    if op == "introspections":
        found = proxy.introspections(**step.get("query", {}))
        if step.get("first_only"):
            return introspection(next(iter(found)))
        return [introspection(r) for r in found]
    raise ValueError("unknown op %s" % op)


def main():
    spec = json.load(sys.stdin)
    conn = openstack.connect(auth_type="none", auth={"endpoint": spec["endpoint"]},
                             baremetal_introspection_endpoint_override=spec["endpoint"])
    out = {}
    for step in spec["steps"]:
        try:
            out[step["name"]] = {"ok": run(conn, step)}
        except exceptions.SDKException as exc:
            out[step["name"]] = {"error": {
                "class": type(exc).__name__,
                "status": getattr(exc, "status_code", None),
                "details": getattr(exc, "details", None),
            }}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
