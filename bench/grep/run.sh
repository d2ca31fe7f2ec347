#!/usr/bin/env bash
# Grep benchmark: the trigram index (internal/index) against ripgrep on the
# same unpacked npm tarballs, measured side by side in one run.
#
# For each package it downloads the tarball with `npm pack` (through npm's
# configured registry), unpacks it, builds the index, then for each pattern
# times Index.Search (index open, page cache warm: a warm serving node) and
# `rg -n -uu` over the unpacked directory, checks that both report the same
# (file, line) pairs, and prints the ratio, index size, build time per MB
# and coverage. The last package also runs a concurrent "grep storm" and
# reports peak memory.
#
# Usage: bench/grep/run.sh [WORKDIR]    (default: ${TMPDIR:-/tmp}/pkgscope-grep-bench)
# Needs: go, npm, rg (apt-get install ripgrep), tar.
# RUNS=N sets the timed runs per pattern (median reported, default 15).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-${TMPDIR:-/tmp}/pkgscope-grep-bench}
runs=${RUNS:-15}
for tool in go npm rg tar; do
	command -v "$tool" >/dev/null || { echo "run.sh: $tool not found" >&2; exit 1; }
done
mkdir -p "$work"
(cd "$root" && go build -o "$work/grepbench" ./internal/index/grepbench)
echo "ripgrep: $(rg --version | head -1); cores: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"

# package|patterns (one per line after the first)
bench() {
	local spec=$1
	shift
	local name=${spec%@*} version=${spec##*@}
	local tgz="$work/$(echo "$name" | tr -d @ | tr / -)-$version.tgz"
	local dir="$work/$(echo "$name" | tr -d @ | tr / -)-$version"
	if [ ! -f "$tgz" ]; then
		local got
		got=$(cd "$work" && npm pack "$spec" --silent)
		[ "$work/$got" -ef "$tgz" ] || mv "$work/$got" "$tgz"
	fi
	if [ ! -d "$dir/package" ]; then
		mkdir -p "$dir"
		tar xzf "$tgz" -C "$dir"
	fi
	# One untimed rg pass warms the page cache for both sides.
	rg -uu -c zzzzzz "$dir/package" >/dev/null || true
	"$work/grepbench" -name "$spec" -dir "$dir/package" -runs "$runs" -o "$work/$(basename "$dir").idx" "$@"
}

bench next@16.4.6 useRouter 'function\s+\w+Sync'
bench lucide-react@1.81.0 ArrowLeft
bench typescript@5.9.3 createSourceFile
"$work/grepbench" -dir "$work/next-16.4.6/package" -reuse -o "$work/next-16.4.6.idx" -runs 1 -rg=false -storm 32 useRouter 'function\s+\w+Sync'
# Patterns the index cannot narrow much (case-folded, no literal): shown
# for honesty, with fewer runs.
"$work/grepbench" -dir "$work/next-16.4.6/package" -reuse -o "$work/next-16.4.6.idx" -runs 3 '(?i)userouter' 'a[ab]{16}c' '[A-Z]{5}_[A-Z]{5}'
