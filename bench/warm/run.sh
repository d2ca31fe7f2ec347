#!/usr/bin/env bash
# Warm benchmark (opt-in; needs the network): warms a real mid-size app's
# package-lock.json (Next.js 14, React 18, eslint, jest, typescript,
# webpack, @babel/core: 396 packages, internal/lockfile/testdata/midsize-app)
# against the registry npm is configured with, into a fresh store, then
# warms it again to measure the already-present path.
#
#   bench/warm/run.sh                      # embedded SQLite store in a temp dir
#   PKGSCOPE_DATABASE_URL=postgres://... bench/warm/run.sh   # an (empty) Postgres schema
#   WORKERS=16 LOCKFILE=path/to/package-lock.json bench/warm/run.sh
#
# The summary gives packages/minute, unpacked bytes, bytes downloaded and
# the share of job time spent downloading, storing, indexing, reading
# packuments and unpacking (hash, compress). Results: bench/warm/README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
LOCKFILE=${LOCKFILE:-internal/lockfile/testdata/midsize-app/package-lock.json}
WORKERS=${WORKERS:-8}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/indexer" ./cmd/indexer
echo "== cold: $LOCKFILE, $WORKERS workers, $(nproc) cores"
/usr/bin/time -f "wall %es, user %Us, sys %Ss, max RSS %M KB" \
  "$tmp/indexer" warm --lockfile "$LOCKFILE" --workers "$WORKERS" --data-dir "$tmp/data" --no-progress |
  grep -v '^[0-9:]* warm [0-9]'
echo "== warm again: everything already present"
/usr/bin/time -f "wall %es, user %Us, sys %Ss" \
  "$tmp/indexer" warm --lockfile "$LOCKFILE" --workers "$WORKERS" --data-dir "$tmp/data" --no-progress |
  grep -v '^[0-9:]* warm [0-9]'
du -sh "$tmp/data"/* 2>/dev/null || true
