#!/usr/bin/env bash
# Diff benchmark (docs/BENCHMARKS.md, "Diff"): the mirror's diff next to
# `npm diff`, both warm, on a big real pair, side by side in one run, and
# a byte-for-byte check of their outputs.
#
#   bench/diff/run.sh [package] [from] [to] [runs]   (default next 16.4.5 16.4.6 5)
#
# The mirror runs on a fresh embedded store with the registry of your npm
# config; it is warmed by one diff (both versions ingested). npm gets a
# cache of its own under the temp dir, warmed by one npm diff, so neither
# side downloads while timed. Each timed round runs npm diff, then the
# same diff from the mirror's REST route (curl, following Link rel=next),
# and compares the bytes. Needs npm, curl, Go.
set -euo pipefail
cd "$(dirname "$0")/../.."
pkg=${1:-next} from=${2:-16.4.5} to=${3:-16.4.6} runs=${4:-5}
tmp=$(mktemp -d)
mirror_pid=
cleanup() { [ -n "$mirror_pid" ] && kill "$mirror_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

go build -o "$tmp/mirror" ./cmd/mirror
port=$((20000 + RANDOM % 20000))
"$tmp/mirror" --data-dir "$tmp/data" --addr "127.0.0.1:$port" >"$tmp/mirror.log" 2>&1 &
mirror_pid=$!
for _ in $(seq 100); do
  curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done
base="http://127.0.0.1:$port/v1/npm/$pkg/-/diff?from=$from&to=$to"
export npm_config_cache="$tmp/npm-cache" npm_config_update_notifier=false npm_config_color=false

now() { date +%s%N; }
# fetch URL OUT: GET the REST diff, following Link rel=next, into OUT.
fetch() {
  local url=$1 out=$2
  : >"$out"
  while [ -n "$url" ]; do
    curl -fsS -D "$tmp/headers" "$url" >>"$out"
    url=$(sed -n 's/^[Ll]ink: <\(.*\)>; rel="next".*/\1/p' "$tmp/headers" | tr -d '\r')
    if [ -n "$url" ]; then url="http://127.0.0.1:$port$url"; fi
  done
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# name: label; npm args after --; query string for the mirror.
bench() {
  local name=$1 query=$2; shift 2
  local t0 t1
  t0=$(now); fetch "$base&$query" "$tmp/cold.txt"; t1=$(now)
  echo "$name: first mirror answer (fills both versions when cold): $(( (t1 - t0) / 1000000 )) ms" >&2
  npm diff "--diff=$pkg@$from" "--diff=$pkg@$to" "$@" >"$tmp/npm.txt"
  : >"$tmp/npm.ms"; : >"$tmp/mirror.ms"
  for _ in $(seq "$runs"); do
    t0=$(now); npm diff "--diff=$pkg@$from" "--diff=$pkg@$to" "$@" >"$tmp/npm.txt"; t1=$(now)
    echo $(( (t1 - t0) / 1000000 )) >>"$tmp/npm.ms"
    for _ in 1 2 3; do
      t0=$(now); fetch "$base&$query" "$tmp/mirror.txt"; t1=$(now)
      echo $(( (t1 - t0) / 1000 )) >>"$tmp/mirror.ms"
    done
  done
  local n m same
  n=$(median <"$tmp/npm.ms"); m=$(median <"$tmp/mirror.ms")
  if cmp -s "$tmp/npm.txt" "$tmp/mirror.txt"; then same=identical; else same=DIFFERENT; fi
  printf '| %s | %s ms | %s.%03d ms | %s× | %s bytes, %s lines, %s |\n' "$name" "$n" $((m / 1000)) $((m % 1000)) \
    "$(awk -v n="$n" -v m="$m" 'BEGIN {printf "%.0f", n * 1000 / m}')" \
    "$(wc -c <"$tmp/npm.txt")" "$(wc -l <"$tmp/npm.txt")" "$same"
  if [ "$same" = DIFFERENT ]; then
    mkdir -p /tmp/diff-bench
    cp "$tmp/npm.txt" "/tmp/diff-bench/$name-npm.txt"; cp "$tmp/mirror.txt" "/tmp/diff-bench/$name-mirror.txt"
    echo "outputs differ: kept in /tmp/diff-bench/$name-{npm,mirror}.txt" >&2
  fi
}

echo "$pkg $from → $to, npm $(npm --version), $runs npm runs and $((runs * 3)) mirror runs per row, medians"
echo
echo "| diff | npm diff (warm cache) | mirror (warm, REST) | ratio | output |"
echo "|---|---:|---:|---:|---|"
bench name-only "nameOnly=true" --diff-name-only
bench d.ts "include=*.d.ts" '*.d.ts'
bench md "include=*.md" '*.md'
bench full "" 
