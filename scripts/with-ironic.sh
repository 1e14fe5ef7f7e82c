#!/usr/bin/env bash
# Runs a command against a fresh Debian Ironic 21.4, the reference the
# baselines are made with (scripts/tempest-baseline.sh, scripts/sdk-baseline.sh):
#
#   scripts/with-ironic.sh COMMAND [ARGS...]
#
# COMMAND runs with IRONIC_URL=http://127.0.0.1:<port> in its environment;
# Ironic is stopped when it ends, and the script exits with its status.
#
# Ironic runs as one process (`ironic`, rpc_transport = none), noauth, on
# SQLite, with the interfaces ferro enables by default (minus firmware,
# which Ironic 21.4 lacks), the noop network interface by default, and no
# Neutron, DHCP or image service. It needs python3-ironic (21.4); the
# ironic-api and ironic-conductor packages add /usr/bin/ironic and
# /usr/bin/ironic-dbsync, and without them the same entry points are run
# from the python3-ironic module:
#
#   apt-get install -y --no-install-recommends python3-ironic
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
	echo "usage: scripts/with-ironic.sh COMMAND [ARGS...]" >&2
	exit 2
fi

# ironic_check NAME MODULE: /usr/bin/NAME, or MODULE in python3-ironic.
ironic_check() {
	if [ ! -x "/usr/bin/$1" ] && ! /usr/bin/python3 -c "import $2" 2>/dev/null; then
		echo "with-ironic: neither /usr/bin/$1 nor python3's $2 (apt-get install python3-ironic)" >&2
		exit 1
	fi
}
# ironic_argv NAME MODULE: sets argv to /usr/bin/NAME, or to MODULE's
# main() run by python3, so that "${argv[@]}" & leaves $! the process
# itself (killed at the end).
ironic_argv() {
	if [ -x "/usr/bin/$1" ]; then
		argv=("/usr/bin/$1")
	else
		argv=(/usr/bin/python3 -c "import sys; sys.argv[0] = '$1'; from $2 import main; main()")
	fi
}
ironic_check ironic ironic.cmd.singleprocess
ironic_check ironic-dbsync ironic.cmd.dbsync
echo "with-ironic: $(dpkg-query -W -f='${Package} ${Version}\n' python3-ironic | tr '\n' ' ')" >&2

dir=$(mktemp -d /tmp/with-ironic.XXXXXX)
pid=
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$dir"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$dir/lock" "$dir/tftp" "$dir/http"
cat >"$dir/ironic.conf" <<CONF
[DEFAULT]
auth_strategy = noauth
rpc_transport = none
host = localhost
use_stderr = false
log_file = $dir/ironic.log
enabled_hardware_types = fake-hardware,ipmi,redfish
enabled_bios_interfaces = fake,no-bios
enabled_boot_interfaces = fake,pxe,ipxe,redfish-virtual-media
enabled_console_interfaces = fake,no-console
enabled_deploy_interfaces = fake,direct
enabled_inspect_interfaces = fake,no-inspect,inspector
enabled_management_interfaces = fake,ipmitool,redfish
enabled_network_interfaces = noop,flat
# flat needs Neutron, which the baseline runs without (Ironic's conductor
# calls it on every port change).
default_network_interface = noop
enabled_power_interfaces = fake,ipmitool,redfish
enabled_raid_interfaces = fake,no-raid,agent
enabled_rescue_interfaces = fake,no-rescue
enabled_storage_interfaces = fake,noop
enabled_vendor_interfaces = fake,no-vendor,ipmitool

[api]
host_ip = 127.0.0.1
port = $port

[database]
connection = sqlite:///$dir/ironic.sqlite

[dhcp]
dhcp_provider = none

[conductor]
automated_clean = false

[oslo_concurrency]
lock_path = $dir/lock

[pxe]
tftp_root = $dir/tftp

[deploy]
http_root = $dir/http
http_url = http://127.0.0.1:1/
CONF

ironic_argv ironic-dbsync ironic.cmd.dbsync
"${argv[@]}" --config-file "$dir/ironic.conf" create_schema >"$dir/dbsync.log" 2>&1 ||
	{ cat "$dir/dbsync.log" >&2; exit 1; }
ironic_argv ironic ironic.cmd.singleprocess
"${argv[@]}" --config-file "$dir/ironic.conf" >"$dir/stdout.log" 2>&1 &
pid=$!
for _ in $(seq 300); do
	if curl -sf "http://127.0.0.1:$port/v1" >/dev/null; then break; fi
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "with-ironic: ironic exited:" >&2
		tail -50 "$dir/stdout.log" "$dir/ironic.log" >&2 || true
		exit 1
	fi
	sleep 0.2
done
echo "with-ironic: Ironic at http://127.0.0.1:$port ($(curl -s "http://127.0.0.1:$port/v1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"]["version"])'))" >&2

status=0
IRONIC_URL=http://127.0.0.1:$port "$@" || status=$?
exit "$status"
