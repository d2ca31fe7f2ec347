#!/usr/bin/env bash
# Builds pkgscope's release artefacts, offline from the module cache (the
# module proxy fills it like for any build):
#
#   scripts/release.sh --snapshot [--out DIR]   every platform (or $PKGSCOPE_TARGETS), built twice to the same bytes
#   scripts/release.sh --local    [--out DIR]   this machine's platform only, once (a quick check)
#
# DIR (default dist/) receives:
#   pkgscope_VERSION_OS_ARCH.tar.gz (.zip for windows)  pkgscope, pkgscope-indexer, LICENSE,
#                                                       README.md, THIRD_PARTY_LICENSES
#   npm/pkgscope-VERSION.tgz                            the npm package: a JS shim (bin pkgscope)
#   npm/pkgscope-OS-CPU-VERSION.tgz                     @pkgscope/OS-CPU: the binary, with os/cpu fields
#   SHA256SUMS                                          of every file above
#
# VERSION is $PKGSCOPE_VERSION (semver, no "v"); else the tag vX.Y.Z on
# HEAD; else 0.0.0-dev.<commit time>.g<short commit>. The binaries carry
# it with the commit and its time (internal/version), stamped by -ldflags.
#
# Plain `go build`, not GoReleaser: the six targets are one loop, and
# GoReleaser would add a 100+ MB tool to build from the module proxy
# before the first release, for archive and checksum steps that are a few
# lines here. Reproducible: CGO_ENABLED=0 (the SQLite driver, modernc, is
# pure Go), -trimpath, -buildvcs=false (the commit is stamped instead, so
# a build from an exported tree matches one from a checkout), archive
# entries sorted with the commit's time, owner 0 and no gzip name or
# time; npm pack already writes fixed times. --snapshot builds everything
# twice into separate folders and fails unless every file is identical.
# The archives need GNU tar and zip (Linux; CI's machine).
set -euo pipefail
cd "$(dirname "$0")/.."

mode="" out=dist
while [ $# -gt 0 ]; do
  case "$1" in
  --snapshot | --local) mode=$1 ;;
  --out) out=$2; shift ;;
  --out=*) out=${1#--out=} ;;
  *) echo "usage: scripts/release.sh --snapshot|--local [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$mode" ] || { echo "usage: scripts/release.sh --snapshot|--local [--out DIR]" >&2; exit 2; }
tar --version 2>/dev/null | grep -q GNU || { echo "release.sh: needs GNU tar (Debian: apt-get install tar)" >&2; exit 1; }

commit=$(git rev-parse HEAD)
epoch=$(git log -1 --format=%ct)
date=$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  # Uncommitted changes: the bytes are not those of the commit.
  commit="$commit-dirty"
fi
if [ -n "${PKGSCOPE_VERSION:-}" ]; then
  version=$PKGSCOPE_VERSION
elif tag=$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null); then
  version=${tag#v}
else
  version="0.0.0-dev.$(TZ=UTC git log -1 --date=format-local:%Y%m%d%H%M%S --format=%cd).g${commit:0:7}"
fi

all_targets="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"
if [ "$mode" = --local ]; then
  targets="$(go env GOOS)/$(go env GOARCH)"
else
  # PKGSCOPE_TARGETS narrows a snapshot (e.g. "linux/arm64 windows/amd64"):
  # each new target compiles every package once (about 2.5 CPU-minutes).
  targets=${PKGSCOPE_TARGETS:-$all_targets}
fi

export CGO_ENABLED=0 GOFLAGS=-mod=readonly SOURCE_DATE_EPOCH=$epoch
pkg=github.com/pkgscope/pkgscope/internal/version
ldflags="-s -w -X $pkg.Version=v$version -X $pkg.Commit=$commit -X $pkg.Date=$date"

# npm's names for Go's.
npm_os() { case $1 in windows) echo win32 ;; *) echo "$1" ;; esac; }
npm_cpu() { case $1 in amd64) echo x64 ;; *) echo "$1" ;; esac; }

# third_party OS ARCH: the licence texts of every module linked into the
# two binaries for that platform (docs/DEPENDENCIES.md lists them all).
third_party() {
  GOOS=$1 GOARCH=$2 go list -deps -f '{{with .Module}}{{if not .Main}}{{.Path}}@{{.Version}} {{.Dir}}{{end}}{{end}}' ./cmd/mirror ./cmd/indexer |
    sort -u | while read -r mod dir; do
      for f in $(cd "$dir" && ls | grep -Ei '^(licen[cs]e|copying|notice)([-_.][^/]*)?$' | grep -v '\.go$' | sort); do
        printf '==== %s: %s ====\n\n' "$mod" "$f"
        cat "$dir/$f"
        printf '\n'
      done
    done
}

