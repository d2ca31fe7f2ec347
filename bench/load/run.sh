#!/usr/bin/env bash
# Load benchmark (docs/BENCHMARKS.md, "Load"): a warm REST read of a small
# file (2.6 KiB) from the mirror, next to nginx serving the same bytes from
# disk in the same run (the ceiling). Target: the mirror at half of nginx's
# requests/s or better. Needs wrk and nginx (apt-get install wrk nginx);
# uses Redis when REDIS_URL is set or one answers on 127.0.0.1:6379.
#   bench/load/run.sh            DURATION=10s CONNECTIONS=64 THREADS=2
# Loopback only: every server and wrk run on 127.0.0.1, and stop with the
# script.
set -euo pipefail
cd "$(dirname "$0")/../.."
duration=${DURATION:-10s}
conns=${CONNECTIONS:-64}
threads=${THREADS:-2}
mirror_port=${MIRROR_PORT:-17878}
nginx_port=${NGINX_PORT:-17879}
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/mirror" ./cmd/mirror
go build -o "$tmp/registry" ./bench/load/registry
mkdir -p "$tmp/www" "$tmp/npm" "$tmp/data"
chmod 755 "$tmp" "$tmp/www" # nginx workers run as an unprivileged user
: > "$tmp/npm/npmrc"

"$tmp/registry" -url-file "$tmp/registry.url" -www "$tmp/www" 2>"$tmp/registry.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/registry.url" ] && break; sleep 0.1; done

redis_url=${REDIS_URL:-}
if [ -z "$redis_url" ] && (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; then
  redis_url=redis://127.0.0.1:6379/0
fi
env -i PATH="$PATH" HOME="$tmp" \
  PKGSCOPE_ADDR=127.0.0.1:$mirror_port PKGSCOPE_DATA_DIR="$tmp/data" PKGSCOPE_PROJECT_DIR="$tmp" \
  PKGSCOPE_REDIS_URL="$redis_url" PKGSCOPE_REDIS_PREFIX="bench:$$:" \
  npm_config_registry="$(cat "$tmp/registry.url")" \
  NPM_CONFIG_USERCONFIG="$tmp/npm/npmrc" NPM_CONFIG_GLOBALCONFIG="$tmp/npm/npmrc" \
  "$tmp/mirror" 2>"$tmp/mirror.log" &
pids+=($!)

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

mirror_url=http://127.0.0.1:$mirror_port/v1/npm/bench-pkg@1.0.0/index.js
nginx_url=http://127.0.0.1:$nginx_port/index.js
for _ in $(seq 100); do curl -sf -o /dev/null "$mirror_url" && break; sleep 0.1; done
for _ in $(seq 100); do curl -sf -o /dev/null "$nginx_url" && break; sleep 0.1; done
cmp <(curl -sf "$mirror_url") <(curl -sf "$nginx_url") || { echo "the mirror and nginx serve different bytes" >&2; exit 1; }

run() { # name url → "rps p99"
  local f=$tmp/${1//\//_}
  wrk -t"$threads" -c"$conns" -d"$duration" --latency "$2" >"$f.wrk"
  rps=$(awk '/^Requests\/sec/ {print $2}' "$f.wrk")
  p99=$(awk '$1 == "99%" {print $2}' "$f.wrk")
  printf '%-9s %12s req/s   p99 %s\n' "$1" "$rps" "$p99"
  echo "$rps" >"$f.rps"
}
echo "warm read of a 2.6 KiB file, wrk -t$threads -c$conns -d$duration, redis: ${redis_url:-none}"
run nginx "$nginx_url"
run net/http "$(cat "$tmp/registry.url")index.js" # the same bytes from plain Go: the Go ceiling
run mirror "$mirror_url"
awk -v m="$(cat "$tmp/mirror.rps")" -v n="$(cat "$tmp/nginx.rps")" -v g="$(cat "$tmp/net_http.rps")" \
  'BEGIN { printf "mirror/nginx: %.0f%% (target: at least 50%%); net/http/nginx: %.0f%%\n", 100 * m / n, 100 * g / n }'
