#!/usr/bin/env bash
# End-to-end grep through the mirror's HTTP API next to ripgrep and the
# index alone, in one run (issue 27's guard: the overhead of shaping an
# answer stays within 1.5x of the index search plus 1 ms).
#
# It packs next@16.4.6, lucide-react@1.81.0, typescript@5.9.3 and
# three@0.187.0 (npm pack, through npm's configured registry) into WORKDIR
# and unpacks them for ripgrep; starts
# the mirror of this tree (and, with BEFORE=path/to/mirror, an older
# build) on fresh embedded stores, warms each version (cold ingest + index
# build, timed), then, round after round, alternates for every case: a
# curl to each mirror (its time_total) and `rg -n -uu` over the unpacked
# tarball (wall time from bash's EPOCHREALTIME, process start included).
# Medians of RUNS rounds (default 15). The target column is issue 27's
# ratio to ripgrep for the case. Then BenchmarkGrepOverhead gives, in process,
# the same pages' time (explore) and the time they spent in their index
# searches (index); HTTP/index is the end-to-end overhead.
#   BEFORE=/tmp/mirror-main bench/grep/http.sh [WORKDIR]
set -euo pipefail
trap 'echo "http.sh: line $LINENO failed: $BASH_COMMAND" >&2' ERR
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-${TMPDIR:-/tmp}/pkgscope-grep-bench}
runs=${RUNS:-15}
for tool in go npm rg curl python3; do
	command -v "$tool" >/dev/null || { echo "http.sh: $tool not found" >&2; exit 1; }
done
mkdir -p "$work/tgz"
for spec in next@16.4.6 lucide-react@1.81.0 typescript@5.9.3 three@0.187.0; do
	dir="$work/${spec/@/-}"
	if [ ! -d "$dir/package" ]; then
		mkdir -p "$dir"
		got=$(cd "$work/tgz" && npm pack "$spec" --silent)
		tar xzf "$work/tgz/$got" -C "$dir"
	fi
done
(cd "$root" && go build -o "$work/mirror" ./cmd/mirror)
echo "ripgrep: $(rg --version | head -1); cores: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"

pids=()
datas=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "${datas[@]}"' EXIT
start() { # binary: starts it on a fresh store; its port is in $port
	local data
	data=$(mktemp -d)
	port=$((20000 + RANDOM % 20000))
	while curl -s -o /dev/null "127.0.0.1:$port/"; do port=$((20000 + RANDOM % 20000)); done # taken: another
	"$1" --addr "127.0.0.1:$port" --data-dir "$data" --jsdelivr-fallback=false >>"$work/mirror.log" 2>&1 &
	local me=$!
	pids+=("$me")
	datas+=("$data")
	for _ in $(seq 1 100); do
		kill -0 "$me" 2>/dev/null || break
		curl -sf "127.0.0.1:$port/readyz" >/dev/null && return
		sleep 0.2
	done
	echo "http.sh: $1 did not start on port $port (see $work/mirror.log)" >&2
	exit 1
}
labels=(after)
start "$work/mirror"
ports=("$port")
if [ -n "${BEFORE:-}" ]; then
	labels+=(before)
	start "$BEFORE"
	ports+=("$port")
fi

# name|version|pattern (JSON-escaped)|extra JSON fields
cases=(
	'lucide-react|1.81.0|ArrowLeft|'
	'next|16.4.6|useRouter|'
	'next|16.4.6|useRouter|,"maxMatches":5'
	'next|16.4.6|useRouter|,"include":["*.d.ts"]'
	'next|16.4.6|function\\s+\\w+Sync|'
	'typescript|5.9.3|createProgram|'
	'three|0.187.0|WebGLRenderer|'
)
# issue 27's target: how many times faster than ripgrep (cases without one: -)
declare -A target=(['lucide-react|1.81.0|ArrowLeft|']=10 ['next|16.4.6|useRouter|']=30
	['next|16.4.6|function\\s+\\w+Sync|']=15 ['typescript|5.9.3|createProgram|']=5 ['three|0.187.0|WebGLRenderer|']=5)
