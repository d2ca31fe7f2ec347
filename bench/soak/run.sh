#!/usr/bin/env bash
# Load + soak run (docs/RELIABILITY.md, "Load and soak"): the mirror under
# a steady rate of an agent-like mix — read, REST read, list, glob, grep
# over warm versions, and a share of cold versions (fetched, ingested and
# indexed on the spot) — from a local fake registry (bench/soak/fake),
# with vegeta at a constant rate. Reports the error rate, p50/p99 overall
# and per kind, and the mirror's RSS and goroutine count at start and end.
#
#   bench/soak/run.sh                      # the long form: 30 minutes at 50 req/s
#   DURATION=2m bench/soak/run.sh          # the short form recorded in the doc
#
# Settings (environment): DURATION (30m), RATE (50 per second), WARM (50
# warm packages), PACKAGES (200) and VERSIONS (60) served, COLD (10: percent
# of requests for a version never asked for), DATABASE_URL (a Postgres
# URL; default the embedded store), REDIS_URL (default: none), KEEP=1 to
# keep the work directory (logs, raw results).
# Needs vegeta: `go install github.com/tsenart/vegeta/v12@v12.13.0` (done
# here when missing). Loopback only; every process stops with the script.
set -euo pipefail
cd "$(dirname "$0")/../.."
duration=${DURATION:-30m}
rate=${RATE:-50}
warm=${WARM:-50}
packages=${PACKAGES:-200}
versions=${VERSIONS:-60}
cold=${COLD:-10}
mirror_port=${MIRROR_PORT:-17888}
pprof_port=${PPROF_PORT:-17889}
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT

vegeta=$(command -v vegeta || echo "$(go env GOPATH)/bin/vegeta")
if [ ! -x "$vegeta" ]; then
  go install github.com/tsenart/vegeta/v12@v12.13.0
fi
go build -o "$tmp/mirror" ./cmd/mirror
go build -o "$tmp/fake" ./bench/soak/fake
mkdir -p "$tmp/data" "$tmp/npm"
: >"$tmp/npm/npmrc"

"$tmp/fake" serve -url-file "$tmp/registry.url" -packages "$packages" -versions "$versions" 2>"$tmp/registry.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/registry.url" ] && break; sleep 0.1; done

env -i PATH="$PATH" HOME="$tmp" \
  PKGSCOPE_ADDR=127.0.0.1:$mirror_port PKGSCOPE_PPROF_ADDR=127.0.0.1:$pprof_port \
  PKGSCOPE_DATA_DIR="$tmp/data" PKGSCOPE_PROJECT_DIR="$tmp" PKGSCOPE_MDN_BASE_URL= \
  PKGSCOPE_DATABASE_URL="${DATABASE_URL:-}" \
  PKGSCOPE_REDIS_URL="${REDIS_URL:-}" PKGSCOPE_REDIS_PREFIX="soak:$$:" \
  npm_config_registry="$(cat "$tmp/registry.url")" \
  NPM_CONFIG_USERCONFIG="$tmp/npm/npmrc" NPM_CONFIG_GLOBALCONFIG="$tmp/npm/npmrc" \
  "$tmp/mirror" 2>"$tmp/mirror.log" &
mirror_pid=$!
pids+=($mirror_pid)
mirror=http://127.0.0.1:$mirror_port
for _ in $(seq 200); do curl -sf -o /dev/null "$mirror/healthz" && break; sleep 0.1; done

# Warm: each warm package listed (ingested) and grepped (indexed).
for i in $(seq 0 $((warm - 1))); do
  p=$(printf 'soak-%03d' "$i")
  curl -sf -o /dev/null -d "{\"action\":\"grep\",\"packageName\":\"$p\",\"version\":\"1.0.0\",\"pattern\":\"f1\"}" "$mirror/v1/explore" ||
    { echo "warming $p failed" >&2; tail -20 "$tmp/mirror.log" >&2; exit 1; }
done

measure() { # label [file] → prints RSS and goroutines; saves the goroutine dump to file
  local rss gor
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$mirror_pid/status")
  gor=$(curl -sf "http://127.0.0.1:$pprof_port/debug/pprof/goroutine?debug=1" | sed -nE '1s/.*total ([0-9]+).*/\1/p')
  printf '%-22s RSS %6d MiB   goroutines %5d\n' "$1" $((rss / 1024)) "$gor"
  if [ -n "${2:-}" ]; then
    curl -sf "http://127.0.0.1:$pprof_port/debug/pprof/goroutine?debug=2" >"$2"
  fi
}
created_by() { grep -o 'created by [^ ]*' "$1" | sort | uniq -c | awk '{print $4, $1}' | sort; }
echo "soak: $rate req/s for $duration, $warm warm packages, $cold% cold versions, store: ${DATABASE_URL:+postgres}${DATABASE_URL:-embedded}, redis: ${REDIS_URL:-none}"
measure "start (warmed)" "$tmp/goroutines.start"
# The generator is endless: it dies of SIGPIPE when vegeta stops reading.
{ "$tmp/fake" targets -mirror "$mirror" -packages "$packages" -versions "$versions" -warm "$warm" -cold "$cold" || true; } |
  "$vegeta" attack -lazy -format=json -rate="$rate" -duration="$duration" -timeout=30s >"$tmp/results.bin"
measure "end (just after load)"
sleep 5 # background index builds of the last cold versions finish; idle connections close
measure "end (5s idle)" "$tmp/goroutines.end"
# Goroutines by the function that started them, where start and end differ.
join -a1 -a2 -e0 -o0,1.2,2.2 <(created_by "$tmp/goroutines.start") <(created_by "$tmp/goroutines.end") |
  awk '$2 != $3 { printf "  goroutines created by %s: %d at start, %d at end\n", $1, $2, $3 }' 

"$vegeta" report <"$tmp/results.bin"
# Per kind: requests, errors (non-2xx or transport), p50, p99 (ms).
"$vegeta" encode --to csv <"$tmp/results.bin" |
  awk -F, '{ k = $11; sub(/.*[?&]k=/, "", k); sub(/&.*/, "", k); print k, $2, $3 / 1e6 }' |
  sort -k1,1 -k3,3n |
  awk '
    function flush() {
      if (kind == "") return
      printf "%-6s %7d requests  %5d errors (%.3f%%)  p50 %8.2f ms  p99 %8.2f ms\n", kind, n, errs, 100 * errs / n, lat[int((n - 1) * 0.50) + 1], lat[int((n - 1) * 0.99) + 1]
    }
    $1 != kind { flush(); kind = $1; n = 0; errs = 0; delete lat }
    { n++; lat[n] = $3; if ($2 < 200 || $2 > 299) errs++ }
    END { flush() }'
errors=$(grep -c 'level=ERROR' "$tmp/mirror.log" || true)
panics=$(grep -c 'panic' "$tmp/mirror.log" || true)
echo "mirror log: $errors ERROR lines, $panics panics; process $(kill -0 $mirror_pid 2>/dev/null && echo alive || echo DEAD)"
