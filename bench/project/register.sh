# Sourced by run.sh and warm.sh: register_project BASE DIR WORK registers
# DIR's package-lock.json and package.json as a project on the mirror at
# BASE and waits until it is warm (or nothing is pending), leaving its id
# in $id, its last status in $st and the seconds waited in $warm_s.
register_project() {
  local base=$1 dir=$2 work=$3 start
  jq -n --rawfile l "$dir/package-lock.json" --rawfile p "$dir/package.json" \
    '{lockfile:{name:"package-lock.json",content:$l},packageJson:$p}' >"$work/reg.json"
  id=$(curl -sf "$base/v1/projects" -H 'Content-Type: application/json' -d @"$work/reg.json" | jq -r .id)
  start=$(date +%s)
  while :; do
    st=$(curl -sf "$base/v1/projects/$id")
    [ "$(jq -r .ready <<<"$st")" = true ] && break
    if [ "$(jq -r .pending <<<"$st")" = 0 ]; then
      echo "not all packages warmed: $(jq -c '[.packages[]|select(.state=="failed")|{path,reason}]' <<<"$st")" >&2
      break
    fi
    sleep 1
  done
  warm_s=$(( $(date +%s) - start ))
}
