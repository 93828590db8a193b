// Authenticated overhead: GET /api/v1/usage (key lookup, rate limit, usage read) against a bare
// Hono JSON route (GET /health, no middleware) of the same Worker, interleaved round by round.
export default {
  name: "auth",
  async run({ url, createTeamWithKey, load, median, rounds, duration, connections }) {
    // The scale plan allows 30,000 requests a minute, so the run measures work, not 429s.
    const team = await createTeamWithKey({ plan: "scale", scopes: ["billing:read"] });
    const headers = { authorization: `Bearer ${team.key}` };
    const check = await fetch(`${url}/api/v1/usage`, { headers });
    if (check.status !== 200) throw new Error(`GET /api/v1/usage answered ${check.status}`);
    await load({ duration: 2, connections, url: `${url}/health` });
    await load({ duration: 2, connections, url: `${url}/api/v1/usage`, headers });
    const bare = [];
    const usage = [];
    for (let i = 0; i < rounds; i++) {
      bare.push(await load({ title: "bare", url: `${url}/health`, duration, connections }));
      const run = await load({ title: "usage", url: `${url}/api/v1/usage`, headers, duration, connections });
      if (run.non2xx > 0) throw new Error(`${run.non2xx} non-2xx answers in the usage run`);
      usage.push(run);
    }
    const rps = (runs) => median(runs.map((r) => r.requestsPerSecond));
    const p99 = (runs) => median(runs.map((r) => r.p99));
    return [
      {
        figure: "authenticated GET /api/v1/usage, requests/s",
        value: rps(usage).toFixed(0),
        baseline: rps(bare).toFixed(0),
        ratio: `${(rps(usage) / rps(bare)).toFixed(2)}×`,
        goal: "≥ 0.8×",
      },
      {
        figure: "authenticated GET /api/v1/usage, p99 ms",
        value: p99(usage),
        baseline: p99(bare),
        ratio: `+${p99(usage) - p99(bare)} ms`,
        goal: "≤ +2 ms",
      },
    ];
  },
};
