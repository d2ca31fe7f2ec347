#!/usr/bin/env bash
# Storage benchmark (issue 15): N consecutive versions of one real package,
# each grepped once on a fresh embedded mirror, and everything the mirror
# keeps (the store — bodies and stored indexes — plus the local index
# cache) measured after each, as a ratio to one version's unpacked size.
#
# An index file the cache removed while it is still mapped (open) keeps
# its disk space until closed; those bytes count as local cache too.
#
# Then it greps the first version again — with no local file of its index
# (the default cache keeps no lucide-react-sized index; before, a bounded
# one, MIRROR_FLAGS='--index-cache-bytes N', evicted it), the mirror
# serves it from the store — next to doing it yourself (download, untar,
# rg), and checks that the answer is the first grep's; then every other
# version, each checked against its first answer.
#
#   bench/storage/run.sh [PACKAGE] [LAST] [N]   (default lucide-react 1.81.0 10)
# MIRROR=path/to/mirror uses that binary instead of building this tree's;
# MIRROR_FLAGS adds flags to the mirror's command line.
# Needs: go, npm, curl, tar, jq, bc, rg.
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
# shellcheck disable=SC2086 # MIRROR_FLAGS is a list of flags
"$work/mirror" --addr "127.0.0.1:$port" --data-dir "$work/data" --jsdelivr-fallback=false ${MIRROR_FLAGS:-} >"$work/mirror.log" 2>&1 &
pid=$!
for _ in $(seq 200); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.05; done

# the N stable versions up to LAST, in publish order
mapfile -t versions < <(npm view "$pkg" versions --json | jq -r --arg last "$last" --argjson n "$n" \
	'map(select(test("^[0-9]+\\.[0-9]+\\.[0-9]+$"))) | .[:index($last)+1] | .[-$n:] | .[]')
unpacked=$(curl -sf "$(npm view "$pkg@$last" dist.tarball)" | tar xzO | wc -c)
echo "$pkg ${versions[0]}..${versions[-1]} (${#versions[@]} versions); one version unpacked: $((unpacked / 1048576)) MiB"
# mapped_deleted: bytes of index files removed from the cache but still
# mapped by the mirror (their space is freed when they are closed)
mapped_deleted() {
	awk '/\.idx \(deleted\)$/ { split($1, r, "-"); n[$5] += strtonum("0x" r[2]) - strtonum("0x" r[1]) }
		END { s = 0; for (i in n) s += n[i]; print s }' "/proc/$pid/maps"
}
grepreq() { jq -nc --arg n "$pkg" --arg v "$1" '{action:"grep",packageName:$n,version:$v,pattern:"ArrowLeft",maxMatches:100000}'; }
explore() { curl -sf -X POST -H 'Content-Type: application/json' --data "$1" "http://127.0.0.1:$port/v1/explore"; }
i=0
for v in "${versions[@]}"; do
	i=$((i + 1))
	explore "$(grepreq "$v")" | jq -c '.matches' >"$work/first-$i.json"
	# the full index builds in the background after a cold grep: wait for
	# it to be stored (and cached, when the local cache keeps it) before
	# measuring; a mirror before "index stored" was logged kept every
	# index as a local file
	for _ in $(seq 1200); do
		[ "$(grep -c "msg=\"index stored\" .*version=$v " "$work/mirror.log" || true)" -ge 1 ] && break
		[ "$(grep -c "msg=indexed .*version=$v " "$work/mirror.log" || true)" -ge 1 ] &&
			[ -n "$(find "$work/data" -name "$(printf '%s' "$pkg@$v" | sha256sum | cut -c1-32).f*.idx")" ] && break
		sleep 0.25
	done
	sleep 1 # the stored index's record is written after its chunks; the cache's file after both
	total=$(du -sb "$work/data" | cut -f1)
	idx=$(find "$work/data" -name '*.idx' ! -name '.tmp-*' -printf '%s\n' | awk '{s+=$1} END {print s+0}')
	gone=$(mapped_deleted)
	total=$((total + gone))
	idx=$((idx + gone))
	printf 'after %2d versions: everything kept %4d MiB = %5.2fx one version (local index cache %4d MiB, store %4d MiB)\n' \
		"$i" $((total / 1048576)) "$(echo "$total / $unpacked" | bc -l)" $((idx / 1048576)) $(((total - idx) / 1048576))
done
find "$work/data" -type f ! -name '*.idx' -printf '  store file %P: %s bytes\n'
grep -E '^Vm(RSS|HWM)' "/proc/$pid/status" | tr -s ' \t' ' ' | sed 's/^/  mirror /'

# The first version again: not in the local cache, it is served from the
# store; the anchor downloads, untars and greps it.
v=${versions[0]}
url=$(npm view "$pkg@$v" dist.tarball)
t0=$(date +%s.%N)
explore "$(grepreq "$v")" | jq -c '.matches' >"$work/again.json"
t1=$(date +%s.%N)
mkdir -p "$work/anchor"
curl -sf "$url" | tar xz -C "$work/anchor"
rg -n -uu ArrowLeft "$work/anchor" >/dev/null || true
t2=$(date +%s.%N)
cmp -s "$work/first-1.json" "$work/again.json" || { echo "the grep of $pkg@$v again answered differently" >&2; exit 1; }
# every other version again too (each from wherever its index now is),
# each answer compared with that version's first (from a scan index)
i=1
for w in "${versions[@]:1}"; do
	i=$((i + 1))
	explore "$(grepreq "$w")" | jq -c '.matches' >"$work/again-$i.json"
	cmp -s "$work/first-$i.json" "$work/again-$i.json" || { echo "the grep of $pkg@$w again answered differently" >&2; exit 1; }
done
again=$(echo "$t1 - $t0" | bc -l)
anchor=$(echo "$t2 - $t1" | bc -l)
printf 'grep of %s again: %.2f s; download + untar + rg: %.2f s; ratio %.2f (%d matches, as its first grep; load %s)\n' \
	"$v" "$again" "$anchor" "$(echo "$again / $anchor" | bc -l)" "$(jq length "$work/again.json")" "$(cut -d' ' -f1-3 /proc/loadavg)"
echo "the other $((${#versions[@]} - 1)) versions grepped again: the same matches as their first greps"
