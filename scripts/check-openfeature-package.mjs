// `npm run check:openfeature`: the OpenFeature provider package (clients/openfeature) installed the
// way someone outside this repository installs it: `npm pack` (prepack builds dist/), the tarball
// and the OpenFeature SDKs installed into an empty folder under the system's temp directory, the
// example (clients/openfeature/example) type-checked under moduleResolution nodenext and bundler,
// with skipLibCheck off and on (its @ts-expect-error line must stay an error), then compiled and run
// on every Node found on PATH against a local stand-in serving the shared vectors' ruleset.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { compilers, nodes, SETTINGS, typeCheck } from "./lib/client-package.mjs";

const ROOT = join(import.meta.dirname, "..");
const PACKAGE_DIR = join(ROOT, "clients", "openfeature");
const EXPECTED = [
  "targeting: gold (TARGETING_MATCH, version 9)",
  'org-rollout: {"limit":10}',
  "nope: false (FLAG_NOT_FOUND)",
  "changed since: false, fetched 1, not modified 1",
];

function npm(args, cwd) {
  const viaNode = process.env.npm_execpath?.endsWith(".js");
  const result = viaNode
    ? spawnSync(process.execPath, [process.env.npm_execpath, ...args], { cwd, encoding: "utf8" })
    : spawnSync("npm", args, { cwd, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`npm ${args.join(" ")} failed:\n${result.stdout}${result.stderr}`);
  return result.stdout;
}

/** The ruleset endpoint with the vectors' ruleset, ETag and 304. */
async function standIn() {
  const ruleset = JSON.parse(readFileSync(join(ROOT, "test", "products", "flags", "vectors.json"), "utf8")).ruleset;
  const server = createServer((req, res) => {
    const etag = `"${ruleset.version}"`;
    if (req.headers.authorization !== "Bearer edp_example" || !req.url.startsWith("/api/v1/flags/ruleset")) {
      res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "Invalid or missing API key" }));
    } else if (req.headers["if-none-match"] === etag) res.writeHead(304, { etag }).end();
    else res.writeHead(200, { "content-type": "application/json", etag }).end(JSON.stringify({ data: ruleset }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

function runNode(bin, file, cwd, env) {
  return new Promise((resolve) => {
    const child = spawn(bin, [file], { cwd, env: { ...process.env, ...env } });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) => resolve({ code, out, err }));
  });
}

const started = Date.now();
const failures = [];
const dir = realpathSync(mkdtempSync(join(tmpdir(), "edge-openfeature-consumer-")));
try {
  if (!relative(ROOT, dir).startsWith("..")) throw new Error(`the temp directory ${dir} is inside the repository: set TMPDIR elsewhere`);
  const packed = JSON.parse(npm(["pack", "--json", "--pack-destination", dir], PACKAGE_DIR));
  const files = packed[0].files.map((f) => f.path).sort();
  console.log(`packed ${packed[0].filename}: ${files.join(", ")}`);
  if (files.some((f) => f.startsWith("src/") || f.includes("evaluate"))) failures.push(`the tarball carries sources: ${files.join(", ")}`);
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "consumer", private: true, type: "module" }, null, 2)}\n`);
  npm(
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
      `./${packed[0].filename}`,
      "@openfeature/server-sdk@1",
      "@openfeature/web-sdk@1",
      "@types/node@20",
    ],
    dir,
  );
  for (const file of readdirSync(join(PACKAGE_DIR, "example"))) cpSync(join(PACKAGE_DIR, "example", file), join(dir, file));
  const available = compilers();
  for (const compiler of available) {
    for (const setting of SETTINGS) {
      const { ok, output } = typeCheck(dir, compiler, setting);
      const name = `${compiler.name}, moduleResolution ${setting.moduleResolution}, skipLibCheck ${setting.skipLibCheck}`;
      console.log(`${ok ? "ok  " : "FAIL"} type-check: ${name}`);
      if (!ok) failures.push(`${name}:\n${output}`);
    }
  }
  const compiler = available.at(-1);
  const emit = spawnSync(process.execPath, [compiler.bin, "-p", join(dir, "tsconfig.json")], { cwd: dir, encoding: "utf8" });
  // The example's @ts-expect-error line is the only error-free way to write a wrong use: emit succeeds.
  if (emit.status !== 0) failures.push(`compiling the example failed:\n${emit.stdout}${emit.stderr}`);
  else {
    for (const node of nodes()) {
      const server = await standIn();
      try {
        const run = await runNode(node.bin, join(dir, "dist", "usage.js"), dir, { EDGE_URL: server.url, EDGE_KEY: "edp_example" });
        const lines = run.out.trimEnd().split("\n");
        const ok = run.code === 0 && JSON.stringify(lines) === JSON.stringify(EXPECTED);
        console.log(`${ok ? "ok  " : "FAIL"} the example on Node ${node.version}`);
        if (!ok) failures.push(`the example on Node ${node.version}: exit ${run.code}\n${run.out}${run.err}`);
      } finally {
        await server.close();
      }
    }
  }
} catch (error) {
  failures.push(error.message);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (failures.length > 0) {
  console.error(`the OpenFeature package check failed:\n\n${failures.join("\n\n")}`);
  process.exitCode = 1;
} else console.log(`OpenFeature package check passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
