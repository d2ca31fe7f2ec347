#!/usr/bin/env bash
# CPU profile of warm project greps (issue 13), the figure to compare on a
# machine too loaded for wall times: starts BINARY on the store that
# bench/project/run.sh left in WORKDIR (run it first), greps the project
# with run.sh's three patterns in a loop while net/http/pprof takes a
# SECONDS_PROF (30) second CPU profile into OUT, and prints how many greps
# ran. CPU per grep = the profile's total samples / that count; read the
# shares with `go tool pprof -top -cum BINARY OUT`.
#
# Usage: bench/project/profile.sh BINARY WORKDIR OUT   (needs curl, jq)
set -euo pipefail
bin=$1 work=$2 out=$3
port=${PORT:-7981} pport=${PPROF_PORT:-7982}
"$bin" --addr "127.0.0.1:$port" --data-dir "$work/data" --pprof-addr "127.0.0.1:$pport" >"$work/profile-mirror.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
until curl -sf "127.0.0.1:$port/healthz" >/dev/null; do sleep 0.2; done
base="http://127.0.0.1:$port"
id=$(curl -sf "$base/v1/projects" -H 'Content-Type: application/json' -d @"$work/reg.json" | jq -r .id)
bodies=()
for p in 'useSyncExternalStore' 'ERR_REQUIRE_ESM' 'export declare function \w+Sync'; do
  b="$work/profile-body-$(printf %s "$p" | md5sum | cut -c1-8).json"
  jq -n --arg id "$id" --arg p "$p" '{project:$id,action:"grep",pattern:$p,maxBytes:1048576,maxMatches:100000}' >"$b"
  bodies+=("$b")
done
grep_all() { for b in "${bodies[@]}"; do curl -sf "$base/v1/explore" -H 'Content-Type: application/json' -d @"$b" >/dev/null; done; }
grep_all # open the indexes
curl -sf -o "$out" "127.0.0.1:$pport/debug/pprof/profile?seconds=${SECONDS_PROF:-30}" &
prof=$!
n=0
while kill -0 $prof 2>/dev/null; do grep_all; n=$((n + 3)); done
wait $prof
echo "$n greps during the profile"
