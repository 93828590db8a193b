// Shared by the benchmarks: a private wrangler dev with its own state, and autocannon runs.
import autocannon from "autocannon";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyMigrations, createTeamWithKey, freePort, freshSecrets, startDevServer, writeVars } from "../scripts/lib/dev-server.mjs";

/**
 * Runs `fn({ url, adminToken, createTeamWithKey })` against a fresh local server (its own temporary
 * --persist-to with migrations applied, an env file with fresh secrets, a free port and a free
 * inspector port), then stops it and removes the temporary files whatever happens, Ctrl-C included.
 * Options: vars (extra --var), logLevel (wrangler's --log-level).
 */
export async function withServer(fn, { vars, logLevel } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "edge-bench-"));
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
    starting = startDevServer({ port, persistTo: join(dir, "state"), envFile, vars, logLevel, signal: abort.signal });
    server = await starting;
    return await fn({
      url: server.url,
      adminToken: secrets.ADMIN_TOKEN,
      createTeamWithKey: (opts) => createTeamWithKey(server.url, secrets.ADMIN_TOKEN, opts),
    });
  } finally {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
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
