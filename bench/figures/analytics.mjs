// Analytics ingest (issue 41): events/s accepted at POST /api/event (text/plain JSON as a
// tracker's sendBeacon sends it, a browser's user agent, pages of one site) against the bare
// one-D1-read route of the bench Worker, at 16 and 64 connections, for a team on enterprise (no
// monthly limit) and one on scale (a limit: the unit in the meter). Asserts stored = accepted:
// once the runs are over, the site's `events` from the query API are at least the 202s read here
// and at most the events sent (the isolate's batch writes them within its linger; the figure waits
// for it); the two bounds differ by the requests a run's end leaves in flight.
import { api, loadTwin } from "../lib.mjs";

const connectionSets = (process.env.CONNECTION_SETS ?? "16,64").split(",").map(Number);
const UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";
const SETTLE_MS = Number(process.env.ANALYTICS_SETTLE_MS ?? 60_000);

/**
 * The client IP of event n: a new address every 100 events, so neither the per-IP `public` bucket
 * (200 a minute) nor the per-site-and-network cap (120 a minute) refuses a run: the figure measures
 * many visitors, not one flooding one.
 */
const ipOf = (n) => {
  const k = Math.floor(n / 100);
  return `10.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}`;
};

/**
 * The plans measured: enterprise (no monthly limit: the unit joins the isolate's batch, no meter
 * call on the request's path, as the forms and flags figures' teams) and scale (a limit: the unit is
 * taken in the team's meter beside the per-IP call).
 */
const PLANS = ["enterprise", "scale"];

