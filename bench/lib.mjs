// Shared by the benchmarks: a private wrangler dev with its own state, and autocannon runs.
import autocannon from "autocannon";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyMigrations, createTeamWithKey, freePort, freshSecrets, startDevServer, writeVars } from "../scripts/lib/dev-server.mjs";

/** Runs `fn({ url, adminToken, createTeamWithKey })` against a fresh local server, then stops it. */
export async function withServer(fn, { vars } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "edge-bench-"));
  const envFile = join(dir, "dev.vars");
  const secrets = freshSecrets();
  writeVars(envFile, secrets);
  let server;
  try {
    applyMigrations({ persistTo: join(dir, "state") });
    server = await startDevServer({ port: await freePort(), persistTo: join(dir, "state"), envFile, vars });
    return await fn({
      url: server.url,
      adminToken: secrets.ADMIN_TOKEN,
      createTeamWithKey: (opts) => createTeamWithKey(server.url, secrets.ADMIN_TOKEN, opts),
    });
  } finally {
    server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One autocannon run; returns requests/s, p99 latency and the non-2xx count. */
export async function load(options) {
  const result = await autocannon({ connections: 20, duration: 10, ...options });
  return {
    title: options.title,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

export function printTable(rows) {
  console.log("\n| run | req/s | p50 ms | p99 ms | requests | non-2xx | errors |\n|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(`| ${r.title} | ${r.requestsPerSecond.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.total} | ${r.non2xx} | ${r.errors} |`);
  }
}
