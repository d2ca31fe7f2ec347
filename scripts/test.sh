#!/usr/bin/env bash
# The test command (README.md, .ci/run): makes sure Postgres and Redis are
# up, then runs every Go test. Tests use both for real; where a service is
# not running and cannot be started from installed binaries, this fails
# with a message saying what to do — it never skips.
set -euo pipefail
cd "$(dirname "$0")/.."

pg_url=${PKGSCOPE_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
redis_addr=${PKGSCOPE_TEST_REDIS_ADDR:-127.0.0.1:6379}

pg_up() { pg_isready -q -d "$pg_url" 2>/dev/null; }
if ! pg_up; then
  if command -v pg_ctlcluster >/dev/null && ls /etc/postgresql >/dev/null 2>&1; then
    echo "test.sh: starting PostgreSQL from the installed cluster"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
    for _ in $(seq 1 30); do pg_up && break; sleep 1; done
  fi
  if ! pg_up; then
    echo "test.sh: PostgreSQL is not reachable at $pg_url and could not be started." >&2
    echo "  Install and start it (Debian: apt-get install postgresql), or point PKGSCOPE_TEST_DATABASE_URL at one." >&2
    exit 1
  fi
fi

redis_up() { redis-cli -h "${redis_addr%:*}" -p "${redis_addr##*:}" ping 2>/dev/null | grep -q PONG; }
if ! redis_up; then
  if command -v redis-server >/dev/null; then
    echo "test.sh: starting redis-server"
    redis-server --daemonize yes --bind 127.0.0.1 --port "${redis_addr##*:}" --save "" --appendonly no >/dev/null
    for _ in $(seq 1 30); do redis_up && break; sleep 0.2; done
  fi
  if ! redis_up; then
    echo "test.sh: Redis is not reachable at $redis_addr and could not be started." >&2
    echo "  Install and start it (Debian: apt-get install redis-server), or set PKGSCOPE_TEST_REDIS_ADDR." >&2
    exit 1
  fi
fi

# Tools the tests run for real: nginx (the compose load balancer's config is
# checked with nginx -t), chromium (the web page's browser tests), ripgrep
# (the project grep's oracle) and node
# (the MCP end-to-end test's client).
# need CMD PACKAGE WHY: install Debian's PACKAGE when CMD is missing (as
# root), else fail saying how to get it.
need() {
  command -v "$1" >/dev/null || [ -x "/usr/sbin/$1" ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "test.sh: installing $2 (Debian package) for $3"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
  else
    echo "test.sh: $1 is not installed; install it (Debian: apt-get install $2) for $3." >&2
    exit 1
  fi
}
need nginx nginx "the load-balancer config test"
need chromium chromium "the web page's browser tests"
need rg ripgrep "the project grep oracle (internal/app compares a project grep with ripgrep over the installed node_modules)"
if ! command -v node >/dev/null; then
  echo "test.sh: node is not installed; the MCP end-to-end test needs it (Debian: apt-get install nodejs npm)." >&2
  exit 1
fi

export PKGSCOPE_TEST_DATABASE_URL="$pg_url" PKGSCOPE_TEST_REDIS_ADDR="$redis_addr"
npm ci --prefix e2e/mcp-client --no-audit --no-fund --loglevel=error >/dev/null
npm ci --prefix e2e/axe --no-audit --no-fund --loglevel=error >/dev/null
go vet ./...
# -vet=off: go vet above ran every default analyzer on every package and
# its tests, a superset of the few go test would run again on each.
# Twice as many packages at once as there are cores (-p; go's default is
# one per core), and the longest packages first: they spend
# much of their time waiting (on processes they start and kill, River,
# fault timeouts, Postgres, npm, Chromium), so run other packages beside
# them instead of leaving a core idle behind a wait or ending the run on
# one of them alone.
# go test's own lines pass through as they come (failures in full); its
# package lines are counted for the one summary line at the end, which CI
# reads: "N passed, N failed ...".
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
go test -count=1 -timeout 12m -vet=off -p "$((2 * $(getconf _NPROCESSORS_ONLN)))" "$@" \
  ./test/reliability/ ./internal/app/ ./internal/warm/ ./internal/diff/ ./internal/mcp/ ./test/topology/ ./internal/index/ \
  ./... 2>&1 | tee "$log" || status=$?
passed=$(grep -c '^ok  ' "$log" || true)
# "FAIL<tab>package ..." per failed package (tests, build or setup), not
# the bare "FAIL" go test ends with.
failed_pkgs=$(grep -E '^FAIL[[:space:]]+[^[:space:]]' "$log" | awk '{print $2}' | sort -u || true)
failed=$(printf '%s' "$failed_pkgs" | grep -c . || true)
untested=$(grep -c '^?   ' "$log" || true)
if [ "$failed" -gt 0 ]; then
  echo "failed packages:" $failed_pkgs
fi
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1 # go test failed before naming a package (bad flag, module error)
fi
elapsed=$SECONDS
echo "$passed passed, $failed failed ($untested without tests) in $((elapsed / 60))m$((elapsed % 60))s"
exit "$status"
