// The client package (clients/typescript) as someone outside this repository gets it: `npm pack`,
// the tarball installed into an empty folder under the system's temp directory (so nothing
// resolves from this repository's node_modules), the example and the wrong-use file of
// clients/typescript/example type-checked under `moduleResolution` nodenext and bundler, with
// skipLibCheck off and on, by TypeScript 5 (the package's own tools) and TypeScript 7 (the root's),
// then the example compiled and run on every Node found on PATH (the host's Node 20 included)
// against a small local HTTP server. Only the npm registry is needed (openapi-fetch, @types/node).
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const CLIENT_DIR = join(ROOT, "clients", "typescript");
export const EXAMPLE_DIR = join(CLIENT_DIR, "example");

/** The compilers the check uses: the package's TypeScript 5 (when installed) and the root's 7. */
export function compilers() {
  const found = [
    { name: "TypeScript 5", bin: join(CLIENT_DIR, "node_modules", "typescript", "bin", "tsc") },
    { name: "TypeScript 7", bin: join(ROOT, "node_modules", "typescript", "bin", "tsc") },
  ];
  return found.filter((c) => existsSync(c.bin));
}

/** The four settings a consumer may have: Node's resolution or a bundler's, skipLibCheck off or on. */
export const SETTINGS = [
  { module: "NodeNext", moduleResolution: "NodeNext", skipLibCheck: false },
  { module: "NodeNext", moduleResolution: "NodeNext", skipLibCheck: true },
  { module: "ESNext", moduleResolution: "Bundler", skipLibCheck: false },
  { module: "ESNext", moduleResolution: "Bundler", skipLibCheck: true },
];

function run(command, args, options) {
  return spawnSync(command, args, { encoding: "utf8", ...options });
}

function npm(args, cwd) {
  // Under `npm run`, npm_execpath is the npm that runs us; else the one on PATH.
  const viaNode = process.env.npm_execpath?.endsWith(".js");
  const result = viaNode ? run(process.execPath, [process.env.npm_execpath, ...args], { cwd }) : run("npm", args, { cwd, shell: process.platform === "win32" });
  if (result.status !== 0) throw new Error(`npm ${args.join(" ")} failed:\n${result.stdout}${result.stderr}`);
  return result.stdout;
}

/**
 * Packs clients/typescript and installs the tarball, with @types/node, into a new folder under the
 * system's temp directory, beside copies of the example files. Returns the folder.
 */
export function installConsumer() {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "edge-client-consumer-")));
  if (!relative(ROOT, dir).startsWith("..")) throw new Error(`the temp directory ${dir} is inside the repository: set TMPDIR elsewhere`);
  const packed = JSON.parse(npm(["pack", "--json", "--pack-destination", dir], CLIENT_DIR));
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "consumer", private: true, type: "module" }, null, 2)}\n`);
  npm(["install", "--no-audit", "--no-fund", "--prefer-offline", `./${packed[0].filename}`, "@types/node@20"], dir);
  for (const file of readdirSync(EXAMPLE_DIR)) cpSync(join(EXAMPLE_DIR, file), join(dir, file));
  return dir;
}

/** What is wrong with the install itself: openapi-fetch must be the consumer's own copy. */
export function installProblems(dir) {
  const problems = [];
  for (const name of ["@edge-platform/client", "openapi-fetch"]) {
    const path = join(dir, "node_modules", ...name.split("/"));
    if (!existsSync(path)) problems.push(`${name} is not in the consumer's node_modules`);
    else if (!realpathSync(path).startsWith(dir + sep)) problems.push(`${name} links outside the consumer folder: ${realpathSync(path)}`);
  }
  return problems;
}

