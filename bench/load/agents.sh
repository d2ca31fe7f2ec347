#!/usr/bin/env bash
# Many agents at once (docs/BENCHMARKS.md, "Load"; issue 27 target 6): a
# mixed agent load on POST /v1/explore — warm read, glob, list and grep
# over four packages (bench/load/registry), 40/25/20/15 as
# BenchmarkMixHitRatio — from wrk at CONNECTIONS (32) connections, next to
# the anchor: a plain net/http server answering the same requests with the
# mirror's own answers, recorded once and served from memory
# (registry /replay/). Target: p99 at most 100 ms, no errors.
#
# Then each action alone, to measure what one request costs: the mirror's
# CPU time over the run (proc(5) utime + stime) divided by the requests
# answered. The sizing line is agents per core at one call every
# CALL_EVERY seconds: 1000 ms × CALL_EVERY / (CPU-ms of a mixed request).
#
#   bench/load/agents.sh    ROUNDS=3 DURATION=10s CONNECTIONS=32 THREADS=2 CALL_EVERY=5
#   BEFORE=/tmp/mirror-old bench/load/agents.sh   # an older build beside it
#
# Each round runs every load once, in turn, so a change in the machine's
# load hits them alike; the table shows medians over the rounds. Needs wrk;
# uses Redis when REDIS_URL is set or one answers on 127.0.0.1:6379.
# Loopback only; bounded by ROUNDS × (2 + 5 per build) runs of DURATION.
. "$(dirname "$0")/lib.sh"
rounds=${ROUNDS:-3}
duration=${DURATION:-10s}
conns=${CONNECTIONS:-32}
threads=${THREADS:-2}
every=${CALL_EVERY:-5}
mirror_port=${MIRROR_PORT:-17878}
before_port=${BEFORE_PORT:-17877}

build
mkdir -p "$tmp/replay"
REGISTRY_FLAGS="-replay $tmp/replay" start_registry
start_mirror mirror "$tmp/mirror" "$mirror_port"
[ -n "${BEFORE:-}" ] && start_mirror before "$tmp/before" "$before_port"

# action body, one a line: the mix, in the order wrk sends it.
cat > "$tmp/requests" <<'REQ'
read {"action":"read","packageName":"bench-pkg","version":"1.0.0","path":"index.js"}
glob {"action":"glob","packageName":"bench-ui","version":"2.3.0","patterns":["**/*.d.ts"]}
list {"action":"list","packageName":"bench-ui","version":"2.3.0"}
read {"action":"read","packageName":"bench-ui","version":"2.3.0","path":"dist/icons/ArrowLeft.js"}
grep {"action":"grep","packageName":"bench-lib","version":"5.1.0","pattern":"useRouter"}
read {"action":"read","packageName":"bench-lib","version":"5.1.0","path":"dist/index.d.ts"}
glob {"action":"glob","packageName":"bench-lib","version":"5.1.0","patterns":["dist/client/**"]}
list {"action":"list","packageName":"bench-lib","version":"5.1.0","path":"dist","depth":1}
read {"action":"read","packageName":"bench-lib","version":"5.1.0","path":"dist/client/mod000.js"}
grep {"action":"grep","packageName":"bench-ui","version":"2.3.0","pattern":"ArrowLeft"}
read {"action":"read","packageName":"bench-cli","version":"0.9.0","path":"bin/cli.js"}
glob {"action":"glob","packageName":"bench-lib","version":"5.1.0","patterns":["**/*.d.ts","!dist/build/**"]}
list {"action":"list","packageName":"bench-cli","version":"0.9.0"}
read {"action":"read","packageName":"bench-ui","version":"2.3.0","path":"dist/index.d.ts"}
grep {"action":"grep","packageName":"bench-lib","version":"5.1.0","pattern":"function\\s+\\w+Sync"}
read {"action":"read","packageName":"bench-lib","version":"5.1.0","path":"dist/server/mod001.js"}
glob {"action":"glob","packageName":"bench-cli","version":"0.9.0","patterns":["lib/*.js"]}
list {"action":"list","packageName":"bench-pkg","version":"1.0.0","path":"lib"}
read {"action":"read","packageName":"bench-cli","version":"0.9.0","path":"lib/cmd07.js"}
glob {"action":"glob","packageName":"bench-pkg","version":"1.0.0","patterns":["lib/mod1*.js"]}
REQ

