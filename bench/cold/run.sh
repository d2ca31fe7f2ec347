#!/usr/bin/env bash
# Cold benchmark (issue 15): the first grep, list and read of a version
# nobody asked for yet, on a fresh embedded mirror, next to doing it
# yourself — download the tarball, untar it, run ripgrep — measured side by
# side in one run and printed as ratios. The mirror talks to the registry in
# npm's config, as it always does; the anchor downloads the tarball URL npm
# names (resolved before timing, so the anchor is not charged for the
# packument the mirror has to read).
#
# Each mirror measurement is compared with the median of ANCHORS anchor runs
# taken around it, not with one: the anchor's time is bimodal (lucide-react's
# curl + tar + rg took ~0.4 s or ~1.6 s of CPU, 2026-12-02), so a single
# anchor run decided the ratio more than the mirror did. The anchors are
# split before and after the measurement, the larger half alternating sides
# from one measurement to the next, so neither side is systematically the
# one that ran while the machine was quieter.
#
# It checks the answers too: the cold grep's first page must equal the warm
# grep's, and the whole warm answer (its count mode followed through `next`)
# must give the same files and matching-line counts as `rg -c` on the
# untarred tarball. It prints the first grep's CPU time (user + system) next
# to the anchors' median: on a loaded machine the wall-time ratio mostly
# measures who got the cores, the CPU ratio how much work each did.
#
#   bench/cold/run.sh [RUNS]    runs per package (default $RUNS, else 3)
# ANCHORS=K anchor runs per mirror measurement (default 3).
# PACKAGES="next lucide-react" the packages measured (default both).
# MIRROR=path/to/mirror uses that binary instead of building this tree's
# (to measure an older commit with the same script). PPROF=1 serves pprof
# on the port after the mirror's.
# Needs: go, npm, curl, tar, rg, jq, bc, /usr/bin/time.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-${RUNS:-3}}
anchors=${ANCHORS:-3}
packages=${PACKAGES:-next lucide-react}
[ "$anchors" -ge 1 ] 2>/dev/null || { echo "cold/run.sh: ANCHORS must be a whole number ≥ 1, not '$anchors'" >&2; exit 1; }
for tool in go npm curl tar rg jq bc /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "cold/run.sh: $tool not found" >&2; exit 1; }
done
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
if [ -n "${MIRROR:-}" ]; then
	cp "$MIRROR" "$work/mirror"
else
	(cd "$root" && go build -o "$work/mirror" ./cmd/mirror)
fi
port=$((20000 + RANDOM % 20000))
now() { date +%s.%N; }
load() { cut -d' ' -f1 /proc/loadavg; }

# start a mirror on a fresh data dir; wait until it is ready
start() {
	rm -rf "$work/data"
	"$work/mirror" --addr "127.0.0.1:$port" --data-dir "$work/data" --jsdelivr-fallback=false \
		${PPROF:+--pprof-addr 127.0.0.1:$((port + 1))} >"$work/mirror.log" 2>&1 &
	pid=$!
	for _ in $(seq 200); do
		curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && return 0
		sleep 0.05
	done
	echo "mirror did not start:" >&2
	cat "$work/mirror.log" >&2
	exit 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }
