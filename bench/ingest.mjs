// npm run bench:ingest — throughput of NDJSON batch ingest against a real `wrangler dev`.
//
// Starts its own `wrangler dev` on free ports with a temporary --persist-to directory and a
// temporary env file holding fresh secrets, applies the migrations to that directory, creates a
// team, an API key and a log project through the API, then posts a 10,000-line (~2 MB) NDJSON
// batch several times and prints the time per batch and entries per second. The server and the
// temporary files are removed whatever happens.
//
// Options (env): BATCHES (default 5), LINES (default 10000), BENCH_URL (target a server that is
// already running instead; then ADMIN_TOKEN must be its operator token).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
const BATCHES = Number(process.env.BATCHES ?? 5);
const LINES = Number(process.env.LINES ?? 10_000);

function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.unref();
    server.on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

function run(args, options = {}) {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, [WRANGLER, ...args], { cwd: ROOT, env: { ...process.env, CI: "1" }, stdio: ["ignore", "pipe", "pipe"], ...options });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("exit", (code) => (code === 0 ? ok(output) : fail(new Error(`wrangler ${args[0]} exited ${code}:\n${output}`))));
  });
}

async function waitFor(url, child, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited early (${child.exitCode})`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`wrangler dev did not answer ${url} within ${timeoutMs / 1000}s`);
}

async function api(base, method, path, token, body) {
  const res = await fetch(`${base}/api/v1/${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(json)}`);
  return json.data;
}

/** A realistic batch: mixed levels, 20 streams, services, trace ids and small metadata, ~200 bytes a line. */
function buildBatch(lines) {
  const levels = ["debug", "info", "info", "info", "warn", "error"];
  const out = [];
  for (let i = 0; i < lines; i++) {
    out.push(
      JSON.stringify({
        message: `GET /api/v1/items/${i} completed in ${(i % 97) + 3} ms for user ${i % 1000}`,
        level: levels[i % levels.length],
        stream: `stream-${i % 20}`,
        service: i % 3 ? "api" : "worker",
        trace_id: `${(i * 2654435761) >>> 0}`.padStart(16, "0"),
        span_id: `${i}`.padStart(8, "0"),
        metadata: { region: "eu-west", status: 200, attempt: i % 4 },
      }),
    );
  }
  return out.join("\n") + "\n";
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main() {
  let base = process.env.BENCH_URL;
  let adminToken = process.env.ADMIN_TOKEN;
  let child;
  let temp;
  const stop = () => {
    if (child && child.exitCode === null) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        child.kill("SIGTERM");
      }
    }
    if (temp) rmSync(temp, { recursive: true, force: true });
  };
  process.on("SIGINT", () => {
    stop();
    process.exit(130);
  });

  try {
    if (!base) {
      temp = mkdtempSync(join(tmpdir(), "bench-ingest-"));
      const persist = join(temp, "state");
      const envFile = join(temp, ".env");
      adminToken = randomBytes(24).toString("hex");
      writeFileSync(
        envFile,
        [
          `ADMIN_TOKEN=${adminToken}`,
          `ENCRYPTION_KEY=${randomBytes(32).toString("base64")}`,
          `SIGNING_KEY=${randomBytes(32).toString("hex")}`,
          "ALLOW_PRIVATE_TARGETS=true",
        ].join("\n") + "\n",
      );
      const port = await freePort();
      const inspector = await freePort();
      base = `http://127.0.0.1:${port}`;
      process.stdout.write("applying migrations to a temporary local D1... ");
      await run(["d1", "migrations", "apply", "DB", "--local", "--persist-to", persist]);
      console.log("done");
      process.stdout.write(`starting wrangler dev on ${base}... `);
      child = spawn(
        process.execPath,
        [WRANGLER, "dev", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspector), "--persist-to", persist, "--env-file", envFile, "--var", `APP_URL:${base}`, "--show-interactive-dev-session=false"],
        { cwd: ROOT, env: { ...process.env, CI: "1" }, stdio: ["ignore", "pipe", "pipe"], detached: true },
      );
      let log = "";
      child.stdout.on("data", (d) => (log += d));
      child.stderr.on("data", (d) => (log += d));
      try {
        await waitFor(`${base}/health`, child);
      } catch (error) {
        console.error(log.slice(-4000));
        throw error;
      }
      console.log("up");
    }
    if (!adminToken) throw new Error("ADMIN_TOKEN is required with BENCH_URL");

    const team = await api(base, "POST", "admin/teams", adminToken, { name: "bench", plan: "scale" });
    const key = await api(base, "POST", `admin/teams/${team.id}/keys`, adminToken, { name: "bench", scopes: ["logs:read", "logs:write"] });
    const project = await api(base, "POST", "logs/projects", key.key, { name: "bench", daily_limit_mb: 100_000 });

    const body = buildBatch(LINES);
    const bytes = Buffer.byteLength(body);
    console.log(`batch: ${LINES} lines, ${(bytes / 1024 / 1024).toFixed(2)} MB; ${BATCHES} timed batches after one warm-up\n`);

    const times = [];
    for (let i = 0; i <= BATCHES; i++) {
      const started = performance.now();
      const res = await fetch(`${base}/api/v1/logs/ingest/batch`, {
        method: "POST",
        headers: { authorization: `Bearer ${project.ingest_token}`, "content-type": "application/x-ndjson" },
        body,
      });
      const result = await res.json();
      const ms = performance.now() - started;
      if (res.status !== 202 || result.count !== LINES) throw new Error(`batch answered ${res.status}: ${JSON.stringify(result)}`);
      if (i === 0) {
        console.log(`warm-up   ${ms.toFixed(0).padStart(6)} ms`);
        continue;
      }
      times.push(ms);
      console.log(`batch ${String(i).padStart(2)}  ${ms.toFixed(0).padStart(6)} ms   ${Math.round(LINES / (ms / 1000)).toLocaleString("en-US").padStart(8)} entries/s`);
    }
    const total = times.reduce((a, b) => a + b, 0);
    const entries = await api(base, "GET", `logs/projects/${project.id}/entries?limit=1`, key.key);
    console.log(
      `\nmedian ${median(times).toFixed(0)} ms per ${LINES}-line batch; mean ${Math.round((LINES * times.length) / (total / 1000)).toLocaleString("en-US")} entries/s ` +
        `(${((bytes * times.length) / 1024 / 1024 / (total / 1000)).toFixed(1)} MB/s); newest stored entry: ${entries[0]?.created_at ?? "none"}`,
    );
  } finally {
    stop();
  }
}

main().catch((error) => {
  console.error(error.message ?? error);
  process.exitCode = 1;
});
