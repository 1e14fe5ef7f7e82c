#!/usr/bin/env bash
# Runs the newest ironic-tempest-plugin's API tests with tempest from its
# source (tempest >= 46), against a `ferro serve` this script starts or
# against any bare metal API given as FERRO_TEMPEST_TARGET, and prints the
# pass/fail/skip summary by test class. The CI lane (test/tempest) runs
# Debian's tempest 33 with Debian's plugin 2.5.0; this is the tool for the
# 1.83+ work of issue 16 (docs/metal3.md, "The newest tempest plugin").
#
#   scripts/tempest-latest.sh TEMPEST_SRC PLUGIN_SRC
#
# TEMPEST_SRC and PLUGIN_SRC are source trees (a git checkout, or
# `git archive` output): e.g.
#   git -C /work/.mirror/openstack+tempest/repo archive HEAD | tar -x -C /tmp/tempest
#
# Environment:
#   FERRO_TEMPEST_TARGET  bare metal API to test (default: start bin/ferro,
#                         built from this checkout, noauth on 127.0.0.1)
#   FERRO_BIN             the ferro binary to start (default: built from this
#                         checkout into WORKDIR)
#   MAX_MICROVERSION      [baremetal]max_microversion (default 1.115, Ironic
#                         master's; 1.82 reproduces what ferro advertises)
#   FILTER                stestr selection (default: the plugin's API tests)
#   WORKDIR               where the venv, Keystone, tempest.conf and the
#                         results go (default: a new /tmp/tempest-latest.*,
#                         kept; its path is printed)
#   CONCURRENCY           stestr workers (default 1, as the lane)
#   TEMPEST_VERSION, PLUGIN_VERSION  the versions pbr records for a tree
#                         without .git (default 46.0.0, 3.1.0)
#
# What it does, all outside the repository: a venv with
# --system-site-packages over Debian's python3 (the libraries tempest
# needs are Debian's: python3-oslo.*, python3-stestr, python3-subunit, …),
# tempest and the plugin installed into it without dependencies (pip
# --no-deps --no-index: nothing is downloaded); a throwaway Keystone
# (Debian's keystone under uwsgi, SQLite, as internal/testing/keystonetest
# runs it); the baremetal service registered in its catalog; tempest with
# dynamic credentials from Keystone's bootstrap admin. Results:
# WORKDIR/results.csv (test id, status, first line of the skip reason or
# failure) and WORKDIR/classes.txt (per class: passed, failed, skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