# archive DIR FILE: FILE (.tar.gz or .zip) of DIR's files, at its root,
# in name order, dated at the commit.
archive() {
  local dir=$1 file=$2
  find "$dir" -exec touch -h -d "@$epoch" {} +
  case $file in
  *.zip) (cd "$dir" && ls | LC_ALL=C sort | TZ=UTC zip -q -X -D "$file" -@) ;;
  *) tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --format=ustar \
    -C "$dir" -cf - $(cd "$dir" && ls | LC_ALL=C sort) | gzip -n -9 >"$file" ;;
  esac
}

# build DEST: every artefact of $targets into DEST.
build() {
  local dest=$1
  rm -rf "$dest" && mkdir -p "$dest/npm"
  dest=$(cd "$dest" && pwd)
  local work=$dest/.work
  mkdir -p "$work"
  for t in $targets; do
    local os=${t%/*} arch=${t#*/} ext=""
    [ "$os" = windows ] && ext=.exe
    local name=pkgscope_${version}_${os}_${arch}
    local stage=$work/$name
    mkdir -p "$stage"
    GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$stage/pkgscope$ext" ./cmd/mirror
    GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$stage/pkgscope-indexer$ext" ./cmd/indexer
    cp LICENSE README.md "$stage/"
    third_party "$os" "$arch" >"$stage/THIRD_PARTY_LICENSES"
    if [ "$os" = windows ]; then archive "$stage" "$dest/$name.zip"; else archive "$stage" "$dest/$name.tar.gz"; fi

    # The platform's npm package: the server binary alone.
    local np npmdir=$work/npm-$os-$arch
    np=$(npm_os "$os")-$(npm_cpu "$arch")
    mkdir -p "$npmdir/bin"
    cp "$stage/pkgscope$ext" "$npmdir/bin/"
    cp LICENSE "$npmdir/"
    cat >"$npmdir/package.json" <<JSON
{
  "name": "@pkgscope/$np",
  "version": "$version",
  "description": "The pkgscope binary for $np; installed by the pkgscope package.",
  "license": "MIT",
  "os": ["$(npm_os "$os")"],
  "cpu": ["$(npm_cpu "$arch")"],
  "files": ["bin/"],
  "preferUnplugged": true
}
JSON
    (cd "$npmdir" && npm pack --silent --pack-destination "$dest/npm" >/dev/null)
  done

  # The main npm package names every platform's package, also in --local:
  # npm skips the ones whose os/cpu do not fit.
  local optional=""
  for t in $all_targets; do
    optional="$optional${optional:+,}
    \"@pkgscope/$(npm_os "${t%/*}")-$(npm_cpu "${t#*/}")\": \"$version\""
  done
  local main=$work/npm-main
  mkdir -p "$main/bin"
  cp scripts/npm/pkgscope.js "$main/bin/pkgscope.js"
  cp LICENSE README.md "$main/"
  cat >"$main/package.json" <<JSON
{
  "name": "pkgscope",
  "version": "$version",
  "description": "A caching mirror of npm packages for coding agents: list, glob, read, grep and diff any published version over MCP, HTTP or a web page.",
  "license": "MIT",
  "bin": { "pkgscope": "bin/pkgscope.js" },
  "files": ["bin/"],
  "engines": { "node": ">=18" },
  "optionalDependencies": {$optional
  }
}
JSON
  (cd "$main" && npm pack --silent --pack-destination "$dest/npm" >/dev/null)

  rm -rf "$work"
  (cd "$dest" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
}

echo "release.sh: pkgscope $version ($commit, $date), $(go env GOVERSION), targets: $targets"
build "$out"
if [ "$mode" = --snapshot ]; then
  check=$(mktemp -d)
  trap 'rm -rf "$check"' EXIT
  build "$check/again"
  if ! diff -u "$out/SHA256SUMS" "$check/again/SHA256SUMS"; then
    echo "release.sh: NOT reproducible: the second build differs (diff above)" >&2
    exit 1
  fi
  echo "release.sh: reproducible: built twice, $(wc -l <"$out/SHA256SUMS") files byte-identical"
fi
cat "$out/SHA256SUMS"
