// The request log's cost on the hot path (issue 24): the same authenticated route,
// GET /api/v1/usage, with the request log and "last used" (the production Worker) and without them
// (its twin under /__bench/unlogged/, REQUEST_LOG=off), interleaved round by round in one run:
// requests/s at CONNECTIONS and latency at one connection. The rows are written after the answer,
// batched per isolate, so the ratio should sit at 1× within the run's noise. The figure checks that
// the logged run was written (the team's log holds its requests, up to the 10,000-row bound) and
// that the unlogged twin wrote nothing.
const added = (ms) => `${ms < 0 ? "−" : "+"}${Math.abs(ms)} ms`;

export default {
  name: "request-log",
  async run({ url, adminToken, createTeamWithKey, load, median, rounds, duration, connections }) {
    const logged = await createTeamWithKey({ plan: "scale", scopes: ["billing:read"] });
    const unlogged = await createTeamWithKey({ plan: "scale", scopes: ["billing:read"] });
    const held = async (team) => {
      const res = await fetch(`${url}/__bench/request-log?team=${team.teamId}`, { headers: { authorization: `Bearer ${adminToken}` } });
      if (res.status !== 200) throw new Error(`/__bench/request-log answered ${res.status}`);
      return (await res.json()).held;
    };
    const on = { url: `${url}/api/v1/usage`, headers: { authorization: `Bearer ${logged.key}` } };
    const off = { url: `${url}/__bench/unlogged/api/v1/usage`, headers: { authorization: `Bearer ${unlogged.key}` } };
    for (const target of [on, off]) {
      const res = await fetch(target.url, { headers: target.headers });
      if (res.status !== 200) throw new Error(`${target.url} answered ${res.status}`);
    }
    // Every logged request counts: the check above, the warm-up and the rounds.
    let total = 1 + (await load({ duration: 2, connections, ...on })).total;
    await load({ duration: 2, connections, ...off });
    const runs = { on: [], off: [], on1: [], off1: [] };
    for (let i = 0; i < rounds; i++) {
      for (const [name, target, conns] of [
        ["on", on, connections],
        ["off", off, connections],
        ["on1", on, 1],
        ["off1", off, 1],
      ]) {
        const run = await load({ title: name, duration, connections: conns, ...target });
        if (run.non2xx > 0) throw new Error(`${run.non2xx} non-2xx answers in the ${name} run`);
        if (name.startsWith("on")) total += run.total;
        runs[name].push(run);
      }
    }
    const rows = await held(logged);
    // Every logged request, up to the bound. autocannon counts the answers it read: a run's last
    // requests, one per connection, may be answered (and logged) after it stopped counting.
    const inFlight = (1 + rounds) * connections + rounds;
    if (!(rows >= Math.min(10_000, total) && rows <= Math.min(10_000, total + inFlight)))
      throw new Error(`the request log holds ${rows} rows after ${total} logged requests`);
    if ((await held(unlogged)) !== 0) throw new Error("the unlogged twin wrote to the request log");
    const rps = (name) => median(runs[name].map((r) => r.requestsPerSecond));
    const at = (name, field) => median(runs[name].map((r) => r[field]));
    return [
      {
        figure: "authenticated GET /api/v1/usage with the request log, requests/s",
        value: rps("on").toFixed(0),
        baseline: `${rps("off").toFixed(0)} (same route, log off)`,
        ratio: `${(rps("on") / rps("off")).toFixed(2)}×`,
        goal: "≈ 1× (nothing measurable)",
        note: `${connections} connections; ${rows} rows held after ${total} logged requests`,
      },
      {
        figure: "authenticated GET /api/v1/usage with the request log at 1 connection, p50 / p99 ms",
        value: `${at("on1", "p50")} / ${at("on1", "p99")}`,
        baseline: `${at("off1", "p50")} / ${at("off1", "p99")}`,
        ratio: `${added(at("on1", "p50") - at("off1", "p50"))} / ${added(at("on1", "p99") - at("off1", "p99"))}`,
      },
    ];
  },
};
