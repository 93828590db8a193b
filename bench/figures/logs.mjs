// Log search (issue 15 c): `GET /logs/projects/:id/entries?q=<rare word>` over 100,000 entries
// against reading the latest 50 of the same project, and the same search over 10,000 against
// 100,000 entries (it should stay flat). Entries are seeded through batch ingest, the rare word in
// every 5,000th line; asserts that each search finds exactly the seeded lines and that every hit
// contains the word. Ratios are of median latency of sequential requests (one at a time, DURATION
// seconds per side and round, alternating): the cost of one query, not the database's queue.
import { api, buildBatch, sequential } from "../lib.mjs";

const RARE = "zebracorn";
const EVERY = 5_000;
const BATCH = 10_000;

async function ingest(url, token, body) {
  const res = await fetch(`${url}/api/v1/logs/ingest/batch`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/x-ndjson" },
    body,
  });
  const result = await res.json();
  if (res.status !== 202 || result.count !== BATCH || result.dropped) throw new Error(`batch ingest answered ${res.status}: ${JSON.stringify(result)}`);
}

/** Seeds `entries` lines (multiple of BATCH) into a new project; returns the project. */
async function seededProject(url, key, name, entries) {
  const project = await api(url, "POST", "logs/projects", key, { name, daily_limit_mb: 100_000 });
  for (let offset = 0; offset < entries; offset += BATCH) await ingest(url, project.ingest_token, buildBatch(BATCH, { rare: RARE, every: EVERY, offset }));
  return project;
}

async function checkSearch(url, key, project, entries) {
  const hits = await api(url, "GET", `logs/projects/${project.id}/entries?q=${RARE}&limit=1000`, key);
  const expected = Math.ceil(entries / EVERY);
  if (hits.length !== expected) throw new Error(`search over ${entries} entries found ${hits.length}, seeded ${expected}`);
  const wrong = hits.filter((entry) => !entry.message.includes(RARE));
  if (wrong.length) throw new Error(`${wrong.length} search hits without "${RARE}"`);
  return expected;
}

export default {
  name: "logs",
  async run({ url, createTeamWithKey, median, rounds, duration }) {
    const { key } = await createTeamWithKey({ plan: "scale", scopes: ["logs:read", "logs:write"] });
    const small = await seededProject(url, key, "bench-10k", 10_000);
    const big = await seededProject(url, key, "bench-100k", 100_000);
    const hitsSmall = await checkSearch(url, key, small, 10_000);
    const hitsBig = await checkSearch(url, key, big, 100_000);
    const latest = await api(url, "GET", `logs/projects/${big.id}/entries?limit=50`, key);
    if (latest.length !== 50) throw new Error(`latest 50 answered ${latest.length} entries`);

    const headers = { authorization: `Bearer ${key}` };
    const entries = (project, query) => `${url}/api/v1/logs/projects/${project.id}/entries?${query}`;
    const runs = { latest: [], big: [], small: [] };
    for (let i = 0; i < rounds; i++) {
      for (const [name, target] of [
        ["latest", entries(big, "limit=50")],
        ["big", entries(big, `q=${RARE}`)],
        ["small", entries(small, `q=${RARE}`)],
      ]) {
        runs[name].push(median(await sequential(target, { headers, seconds: duration })));
      }
    }
    const ms = (name) => median(runs[name]);
    return [
      {
        figure: `log search q=<rare word> over 100,000 entries, median ms`,
        value: ms("big").toFixed(1),
        baseline: `${ms("latest").toFixed(1)} (latest 50 of the same project)`,
        ratio: `${(ms("big") / ms("latest")).toFixed(2)}×`,
        goal: "≤ 1.5×",
        note: `${hitsBig} hits, each containing the word`,
      },
      {
        figure: "log search q=<rare word>, 100,000 vs 10,000 entries, median ms",
        value: ms("big").toFixed(1),
        baseline: `${ms("small").toFixed(1)} (10,000 entries)`,
        ratio: `${(ms("big") / ms("small")).toFixed(2)}×`,
        goal: "≤ 1.5× (flat)",
        note: `${hitsSmall} hits at 10,000`,
      },
    ];
  },
};