req() { printf '{"action":"grep","packageName":"%s","version":"%s","pattern":"%s"%s}' "$1" "$2" "$3" "$4"; }
time_req() { curl -s -o /dev/null -w '%{time_total}\n' -d "$2" "127.0.0.1:$1/v1/explore"; }
for i in "${!ports[@]}"; do
	for pkg in 'lucide-react|1.81.0|ArrowLeft|' 'next|16.4.6|useRouter|' 'typescript|5.9.3|createProgram|' 'three|0.187.0|WebGLRenderer|'; do
		IFS='|' read -r n v p x <<<"$pkg"
		echo "${labels[$i]}: cold first grep of $n@$v (ingest + index build): $(time_req "${ports[$i]}" "$(req "$n" "$v" "$p" "$x")")s"
	done
done
# Warm: the full index is built behind the first answer (next's takes
# ~7 s). Each mirror's /metrics counts the builds that finished; nothing is
# timed before all four versions' have (SETTLE more seconds, default 0, for
# the store's copy, written after the count). The same pages again load
# its text cache and the per-version tables.
built() { curl -sf "127.0.0.1:$1/metrics" | awk '/^pkgscope_index_build_duration_seconds_count\{outcome="ok"\}/ {print $2}'; }
for i in "${!ports[@]}"; do
	for _ in $(seq 1 600); do [ "$(built "${ports[$i]}")" = 4 ] && break; sleep 0.5; done
	[ "$(built "${ports[$i]}")" = 4 ] || { echo "http.sh: ${labels[$i]}'s four index builds did not finish in 300 s (see $work/mirror.log)" >&2; exit 1; }
done
sleep "${SETTLE:-0}"
for c in "${cases[@]}"; do
	IFS='|' read -r n v p x <<<"$c"
	for port in "${ports[@]}"; do for _ in 1 2 3; do time_req "$port" "$(req "$n" "$v" "$p" "$x")" >/dev/null; done; done
done
declare -A t
for _ in $(seq "$runs"); do
	for c in "${cases[@]}"; do
		IFS='|' read -r n v p x <<<"$c"
		for i in "${!ports[@]}"; do
			t["$c|${labels[$i]}"]+="$(time_req "${ports[$i]}" "$(req "$n" "$v" "$p" "$x")") "
		done
		rgpat=$(printf '%b' "${p//\\\\/\\}")
		t0=$EPOCHREALTIME
		rg -n -uu "$rgpat" "$work/$n-$v/package" >/dev/null
		t["$c|rg"]+="$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.6f", b - a}') "
	done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]*1000}'; }

# In process: the pages' time and their index searches' (medians, ms).
declare -A ex ix
bench=$(cd "$root" && PKGSCOPE_BENCH_TGZ="$work/tgz" go test -run '^$' -bench GrepOverhead -benchtime "${runs}x" ./internal/explore/ 2>&1 | grep '^BenchmarkGrepOverhead/')
while read -r line; do
	key=$(awk '{print $1}' <<<"$line" | sed 's/^BenchmarkGrepOverhead\///; s/-[0-9]*$//')
	ex[$key]=$(grep -o '[0-9.]* explore-ms' <<<"$line" | cut -d' ' -f1)
	ix[$key]=$(grep -o '[0-9.]* index-ms' <<<"$line" | cut -d' ' -f1)
done <<<"$bench"

printf '\n| grep | rg -n -uu | index (in process) | explore (in process) | HTTP |'
[ -n "${BEFORE:-}" ] && printf ' HTTP before |'
printf ' HTTP / index | rg / HTTP | target |\n|---|---:|---:|---:|---:|'
[ -n "${BEFORE:-}" ] && printf -- '---:|'
printf -- '---:|---:|---:|\n'
for c in "${cases[@]}"; do
	IFS='|' read -r n v p x <<<"$c"
	key="$n/$(printf '%b' "${p//\\\\/\\}")"
	case "$x" in
	*maxMatches*) key+=/maxMatches5 ;;
	*include*) key+=/dts ;;
	esac
	rgm=$(median <<<"${t["$c|rg"]}")
	h=$(median <<<"${t["$c|after"]}")
	printf '| %s@%s `%s`%s | %s ms | %s ms | %s ms | %s ms |' "$n" "$v" "$(printf '%b' "${p//\\\\/\\}")" "$x" "$rgm" "${ix[$key]:-?}" "${ex[$key]:-?}" "$h"
	[ -n "${BEFORE:-}" ] && printf ' %s ms |' "$(median <<<"${t["$c|before"]}")"
	awk -v h="$h" -v i="${ix[$key]:-0}" -v r="$rgm" -v g="${target[$c]:--}" \
		'BEGIN {printf " %.2fx | %.1fx | %s |\n", (i > 0 ? h/i : 0), r/h, (g == "-" ? "-" : "≥ " g "x")}'
done
