// Shared by the benchmarks: a private wrangler dev with its own state, and autocannon runs.
import autocannon from "autocannon";
import { createHmac, timingSafeEqual as nodeTimingSafeEqual } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyMigrations, createTeamWithKey, freePort, freshSecrets, startDevServer, writeVars } from "../scripts/lib/dev-server.mjs";

/**
 * Runs `fn({ url, adminToken, createTeamWithKey })` against a fresh local server (its own temporary
 * --persist-to with migrations applied, an env file with fresh secrets, a free port and a free
 * inspector port), then stops it and removes the temporary files whatever happens, Ctrl-C included.
 * The Worker is bench/worker.ts: the production Worker plus the bare baselines and seeding helper
 * of the figures under /__bench/ (never part of the deployed Worker).
 * Options: vars (extra --var), logLevel (wrangler's --log-level).
 *
 * wrangler dev records a trace of every invocation for its local observability view (a collector
 * on the Worker's thread; no deployed Worker has it, and this project's wrangler.toml enables no
 * observability). It charges every invocation, a Durable Object call as a request, and under load
 * took about half of the thread here (the bare read: 2.0–3.0 ms of the thread per request with it,
 * 1.3–1.4 ms without), so it weighs on a route by its number of calls, not by its work. The
 * benchmarks turn it off; LOCAL_OBSERVABILITY=on measures with it (docs/BENCHMARKS.md).
 */
export const LOCAL_OBSERVABILITY = process.env.LOCAL_OBSERVABILITY === "on";

/**
 * Where the private server keeps its state (D1, Durable Objects, R2): in memory (`/dev/shm`, a
 * tmpfs) unless BENCH_STATE=disk, or where the machine has none. workerd commits a Durable Object's
 * SQLite with an fsync on the Worker's own thread: on this machine's disk every write of a store or
 * a counter stalls the Worker, and each request behind it, for the fsync (a form post, with two
 * commits, measured 0.58× of the bare read on disk and 0.89× in memory in one session). A deployed
 * Worker never waits on its storage's disk (a Durable Object's writes are made durable off its
 * thread; the output gate holds only that request's answer), and the bare read writes nothing, so
 * the figures keep the state in memory; BENCH_STATE=disk measures as before (docs/BENCHMARKS.md).
 */
export const STATE_ON_DISK = process.env.BENCH_STATE === "disk" || !existsSync("/dev/shm");

/**
 * Where the load runs send their requests: to the Worker's own workerd, unless BENCH_PROXY=on.
 * `wrangler dev` listens with a proxy, a second workerd that forwards every request to the Worker's
 * (it holds requests while a reload swaps the Worker; no deployed Worker has it). Forwarding costs
 * that process CPU by the request's shape, not by the route's work: a POST's body is streamed through
 * it (about 0.2–0.3 ms more of its CPU than a GET here, beside the 0.7–1.0 ms a GET costs it), so
 * every route taking a body paid the harness against the bare GET. The figures' load runs
 * (load()) connect to the Worker's workerd and send the proxy's address as their Host, so the Worker
 * sees the same URL (APP_URL's origin); setup and checks still go through the proxy.
 */
export const THROUGH_PROXY = process.env.BENCH_PROXY === "on";

/** While a server runs and the load bypasses the proxy: `origin`, the Worker's own; `proxy`, the proxy's URL. */
let direct = null;

