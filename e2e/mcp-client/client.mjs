// An MCP client pkgscope did not write: the official TypeScript SDK's.
// It connects to a pkgscope MCP server, lists its tools, calls explore_npm
// once per entry of a calls file, and prints everything as one JSON object
// on stdout for internal/mcp/e2e_test.go to check.
//
//   node client.mjs --calls calls.json --url http://127.0.0.1:7878/mcp [--header "Authorization: Bearer T"]
//   node client.mjs --calls calls.json [--cwd DIR] -- mirror mcp --project .
//
// calls.json is a JSON array of explore_npm argument objects. A stdio
// server inherits this process's environment (the test's npm settings).
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function usage(msg) {
  process.stderr.write(`client.mjs: ${msg}\nusage: node client.mjs --calls FILE (--url URL [--header "K: V"]... | [--cwd DIR] -- COMMAND ARGS...)\n`);
  process.exit(2);
}

const argv = process.argv.slice(2);
let url, callsFile, command, cwd;
const headers = {};
while (argv.length > 0) {
  const a = argv.shift();
  if (a === "--url") url = argv.shift();
  else if (a === "--calls") callsFile = argv.shift();
  else if (a === "--cwd") cwd = argv.shift();
  else if (a === "--header") {
    const h = argv.shift() ?? "";
    const i = h.indexOf(":");
    if (i < 1) usage(`bad header ${JSON.stringify(h)}`);
    headers[h.slice(0, i).trim()] = h.slice(i + 1).trim();
  } else if (a === "--") {
    command = argv.splice(0);
  } else usage(`unknown argument ${JSON.stringify(a)}`);
}
if (!callsFile) usage("--calls is required");
if (!url === !command) usage("give exactly one of --url or -- COMMAND");

const calls = JSON.parse(readFileSync(callsFile, "utf8"));
const transport = url
  ? new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })
  : new StdioClientTransport({ command: command[0], args: command.slice(1), env: { ...process.env }, stderr: "inherit", cwd });

const client = new Client({ name: "pkgscope-e2e", version: "0.0.0" });
await client.connect(transport);
const out = {
  server: client.getServerVersion(),
  instructions: client.getInstructions() ?? null,
  tools: (await client.listTools()).tools,
  results: [],
};
for (const args of calls) {
  const res = await client.callTool({ name: "explore_npm", arguments: args });
  out.results.push({
    arguments: args,
    isError: res.isError === true,
    structuredContent: res.structuredContent ?? null,
    text: (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n"),
  });
}
await client.close();
process.stdout.write(JSON.stringify(out, null, 2) + "\n");
