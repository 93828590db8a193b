// Authenticated overhead (issue 15 a): GET /api/v1/usage (key resolution, the rate-limit call,
// the usage read) against a bare Hono JSON route (GET /health, no middleware) of the same Worker,
// interleaved round by round: requests/s at CONNECTIONS, and latency added at one connection
// (sequential requests, where the added milliseconds are the path's own and not queueing).
// A third run, a key without the route's scopes (403 after auth and the rate-limit call, no
// route I/O), shows what authentication and rate limiting cost on their own, and a fourth, the
// bench Worker's bare route that makes only the one rate-limit Durable Object call (no Hono, no
// key), shows what that call alone costs on this runtime: the floor of any exactly counted route.
/** Milliseconds added, with their sign. */
const added = (ms) => `${ms < 0 ? "−" : "+"}${Math.abs(ms)} ms`;

export default {
  name: "auth",
  async run({ url, adminToken, createTeamWithKey, load, median, rounds, duration, connections }) {
    // The scale plan allows 30,000 requests a minute, so the run measures work, not 429s.
    const team = await createTeamWithKey({ plan: "scale", scopes: ["billing:read"] });
    const noScope = await createTeamWithKey({ plan: "scale", scopes: ["logs:read"] });
    const headers = { authorization: `Bearer ${team.key}` };
    const check = await fetch(`${url}/api/v1/usage`, { headers });
    if (check.status !== 200) throw new Error(`GET /api/v1/usage answered ${check.status}`);
    const probe = await fetch(`${url}/api/v1/usage`, { headers: { authorization: `Bearer ${noScope.key}` } });
    if (probe.status !== 403) throw new Error(`GET /api/v1/usage without the scope answered ${probe.status}`);
    await load({ duration: 2, connections, url: `${url}/health` });
    await load({ duration: 2, connections, url: `${url}/api/v1/usage`, headers });
    // The two keys must be held by the isolate's key cache (resolved once, not per request).
    const cache = await (await fetch(`${url}/__bench/key-cache`, { headers: { authorization: `Bearer ${adminToken}` } })).json();
    if (!(cache.known >= 2)) throw new Error(`the key cache holds ${JSON.stringify(cache)}: keys are resolved per request`);
    const runs = { bare: [], counted: [], usage: [], authOnly: [], bare1: [], counted1: [], usage1: [] };
    for (let i = 0; i < rounds; i++) {
      runs.bare.push(await load({ title: "bare", url: `${url}/health`, duration, connections }));
      runs.counted.push(await load({ title: "bare + one counter call", url: `${url}/__bench/bare/counted`, duration, connections }));
      const run = await load({ title: "usage", url: `${url}/api/v1/usage`, headers, duration, connections });
      if (run.non2xx > 0) throw new Error(`${run.non2xx} non-2xx answers in the usage run`);
      runs.usage.push(run);
      const authOnly = await load({ title: "403", url: `${url}/api/v1/usage`, headers: { authorization: `Bearer ${noScope.key}` }, duration, connections });
      if (authOnly.non2xx !== authOnly.total) throw new Error("the 403 probe answered 2xx");
      runs.authOnly.push(authOnly);
      runs.bare1.push(await load({ title: "bare, 1 connection", url: `${url}/health`, duration, connections: 1 }));
      runs.counted1.push(await load({ title: "bare + one counter call, 1 connection", url: `${url}/__bench/bare/counted`, duration, connections: 1 }));
      runs.usage1.push(await load({ title: "usage, 1 connection", url: `${url}/api/v1/usage`, headers, duration, connections: 1 }));
    }
    const rps = (name) => median(runs[name].map((r) => r.requestsPerSecond));
    const at = (name, field) => median(runs[name].map((r) => r[field]));
    return [
      {
        figure: "authenticated GET /api/v1/usage, requests/s",
        value: rps("usage").toFixed(0),
        baseline: rps("bare").toFixed(0),
        ratio: `${(rps("usage") / rps("bare")).toFixed(2)}×`,
        goal: "≥ 0.8×",
        note: `${connections} connections`,
      },
      {
        figure: "bare route + one rate-limit Durable Object call, requests/s",
        value: rps("counted").toFixed(0),
        baseline: rps("bare").toFixed(0),
        ratio: `${(rps("counted") / rps("bare")).toFixed(2)}×`,
        note: "the floor of an exactly counted route on this runtime",
      },
      {
        figure: "authenticated GET /api/v1/usage against that floor, requests/s",
        value: rps("usage").toFixed(0),
        baseline: `${rps("counted").toFixed(0)} (bare + one counter call)`,
        ratio: `${(rps("usage") / rps("counted")).toFixed(2)}×`,
        note: "what auth, routing and the usage read add on top of the one call",
      },
      {
        figure: "auth + rate limit alone (403 probe), requests/s",
        value: rps("authOnly").toFixed(0),
        baseline: rps("bare").toFixed(0),
        ratio: `${(rps("authOnly") / rps("bare")).toFixed(2)}×`,
        note: "no route I/O: what the hot path itself costs",
      },
      {
        figure: "authenticated GET /api/v1/usage, p99 ms",
        value: at("usage", "p99"),
        baseline: at("bare", "p99"),
        ratio: added(at("usage", "p99") - at("bare", "p99")),
        note: `${connections} connections: mostly queueing`,
      },
      {
        figure: "authenticated GET /api/v1/usage at 1 connection, p50 / p99 ms",
        value: `${at("usage1", "p50")} / ${at("usage1", "p99")}`,
        baseline: `${at("bare1", "p50")} / ${at("bare1", "p99")}`,
        ratio: `${added(at("usage1", "p50") - at("bare1", "p50"))} / ${added(at("usage1", "p99") - at("bare1", "p99"))}`,
        goal: "p99 ≤ +2 ms",
      },
      {
        figure: "bare route + one rate-limit Durable Object call at 1 connection, p50 / p99 ms",
        value: `${at("counted1", "p50")} / ${at("counted1", "p99")}`,
        baseline: `${at("bare1", "p50")} / ${at("bare1", "p99")}`,
        ratio: `${added(at("counted1", "p50") - at("bare1", "p50"))} / ${added(at("counted1", "p99") - at("bare1", "p99"))}`,
        note: "what the one call alone adds here",
      },
    ];
  },
};
