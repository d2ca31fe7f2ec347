#!/usr/bin/env bash
# Agent-shaped answers (issue 12): the first calls an agent makes, with
# default parameters, against this tree's mirror and (BEFORE=path/to/mirror)
# an older build, each on a fresh embedded store reaching the registry in
# npm's config. Prints one markdown table per build (bench/agent/main.go).
#
#   BEFORE=/tmp/mirror-before bench/agent/run.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
(cd "$root" && go build -o "$work/after" ./cmd/mirror && go build -o "$work/agent" ./bench/agent)
run() { # label binary
	local port=$((20000 + RANDOM % 20000))
	"$2" --addr "127.0.0.1:$port" --data-dir "$work/data-$1" --jsdelivr-fallback=false >"$work/$1.log" 2>&1 &
	pid=$!
	for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.2; done
	"$work/agent" -url "http://127.0.0.1:$port" -label "$1"
	kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
}
if [ -n "${BEFORE:-}" ]; then run before "$BEFORE"; echo; fi
run after "$work/after"
