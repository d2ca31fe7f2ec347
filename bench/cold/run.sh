#!/usr/bin/env bash
# Cold benchmark (issue 15): the first grep, list and read of a version
# nobody asked for yet, on a fresh embedded mirror, next to doing it
# yourself — download the tarball, untar it, run ripgrep — measured side by
# side in one run, alternating, and printed as ratios. The mirror talks to
# the registry in npm's config, as it always does; the anchor downloads the
# tarball URL npm names (resolved before timing, so the anchor is not
# charged for the packument the mirror has to read).
#
# It also checks that the cold grep answers exactly what the warm grep of
# the same version answers, and prints the first grep's CPU time (user +
# system) next to the anchor's: on a loaded machine the wall-time ratio
# mostly measures who got the cores, the CPU ratio how much work each did.
#
#   bench/cold/run.sh [RUNS]        (default 3 runs per package)
# MIRROR=path/to/mirror uses that binary instead of building this tree's
# (to measure an older commit with the same script). PPROF=1 serves pprof
# on the port after the mirror's.
# Needs: go, npm, curl, tar, rg, jq, bc, /usr/bin/time.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-3}
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

# bench SPEC PATTERN READPATH
bench() {
	local spec=$1 pattern=$2 readpath=$3 name=${1%@*} version=${1##*@}
	local url
	url=$(npm view "$spec" dist.tarball)
	local grep_req list_req read_req
	grep_req=$(jq -nc --arg n "$name" --arg v "$version" --arg p "$pattern" \
		'{action:"grep",packageName:$n,version:$v,pattern:$p,maxMatches:100000}')
	list_req=$(jq -nc --arg n "$name" --arg v "$version" '{action:"list",packageName:$n,version:$v}')
	read_req=$(jq -nc --arg n "$name" --arg v "$version" --arg p "$readpath" '{action:"read",packageName:$n,version:$v,path:$p}')
	local r
	for r in $(seq "$runs"); do
		# anchor: download + untar + rg
		rm -rf "$work/x" && mkdir -p "$work/x"
		local t0 t1 anchor cold warm list read same anchor_cpu cold_cpu
		t0=$(now)
		/usr/bin/time -o "$work/anchor.cpu" -f '%U %S' bash -c \
			'curl -sf "$1" | tar xz -C "$2" && { rg -n -uu -e "$3" "$2" >"$4" || true; }' _ "$url" "$work/x" "$pattern" "$work/rg.out"
		t1=$(now)
		anchor=$(echo "$t1 - $t0" | bc)
		anchor_cpu=$(awk '{printf "%.2f", $1 + $2}' "$work/anchor.cpu")

		start
		local c0
		c0=$(cpu "$pid")
		t0=$(now)
		explore "$grep_req" >"$work/cold.json"
		t1=$(now)
		cold=$(echo "$t1 - $t0" | bc)
		cold_cpu=$(echo "$(cpu "$pid") - $c0" | bc)
		explore "$grep_req" >"$work/warm.json"
		if cmp -s <(jq -c '.matches' "$work/cold.json") <(jq -c '.matches' "$work/warm.json"); then same=same; else same=DIFFERENT; fi
		stop

		start
		t0=$(now)
		explore "$list_req" >/dev/null
		t1=$(now)
		list=$(echo "$t1 - $t0" | bc)
		stop

		start
		t0=$(now)
		explore "$read_req" >/dev/null
		t1=$(now)
		read=$(echo "$t1 - $t0" | bc)
		stop

		printf '%s run %d: first grep %.2fx of download+untar+rg (CPU %.2fs vs %.2fs, %.2fx; %d lines, cold answer %s as warm; rg %d lines); first list %.2fx; first read %.2fx\n' \
			"$spec" "$r" "$(echo "$cold / $anchor" | bc -l)" "$cold_cpu" "$anchor_cpu" "$(echo "$cold_cpu / $anchor_cpu" | bc -l)" \
			"$(jq '.matches|length' "$work/cold.json")" "$same" \
			"$(wc -l <"$work/rg.out")" "$(echo "$list / $anchor" | bc -l)" "$(echo "$read / $anchor" | bc -l)"
	done
}

echo "cores: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg); $(rg --version | sed -n 1p)"
trap 'echo "load at the end: $(cut -d" " -f1-3 /proc/loadavg)"; cleanup' EXIT
bench next@16.4.6 useRouter package.json
bench lucide-react@1.81.0 ArrowLeft package.json
