#!/usr/bin/env bash
# Warm grep through the HTTP API of two mirror builds side by side, with
# ripgrep as the anchor (issue 15: the storage change must keep warm grep
# within 1.5x). Each build runs on a fresh embedded store with its default
# settings; both fetch lucide-react@1.81.0 and next@16.4.6 and build their
# indexes; then, for each pattern, the two mirrors and `rg -n -uu` over
# the unpacked tarball take turns, RUNS times (default 15), and the
# medians are printed with the mirrors' answers compared.
#
#   bench/storage/warm.sh BEFORE_BINARY AFTER_BINARY
# Needs: curl, jq, npm, tar, rg.
set -euo pipefail
before=$1
after=$2
runs=${RUNS:-15}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
start() { # start NAME BINARY: sets port_NAME
	local port=$((20000 + RANDOM % 20000))
	"$2" --addr "127.0.0.1:$port" --data-dir "$work/$1" --jsdelivr-fallback=false >"$work/$1.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 200); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.05; done
	printf -v "port_$1" '%s' "$port"
}
start before "$before"
start after "$after"
pb=$port_before pa=$port_after
req() { jq -nc --arg n "$1" --arg v "$2" --arg p "$3" '{action:"grep",packageName:$n,version:$v,pattern:$p,maxMatches:100000}'; }
grep1() { curl -sf -X POST -H 'Content-Type: application/json' --data "$(req "$2" "$3" "$4")" "http://127.0.0.1:$1/v1/explore"; }
timed() { curl -s -o /dev/null -w '%{time_total}\n' -X POST -H 'Content-Type: application/json' --data "$(req "$2" "$3" "$4")" "http://127.0.0.1:$1/v1/explore"; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for spec in lucide-react@1.81.0 next@16.4.6; do
	name=${spec%@*} version=${spec##*@}
	mkdir -p "$work/$name"
	curl -sf "$(npm view "$spec" dist.tarball)" | tar xz -C "$work/$name"
	grep1 "$pb" "$name" "$version" zzzz >/dev/null
	grep1 "$pa" "$name" "$version" zzzz >/dev/null
done
# the full indexes build behind the first greps: wait for them
for log in before after; do
	for v in 1.81.0 16.4.6; do
		for _ in $(seq 1200); do grep -q "msg=indexed .*version=$v " "$work/$log.log" && break; sleep 0.25; done
	done
done
sleep 2 # stored, and published or served stored
echo "runs: $runs; load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-34s %10s %10s %8s %10s %10s\n' pattern before-ms after-ms after/be rg-ms before/rg
for c in 'lucide-react 1.81.0 ArrowLeft' 'lucide-react 1.81.0 createLucideIcon' 'next 16.4.6 useRouter' 'next 16.4.6 function\s+\w+Sync'; do
	read -r name version pat <<<"$c"
	a=$(grep1 "$pb" "$name" "$version" "$pat" | jq -c .matches)
	b=$(grep1 "$pa" "$name" "$version" "$pat" | jq -c .matches) # warms the text cache
	[ "$a" = "$b" ] || { echo "$name $pat: the two builds answered differently" >&2; exit 1; }
	: >"$work/tb" && : >"$work/ta" && : >"$work/tr"
	for i in $(seq "$runs"); do
		if [ $((i % 2)) = 0 ]; then
			timed "$pb" "$name" "$version" "$pat" >>"$work/tb"
			timed "$pa" "$name" "$version" "$pat" >>"$work/ta"
		else
			timed "$pa" "$name" "$version" "$pat" >>"$work/ta"
			timed "$pb" "$name" "$version" "$pat" >>"$work/tb"
		fi
		/usr/bin/time -f %e rg -n -uu -- "$pat" "$work/$name/package" 2>>"$work/tr" >/dev/null || true
	done
	mb=$(median <"$work/tb") ma=$(median <"$work/ta") mr=$(median <"$work/tr")
	P="$name $pat" awk -v b="$mb" -v a="$ma" -v r="$mr" 'BEGIN {printf "%-34s %10.1f %10.1f %8.2f %10.0f %10.3f\n", ENVIRON["P"], b*1000, a*1000, a/b, r*1000, b/r}'
done
i=0
for log in before after; do
	printf '%s mirror: ' "$log"
	grep -E '^Vm(HWM|RSS)' "/proc/${pids[$i]}/status" | tr -s ' \t' ' ' | paste -sd' '
	i=$((i + 1))
	printf '  index files kept: %s bytes\n' "$(find "$work/$log" -name '*.idx' -printf '%s\n' | awk '{s+=$1} END {print s+0}')"
done