# Warm every request on every build (cold fills, index builds), then record
# the mirror's answers for the anchor. A grep answers from a scan index
# while the full one builds, with the same bytes; ask until two answers in
# a row match.
while read -r action body; do
  for m in $(mirrors); do
    port=$mirror_port
    [ "$m" = before ] && port=$before_port
    prev=
    for _ in $(seq 20); do
      cur=$(curl -sf -H 'Content-Type: application/json' -d "$body" "http://127.0.0.1:$port/v1/explore") || { echo "$m: $action failed: $body" >&2; exit 1; }
      [ "$cur" = "$prev" ] && break
      prev=$cur
    done
    if [ "$m" = mirror ]; then
      printf '%s\n' "$cur" >"$tmp/replay/$(printf %s "$body" | sha256sum | cut -d' ' -f1)"
    fi
  done
done <"$tmp/requests"

# The wrk script: requests formatted once per thread, sent in turn;
# wrk's arguments are the path and the action ("mix": all of them).
{
  echo 'local reqs = {'
  while read -r action body; do printf '  {"%s", [[%s]]},\n' "$action" "$body"; done <"$tmp/requests"
  cat <<'LUA'
}
local mine, n = {}, 0
function init(args)
  for _, r in ipairs(reqs) do
    if args[2] == "mix" or r[1] == args[2] then
      table.insert(mine, wrk.format("POST", args[1], {["Content-Type"] = "application/json"}, r[2]))
    end
  end
end
function request()
  n = n + 1
  return mine[(n % #mine) + 1]
end
LUA
} >"$tmp/agents.lua"

declare -A base=([anchor]=$registry_url [mirror]=http://127.0.0.1:$mirror_port/ [before]=http://127.0.0.1:$before_port/)
declare -A path=([anchor]=/replay/ [mirror]=/v1/explore [before]=/v1/explore)
declare -A pid=([anchor]=$pid_registry [mirror]=$pid_mirror [before]=${pid_before:-})
runs=()
for s in anchor $(mirrors); do runs+=("mix:$s"); done
for a in read glob list grep; do for s in anchor $(mirrors); do runs+=("$a:$s"); done; done

echo "agent mix over 4 packages, wrk -t$threads -c$conns -d$duration, $rounds rounds, redis: ${redis_url:-none}, load average $(loadavg)"
hz=$(getconf CLK_TCK)
for r in $(seq "$rounds"); do
  for run in "${runs[@]}"; do
    a=${run%%:*} s=${run#*:}
    f=$tmp/$a.$s
    t0=$(cpu_ticks "${pid[$s]}")
    read -r n rps p50 p99 err < <(wrk_run "$f.$r.wrk" -t"$threads" -c"$conns" -d"$duration" -s "$tmp/agents.lua" "${base[$s]}" -- "${path[$s]}" "$a")
    cpu=$(awk -v t="$(($(cpu_ticks "${pid[$s]}") - t0))" -v hz="$hz" -v n="$n" 'BEGIN { printf "%.3f", 1000 * t / hz / n }')
    for k in rps p50 p99 err cpu; do echo "${!k}" >>"$f.$k"; done
    printf 'round %d  %-5s %-7s %8s req/s  p50 %7s ms  p99 %7s ms  errors %s  CPU %s ms/request\n' "$r" "$a" "$s" "$rps" "$p50" "$p99" "$err" "$cpu"
  done
done
echo "load average after: $(loadavg)"
echo
echo "| load | server | req/s | p50 | p99 | errors | CPU per request |"
echo "|---|---|---:|---:|---:|---:|---:|"
for run in "${runs[@]}"; do
  a=${run%%:*} s=${run#*:}
  f=$tmp/$a.$s
  errs=$(awk '{ s += $1 } END { print s }' "$f.err")
  printf '| %s | %s | %.1fk | %.2f ms | %.1f ms | %d | %.3f ms |\n' "$a" "$s" \
    "$(median <"$f.rps" | awk '{ print $1 / 1000 }')" "$(median <"$f.p50")" "$(median <"$f.p99")" "$errs" "$(median <"$f.cpu")"
done
echo
for s in $(mirrors); do
  awk -v s="$s" -v cpu="$(median <"$tmp/mix.$s.cpu")" -v every="$every" \
    'BEGIN { printf "sizing (%s): %.3f CPU-ms per mixed request: one core serves %.0f agents making one call every %g s\n", s, cpu, 1000 * every / cpu, every }'
done
echo "target: the mix at p99 100 ms or less, no errors (errors sum every round)"
