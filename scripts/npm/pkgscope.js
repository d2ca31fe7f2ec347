#!/usr/bin/env node
// pkgscope's npm entry point. The binary itself ships in one package per
// platform (@pkgscope/linux-x64, @pkgscope/darwin-arm64, ...), each an
// optional dependency of this package whose `os` and `cpu` fields let npm
// install only the one that fits this machine (esbuild's pattern). This
// shim finds it and runs it with this process's arguments, stdin, stdout
// and stderr, so `npx -y pkgscope mcp` speaks MCP on stdio directly.
"use strict";

const { spawnSync } = require("node:child_process");

const platform = `${process.platform}-${process.arch}`;
const pkg = `@pkgscope/${platform}`;
const exe = process.platform === "win32" ? "pkgscope.exe" : "pkgscope";

let binary;
try {
  binary = require.resolve(`${pkg}/bin/${exe}`);
} catch {
  process.stderr.write(
    `pkgscope: no binary for ${platform}: the optional dependency ${pkg} is not installed.\n` +
      `  Releases exist for linux, darwin and win32 on x64 and arm64. If this is one of them, npm skipped\n` +
      `  optional dependencies (--omit=optional or --no-optional): reinstall without that option,\n` +
      `  or download a release archive and run its pkgscope binary.\n`,
  );
  process.exit(1);
}

const result = spawnSync(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
if (result.error) {
  process.stderr.write(`pkgscope: could not run ${binary}: ${result.error.message}\n`);
  process.exit(1);
}
if (result.signal) {
  // Die of the same signal, so a parent sees what the binary saw.
  process.kill(process.pid, result.signal);
}
process.exit(result.status ?? 1);
