#!/usr/bin/env bash
# Produces testdata/tempest/ironic-21.4-passing.txt: the ironic-tempest-plugin
# API tests that pass against Debian's Ironic 21.4, run exactly as the
# tempest lane (test/tempest) runs them against ferro: same tempest.conf,
# same Keystone harness, same selection, concurrency 1.
#
# Needs, besides the lane's packages (tempest, ironic-tempest-plugin,
# keystone, uwsgi-plugin-python3), Debian's python3-ironic 21.4 (with or
# without ironic-api and ironic-conductor), which CI does not install;
# scripts/with-ironic.sh starts it:
#
#   apt-get install -y --no-install-recommends python3-ironic
#   scripts/tempest-baseline.sh [output file]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$PWD/testdata/tempest/ironic-21.4-passing.txt}
case $out in /*) ;; *) out=$PWD/$out ;; esac
echo "tempest-baseline: $(dpkg-query -W -f='${Package} ${Version}\n' python3-ironic tempest ironic-tempest-plugin | tr '\n' ' ')"

CI=true scripts/with-ironic.sh sh -c 'FERRO_TEMPEST_TARGET=$IRONIC_URL FERRO_TEMPEST_WRITE_PASSING=$0 \
	go test -count=1 -v -timeout 60m -run "TestTempest_" ./test/tempest/' "$out"
echo "tempest-baseline: $(wc -l <"$out") passing tests in $out"
