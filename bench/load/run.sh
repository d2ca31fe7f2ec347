#!/usr/bin/env bash
# Load benchmark (docs/BENCHMARKS.md, "Load"): a warm REST read of a small
# file (2.6 KiB) from the mirror, next to a plain net/http server writing
# the same bytes from memory (the anchor: the most a Go server does here),
# the same server writing them with the mirror's eight headers (net/http+hdr:
# what net/http's own work on those headers costs) and nginx serving them
# from disk (the ceiling). Targets (issue 27): the
# mirror at 80% of net/http's requests/s or better, its p99 within 2x of
# net/http's. Needs wrk and nginx (apt-get install wrk nginx); uses Redis
# when REDIS_URL is set or one answers on 127.0.0.1:6379.
#
#   bench/load/run.sh       ROUNDS=3 DURATION=10s CONNECTIONS=64 THREADS=2
#   BEFORE=/tmp/mirror-old bench/load/run.sh    # an older build beside it
#   BEFORE=/tmp/mirror BEFORE_ENV=PKGSCOPE_ACCESS_LOG=true bench/load/run.sh
#                                    # what a setting costs, one build twice
#
# Each round runs every server once, in turn (nginx, net/http, the mirror,
# the BEFORE build), so a change in the machine's load hits them alike; the
# table shows each one's median over the rounds and its ratio to net/http's
# median. The machine's load average is printed before and after. Loopback
# only: every server and wrk run on 127.0.0.1, and stop with the script.
. "$(dirname "$0")/lib.sh"
rounds=${ROUNDS:-3}
duration=${DURATION:-10s}
conns=${CONNECTIONS:-64}
threads=${THREADS:-2}
mirror_port=${MIRROR_PORT:-17878}
before_port=${BEFORE_PORT:-17877}
nginx_port=${NGINX_PORT:-17879}

build
start_registry
start_mirror mirror "$tmp/mirror" "$mirror_port"
[ -n "${BEFORE:-}" ] && start_mirror before "$tmp/before" "$before_port"

cat > "$tmp/nginx.conf" <<CONF
worker_processes auto;
daemon off;
pid $tmp/nginx.pid;
error_log $tmp/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $tmp/nginx-body;
  proxy_temp_path $tmp/nginx-proxy;
  fastcgi_temp_path $tmp/nginx-fastcgi;
  uwsgi_temp_path $tmp/nginx-uwsgi;
  scgi_temp_path $tmp/nginx-scgi;
  server {
    listen 127.0.0.1:$nginx_port;
    root $tmp/www;
    default_type "text/javascript; charset=utf-8";
  }
}
CONF
nginx -c "$tmp/nginx.conf" -e "$tmp/nginx-error.log" &
pids+=($!)

declare -A pid=([net/http]=$pid_registry [net/http+hdr]=$pid_registry [mirror]=$pid_mirror [before]=${pid_before:-})
declare -A url=(
  [nginx]=http://127.0.0.1:$nginx_port/index.js
  [net/http]=${registry_url}index.js
  [net/http+hdr]=${registry_url}headers/index.js
  [mirror]=http://127.0.0.1:$mirror_port/v1/npm/bench-pkg@1.0.0/index.js
  [before]=http://127.0.0.1:$before_port/v1/npm/bench-pkg@1.0.0/index.js
)
servers=(nginx net/http net/http+hdr $(mirrors))
for s in "${servers[@]}"; do
  for _ in $(seq 100); do curl -sf -o /dev/null "${url[$s]}" && break; sleep 0.1; done
  cmp -s <(curl -sf "${url[$s]}") "$tmp/www/index.js" || { echo "$s does not serve the same bytes" >&2; exit 1; }
done
# The headers anchor must send the headers the mirror sends (their names:
# the request id and Date differ by design): a header added to or dropped
# from the mirror's answer and not from registry's withHeaders would make
# net/http+hdr measure something else.
header_names() { curl -sf -D - -o /dev/null "$1" | tr -d '\r' | awk -F: 'NR > 1 && NF > 1 { print tolower($1) }' | sort; }
if ! diff <(header_names "${url[mirror]}") <(header_names "${url[net/http+hdr]}") >"$tmp/headers.diff"; then
  echo "net/http+hdr does not send the mirror's headers (< mirror only, > anchor only): update withHeaders in bench/load/registry" >&2
  cat "$tmp/headers.diff" >&2
  exit 1
fi

echo "warm read of a 2.6 KiB file, wrk -t$threads -c$conns -d$duration, $rounds rounds, redis: ${redis_url:-none}, load average $(loadavg)"
for r in $(seq "$rounds"); do
  for s in "${servers[@]}"; do
    f=$tmp/${s//\//_}
    p=${pid[$s]:-}
    [ -n "$p" ] && t0=$(cpu_ticks "$p")
    read -r n rps p50 p99 err < <(wrk_run "$f.$r.wrk" -t"$threads" -c"$conns" -d"$duration" "${url[$s]}")
    cpu=-
    [ -n "$p" ] && cpu=$(awk -v t="$(($(cpu_ticks "$p") - t0))" -v hz="$(getconf CLK_TCK)" -v n="$n" 'BEGIN { printf "%.1f", 1e6 * t / hz / n }')
    echo "$rps" >>"$f.rps"
    echo "$p99" >>"$f.p99"
    echo "$cpu" >>"$f.cpu"
    printf 'round %d  %-12s %8s req/s  p50 %6s ms  p99 %7s ms  errors %s  CPU %s us/request\n' "$r" "$s" "$rps" "$p50" "$p99" "$err" "$cpu"
  done
done
echo "load average after: $(loadavg)"
g_rps=$(median <"$tmp/net_http.rps")
g_p99=$(median <"$tmp/net_http.p99")
echo
echo "| server | req/s (median) | of net/http | p99 (median) | of net/http's p99 | CPU per request (median) |"
echo "|---|---:|---:|---:|---:|---:|"
for s in "${servers[@]}"; do
  f=$tmp/${s//\//_}
  cpu=$({ grep -vx -- - "$f.cpu" || true; } | median)
  awk -v s="$s" -v rps="$(median <"$f.rps")" -v p99="$(median <"$f.p99")" -v g="$g_rps" -v gp="$g_p99" -v cpu="${cpu:--}" \
    'BEGIN { printf "| %s | %.1fk | %.0f%% | %.1f ms | %.2fx | %s |\n", s, rps / 1000, 100 * rps / g, p99, p99 / gp, cpu == "-" ? "-" : cpu " us" }'
done
echo "targets: the mirror at 80% of net/http's req/s or more, its p99 at most 2x net/http's"
h_rps=$(median <"$tmp/net_http+hdr.rps")
awk -v m="$(median <"$tmp/mirror.rps")" -v h="$h_rps" -v g="$g_rps" \
  'BEGIN { printf "net/http with the mirror'"'"'s headers: %.0f%% of net/http; the mirror: %.0f%% of it\n", 100 * h / g, 100 * m / h }'
