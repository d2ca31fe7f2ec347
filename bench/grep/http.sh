#!/usr/bin/env bash
# End-to-end grep through the mirror's HTTP API next to ripgrep, in one run:
# starts a mirror on a fresh embedded store, warms next@16.4.6 (cold ingest +
# index build, timed), then times warm greps with curl and `rg -n -uu` over
# the unpacked tarball for the same patterns. Run bench/grep/run.sh first
# (it leaves the unpacked tarball in WORKDIR), or let this script unpack it.
#   bench/grep/http.sh [WORKDIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-${TMPDIR:-/tmp}/pkgscope-grep-bench}
runs=${RUNS:-15}
mkdir -p "$work"
dir="$work/next-16.4.6"
if [ ! -d "$dir/package" ]; then
	mkdir -p "$dir"
	got=$(cd "$work" && npm pack next@16.4.6 --silent)
	tar xzf "$work/$got" -C "$dir"
fi
(cd "$root" && go build -o "$work/mirror" ./cmd/mirror)
data=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
"$work/mirror" --addr "127.0.0.1:$port" --data-dir "$data" 2>"$work/mirror.log" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 1 50); do curl -sf "127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done

req() { printf '{"action":"grep","packageName":"next","version":"16.4.6","pattern":"%s","maxMatches":10000}' "$1"; }
cold=$(curl -s -o /dev/null -w '%{time_total}' -d "$(req useRouter)" "127.0.0.1:$port/v1/explore")
echo "cold first grep (ingest + index build): ${cold}s"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for pat in 'useRouter' 'function\\s+\\w+Sync'; do
	rgpat=$(printf '%b' "${pat//\\\\/\\}")
	http=$(for _ in $(seq "$runs"); do curl -s -o /dev/null -w '%{time_total}\n' -d "$(req "$pat")" "127.0.0.1:$port/v1/explore"; done | median)
	rgt=$(for _ in $(seq "$runs"); do /usr/bin/time -f %e rg -n -uu "$rgpat" "$dir/package" 2>&1 >/dev/null | tail -1; done | median)
	n=$(curl -s -d "$(req "$pat")" "127.0.0.1:$port/v1/explore" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["matches"]))')
	nrg=$(rg -n -uu "$rgpat" "$dir/package" | wc -l)
	awk -v p="$pat" -v h="$http" -v r="$rgt" -v n="$n" -v m="$nrg" 'BEGIN {printf "%-22s mirror HTTP %.1f ms (%d lines)  rg %.0f ms (%d lines)  ratio %.0fx\n", p, h*1000, n, r*1000, m, r/h}'
done
