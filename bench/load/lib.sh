# Shared by bench/load/run.sh and bench/load/agents.sh (sourced): builds the
# mirror and the static registry, starts them on loopback ports, runs wrk,
# reads a process's CPU time and takes medians. Every process started here
# stops with the script (cleanup).
#
# Settings (environment): MIRROR a built mirror to measure (default: this
# tree's ./cmd/mirror, built here), BEFORE a second build measured beside it
# in the same run, alternating; REDIS_URL (default: 127.0.0.1:6379 when one
# answers there); MIRROR_ENV more VAR=value words for the mirrors (e.g.
# PKGSCOPE_PPROF_ADDR=127.0.0.1:6060 to profile one); BEFORE_ENV more for
# the BEFORE build only, so one build measured beside itself shows what a
# setting costs (BEFORE=<the build> BEFORE_ENV=PKGSCOPE_ACCESS_LOG=true);
# KEEP=1 keeps the work directory (logs, wrk outputs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT

build() { # builds the mirror (unless MIRROR names one) and the registry
  if [ -n "${MIRROR:-}" ]; then cp "$MIRROR" "$tmp/mirror"; else go build -o "$tmp/mirror" ./cmd/mirror; fi
  [ -n "${BEFORE:-}" ] && cp "$BEFORE" "$tmp/before"
  go build -o "$tmp/registry" ./bench/load/registry
}

start_registry() { # the static registry (REGISTRY_FLAGS: more flags); sets registry_url and pid_registry
  mkdir -p "$tmp/www" "$tmp/npm"
  chmod 755 "$tmp" "$tmp/www" # nginx workers run as an unprivileged user
  : > "$tmp/npm/npmrc"
  # shellcheck disable=SC2086 # REGISTRY_FLAGS: words, no spaces inside
  "$tmp/registry" -url-file "$tmp/registry.url" -www "$tmp/www" ${REGISTRY_FLAGS:-} 2>"$tmp/registry.log" &
  pids+=($!)
  pid_registry=$!
  for _ in $(seq 100); do [ -s "$tmp/registry.url" ] && break; sleep 0.1; done
  registry_url=$(cat "$tmp/registry.url")
  redis_url=${REDIS_URL:-}
  if [ -z "$redis_url" ] && (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; then
    redis_url=redis://127.0.0.1:6379/0
  fi
}

start_mirror() { # name binary port: a mirror on a fresh embedded store; sets pid_<name>
  # Another server already on the port would answer for this one, which
  # then exits ("address already in use"): the run would time the wrong
  # server.
  if curl -s -o /dev/null "http://127.0.0.1:$3/"; then
    echo "port $3 is taken: set MIRROR_PORT / BEFORE_PORT / NGINX_PORT to free ports" >&2
    exit 1
  fi
  mkdir -p "$tmp/data-$1"
  env -i PATH="$PATH" HOME="$tmp" \
    PKGSCOPE_ADDR=127.0.0.1:$3 PKGSCOPE_DATA_DIR="$tmp/data-$1" PKGSCOPE_PROJECT_DIR="$tmp" \
    PKGSCOPE_REDIS_URL="$redis_url" PKGSCOPE_REDIS_PREFIX="bench:$$:$1:" \
    npm_config_registry="$registry_url" \
    NPM_CONFIG_USERCONFIG="$tmp/npm/npmrc" NPM_CONFIG_GLOBALCONFIG="$tmp/npm/npmrc" \
    ${MIRROR_ENV:-} $([ "$1" = before ] && echo "${BEFORE_ENV:-}") "$2" 2>"$tmp/$1.log" &
  pids+=($!)
  printf -v "pid_$1" %s "$!"
  local me=$!
  for _ in $(seq 150); do
    kill -0 "$me" 2>/dev/null || break # it exited
    curl -sf -o /dev/null "http://127.0.0.1:$3/healthz" && return
    sleep 0.2
  done
  echo "the mirror $1 did not start on port $3; its log:" >&2
  tail -20 "$tmp/$1.log" >&2
  exit 1
}

mirrors() { # the builds measured: "mirror" and, with BEFORE, "before"
  echo mirror
  [ -n "${BEFORE:-}" ] && echo before
  return 0
}

cpu_ticks() { # pid: user+system CPU time in clock ticks (proc(5) stat fields 14, 15)
  awk '{print $14 + $15}' "/proc/$1/stat"
}

# wrk_run out-file wrk-args...: runs wrk with --latency and prints
# "requests rps p50_ms p99_ms errors" (errors: socket errors plus non-2xx/3xx
# answers).
wrk_run() {
  local out=$1
  shift
  wrk --latency "$@" >"$out"
  awk '
    function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
    / requests in / { n = $1 }
    /^Requests\/sec/ { rps = $2 }
    $1 == "50%" { p50 = ms($2) }
    $1 == "99%" { p99 = ms($2) }
    /Socket errors/ { gsub(/,/, ""); err += $4 + $6 + $8 + $10 }
    /Non-2xx or 3xx responses/ { err += $5 }
    END { printf "%d %.0f %.2f %.2f %d\n", n, rps, p50, p99, err }' "$out"
}

median() { # the median of the numbers on stdin, one a line
  sort -g | awk '{a[NR] = $1} END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
