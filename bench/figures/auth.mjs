// Authenticated overhead (issues 15 a, 28): GET /api/v1/usage of a rate-limited key (scale plan:
// the request is counted in the team's meter, and the usage is read in the same meter call) and of
// an uncounted key (enterprise: no count, the usage read alone), against the bench Worker's bare
// route that makes the one D1 read GET /usage used to make (`/__bench/bare/read`), interleaved
// round by round at each of CONNECTION_SETS (default 16 and 64: how many requests an isolate has
// in flight decides how many ride one meter call), medians of ROUNDS; and the latency at one
// connection (sequential requests: the added milliseconds are the path's own, not queueing).
// Checks every answer: 200 with the Usage body, never a 429 (the scale plan allows 30,000 a minute).
/** Milliseconds added, with their sign. */
const added = (ms) => `${ms < 0 ? "−" : "+"}${Math.abs(ms)} ms`;
const connectionSets = (process.env.CONNECTION_SETS ?? "16,64").split(",").map(Number);

export default {
  name: "auth",
  async run({ url, adminToken, createTeamWithKey, load, median, rounds, duration, serverErrors }) {
    const counted = await createTeamWithKey({ plan: "scale", scopes: ["billing:read"] });
    const uncounted = await createTeamWithKey({ plan: "enterprise", scopes: ["billing:read"] });
    const usageUrl = `${url}/api/v1/usage`;
    const bareUrl = `${url}/__bench/bare/read?team=${counted.teamId ?? "bench"}`;
    for (const team of [counted, uncounted]) {
      const res = await fetch(usageUrl, { headers: { authorization: `Bearer ${team.key}` } });
      const body = await res.json();
      if (res.status !== 200 || typeof body?.data?.services?.mail?.used !== "number")
        throw new Error(`GET /api/v1/usage answered ${res.status} ${JSON.stringify(body)}`);
    }
    const scaleHeaders = { authorization: `Bearer ${counted.key}` };
    const enterpriseHeaders = { authorization: `Bearer ${uncounted.key}` };
    await load({ duration: 2, connections: 16, url: bareUrl });
    await load({ duration: 2, connections: 16, url: usageUrl, headers: scaleHeaders });
    // The keys must be held by the isolate's key cache (resolved once, not per request).
    const cache = await (await fetch(`${url}/__bench/key-cache`, { headers: { authorization: `Bearer ${adminToken}` } })).json();
    if (!(cache.known >= 2)) throw new Error(`the key cache holds ${JSON.stringify(cache)}: keys are resolved per request`);

    const checked = async (options) => {
      const run = await load(options);
      if (run.non2xx > 0)
        throw new Error(`${run.non2xx} non-2xx answers in the run "${options.title}": ${JSON.stringify(run.statuses)}\n${serverErrors?.() ?? ""}`);
      return run;
    };
    const rows = [];
    const rps = (runs) => median(runs.map((r) => r.requestsPerSecond));
    for (const connections of connectionSets) {
      const runs = { bare: [], scale: [], enterprise: [] };
      for (let i = 0; i < rounds; i++) {
        runs.bare.push(await checked({ title: `bare read, ${connections}`, url: bareUrl, duration, connections }));
        runs.scale.push(await checked({ title: `usage (scale), ${connections}`, url: usageUrl, headers: scaleHeaders, duration, connections }));
        runs.enterprise.push(await checked({ title: `usage (enterprise), ${connections}`, url: usageUrl, headers: enterpriseHeaders, duration, connections }));
      }
      rows.push(
        {
          figure: `GET /api/v1/usage, rate-limited key (scale), requests/s at ${connections} connections`,
          value: rps(runs.scale).toFixed(0),
          baseline: `${rps(runs.bare).toFixed(0)} (bare route, one D1 read)`,
          ratio: `${(rps(runs.scale) / rps(runs.bare)).toFixed(2)}×`,
          goal: "≥ 0.8×",
          note: `rounds: ${runs.scale.map((r, i) => (r.requestsPerSecond / runs.bare[i].requestsPerSecond).toFixed(2)).join(", ")}`,
        },
        {
          figure: `GET /api/v1/usage, uncounted key (enterprise), requests/s at ${connections} connections`,
          value: rps(runs.enterprise).toFixed(0),
          baseline: `${rps(runs.bare).toFixed(0)} (bare route, one D1 read)`,
          ratio: `${(rps(runs.enterprise) / rps(runs.bare)).toFixed(2)}×`,
          note: "no count: the meter's usage read alone",
        },
      );
    }
    const one = { bare: [], scale: [] };
    for (let i = 0; i < rounds; i++) {
      one.bare.push(await checked({ title: "bare read, 1 connection", url: bareUrl, duration, connections: 1 }));
      one.scale.push(await checked({ title: "usage (scale), 1 connection", url: usageUrl, headers: scaleHeaders, duration, connections: 1 }));
    }
    const at = (runs, field) => median(runs.map((r) => r[field]));
    rows.push({
      figure: "GET /api/v1/usage (scale) at 1 connection, p50 / p99 ms",
      value: `${at(one.scale, "p50")} / ${at(one.scale, "p99")}`,
      baseline: `${at(one.bare, "p50")} / ${at(one.bare, "p99")} (bare route, one D1 read)`,
      ratio: `${added(at(one.scale, "p50") - at(one.bare, "p50"))} / ${added(at(one.scale, "p99") - at(one.bare, "p99"))}`,
      note: `requests/s ${rps(one.scale).toFixed(0)} vs ${rps(one.bare).toFixed(0)}`,
    });
    return rows;
  },
};