if [ $# -ne 2 ]; then
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
fi
tempest_src=$(cd "$1" && pwd)
plugin_src=$(cd "$2" && pwd)
max_mv=${MAX_MICROVERSION:-1.115}
filter=${FILTER:-'^ironic_tempest_plugin\.tests\.api\.'}
concurrency=${CONCURRENCY:-1}
work=${WORKDIR:-$(mktemp -d /tmp/tempest-latest.XXXXXX)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
python=/usr/bin/python3
log() { echo "tempest-latest: $*" >&2; }

for f in "$tempest_src/tempest/__init__.py" "$plugin_src/ironic_tempest_plugin/__init__.py"; do
	[ -f "$f" ] || { log "$f missing: give the tempest and ironic-tempest-plugin source trees"; exit 2; }
done
for tool in /usr/bin/keystone-manage /usr/bin/uwsgi /usr/bin/keystone-wsgi-public; do
	[ -x "$tool" ] || { log "$tool missing (apt-get install keystone uwsgi-plugin-python3)"; exit 1; }
done

pids=()
cleanup() {
	for p in "${pids[@]}"; do
		kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
}
trap cleanup EXIT

free_port() { "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_http() { # url pid what
	for _ in $(seq 600); do
		if curl -sf -o /dev/null "$1"; then return 0; fi
		if ! kill -0 "$2" 2>/dev/null; then log "$3 exited"; return 1; fi
		sleep 0.1
	done
	log "$3 did not answer $1"
	return 1
}

# --- the venv ---------------------------------------------------------
# pbr takes the version from git, or from PBR_VERSION for a tree without
# .git; pip's --no-deps keeps Debian's libraries, --no-index keeps it
# offline.
version_of() { git -C "$1" describe --tags --abbrev=0 2>/dev/null || echo "${2}"; }
if [ ! -x "$work/venv/bin/python" ]; then
	log "venv in $work/venv (Debian's $("$python" --version 2>&1), --system-site-packages)"
	"$python" -m venv --system-site-packages "$work/venv"
	PBR_VERSION=$(version_of "$tempest_src" "${TEMPEST_VERSION:-46.0.0}") "$work/venv/bin/pip" install -q --no-deps --no-build-isolation --no-index "$tempest_src" 2>&1 | grep -v "^ *\(Not uninstalling\|Can't uninstall\)" || true
	PBR_VERSION=$(version_of "$plugin_src" "${PLUGIN_VERSION:-3.1.0}") "$work/venv/bin/pip" install -q --no-deps --no-build-isolation --no-index "$plugin_src" 2>&1 | grep -v "^ *\(Not uninstalling\|Can't uninstall\)" || true
fi
vpy=$work/venv/bin/python
# What the two requirements.txt ask for against what Debian has: printed,
# not enforced (an older library may well do).
"$vpy" - "$tempest_src/requirements.txt" "$plugin_src/requirements.txt" <<'PY'
import sys
from importlib import metadata
from packaging.requirements import Requirement
for path in sys.argv[1:]:
    for line in open(path):
        line = line.split('#')[0].strip()
        if not line:
            continue
        req = Requirement(line)
        try:
            have = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            print(f"tempest-latest: {path.split('/')[-2]}: {req} MISSING", file=sys.stderr)
            continue
        if not req.specifier.contains(have, prereleases=True):
            print(f"tempest-latest: {path.split('/')[-2]}: {req} wanted, {req.name} {have} installed (older)", file=sys.stderr)
PY
log "$("$vpy" -c 'from importlib import metadata as m; print("tempest", m.version("tempest"), "ironic-tempest-plugin", m.version("ironic-tempest-plugin"))')"

# --- Keystone -----------------------------------------------------------
ks=$work/keystone
ks_port=$(free_port)
ks_url=http://127.0.0.1:$ks_port/v3
admin_pw=pw-tempest-latest-admin
rm -rf "$ks" && mkdir -p "$ks"
cat >"$ks/keystone.conf" <<CONF
[DEFAULT]
use_stderr = true
log_file =
[database]
connection = sqlite:///$ks/keystone.db
[token]
provider = fernet
expiration = 14400
[fernet_tokens]
key_repository = $ks/fernet-keys
[fernet_receipts]
key_repository = $ks/fernet-keys
[credential]
key_repository = $ks/credential-keys
[identity]
password_hash_rounds = 4
[cache]
enabled = true
backend = dogpile.cache.memory
CONF
log "Keystone on $ks_url"
for step in "db_sync" "fernet_setup --keystone-user $(id -u) --keystone-group $(id -g)" \
	"credential_setup --keystone-user $(id -u) --keystone-group $(id -g)" \
	"bootstrap --bootstrap-username admin --bootstrap-project-name admin --bootstrap-role-name admin --bootstrap-service-name keystone --bootstrap-region-id RegionOne --bootstrap-public-url $ks_url"; do
	# shellcheck disable=SC2086
	OS_BOOTSTRAP_PASSWORD=$admin_pw /usr/bin/keystone-manage --config-file "$ks/keystone.conf" $step >>"$ks/manage.log" 2>&1 ||
		{ tail -30 "$ks/manage.log" >&2; exit 1; }
done
(cd "$ks" && OS_KEYSTONE_CONFIG_DIR=$ks OS_KEYSTONE_CONFIG_FILES=$ks/keystone.conf exec setsid /usr/bin/uwsgi \
	--plugin python3 --http-socket "127.0.0.1:$ks_port" --wsgi-file /usr/bin/keystone-wsgi-public --need-app \
	--master --processes 1 --buffer-size 65535 --add-header "Connection: close" --die-on-term \
	--socket-timeout 60 --harakiri 120 --disable-logging >"$ks/keystone.log" 2>&1) &
pids+=($!)
wait_http "$ks_url" "${pids[-1]}" Keystone || { tail -30 "$ks/keystone.log" >&2; exit 1; }

# --- the bare metal API -------------------------------------------------
target=${FERRO_TEMPEST_TARGET:-}
if [ -z "$target" ]; then
	ferro=${FERRO_BIN:-}
	if [ -z "$ferro" ]; then
		ferro=$work/ferro
		CGO_ENABLED=0 go build -trimpath -o "$ferro" ./cmd/ferro
	fi
	port=$(free_port)
	mkdir -p "$work/ferro-data"
	(cd "$work/ferro-data" && FERRO_API_HOST_IP=127.0.0.1 FERRO_API_PORT=$port FERRO_INSPECTOR_LISTEN_ADDRESS=127.0.0.1 \
		FERRO_INSPECTOR_LISTEN_PORT=$(free_port) exec setsid "$ferro" serve --data-dir "$work/ferro-data" \
		>"$work/ferro.log" 2>&1) &
	pids+=($!)
	target=http://127.0.0.1:$port
	wait_http "$target/" "${pids[-1]}" "ferro serve" || { tail -30 "$work/ferro.log" >&2; exit 1; }
	log "ferro serve ($(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?')) on $target, log $work/ferro.log"
fi
log "target $target advertises $(curl -s "$target/v1" | "$python" -c 'import json,sys; v=json.load(sys.stdin)["version"]; print(v["min_version"], "-", v["version"])')"

"$python" - "$ks_url" "$admin_pw" "$target" <<'PY'
import json, sys, urllib.request
ks, pw, target = sys.argv[1:]
def call(method, path, body=None, token=None):
    req = urllib.request.Request(ks + path, method=method, data=json.dumps(body).encode() if body else None,
                                 headers={"Content-Type": "application/json", **({"X-Auth-Token": token} if token else {})})
    with urllib.request.urlopen(req) as r:
        return r.headers.get("X-Subject-Token"), json.loads(r.read() or b"{}")
token, _ = call("POST", "/auth/tokens", {"auth": {
    "identity": {"methods": ["password"], "password": {"user": {"name": "admin", "domain": {"id": "default"}, "password": pw}}},
    "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}})
_, svc = call("POST", "/services", {"service": {"type": "baremetal", "name": "ironic"}}, token)
for iface in ("public", "internal", "admin"):
    call("POST", "/endpoints", {"endpoint": {"service_id": svc["service"]["id"], "interface": iface,
                                             "url": target, "region_id": "RegionOne"}}, token)
# The system-scoped personas the plugin's RBAC classes use need a role on
# the system; tempest's dynamic credentials grant it.
_, roles = call("GET", "/roles?name=admin", None, token)
_, users = call("GET", "/users?name=admin", None, token)
call("PUT", f"/system/users/{users['users'][0]['id']}/roles/{roles['roles'][0]['id']}", None, token)
PY

# --- tempest --------------------------------------------------------------
ws=$work/workspace
rm -rf "$ws" && mkdir -p "$ws/lock"
cat >"$ws/tempest.conf" <<CONF
[DEFAULT]
log_dir = $ws
log_file = tempest.log
use_stderr = false
debug = true

[oslo_concurrency]
lock_path = $ws/lock

[auth]
use_dynamic_credentials = true
admin_username = admin
admin_password = $admin_pw
admin_project_name = admin
admin_domain_name = Default
default_credentials_domain_name = Default
create_isolated_networks = false
tempest_roles =

[identity]
uri_v3 = $ks_url
auth_version = v3
region = RegionOne
v3_endpoint_type = public
admin_role = admin
disable_ssl_certificate_validation = true

[identity-feature-enabled]
api_v2 = false

[service_available]
ironic = true
ironic_inspector = false
neutron = false
nova = false
glance = false
cinder = false
swift = false
horizon = false

[enforce_scope]
ironic = false

[baremetal]
driver = fake-hardware
enabled_hardware_types = fake-hardware,ipmi
enabled_deploy_interfaces = fake,direct
enabled_boot_interfaces = fake,pxe
enabled_rescue_interfaces = fake,no-rescue
enabled_bios_interfaces = fake,no-bios
enabled_raid_interfaces = fake,no-raid
enabled_management_interfaces = fake,ipmitool
enabled_power_interfaces = fake,ipmitool
min_microversion = 1.1
max_microversion = $max_mv
endpoint_type = public
power_timeout = 30
unprovision_timeout = 30
active_timeout = 30
association_timeout = 10
deploywait_timeout = 10
rescue_timeout = 30
unrescue_timeout = 30
CONF
printf '[DEFAULT]\ntest_path=%s/ironic_tempest_plugin/tests/api\ntop_dir=%s\n' \
	"$("$vpy" -c 'import ironic_tempest_plugin, os; print(os.path.dirname(os.path.dirname(ironic_tempest_plugin.__file__)))')" \
	"$("$vpy" -c 'import ironic_tempest_plugin, os; print(os.path.dirname(os.path.dirname(ironic_tempest_plugin.__file__)))')" >"$ws/.stestr.conf"

export HOME=$ws TEMPEST_CONFIG_DIR=$ws TEMPEST_CONFIG=tempest.conf OS_LOG_CAPTURE=0 OS_STDOUT_CAPTURE=0 OS_STDERR_CAPTURE=0 OS_TEST_TIMEOUT=120 PYTHONDONTWRITEBYTECODE=1
log "stestr run (max_microversion $max_mv, concurrency $concurrency) in $ws"
began=$(date +%s)
(cd "$ws" && "$vpy" -m stestr init >/dev/null && "$vpy" -m stestr run --concurrency "$concurrency" --subunit "$filter" >"$ws/results.subunit" 2>"$ws/stestr.err") || true
log "stestr took $(( $(date +%s) - began )) s"

"$vpy" - "$ws/results.subunit" "$work/results.csv" "$work/classes.txt" <<'PY'
import collections, csv, re, sys
import subunit, testtools
stream, out_csv, out_classes = sys.argv[1:]
rows = []
def on_test(test):
    tid = re.sub(r"\[.*$", "", test["id"])
    why = ""
    for name in ("reason", "traceback"):
        if name in test["details"]:
            text = test["details"][name].as_text().strip().splitlines()
            why = (text[-1] if name == "traceback" else text[0]) if text else ""
            break
    rows.append((tid, test["status"], why))
with open(stream, "rb") as f:
    case = subunit.ByteStreamToStreamResult(f, non_subunit_name="stdout")
    result = testtools.StreamToDict(on_test)
    result.startTestRun()
    case.run(result)
    result.stopTestRun()
rows = [r for r in rows if r[1] != "exists"]
with open(out_csv, "w", newline="") as f:
    csv.writer(f).writerows(sorted(rows))
by_class = collections.defaultdict(collections.Counter)
for tid, status, _ in rows:
    cls = tid.rsplit(".", 1)[0] if re.search(r"\.test_\w+$", tid) else tid
    by_class[cls.replace("ironic_tempest_plugin.tests.api.", "")][status] += 1
total = collections.Counter(s for _, s, _ in rows)
with open(out_classes, "w") as f:
    for cls in sorted(by_class):
        c = by_class[cls]
        f.write(f"{cls}\tpassed {c['success']}\tfailed {c['fail']}\tskipped {c['skip']}\n")
print(f"tempest-latest: {len(rows)} tests: {total['success']} passed, {total['fail']} failed, {total['skip']} skipped"
      + "".join(f", {n} {s}" for s, n in total.items() if s not in ("success", "fail", "skip")))
PY
log "per test: $work/results.csv; per class: $work/classes.txt; tempest's log: $ws/tempest.log"
