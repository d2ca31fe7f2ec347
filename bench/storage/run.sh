#!/usr/bin/env bash
# Storage benchmark (issue 15): N consecutive versions of one real package,
# each grepped once on a fresh embedded mirror, and everything the mirror
# keeps (the store — bodies and stored indexes — plus the local index
# cache) measured after each, as a ratio to one version's unpacked size.
#
#   bench/storage/run.sh [PACKAGE] [LAST] [N]   (default lucide-react 1.81.0 10)
# MIRROR=path/to/mirror uses that binary instead of building this tree's.
# Needs: go, npm, curl, tar, jq, bc.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
pkg=${1:-lucide-react}
last=${2:-1.81.0}
n=${3:-10}
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
if [ -n "${MIRROR:-}" ]; then
	cp "$MIRROR" "$work/mirror"
else
	(cd "$root" && go build -o "$work/mirror" ./cmd/mirror)
fi
port=$((20000 + RANDOM % 20000))
"$work/mirror" --addr "127.0.0.1:$port" --data-dir "$work/data" --jsdelivr-fallback=false >"$work/mirror.log" 2>&1 &
pid=$!
for _ in $(seq 200); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.05; done

# the N stable versions up to LAST, in publish order
mapfile -t versions < <(npm view "$pkg" versions --json | jq -r --arg last "$last" --argjson n "$n" \
	'map(select(test("^[0-9]+\\.[0-9]+\\.[0-9]+$"))) | .[:index($last)+1] | .[-$n:] | .[]')
unpacked=$(curl -sf "$(npm view "$pkg@$last" dist.tarball)" | tar xzO | wc -c)
echo "$pkg ${versions[0]}..${versions[-1]} (${#versions[@]} versions); one version unpacked: $((unpacked / 1048576)) MiB"
i=0
for v in "${versions[@]}"; do
	i=$((i + 1))
	req=$(jq -nc --arg n "$pkg" --arg v "$v" '{action:"grep",packageName:$n,version:$v,pattern:"ArrowLeft"}')
	curl -sf -X POST -H 'Content-Type: application/json' --data "$req" "http://127.0.0.1:$port/v1/explore" >/dev/null
	# the full index builds in the background after a cold grep: wait for
	# it to be stored and cached before measuring
	for _ in $(seq 1200); do
		[ "$(grep -c "msg=indexed .*version=$v " "$work/mirror.log" || true)" -ge 1 ] &&
			[ "$(find "$work/data" -name '*.idx' ! -name '.tmp-*' | wc -l)" -ge "$i" ] && break
		sleep 0.25
	done
	sleep 1 # the stored index's record is written after its chunks
	total=$(du -sb "$work/data" | cut -f1)
	idx=$(find "$work/data" -name '*.idx' ! -name '.tmp-*' -printf '%s\n' | awk '{s+=$1} END {print s+0}')
	printf 'after %2d versions: everything kept %4d MiB = %5.2fx one version (local index cache %4d MiB, store %4d MiB)\n' \
		"$i" $((total / 1048576)) "$(echo "$total / $unpacked" | bc -l)" $((idx / 1048576)) $(((total - idx) / 1048576))
done
