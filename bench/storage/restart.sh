#!/usr/bin/env bash
# The first grep on a replica that did not build the index (a restart
# with an empty local index cache, another replica's or the indexer's
# build), then the same grep again, for mirror builds side by side on one
# kind of store. Each build gets a fresh store (a data dir, or a Postgres
# schema of its own) and fetches lucide-react@1.81.0 and next@16.4.6,
# whose indexes it builds and stores; then, for each pattern, the build
# is started again with an empty --index-dir, greps once (cold: the index
# and the text it reaches come from the store) and RUNS more times (hot),
# and is stopped. Builds take turns per pattern; medians in ms, and the
# answers of all builds must be the same.
#
#   bench/storage/restart.sh BINARY...
# STORE=postgres puts each build's store in a new schema of
# PG (default postgres://postgres@127.0.0.1:5432/test?sslmode=disable),
# dropped at the end; else the embedded store. RUNS (default 5) hot greps,
# ROUNDS (default 3) restarts per build and pattern (the cold figure is
# their median).
# Needs: curl, jq, psql (for STORE=postgres).
set -euo pipefail
runs=${RUNS:-5}
rounds=${ROUNDS:-3}
store=${STORE:-embedded}
pg=${PG:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
work=$(mktemp -d)
pid=
schemas=()
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	wait 2>/dev/null
	for s in "${schemas[@]}"; do psql -q "$pg" -c "DROP SCHEMA IF EXISTS $s CASCADE" >/dev/null 2>&1 || true; done
	rm -rf "$work"
}
trap cleanup EXIT
port=$((20000 + RANDOM % 20000))
n=0
for b in "$@"; do
	n=$((n + 1))
	cp "$b" "$work/mirror$n"
	mkdir -p "$work/$n"
	if [ "$store" = postgres ]; then
		s=bench_restart_$$_$n
		psql -q "$pg" -c "CREATE SCHEMA $s" >/dev/null
		schemas+=("$s")
		printf '%s' "$pg&search_path=$s" >"$work/$n/url"
	else
		: >"$work/$n/url"
	fi
done
# start N INDEXDIR LOG
start() {
	PKGSCOPE_DATABASE_URL=$(cat "$work/$1/url") "$work/mirror$1" --addr "127.0.0.1:$port" \
		--data-dir "$work/$1/data" --index-dir "$2" --jsdelivr-fallback=false >>"$3" 2>&1 &
	pid=$!
	for _ in $(seq 400); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && return 0; sleep 0.05; done
	echo "mirror $1 did not start:" >&2
	cat "$3" >&2
	exit 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }
req() { jq -nc --arg n "$1" --arg v "$2" --arg p "$3" '{action:"grep",packageName:$n,version:$v,pattern:$p,maxMatches:100000}'; }
explore() { curl -sf -X POST -H 'Content-Type: application/json' --data "$(req "$@")" "http://127.0.0.1:$port/v1/explore"; }
timed() { curl -s -o "$work/out.json" -w '%{time_total}\n' -X POST -H 'Content-Type: application/json' --data "$(req "$@")" "http://127.0.0.1:$port/v1/explore"; }
median() { sort -g | awk '{v[NR] = $1} END {printf "%.1f", 1000 * (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }

for i in $(seq "$n"); do
	start "$i" "$work/$i/idx0" "$work/$i/fill.log"
	for spec in 'lucide-react 1.81.0' 'next 16.4.6'; do
		read -r name version <<<"$spec"
		explore "$name" "$version" zzzz >/dev/null
		for _ in $(seq 2400); do grep -q "msg=indexed .*version=$version " "$work/$i/fill.log" && break; sleep 0.25; done
	done
	sleep 5 # the index is stored after it is built
	stop
done

echo "store: $store; builds: $*; rounds: $rounds, hot runs: $runs; load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-36s' pattern
for i in $(seq "$n"); do printf ' %12s %10s' "cold-$i" "hot-$i"; done
echo
for c in 'lucide-react 1.81.0 ArrowLeft' 'lucide-react 1.81.0 createLucideIcon' 'next 16.4.6 useRouter' 'next 16.4.6 function\s+\w+Sync'; do
	read -r name version pat <<<"$c"
	for i in $(seq "$n"); do : >"$work/$i/cold" && : >"$work/$i/hot"; done
	for r in $(seq "$rounds"); do
		for i in $(seq "$n"); do
			rm -rf "$work/$i/idx"
			start "$i" "$work/$i/idx" "$work/$i/restart.log"
			timed "$name" "$version" "$pat" >>"$work/$i/cold"
			jq -c .matches "$work/out.json" >"$work/$i/cold.json"
			for _ in $(seq "$runs"); do timed "$name" "$version" "$pat" >>"$work/$i/hot"; done
			jq -c .matches "$work/out.json" >"$work/$i/hot.json"
			stop
			cmp -s "$work/$i/cold.json" "$work/$i/hot.json" || { echo "build $i, $name $pat: the cold and hot answers differ" >&2; exit 1; }
			cmp -s "$work/$i/hot.json" "$work/1/hot.json" || { echo "$name $pat: builds 1 and $i answered differently" >&2; exit 1; }
		done
	done
	printf '%-36s' "$name $pat"
	for i in $(seq "$n"); do printf ' %12s %10s' "$(median <"$work/$i/cold")" "$(median <"$work/$i/hot")"; done
	echo " ($(jq length "$work/1/hot.json") matches)"
done
for i in $(seq "$n"); do
	printf 'build %s: indexes built after a restart: %s\n' "$i" "$(grep -c 'msg=indexed' "$work/$i/restart.log" || true)"
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
