// The console's log explorer over 100,000 entries (issue 25): the first page of
// /console/teams/:team_id/logs/:project_id (50 rows, the histogram of the last 24 hours, the
// streams, alerts and firings, the whole page rendered) against the API call it makes for its rows,
// `GET /logs/projects/:id/entries` with the same range and limit, and the console's own floor: the
// projects page (the session and membership reads every console page makes, one list, the layout).
// Side by side in the same rounds, median latency of sequential requests. Asserts that the page shows 50 rows and the histogram
// counts all 100,000 entries, and that the API answers the same 50 entries.
import { api, buildBatch, sequential } from "../lib.mjs";

const BATCH = 10_000;
const ENTRIES = 100_000;
const DAY = 86_400_000;

/** A session cookie for `email`, through a one-time link the operator API mints and its POST. */
async function signIn(url, adminToken, email) {
  const link = await api(url, "POST", "admin/sign-in-links", adminToken, { email });
  const target = new URL(link.url);
  const res = await fetch(`${url}${target.pathname}`, { method: "POST", headers: { origin: target.origin }, redirect: "manual" });
  const cookie = /edp_session=[^;]+/.exec(res.headers.get("set-cookie") ?? "")?.[0];
  if (res.status !== 303 || !cookie) throw new Error(`sign-in answered ${res.status} without a session`);
  return cookie;
}

export default {
  name: "console-logs",
  async run({ url, adminToken, createTeamWithKey, median, rounds, duration }) {
    const email = `bench-${Date.now()}@example.com`;
    const { teamId, key } = await createTeamWithKey({ plan: "scale", scopes: ["logs:read", "logs:write"], ownerEmail: email });
    const project = await api(url, "POST", "logs/projects", key, { name: "bench-console-100k", daily_limit_mb: 100_000 });
    for (let offset = 0; offset < ENTRIES; offset += BATCH) {
      const res = await fetch(`${url}/api/v1/logs/ingest/batch`, {
        method: "POST",
        headers: { authorization: `Bearer ${project.ingest_token}`, "content-type": "application/x-ndjson" },
        body: buildBatch(BATCH, { offset }),
      });
      const body = await res.json();
      if (res.status !== 202 || body.count !== BATCH) throw new Error(`batch ingest answered ${res.status}: ${JSON.stringify(body)}`);
    }
    const cookie = await signIn(url, adminToken, email);

    // The page pins its range's end on the first page; the API call is given the same range.
    const until = new Date(Date.now() + 60_000).toISOString();
    const since = new Date(Date.parse(until) - DAY).toISOString();
    const pageUrl = `${url}/console/teams/${teamId}/logs/${project.id}?until=${encodeURIComponent(until)}`;
    const apiUrl = `${url}/api/v1/logs/projects/${project.id}/entries?limit=50&since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}`;

    const html = await (await fetch(pageUrl, { headers: { cookie } })).text();
    const rows = html.match(/data-testid="log-row"/g)?.length ?? 0;
    if (rows !== 50) throw new Error(`the explorer showed ${rows} rows, not 50`);
    if (!html.includes(`data-testid="histogram" data-total="${ENTRIES}"`)) throw new Error("the histogram did not count every entry");
    const entries = await (await fetch(apiUrl, { headers: { authorization: `Bearer ${key}` } })).json();
    if (entries.data.length !== 50 || !html.includes(entries.data[0].id)) throw new Error("the API and the page disagree on the first page");

    const floorUrl = `${url}/console/teams/${teamId}/logs`;
    const runs = { page: [], api: [], floor: [] };
    for (let i = 0; i < rounds; i++) {
      runs.api.push(median(await sequential(apiUrl, { headers: { authorization: `Bearer ${key}` }, seconds: duration })));
      runs.page.push(median(await sequential(pageUrl, { headers: { cookie }, seconds: duration })));
      runs.floor.push(median(await sequential(floorUrl, { headers: { cookie }, seconds: duration })));
    }
    const ms = (name) => median(runs[name]);
    return [
      {
        figure: "console log explorer, first page over 100,000 entries, median ms",
        value: ms("page").toFixed(1),
        baseline: `${ms("api").toFixed(1)} (GET /logs/projects/:id/entries, same range, limit 50)`,
        ratio: `${(ms("page") / ms("api")).toFixed(2)}×`,
        goal: "≤ 1.2× (issue 43)",
        note: `the page adds the histogram of the range (in the same store call as its rows); its project, streams, alerts and firings ride the session's D1 batch; the console's floor (projects page: session, membership, one list) ${ms("floor").toFixed(1)} ms`,
      },
    ];
  },
};
