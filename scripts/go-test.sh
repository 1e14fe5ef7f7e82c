#!/usr/bin/env bash
# Runs `go test` over the module with the arguments given, after building
# bin/ferro once for every package whose tests start the server
# (internal/testing/ferrotest uses $FERRO_BIN). Prints go test's own output,
# then a summary of packages and failed tests.
#
#   scripts/go-test.sh [go test flags] [packages]
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}

if CGO_ENABLED=0 "$GO" build -trimpath -o bin/ferro ./cmd/ferro; then
	export FERRO_BIN=$PWD/bin/ferro
else
	# Do not hide the other packages' results: run them anyway; tests that
	# start the server will fail with the build error.
	echo "go-test: building cmd/ferro failed; tests that start the server will fail" >&2
	unset FERRO_BIN
fi

# ferro-vbmc likewise, for internal/testing/vbmctest ($FERRO_VBMC_BIN).
if CGO_ENABLED=0 "$GO" build -trimpath -o bin/ferro-vbmc ./cmd/ferro-vbmc; then
	export FERRO_VBMC_BIN=$PWD/bin/ferro-vbmc
else
	echo "go-test: building cmd/ferro-vbmc failed; tests that start it will fail" >&2
	unset FERRO_VBMC_BIN
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$GO" test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

count() { grep -cE "$1" "$log" || true; }
echo
echo "== go test summary: $(count '^ok[[:space:]]') packages ok," \
	"$(count '^FAIL[[:space:]]') failed," \
	"$(count '^\?[[:space:]].*\[no test files\]') without tests"
if grep -qE '^[[:space:]]*--- FAIL' "$log"; then
	echo "failed tests:"
	grep -E '^[[:space:]]*--- FAIL' "$log" | sed 's/^[[:space:]]*--- FAIL: /  /'
fi
if grep -qE '^FAIL[[:space:]].*\[(build|setup) failed\]' "$log"; then
	echo "packages that did not build:"
	grep -E '^FAIL[[:space:]].*\[(build|setup) failed\]' "$log" | sed 's/^/  /'
fi
exit "$status"