export default {
  name: "analytics",
  async run({ url, createTeamWithKey, load, median, rounds, duration }) {
    let next = 0;
    const sites = [];
    for (const plan of PLANS) {
      const team = await createTeamWithKey({ plan, scopes: ["analytics:write"] });
      const site = await api(url, "POST", "analytics/sites", team.key, { domain: "bench.example" });
      sites.push({ plan, team, site, sent: 0, accepted: 0 });
    }
    const eventUrl = `${url}/api/event`;
    const bareUrl = `${url}/__bench/bare/read?team=${sites[0].team.teamId}`;
    const event = (n, site) =>
      JSON.stringify({ n: "pageview", u: `https://bench.example/page-${n % 50}`, d: site.site.id, r: n % 3 ? null : "https://news.ycombinator.com/" });
    const requestOf = (site) => ({
      method: "POST",
      setupRequest: (req, context) => {
        const n = next++;
        site.sent++;
        context.n = n;
        return { ...req, body: event(n, site), headers: { ...req.headers, "content-type": "text/plain", "user-agent": UA, "cf-connecting-ip": ipOf(n) } };
      },
      onResponse: (status) => {
        if (status === 202) site.accepted++;
      },
    });
    // Warm-up (counted like the others).
    for (let i = 0; i < 20; i++) {
      for (const site of sites) {
        const n = next++;
        site.sent++;
        const res = await fetch(eventUrl, {
          method: "POST",
          body: event(n, site),
          headers: { "content-type": "text/plain", "user-agent": UA, "cf-connecting-ip": ipOf(n) },
        });
        await res.arrayBuffer();
        if (res.status !== 202 || res.headers.get("x-analytics-dropped"))
          throw new Error(`warm-up event answered ${res.status} ${res.headers.get("x-analytics-dropped") ?? ""}`);
        site.accepted++;
      }
      await (await fetch(bareUrl)).arrayBuffer();
    }

    // An event's shape without its work: the same POSTs to the bare read (not a goal's yardstick;
    // it tells the cost of a body in from ours).
    const shapeUrl = `${url}/__bench/bare/read?team=${sites[0].team.teamId}`;
    const shapeRequest = {
      method: "POST",
      setupRequest: (req) => {
        const n = next++;
        return { ...req, body: event(n, sites[0]), headers: { ...req.headers, "content-type": "text/plain", "user-agent": UA, "cf-connecting-ip": ipOf(n) } };
      },
    };
    const bySet = new Map();
    for (const connections of connectionSets) {
      const runs = { bare: [], shape: [], ...Object.fromEntries(PLANS.map((plan) => [plan, []])) };
      for (let i = 0; i < rounds; i++) {
        runs.bare.push(await load({ title: `bare one-D1-read, ${connections}`, url: bareUrl, duration, connections }));
        runs.shape.push(
          await loadTwin({ title: `bare read as an event's POST, ${connections}`, url: shapeUrl, duration, connections, requests: [shapeRequest] }),
        );
        for (const site of sites) {
          const run = await load({
            title: `analytics ingest (${site.plan}), ${connections}`,
            url: eventUrl,
            duration,
            connections,
            requests: [requestOf(site)],
          });
          if (run.non2xx > 0) throw new Error(`${run.non2xx} non-2xx answers at /api/event: ${JSON.stringify(run.statuses)}`);
          runs[site.plan].push(run);
        }
      }
      bySet.set(connections, runs);
    }

    // stored = accepted, for each site: the query API's event count reaches every 202 received,
    // and no more than was sent. The two differ only by the answers a run's end cut off: autocannon
    // stops at its duration with up to one request in flight per connection, which the server
    // accepted and stored but whose 202 was never read. So: accepted ≤ stored ≤ sent, and sent −
    // accepted ≤ the connections of all runs together (anything else is an event lost or stored twice).
    const inFlightAtMost = connectionSets.reduce((sum, c) => sum + c * rounds, 0);
    for (const site of sites) {
      const { sent, accepted } = site;
      if (sent - accepted > inFlightAtMost) throw new Error(`sent ${sent} events but received only ${accepted} 202s (more than ${inFlightAtMost} cut off)`);
      const storedCount = async () => {
        const answer = await api(url, "POST", "analytics/query", site.team.key, { site_id: site.site.id, metrics: ["events"], date_range: "day" });
        return answer.results[0].metrics[0];
      };
      const deadline = Date.now() + SETTLE_MS;
      let stored = await storedCount();
      while (stored < accepted && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        stored = await storedCount();
      }
      // The cut-off ones may be in a later write than the last 202 read: one more look after a linger.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      stored = await storedCount();
      if (stored < accepted || stored > sent) throw new Error(`${site.plan}: stored ${stored} events, accepted ${accepted}, sent ${sent}`);
      site.stored = stored;
    }

    const rps = (runs) => median(runs.map((r) => r.requestsPerSecond));
    const ratios = (runs, of) => runs.map((r, i) => (r.requestsPerSecond / of[i].requestsPerSecond).toFixed(2)).join(", ");
    return [...bySet].flatMap(([connections, runs]) => [
      {
        figure: `bare one-D1-read as a POST of an event's body, requests/s at ${connections} connections`,
        value: rps(runs.shape).toFixed(0),
        baseline: `${rps(runs.bare).toFixed(0)} (one D1 read)`,
        ratio: `${(rps(runs.shape) / rps(runs.bare)).toFixed(2)}×`,
        goal: "",
        note: `the shape alone; ${sites.map((site) => `${site.plan} ${(rps(runs[site.plan]) / rps(runs.shape)).toFixed(2)}×`).join(", ")} of it`,
      },
      ...sites.map((site) => ({
        figure: `analytics POST /api/event (${site.plan}), requests/s at ${connections} connections`,
        value: rps(runs[site.plan]).toFixed(0),
        baseline: `${rps(runs.bare).toFixed(0)} (one D1 read)`,
        ratio: `${(rps(runs[site.plan]) / rps(runs.bare)).toFixed(2)}×`,
        goal: connections >= 64 ? "≥ 0.9×" : "≥ 0.8×",
        note: `rounds: ${ratios(runs[site.plan], runs.bare)}; stored ${site.stored} of ${site.sent} sent, ${site.accepted} 202s read (the rest cut off by a run's end)`,
      })),
    ]);
  },
};