/** Type-checks the example and the wrong uses in `dir` with one compiler and one setting: { ok, output }. */
export function typeCheck(dir, compiler, setting) {
  const config = join(dir, `tsconfig.check.json`);
  writeFileSync(config, JSON.stringify({ extends: "./tsconfig.json", compilerOptions: { ...setting, noEmit: true } }));
  const result = run(process.execPath, [compiler.bin, "-p", config], { cwd: dir });
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}`.trim() };
}

/** Every distinct Node on PATH outside node_modules (the host's), plus the one running this. */
export function nodes() {
  const seen = new Map();
  const add = (bin) => {
    const real = realpathSync(bin);
    if (seen.has(real)) return;
    const version = run(bin, ["--version"]).stdout.trim();
    if (version) seen.set(real, { bin, version });
  };
  add(process.execPath);
  for (const folder of (process.env.PATH ?? "").split(delimiter)) {
    if (!folder || folder.includes("node_modules")) continue;
    const bin = join(folder, process.platform === "win32" ? "node.exe" : "node");
    if (existsSync(bin)) add(bin);
  }
  return [...seen.values()];
}

/** A local stand-in for the API: the three answers the example reads, and what it was sent. */
async function exampleServer() {
  const seen = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method, url: req.url, authorization: req.headers.authorization });
    const answer = (status, body) => {
      res.writeHead(status, { "content-type": "application/json", "x-request-id": "req_example" });
      res.end(JSON.stringify(body));
    };
    if (req.url === "/api/v1/usage") {
      return answer(200, {
        data: {
          period_start: "2026-11-01T00:00:00.000Z",
          period_end: "2026-12-01T00:00:00.000Z",
          plan: "pro",
          services: { logs: { metric: "MB ingested", used: 3, limit: 50_000, remaining: 49_997, unlimited: false } },
        },
      });
    }
    if (req.url === "/api/v1/logs/projects") {
      const project = { id: "lgp_1", name: "checkout", daily_limit_mb: 100, retention_days: 7, ingest_token_prefix: "lgt_ab12" };
      return answer(200, { data: [{ ...project, stream_count: 1, created_at: "2026-11-02T00:00:00Z", updated_at: "2026-11-02T00:00:00Z" }] });
    }
    answer(404, { error: "Log project not found" });
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  return { url: `http://127.0.0.1:${server.address().port}`, seen, close: () => new Promise((done) => server.close(done)) };
}

/** Runs `file` with `node`, resolving with { code, stdout, stderr }. */
function runNode(node, file, cwd, env) {
  return new Promise((resolve) => {
    const child = spawn(node, [file], { cwd, env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The lines the example must print against exampleServer(). */
export const EXPECTED_OUTPUT = [
  "plan pro, month ends 2026-12-01T00:00:00.000Z",
  "  logs: 3 MB ingested of 50000",
  "log projects: checkout",
  "a missing project: 404 (404 Log project not found)",
];

/**
 * Compiles the example in `dir` (NodeNext, emitting dist/usage.js) and runs it on each Node of
 * `nodes()` against exampleServer(); returns [{ node, problem }] for each run that went wrong.
 */
export async function runExample(dir, compiler) {
  const emit = run(process.execPath, [compiler.bin, "-p", join(dir, "tsconfig.json")], { cwd: dir });
  if (emit.status !== 0) return [{ node: "-", problem: `compiling the example failed:\n${emit.stdout}${emit.stderr}` }];
  const problems = [];
  for (const node of nodes()) {
    const server = await exampleServer();
    try {
      const out = await runNode(node.bin, join(dir, "dist", "usage.js"), dir, { EDGE_URL: server.url, EDGE_KEY: "edp_example" });
      const lines = out.stdout.trimEnd().split("\n");
      if (out.code !== 0) problems.push({ node: node.version, problem: `exit ${out.code}: ${out.stderr}` });
      else if (JSON.stringify(lines) !== JSON.stringify(EXPECTED_OUTPUT)) problems.push({ node: node.version, problem: `printed:\n${out.stdout}` });
      else if (!server.seen.every((r) => r.authorization === "Bearer edp_example") || server.seen.length !== 3) {
        problems.push({ node: node.version, problem: `the server saw ${JSON.stringify(server.seen)}` });
      }
    } finally {
      await server.close();
    }
  }
  return problems;
}

/** The whole check; `log` gets one line per step. Throws with every failure found. */
export async function checkClientPackage(log = console.log) {
  const available = compilers();
  if (available.length === 0) throw new Error("no TypeScript compiler: run `npm ci` (and `npm ci --prefix clients/typescript`)");
  const started = Date.now();
  const dir = installConsumer();
  const failures = [];
  try {
    log(`installed the packed client into ${dir}`);
    failures.push(...installProblems(dir));
    for (const compiler of available) {
      for (const setting of SETTINGS) {
        const { ok, output } = typeCheck(dir, compiler, setting);
        const name = `${compiler.name}, moduleResolution ${setting.moduleResolution}, skipLibCheck ${setting.skipLibCheck}`;
        log(`${ok ? "ok  " : "FAIL"} type-check: ${name}`);
        if (!ok) failures.push(`${name}:\n${output}`);
      }
    }
    const fastest = available.at(-1);
    const exampleProblems = await runExample(dir, fastest);
    for (const { node, problem } of exampleProblems) failures.push(`the example on Node ${node}: ${problem}`);
    const versions = nodes().map((n) => n.version);
    log(`${exampleProblems.length === 0 ? "ok  " : "FAIL"} the example, compiled by ${fastest.name}, on Node ${versions.join(", ")}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (failures.length > 0) throw new Error(`the client package check failed:\n\n${failures.join("\n\n")}`);
  log(`client package check passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
