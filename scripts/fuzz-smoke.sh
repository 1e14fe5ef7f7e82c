#!/usr/bin/env bash
# Runs every Fuzz* target in the module for a short time ($FUZZTIME, default
# 3s), so that a target that crashes at once, or a seed corpus entry that
# fails, breaks `make test`. Targets are discovered with `go test -list`, so
# new ones are picked up without editing anything. $FUZZPKGS narrows the
# packages searched (default ./...).
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-3s}
export CGO_ENABLED=0

listing=$("$GO" test -list '^Fuzz' ${FUZZPKGS:-./...} 2>&1)
list_status=$?

# go test -list prints each package's matching names, then "ok <package>".
targets=()
names=()
while IFS= read -r line; do
	case "$line" in
	Fuzz*) names+=("$line") ;;
	ok[[:space:]]*)
		pkg=$(awk '{print $2}' <<<"$line")
		for n in "${names[@]}"; do targets+=("$pkg $n"); done
		names=()
		;;
	*) names=() ;;
	esac
done <<<"$listing"

if [ "$list_status" -ne 0 ]; then
	echo "$listing" | grep -vE '^(Fuzz|ok[[:space:]]|\?[[:space:]])'
	echo "fuzz-smoke: listing fuzz targets failed (go test -list exit $list_status); running the ones found"
fi
if [ "${#targets[@]}" -eq 0 ]; then
	echo "fuzz-smoke: no Fuzz targets found"
	exit "$list_status"
fi

failed=()
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "== fuzz $pkg $name for $FUZZTIME"
	# Go 1.26's fuzz coordinator can end a run with a bare "context deadline
	# exceeded" when its -fuzztime deadline fires under load
	# (go.dev/issue/75804; a worker's error that wraps the cancellation is
	# not recognised as it, so "context canceled" is possible too). A real finding always writes a reproducer, so
	# such a run without one is tried again, twice, bounded by a count of
	# inputs (as many as the first run got through) instead of a deadline.
	limit=$FUZZTIME
	for attempt in 1 2 3; do
		out=$("$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$limit" "$pkg" 2>&1)
		status=$?
		echo "$out"
		if [ "$status" -eq 0 ]; then
			break
		fi
		if [ "$attempt" -lt 3 ] && grep -qE 'context (deadline exceeded|canceled)' <<<"$out" && ! grep -q 'Failing input written to' <<<"$out"; then
			execs=$(grep -o 'execs: [0-9]*' <<<"$out" | tail -n 1 | awk '{print $2}')
			if [ -n "$execs" ] && [ "$execs" -gt 0 ]; then
				limit="${execs}x"
			fi
			echo "fuzz-smoke: $name hit the fuzz coordinator's deadline bug (no failing input); running it again for $limit"
			continue
		fi
		failed+=("$pkg $name")
		break
	done
done

echo
echo "== fuzz-smoke summary: ${#targets[@]} targets, ${#failed[@]} failed"
for f in "${failed[@]}"; do echo "  FAIL $f"; done
if [ "${#failed[@]}" -ne 0 ] || [ "$list_status" -ne 0 ]; then
	exit 1
fi