export async function withServer(fn, { vars, logLevel, inspectorPort } = {}) {
  const dir = mkdtempSync(join(STATE_ON_DISK ? tmpdir() : "/dev/shm", "edge-bench-"));
  const envFile = join(dir, "dev.vars");
  const secrets = freshSecrets();
  writeVars(envFile, secrets);
  const abort = new AbortController();
  let starting;
  const onSignal = async () => {
    abort.abort(new Error("interrupted"));
    const server = await starting?.catch(() => null);
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  let server;
  try {
    applyMigrations({ persistTo: join(dir, "state") });
    const port = await freePort();
    starting = startDevServer({
      port,
      persistTo: join(dir, "state"),
      envFile,
      // The figures call the server at 127.0.0.1 (server.url: no name to resolve in what is
      // measured), so that is APP_URL's origin too: a console page read at another address than
      // APP_URL's is redirected there (src/console/session.ts, localHost()).
      vars: { APP_URL: `http://127.0.0.1:${port}`, ...vars },
      logLevel,
      signal: abort.signal,
      script: "bench/worker.ts",
      inspectorPort,
      env: { X_LOCAL_OBSERVABILITY: String(LOCAL_OBSERVABILITY) },
    });
    server = await starting;
    cpuGroup = { group: server.child.pid, proxy: listenerOf(new URL(server.url).port) };
    if (!THROUGH_PROXY) direct = { origin: await workerOrigin(server.url), proxy: new URL(server.url) };
    return await fn({
      url: server.url,
      adminToken: secrets.ADMIN_TOKEN,
      createTeamWithKey: (opts) => createTeamWithKey(server.url, secrets.ADMIN_TOKEN, opts),
      /** The server's error lines so far (the last ones), for a figure that saw failed answers. */
      serverErrors: () =>
        server
          .output()
          .split("\n")
          .filter((line) => /error|exception|uncaught|\b5\d\d\b/i.test(line))
          .slice(-15)
          .join("\n"),
    });
  } finally {
    cpuGroup = null;
    direct = null;
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** The median of a list of numbers. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Where the CPU of a load run went, in ms per answered request, read from /proc (Linux): the
 * Worker's workerd (with its Durable Objects, D1 and the rest of miniflare: one process), wrangler
 * dev's proxy (a second workerd, the one listening on the server's port, which no deployed Worker
 * has), wrangler's own Node process and the load generator (this process). Throughput on two
 * shared cores moves with whatever else runs; the Worker's CPU per request moves much less, so a
 * figure's CPU beside its bare twin's says what a route's own work costs.
 */
let cpuGroup = null;
const TICK_MS = 1000 / Number(execFileSafe("getconf", ["CLK_TCK"]) || 100);

function execFileSafe(command, args) {
  try {
    return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "";
  }
}

/**
 * A process's command name, process group and CPU ms so far, from /proc/<pid>/stat (proc(5)), or
 * null when it cannot be read.
 */
function procStat(pid) {
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[2] is the process group, [11] utime, [12] stime (counted from the state field).
  return { comm, group: Number(fields[2]), cpuMs: (Number(fields[11]) + Number(fields[12])) * TICK_MS };
}

/**
 * The origin the Worker's own workerd answers at: among the loopback ports its process (of the
 * server's process group, not the proxy) listens on, the one whose `/health` answers as the
 * proxy's does. Throws when none does (BENCH_PROXY=on measures through the proxy).
 */
async function workerOrigin(proxyUrl) {
  const expected = await (await fetch(`${proxyUrl}/health`)).text();
  const ports = listeners().filter(({ pid }) => pid !== cpuGroup.proxy && procStat(pid)?.group === cpuGroup.group);
  for (const { port } of ports) {
    const origin = `http://127.0.0.1:${port}`;
    const answer = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(2000) })
      .then(async (res) => (res.ok ? await res.text() : null))
      .catch(() => null);
    if (answer === expected) return origin;
  }
  throw new Error("the Worker's own workerd was not found listening (BENCH_PROXY=on sends the load through wrangler dev's proxy)");
}

/** Every listening TCP socket with its process (ss): { pid, port }; none where ss cannot be run. */
function listeners() {
  return execFileSafe("ss", ["-ltnpH"])
    .split("\n")
    .map((line) => ({ pid: Number(line.match(/pid=(\d+)/)?.[1]), port: Number(line.split(/\s+/)[3]?.match(/:(\d+)$/)?.[1]) }))
    .filter(({ pid, port }) => pid && port);
}

/** The pid listening on `port`, or null. */
function listenerOf(port) {
  return listeners().find((socket) => socket.port === Number(port))?.pid ?? null;
}

/** CPU ms so far of the server's processes by role; null without a server or without /proc. */
function cpuSnapshot() {
  if (!cpuGroup) return null;
  let pids;
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const usage = process.cpuUsage();
  const snapshot = { worker: 0, proxy: 0, wrangler: 0, loadGenerator: (usage.user + usage.system) / 1000 };
  for (const pid of pids) {
    const stat = procStat(pid);
    if (stat?.group !== cpuGroup.group) continue;
    if (stat.comm === "workerd") snapshot[Number(pid) === cpuGroup.proxy ? "proxy" : "worker"] += stat.cpuMs;
    else snapshot.wrangler += stat.cpuMs;
  }
  return snapshot;
}

/**
 * One autocannon run; returns requests/s, mean, p50 and p99 latency, the non-2xx count and `cpu`:
 * ms of CPU per answered request by process (cpuSnapshot), also printed to stderr (null, and
 * nothing printed, where /proc cannot be read).
 */
export async function load(options) {
  const before = cpuSnapshot();
  const target =
    direct && new URL(options.url).origin === direct.proxy.origin
      ? { url: options.url.replace(direct.proxy.origin, direct.origin), headers: { ...options.headers, host: direct.proxy.host } }
      : {};
  const result = await autocannon({ connections: 20, duration: 10, ...options, ...target });
  const after = cpuSnapshot();
  const answered = Math.max(1, result.requests.total);
  const cpu = before && after ? Object.fromEntries(Object.keys(after).map((role) => [role, (after[role] - before[role]) / answered])) : null;
  if (cpu) {
    console.error(
      `cpu per request, ${options.title ?? options.url}: worker ${cpu.worker.toFixed(3)} ms, proxy ${cpu.proxy.toFixed(3)}, wrangler ${cpu.wrangler.toFixed(3)}, load generator ${cpu.loadGenerator.toFixed(3)} (${result.requests.average.toFixed(0)} req/s)`,
    );
  }
  return {
    title: options.title,
    requestsPerSecond: result.requests.average,
    mean: result.latency.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    /** Answers per status code, to say which non-2xx a failed check saw. */
    statuses: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stat]) => [code, stat.count])),
    cpu,
  };
}

