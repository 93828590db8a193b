// npm run bench:ingest — throughput of NDJSON batch ingest against a real `wrangler dev`.
//
// Starts its own `wrangler dev` through bench/lib.mjs withServer (free ports, a temporary
// --persist-to with the migrations applied, a temporary env file with fresh secrets; stopped and
// removed whatever happens), creates a team, an API key and a log project through the API, then
// posts a 10,000-line (~2 MB) NDJSON batch several times and prints the time per batch and
// entries per second.
//
// Options (env): BATCHES (default 5), LINES (default 10000), BENCH_URL (target a server that is
// already running instead; then ADMIN_TOKEN must be its operator token).
import { createTeamWithKey } from "../scripts/lib/dev-server.mjs";
import { withServer } from "./lib.mjs";

const BATCHES = Number(process.env.BATCHES ?? 5);
const LINES = Number(process.env.LINES ?? 10_000);

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

async function bench({ url: base, createTeamWithKey }) {
  const { key } = await createTeamWithKey({ name: "bench", plan: "scale", scopes: ["logs:read", "logs:write"] });
  const project = await api(base, "POST", "logs/projects", key, { name: "bench", daily_limit_mb: 100_000 });

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
  const entries = await api(base, "GET", `logs/projects/${project.id}/entries?limit=1`, key);
  console.log(
    `\nmedian ${median(times).toFixed(0)} ms per ${LINES}-line batch; mean ${Math.round((LINES * times.length) / (total / 1000)).toLocaleString("en-US")} entries/s ` +
      `(${((bytes * times.length) / 1024 / 1024 / (total / 1000)).toFixed(1)} MB/s); newest stored entry: ${entries[0]?.created_at ?? "none"}`,
  );
}

async function main() {
  const url = process.env.BENCH_URL;
  if (url) {
    const adminToken = process.env.ADMIN_TOKEN;
    if (!adminToken) throw new Error("ADMIN_TOKEN is required with BENCH_URL");
    return bench({ url, createTeamWithKey: (opts) => createTeamWithKey(url, adminToken, opts) });
  }
  console.log("starting a private wrangler dev (temporary state and secrets, migrations applied)...");
  return withServer(async (server) => {
    console.log(`up at ${server.url}`);
    return bench(server);
  });
}

main().catch((error) => {
  console.error(error.message ?? error);
  process.exitCode = 1;
});
