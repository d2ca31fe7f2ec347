#!/usr/bin/env bash
# Core benchmarks (docs/BENCHMARKS.md, "Core"): warm read of a small file,
# warm list of a 5,000-file package, and a cold ingest of a real large
# tarball next to `curl | tar xz` of the same bytes from the same local
# server. Needs npm (to fetch the tarball through your npm config), curl,
# tar, and Postgres as for the tests.
#   bench/core.sh [package@version]   (default next@16.4.6)
set -euo pipefail
cd "$(dirname "$0")/.."
spec=${1:-next@16.4.6}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tgz=$(cd "$tmp" && npm pack "$spec" --silent 2>/dev/null | tail -1)
echo "tarball: $spec ($(du -h "$tmp/$tgz" | cut -f1) compressed)"
export PKGSCOPE_TEST_DATABASE_URL=${PKGSCOPE_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
PKGSCOPE_BENCH_TARBALL="$tmp/$tgz" go test -run '^$' -count 1 \
  -bench 'BenchmarkColdIngest' -benchtime 5x ./internal/app/
go test -run '^$' -count 1 -bench 'Benchmark(ReadSmallWarm|ListLargeWarm)' -benchtime 2s ./internal/app/