/**
 * A load run of a route's shape twin (`POST /__bench/bare/read`, a route's request without its
 * work; not a goal's yardstick): throws unless every answer was 200.
 */
export async function loadTwin(options) {
  const run = await load(options);
  if (Object.keys(run.statuses).some((code) => code !== "200")) throw new Error(`the bare POST twin answered ${JSON.stringify(run.statuses)}`);
  return run;
}

export function printTable(rows) {
  console.log("\n| run | req/s | p50 ms | p99 ms | requests | non-2xx | errors |\n|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(`| ${r.title} | ${r.requestsPerSecond.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.total} | ${r.non2xx} | ${r.errors} |`);
  }
}

/** An API call with a bearer token; throws with the answer when the status is not 2xx. */
export async function api(base, method, path, token, body, headers = {}) {
  const res = await fetch(`${base}/api/v1/${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  const json = text ? JSON.parse(text) : null;
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
  return json?.data ?? json;
}

/**
 * A realistic NDJSON log batch: mixed levels, 20 streams, services, trace ids and small metadata,
 * ~200 bytes a line. With `rare`, every `every`-th line (from `offset`) carries the word `rare`.
 */
export function buildBatch(lines, { rare, every = 0, offset = 0 } = {}) {
  const levels = ["debug", "info", "info", "info", "warn", "error"];
  const out = [];
  for (let j = 0; j < lines; j++) {
    const i = offset + j;
    const marked = rare && every && i % every === 0;
    out.push(
      JSON.stringify({
        message: `GET /api/v1/items/${i} completed in ${(i % 97) + 3} ms for user ${i % 1000}${marked ? ` ${rare}` : ""}`,
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

/** Standard Webhooks verification, as a receiver would write it. */
export function verifyStandardWebhook(secret, headers, body) {
  const id = headers["webhook-id"];
  const ts = headers["webhook-timestamp"];
  const signatures = headers["webhook-signature"];
  if (!id || !ts || !signatures) return false;
  if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) return false;
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const expected = Buffer.from("v1," + createHmac("sha256", key).update(`${id}.${ts}.${body}`).digest("base64"));
  return signatures.split(" ").some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && nodeTimingSafeEqual(given, expected);
  });
}

/**
 * A local webhook receiver on loopback that verifies every signature (set `receiver.secret`) and
 * records, per event key `JSON.parse(body).n`, how often and when it arrived.
 */
export async function startReceiver() {
  const receiver = { url: "", secret: "", arrivals: new Map(), badSignatures: 0, waiters: new Set() };
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const at = performance.now();
      if (!verifyStandardWebhook(receiver.secret, req.headers, body)) receiver.badSignatures++;
      let n = null;
      try {
        n = JSON.parse(body).n ?? null;
      } catch {
        receiver.badSignatures++;
      }
      if (n !== null) {
        const seen = receiver.arrivals.get(n);
        if (seen) seen.count++;
        else receiver.arrivals.set(n, { count: 1, at });
      }
      for (const wake of receiver.waiters) wake();
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${server.address().port}/hook`;
  /** Resolves once `done()` holds, or rejects after `ms`. */
  receiver.until = (done, ms, what) =>
    new Promise((resolve, reject) => {
      if (done()) return resolve();
      const timer = setTimeout(() => {
        receiver.waiters.delete(check);
        reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
      }, ms);
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        receiver.waiters.delete(check);
        resolve();
      };
      receiver.waiters.add(check);
    });
  receiver.close = () => new Promise((resolve) => server.close(resolve));
  return receiver;
}

/** Hex HMAC-SHA256, the relay's `generic` signature (x-signature). */
export function hexHmac(secret, body) {
  return createHmac("sha256", secret).update(body).digest("hex");
}

/**
 * Sequential requests (GET, or `method` with `body`) to `url` for `seconds` (at least `min` requests): each request's latency in ms.
 * For endpoints whose single request is the figure (a search, a summary), where a closed loop of
 * many connections would measure the database's queue instead.
 */
export async function sequential(url, { headers = {}, seconds = 5, min = 3, method = "GET", body } = {}) {
  const latencies = [];
  const until = performance.now() + seconds * 1000;
  while (latencies.length < min || performance.now() < until) {
    const started = performance.now();
    const res = await fetch(url, { method, headers, body });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${method} ${url} answered ${res.status}`);
    latencies.push(performance.now() - started);
  }
  return latencies;
}
