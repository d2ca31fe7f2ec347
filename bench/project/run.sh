#!/usr/bin/env bash
# Project grep next to ripgrep over the same installed tree (issue 13).
#
# Installs internal/lockfile/testdata/midsize-app with the real npm
# (`npm ci --ignore-scripts`, from the registry npm is configured with),
# starts a mirror on an empty embedded store, registers the same lockfile
# as a project, waits until it is warm, then times, in the same run:
#   rg -n PATTERN node_modules   (npm's bookkeeping excluded)
#   POST /v1/explore {"project":…, "action":"grep", …}  (warm: second call)
# checks both give the same (file, line) pairs, and reports the mirror's
# peak RSS (VmHWM) after greps over every package's index.
#
# Usage: bench/project/run.sh [WORKDIR]   (needs go, npm, rg, jq, curl)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
port=${PORT:-7979}
runs=${RUNS:-5}
mkdir -p "$work/app"
cp "$repo/internal/lockfile/testdata/midsize-app/package.json" "$repo/internal/lockfile/testdata/midsize-app/package-lock.json" "$work/app/"
if [ ! -d "$work/app/node_modules" ]; then
  (cd "$work/app" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
fi
go build -o "$work/mirror" "$repo/cmd/mirror"
# The mirror's defaults unless MAX_OPEN_INDEXES / MAX_OPEN_INDEX_BYTES are set.
"$work/mirror" --addr "127.0.0.1:$port" --data-dir "$work/data" \
  ${MAX_OPEN_INDEXES:+--max-open-indexes "$MAX_OPEN_INDEXES"} ${MAX_OPEN_INDEX_BYTES:+--max-open-index-bytes "$MAX_OPEN_INDEX_BYTES"} >"$work/mirror.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
until curl -sf "127.0.0.1:$port/healthz" >/dev/null; do sleep 0.2; done
base="http://127.0.0.1:$port"
. "$repo/bench/project/register.sh"
register_project "$base" "$work/app" "$work"
echo "warm: $warm_s s, $(jq -r .warm <<<"$st") of $(jq -r .total <<<"$st") folders"

raw_project() { # pattern → the answer, as an agent gets it (the body is built outside the timing)
  local body="$work/body-$(printf %s "$1" | md5sum | cut -c1-8).json"
  [ -f "$body" ] || jq -n --arg id "$id" --arg p "$1" '{project:$id,action:"grep",pattern:$p,maxBytes:1048576,maxMatches:100000}' >"$body"
  curl -sf "$base/v1/explore" -H 'Content-Type: application/json' -d @"$body"
}
raw_rg() {
  (cd "$work/app" && rg -n --no-heading --hidden --no-ignore -g '!node_modules/.package-lock.json' -g '!.bin' "$1" node_modules || true)
}
grep_project() { raw_project "$1" | jq -r '.matches[] | "\(.file):\(.line)"' | sort; }
grep_rg() { raw_rg "$1" | cut -d: -f1,2 | sort; }
ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }
# http_ms: the request as an agent's client (an MCP client holding its
# connection) waits for it: curl's own time_total, without curl's process
# start (~25 ms here, printed below), which `ms raw_project` includes.
http_ms() {
  local body="$work/body-$(printf %s "$1" | md5sum | cut -c1-8).json"
  curl -sf -o /dev/null -w '%{time_total}\n' "$base/v1/explore" -H 'Content-Type: application/json' -d @"$body" | awk '{printf "%d\n", $1 * 1000}'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

for pattern in 'useSyncExternalStore' 'ERR_REQUIRE_ESM' 'export declare function \w+Sync'; do
  raw_project "$pattern" >/dev/null # open the indexes
  raw_rg "$pattern" >/dev/null      # and the page cache
  if diff <(grep_project "$pattern") <(grep_rg "$pattern") >"$work/diff.txt"; then same=identical; else same="DIFFERENT ($(wc -l <"$work/diff.txt") lines, $work/diff.txt)"; fi
  p=$(for _ in $(seq "$runs"); do ms raw_project "$pattern"; done | median)
  h=$(for _ in $(seq "$runs"); do http_ms "$pattern"; done | median)
  r=$(for _ in $(seq "$runs"); do ms raw_rg "$pattern"; done | median)
  n=$(grep_rg "$pattern" | wc -l)
  echo "pattern '$pattern': $n lines; project grep ${h} ms as a request (${p} ms with curl's start), rg ${r} ms, ratio rg/project $(awk -v a="$r" -v b="$h" 'BEGIN{printf "%.1f", a/(b>0?b:1)}')x ($(awk -v a="$r" -v b="$p" 'BEGIN{printf "%.1f", a/(b>0?b:1)}')x with curl's start); results $same"
done
echo "curl's own start and a /healthz answer: $(for _ in $(seq "$runs"); do ms curl -sf "$base/healthz"; done | median) ms"
echo "mirror peak RSS: $(grep VmHWM /proc/$pid/status | awk '{print $2/1024 " MiB"}') (max-open-indexes ${MAX_OPEN_INDEXES:-default}, max-open-index-bytes ${MAX_OPEN_INDEX_BYTES:-default}); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
