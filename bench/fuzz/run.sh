#!/usr/bin/env bash
# Fuzz campaign over every parser: runs each `func FuzzX` of the module,
# one after the other, for FUZZTIME each, and copies the inputs the run
# found interesting (new coverage) from Go's fuzz cache into the package's
# testdata/fuzz/FuzzX/, where `go test` replays them as seeds ever after.
# A crash makes `go test` write the failing input there itself; the
# target is reported FAIL and the script exits 1 at the end.
#
#   bench/fuzz/run.sh                  # the long form: 60s per target
#   FUZZTIME=30s bench/fuzz/run.sh     # the short form recorded in docs/RELIABILITY.md
#   bench/fuzz/run.sh FuzzIngest FuzzCompile   # only these targets
#
# Settings (environment):
#   FUZZTIME      time per target (default 60s)
#   FUZZ_PARALLEL fuzzing workers per target (default 1: the build machines
#                 have 2 cores shared with others; use nproc on your own)
#   FUZZ_MINIMIZE time spent minimizing each new input (default 5s; Go's
#                 default, 60s, can take a whole short run on targets with
#                 large inputs — tarballs, lockfiles, indexes — during
#                 which no exec is counted)
#   MAX_NEW       most new inputs copied per target per run, smallest
#                 first (default 20), so the corpus grows by what matters
#                 and not by thousands of files
#   OUT           where the result table is written (default stdout only)
set -euo pipefail
cd "$(dirname "$0")/../.."

FUZZTIME=${FUZZTIME:-60s}
FUZZ_PARALLEL=${FUZZ_PARALLEL:-1}
FUZZ_MINIMIZE=${FUZZ_MINIMIZE:-5s}
MAX_NEW=${MAX_NEW:-20}
module=$(go list -m)
cache=$(go env GOCACHE)/fuzz

# target list: "package-dir FuzzName" for every fuzz function.
mapfile -t targets < <(grep -rhoE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+' -H . |
	sed -E 's#^\./(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]+)#\1 \2#' | sort -u)
if [ $# -gt 0 ]; then
	want=" $* "
	filtered=()
	for t in "${targets[@]}"; do
		[[ $want == *" ${t#* } "* ]] && filtered+=("$t")
	done
	targets=("${filtered[@]}")
fi

results=$(mktemp)
trap 'rm -f "$results"' EXIT
printf '%-28s %-28s %8s %12s %6s %6s %s\n' target package time execs new copied result >"$results"
failed=0
for t in "${targets[@]}"; do
	dir=${t% *}
	name=${t#* }
	corpus="$cache/$module/$dir/$name"
	before=$(mktemp)
	ls "$corpus" 2>/dev/null | sort >"$before" || true
	log=$(mktemp)
	start=$(date +%s)
	result=ok
	if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZ_MINIMIZE" -parallel "$FUZZ_PARALLEL" "./$dir" >"$log" 2>&1; then
		result=FAIL
		failed=1
		echo "== $name ($dir) failed:" >&2
		tail -30 "$log" >&2
	fi
	secs=$(($(date +%s) - start))
	last=$(grep -E '^fuzz: elapsed' "$log" | tail -1 || true)
	execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
	interesting=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")
	copied=0
	if [ -d "$corpus" ]; then
		mkdir -p "$dir/testdata/fuzz/$name"
		# New entries of this run, smallest first.
		while read -r f; do
			[ -n "$f" ] || continue
			[ "$copied" -lt "$MAX_NEW" ] || break
			if [ ! -e "$dir/testdata/fuzz/$name/$f" ]; then
				cp "$corpus/$f" "$dir/testdata/fuzz/$name/$f"
				copied=$((copied + 1))
			fi
		done < <(comm -13 "$before" <(ls "$corpus" | sort) | while read -r f; do
			printf '%s %s\n' "$(stat -c %s "$corpus/$f")" "$f"
		done | sort -n | cut -d' ' -f2)
		rmdir "$dir/testdata/fuzz/$name" 2>/dev/null || true
	fi
	printf '%-28s %-28s %7ss %12s %6s %6s %s\n' "$name" "$dir" "$secs" "${execs:-?}" "${interesting:-?}" "$copied" "$result" >>"$results"
	rm -f "$before" "$log"
done
cat "$results"
if [ -n "${OUT:-}" ]; then
	cp "$results" "$OUT"
fi
exit $failed
