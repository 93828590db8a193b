// `npm run bench`: in one run against one `wrangler dev`, a bare Hono route (GET /health, no
// middleware) and an authenticated GET /api/v1/usage (auth lookup in D1, the rate-limit Durable
// Object, the usage read in D1). Prints requests/s and p99 of both and the ratio.
// DURATION (seconds, default 10) and CONNECTIONS (default 20) tune the runs.
import { load, printTable, withServer } from "./lib.mjs";

const duration = Number(process.env.DURATION ?? 10);
const connections = Number(process.env.CONNECTIONS ?? 20);

await withServer(async ({ url, createTeamWithKey }) => {
  // The scale plan allows 30,000 requests a minute, so the run measures work, not 429s.
  const team = await createTeamWithKey({ plan: "scale", scopes: ["billing:read"] });
  const warm = { duration: 2, connections };
  await load({ ...warm, title: "warm-up", url: `${url}/health` });
  await load({ ...warm, title: "warm-up", url: `${url}/api/v1/usage`, headers: { authorization: `Bearer ${team.key}` } });
  const bare = await load({ title: "bare Hono route GET /health", url: `${url}/health`, duration, connections });
  const usage = await load({
    title: "GET /api/v1/usage (auth + rate limit + D1)",
    url: `${url}/api/v1/usage`,
    headers: { authorization: `Bearer ${team.key}` },
    duration,
    connections,
  });
  printTable([bare, usage]);
  console.log(
    `\nratio usage/bare: throughput ${(usage.requestsPerSecond / bare.requestsPerSecond).toFixed(2)}x, ` +
      `p99 latency ${(usage.p99 / Math.max(1, bare.p99)).toFixed(2)}x`,
  );
  if (usage.non2xx > 0) console.log(`warning: ${usage.non2xx} non-2xx answers in the usage run`);
});
