#!/usr/bin/env bash
# Peak memory of a mirror warming a registered project (issue 13's
# midsize app, 406 packages): starts BINARY (default: this checkout's
# mirror, built) on a fresh embedded store, registers
# internal/lockfile/testdata/midsize-app's lockfile as a project through
# the API (no npm install needed), waits until it is warm, and prints the
# warm time and the process's peak RSS (VmHWM), which on a fresh store is
# reached while the project warms. Extra arguments go to the mirror.
#
# Usage: bench/project/warm.sh [BINARY [MIRROR FLAGS...]]   (needs go, jq, curl)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
port=${PORT:-7978}
work=$(mktemp -d)
bin=${1:-}
if [ -z "$bin" ]; then
  bin="$work/mirror"
  go build -o "$bin" "$repo/cmd/mirror"
fi
shift || true
"$bin" --addr "127.0.0.1:$port" --data-dir "$work/data" "$@" >"$work/mirror.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$work"' EXIT
until curl -sf "127.0.0.1:$port/healthz" >/dev/null; do sleep 0.2; done
base="http://127.0.0.1:$port"
. "$repo/bench/project/register.sh"
register_project "$base" "$repo/internal/lockfile/testdata/midsize-app" "$work"
echo "$bin: warm $warm_s s, $(jq -r .warm <<<"$st") of $(jq -r .total <<<"$st") folders; peak RSS (VmHWM) $(awk '/VmHWM/{printf "%d MiB", $2/1024}' /proc/$pid/status); load average $(cut -d' ' -f1 /proc/loadavg)"
