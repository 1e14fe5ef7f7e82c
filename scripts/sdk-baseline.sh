#!/usr/bin/env bash
# Produces test/sdk/testdata/ironic-21.4-passing.txt: openstacksdk 0.101's
# bare metal functional tests that pass against Debian's Ironic 21.4, run
# exactly as the openstacksdk lane (test/sdk) runs them against ferro: the
# same clouds.yaml (auth_type none), stestr at concurrency 1.
#
# Needs, besides the lane's packages (python3-openstacksdk, python3-stestr,
# subunit), Debian's python3-ironic 21.4, which CI does not install;
# scripts/with-ironic.sh starts it:
#
#   apt-get install -y --no-install-recommends python3-ironic
#   scripts/sdk-baseline.sh [output file]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$PWD/test/sdk/testdata/ironic-21.4-passing.txt}
case $out in /*) ;; *) out=$PWD/$out ;; esac
echo "sdk-baseline: $(dpkg-query -W -f='${Package} ${Version}\n' python3-ironic python3-openstacksdk | tr '\n' ' ')"

CI=true scripts/with-ironic.sh sh -c 'FERRO_SDK_TARGET=$IRONIC_URL FERRO_SDK_WRITE_PASSING=$0 \
	go test -count=1 -v -timeout 40m -run "TestSDK_" ./test/sdk/' "$out"
echo "sdk-baseline: $(wc -l <"$out") passing tests in $out"
