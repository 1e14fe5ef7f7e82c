#!/usr/bin/env bash
# Produces testdata/tempest/ironic-21.4-passing.txt: the ironic-tempest-plugin
# API tests that pass against Debian's Ironic 21.4, run exactly as the
# tempest lane (test/tempest) runs them against ferro: same tempest.conf,
# same Keystone harness, same selection, concurrency 1.
#
# Needs, besides the lane's packages (tempest, ironic-tempest-plugin,
# keystone, uwsgi-plugin-python3), Debian's ironic-api and ironic-conductor
# (python3-ironic 21.4), which CI does not install:
#
#   apt-get install -y --no-install-recommends ironic-api ironic-conductor
#   scripts/tempest-baseline.sh [output file]
#
# Ironic runs as one process (`ironic`, rpc_transport = none), noauth, on
# SQLite, with the interfaces ferro enables by default (minus firmware,
# which Ironic 21.4 lacks), the noop network interface by default, and no
# Neutron, DHCP or image service.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$PWD/testdata/tempest/ironic-21.4-passing.txt}
case $out in /*) ;; *) out=$PWD/$out ;; esac

for tool in ironic ironic-dbsync; do
	if [ ! -x /usr/bin/$tool ]; then
		echo "tempest-baseline: /usr/bin/$tool missing (apt-get install ironic-api ironic-conductor)" >&2
		exit 1
	fi
done
echo "tempest-baseline: $(dpkg-query -W -f='${Package} ${Version}\n' python3-ironic tempest ironic-tempest-plugin | tr '\n' ' ')"

dir=$(mktemp -d /tmp/tempest-baseline.XXXXXX)
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

/usr/bin/ironic-dbsync --config-file "$dir/ironic.conf" create_schema >"$dir/dbsync.log" 2>&1 ||
	{ cat "$dir/dbsync.log" >&2; exit 1; }
/usr/bin/ironic --config-file "$dir/ironic.conf" >"$dir/stdout.log" 2>&1 &
pid=$!
for _ in $(seq 300); do
	if curl -sf "http://127.0.0.1:$port/v1" >/dev/null; then break; fi
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "tempest-baseline: ironic exited:" >&2
		tail -50 "$dir/stdout.log" "$dir/ironic.log" >&2 || true
		exit 1
	fi
	sleep 0.2
done
echo "tempest-baseline: Ironic at http://127.0.0.1:$port ($(curl -s "http://127.0.0.1:$port/v1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"]["version"])'))"

FERRO_TEMPEST_TARGET=http://127.0.0.1:$port FERRO_TEMPEST_WRITE_PASSING=$out \
	go test -count=1 -v -timeout 60m -run 'TestTempest_' ./test/tempest/
echo "tempest-baseline: $(wc -l <"$out") passing tests in $out"
