#!/usr/bin/env bash
# Regenerates the lockfile fixtures in this folder with the real tools.
# Needs node, npm and git, and reaches the npm registry configured in npm
# (the tools are fetched with npx). The tests never run this; they read
# the files it wrote. See README.md for what each folder holds.
#
# The git dependency is served by `git daemon` and the remote tarball by
# python's http.server, both on 127.0.0.1, so every tool resolves them
# offline. The registry's URL is read from npm's config and replaced by
# https://registry.example/ in what is written here.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d /tmp/lockfile-fixtures.XXXXXX)"
git_port=19418 http_port=18931
registry="$(npm config get registry)"
export NPM_CONFIG_REGISTRY="$registry" YARN_NPM_REGISTRY_SERVER="$registry"
export YARN_ENABLE_TELEMETRY=0 YARN_ENABLE_GLOBAL_CACHE=0
# Fresh caches: a cached clone of an earlier run's git-dep holds a tag
# v3.1.0 that the new repository moved, and yarn refuses to fetch it.
export YARN_CACHE_FOLDER="$work/yarn-cache" BUN_INSTALL_CACHE_DIR="$work/bun-cache"

for port in $git_port $http_port; do
	if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then
		echo "port $port is in use: the fixtures name it, so free it first" >&2
		exit 1
	fi
done

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

# The git dependency: a one-commit repository tagged v3.1.0.
mkdir -p "$work/srv/gitdep" "$work/tarsrc" "$work/srv/http"
(cd "$work/srv/gitdep" && printf '{\n  "name": "git-dep",\n  "version": "3.1.0"\n}\n' > package.json &&
	git init -q && git add . && git -c user.email=f@example.com -c user.name=f commit -qm init && git tag v3.1.0)
git daemon --base-path="$work/srv" --export-all --reuseaddr --port=$git_port --listen=127.0.0.1 &
pids+=($!)
# The remote tarball.
(cd "$work/tarsrc" && printf '{\n  "name": "remote-tar",\n  "version": "0.5.0"\n}\n' > package.json &&
	npm pack --pack-destination "$work/srv/http" >/dev/null 2>&1)
(cd "$work/srv/http" && exec python3 -m http.server $http_port --bind 127.0.0.1 >/dev/null 2>&1) &
pids+=($!)
sleep 1

# The project: base/ is package-json/ of this folder plus a workspace and
# a file: dependency.
base="$work/base"
mkdir -p "$base/local-pkg" "$base/packages/app"
cp "$here/package-json/package.json" "$base/"
cp "$here/package-lock-v3/local-pkg/package.json" "$base/local-pkg/"
cp "$here/package-lock-v3/packages/app/package.json" "$base/packages/app/"

src="$base"
gen() { # gen <fixture dir> <command...>: run the tool in a copy of $src
	local name=$1; shift
	rm -rf "$work/out/$name"; mkdir -p "$work/out"; cp -r "$src" "$work/out/$name"
	(cd "$work/out/$name" && "$@" >/dev/null 2>&1) || { echo "$name: $* failed" >&2; exit 1; }
	rm -rf "$work/out/$name/node_modules" "$work/out/$name"/packages/*/node_modules "$work/out/$name/.yarn"
	echo "$name ok"
}
pnpmws() { printf "packages:\n  - 'packages/*'\n" > pnpm-workspace.yaml; "$@"; }
berry() { printf '%s\n' "$1" > .yarnrc.yml; shift; "$@"; }
single() { node -e 'const fs=require("fs");const p=JSON.parse(fs.readFileSync("package.json"));delete p.workspaces;fs.writeFileSync("package.json",JSON.stringify(p,null,2)+"\n")'; rm -rf packages; "$@"; }
full=--omit-lockfile-registry-resolved=false # write resolved URLs, as npm does by default

gen package-lock-v3 npm install --package-lock-only --ignore-scripts --lockfile-version 3 $full
gen package-lock-v2 npm install --package-lock-only --ignore-scripts --lockfile-version 2 $full
gen package-lock-v1 npx -y npm@6 install --package-lock-only --ignore-scripts
gen npm-shrinkwrap-v3 sh -c "npm install --package-lock-only --ignore-scripts $full && npm shrinkwrap"
gen pnpm-v9 pnpmws npx -y pnpm@9 install --lockfile-only --ignore-scripts
gen pnpm-v6 pnpmws npx -y pnpm@8 install --lockfile-only --ignore-scripts
gen pnpm-v6-single single npx -y pnpm@8 install --lockfile-only --ignore-scripts
gen yarn-v1 npx -y yarn@1 install --ignore-scripts --non-interactive
gen yarn-berry-v10 berry "$(printf 'approvedGitRepositories:\n  - "**"\nunsafeHttpWhitelist:\n  - "127.0.0.1"')" \
	npx -y @yarnpkg/cli-dist@4 install --mode update-lockfile
gen yarn-berry-v6 berry "$(printf 'unsafeHttpWhitelist:\n  - "127.0.0.1"')" \
	npx -y @yarnpkg/cli-dist@3 install --mode update-lockfile
gen bun-v2 npx -y bun@1.4.5 install --lockfile-only
gen bun-v1 npx -y bun@1.2.19 install --lockfile-only

# midsize-app: a Next.js app with a test and lint toolchain (about 400
# packages), locked by four tools in one folder, for the formats to agree
# on a real tree. npm writes no registry URLs here (npm's default config).
src="$work/app"
mkdir -p "$src"
cp "$here/midsize-app/package.json" "$src/"
gen midsize-app sh -c 'npm install --package-lock-only --ignore-scripts &&
	npx -y pnpm@9 install --lockfile-only --ignore-scripts &&
	npx -y yarn@1 install --ignore-scripts --non-interactive &&
	npx -y bun@1.4.5 install --lockfile-only'

# Copy back with registry hosts replaced: the configured registry's URL,
# and the scheme and host of every registry tarball URL (".../<name>/-/
# <file>.tgz"), since yarn classic writes its own mirror's host for the
# public registry.
REGISTRY="$registry" OUT="$work/out" HERE="$here" node -e '
const fs = require("fs"), path = require("path");
const reg = process.env.REGISTRY, out = process.env.OUT, here = process.env.HERE;
const tarball = /https?:\/\/[^\/"\s]+\/((?:@[^\/"\s]+\/)?[^\/"\s@]+\/-\/)/g;
const walk = (d) => fs.readdirSync(d, {withFileTypes: true}).flatMap(e =>
	e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]);
for (const name of fs.readdirSync(out)) {
	fs.rmSync(path.join(here, name), {recursive: true, force: true});
	for (const f of walk(path.join(out, name))) {
		const dst = path.join(here, name, path.relative(path.join(out, name), f));
		fs.mkdirSync(path.dirname(dst), {recursive: true});
		fs.writeFileSync(dst, fs.readFileSync(f, "utf8").split(reg).join("https://registry.example/")
			.replace(tarball, "https://registry.example/$1"));
	}
}'
echo "done; now run: go test ./internal/lockfile/ -update"