# cpu PID: the process's user + system CPU seconds so far
cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"; }
explore() { curl -sf -X POST -H 'Content-Type: application/json' --data "$1" "http://127.0.0.1:$port/v1/explore"; }
# median of the numbers on stdin, one a line
median() { sort -g | awk '{v[NR] = $1} END {printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ratio() { echo "$1 / $2" | bc -l | xargs printf '%.2f'; }

# anchor URL PATTERN: download + untar + rg, once; appends its wall and CPU
# seconds to $work/anchor.wall and $work/anchor.cpu
anchor() {
	rm -rf "$work/x" && mkdir -p "$work/x"
	local t0 t1
	t0=$(now)
	/usr/bin/time -o "$work/time.out" -f '%U %S' bash -c \
		'curl -sf "$1" | tar xz -C "$2" && { rg -n -uu -e "$3" "$2" >"$4" || true; }' _ "$1" "$work/x" "$2" "$work/rg.out"
	t1=$(now)
	echo "$t1 - $t0" | bc >>"$work/anchor.wall"
	awk '{printf "%.2f\n", $1 + $2}' "$work/time.out" >>"$work/anchor.cpu"
}

# counts REQUEST: the grep's whole count answer, following `next`, as sorted
# "path:count" lines
counts() {
	local req=$1 page
	while [ -n "$req" ]; do
		page=$(explore "$req")
		jq -r '.files[] | "\(.path):\(.count)"' <<<"$page"
		req=$(jq -c '.next // empty' <<<"$page")
	done | sort
}

# measure ACTION URL PATTERN REQUEST: one mirror measurement of ACTION on a
# fresh mirror, between ANCHORS anchor runs; sets wall, cpu_m, anchor_wall
# (median), anchor_cpu (median), anchor_list (each anchor's wall time)
measure() {
	local action=$1 url=$2 pattern=$3 req=$4 before i c0 t0 t1
	: >"$work/anchor.wall"
	: >"$work/anchor.cpu"
	before=$(((anchors + flip) / 2))
	flip=$((1 - flip))
	for ((i = 0; i < before; i++)); do anchor "$url" "$pattern"; done
	start
	c0=$(cpu "$pid")
	t0=$(now)
	explore "$req" >"$work/$action.json"
	t1=$(now)
	wall=$(echo "$t1 - $t0" | bc)
	cpu_m=$(echo "$(cpu "$pid") - $c0" | bc)
	if [ "$action" = grep ]; then
		# checks, after the timing: the cold first page against the warm
		# one, the whole answer against ripgrep's
		explore "$req" >"$work/warm.json"
		if cmp -s <(jq -c '.matches' "$work/grep.json") <(jq -c '.matches' "$work/warm.json"); then same=same; else same=DIFFERENT; fi
		counts "$(jq -c '{action, packageName, version, pattern} + {outputMode: "count", sort: "path"}' <<<"$req")" >"$work/mirror.counts"
	fi
	stop
	for ((i = before; i < anchors; i++)); do anchor "$url" "$pattern"; done
	anchor_wall=$(median <"$work/anchor.wall")
	anchor_cpu=$(median <"$work/anchor.cpu")
	anchor_list=$(sort -g "$work/anchor.wall" | xargs printf '%.2f ' | sed 's/ $//')
}

# bench SPEC PATTERN READPATH
bench() {
	local spec=$1 pattern=$2 readpath=$3 name=${1%@*} version=${1##*@}
	local url grep_req list_req read_req r l0 vs_rg rg_counts
	url=$(npm view "$spec" dist.tarball)
	grep_req=$(jq -nc --arg n "$name" --arg v "$version" --arg p "$pattern" \
		'{action:"grep",packageName:$n,version:$v,pattern:$p,maxMatches:100000}')
	list_req=$(jq -nc --arg n "$name" --arg v "$version" '{action:"list",packageName:$n,version:$v}')
	read_req=$(jq -nc --arg n "$name" --arg v "$version" --arg p "$readpath" '{action:"read",packageName:$n,version:$v,path:$p}')
	for r in $(seq "$runs"); do
		l0=$(load)
		measure grep "$url" "$pattern" "$grep_req"
		# the last anchor's tree is still there: ripgrep's whole answer
		rg_counts=$(cd "$work/x/package" && rg -c -uu -e "$pattern" . | sed 's|^\./||' | sort)
		if [ "$rg_counts" = "$(cat "$work/mirror.counts")" ]; then vs_rg=same; else vs_rg=DIFFERENT; fi
		printf '%s run %d (load %s): first grep %.2fx: %.2f s vs anchors %s (median %.2f); CPU %.2f s vs %.2f s, %.2fx; first page %d lines, cold %s as warm; whole answer %d files %d lines, %s as rg -c (%d lines)\n' \
			"$spec" "$r" "$l0" "$(ratio "$wall" "$anchor_wall")" "$wall" "$anchor_list" "$anchor_wall" \
			"$cpu_m" "$anchor_cpu" "$(ratio "$cpu_m" "$anchor_cpu")" \
			"$(jq '.matches|length' "$work/grep.json")" "$same" \
			"$(wc -l <"$work/mirror.counts")" "$(awk -F: '{s += $NF} END {print s + 0}' "$work/mirror.counts")" \
			"$vs_rg" "$(wc -l <"$work/rg.out")"
		echo "$spec grep $(ratio "$wall" "$anchor_wall") $(ratio "$cpu_m" "$anchor_cpu") $same $vs_rg" >>"$work/summary"
		for action in list read; do
			local req=$list_req
			[ "$action" = read ] && req=$read_req
			measure "$action" "$url" "$pattern" "$req"
			printf '%s run %d: first %s %.2fx: %.2f s vs anchors %s (median %.2f)\n' \
				"$spec" "$r" "$action" "$(ratio "$wall" "$anchor_wall")" "$wall" "$anchor_list" "$anchor_wall"
			echo "$spec $action $(ratio "$wall" "$anchor_wall")" >>"$work/summary"
		done
	done
}

# summary: per package and action, the median ratio, its range and how many
# runs were ≤ 1.0x
summary() {
	echo "summary ($runs runs, each against the median of $anchors anchor runs; load now $(cut -d' ' -f1-3 /proc/loadavg)):"
	local spec action
	for spec in $(cut -d' ' -f1 "$work/summary" | uniq); do
		for action in grep list read; do
			awk -v s="$spec" -v a="$action" '$1 == s && $2 == a {print $3}' "$work/summary" | sort -g >"$work/r"
			printf '  %s first %s: median %.2fx (%s–%s), ≤ 1.0x in %d of %d' "$spec" "$action" \
				"$(median <"$work/r")" "$(head -1 "$work/r")" "$(tail -1 "$work/r")" \
				"$(awk '$1 <= 1.0' "$work/r" | wc -l)" "$(wc -l <"$work/r")"
			if [ "$action" = grep ]; then
				printf '; CPU median %.2fx; answers: %s' \
					"$(awk -v s="$spec" '$1 == s && $2 == "grep" {print $4}' "$work/summary" | median)" \
					"$(awk -v s="$spec" '$1 == s && $2 == "grep" {print $5 " as warm, " $6 " as rg"}' "$work/summary" | sort | uniq -c | sed 's/^ *//' | paste -sd, -)"
			fi
			echo
		done
	done
}

echo "cores: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg); anchors per measurement: $anchors; $(rg --version | sed -n 1p)"
flip=0
: >"$work/summary"
trap 'summary; cleanup' EXIT
for p in $packages; do
	case $p in
	next) bench next@16.4.6 useRouter package.json ;;
	lucide-react) bench lucide-react@1.81.0 ArrowLeft package.json ;;
	*) echo "cold/run.sh: unknown package '$p' (known: next lucide-react)" >&2; exit 1 ;;
	esac
done
