// Log batch ingest (issue 15 e, formerly bench/ingest.mjs): POST /api/v1/logs/ingest/batch with a
// LINES-line NDJSON body (default 10,000, ~2.2 MB) against the bench Worker's bare twin, which
// parses the same body and inserts it with json_each (~900 KB per statement, one batch) into a
// table shaped like log_entries. Median time per batch over ROUNDS alternating pairs after one
// warm-up each; asserts every line was stored (count) and none dropped.
// The project's store adds a batch to its search index a moment after answering. Each round
// therefore also times a search right after the batch, which builds whatever is still pending
// first: that row is the index's cost, and it keeps the build out of the next bare measurement.
import { api, buildBatch } from "../lib.mjs";

const LINES = Number(process.env.LINES ?? 10_000);

async function post(target, token, body) {
  const started = performance.now();
  const res = await fetch(target, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/x-ndjson" }, body });
  const result = await res.json();
  const ms = performance.now() - started;
  if (res.status !== 202 || result.count !== LINES || result.dropped) throw new Error(`${target} answered ${res.status}: ${JSON.stringify(result)}`);
  return ms;
}

export default {
  name: "ingest",
  async run({ url, createTeamWithKey, median, rounds }) {
    const { key } = await createTeamWithKey({ plan: "scale", scopes: ["logs:read", "logs:write"] });
    const project = await api(url, "POST", "logs/projects", key, { name: "bench-ingest", daily_limit_mb: 100_000 });
    const body = buildBatch(LINES);
    const ingestUrl = `${url}/api/v1/logs/ingest/batch`;
    const bareUrl = `${url}/__bench/bare/ingest`;
    await post(ingestUrl, project.ingest_token, body);
    await post(bareUrl, "", body);
    const searchUrl = `${url}/api/v1/logs/projects/${project.id}/entries?q=zebracorn-never&limit=1`;
    const search = async () => {
      const started = performance.now();
      const res = await fetch(searchUrl, { headers: { authorization: `Bearer ${key}` } });
      const found = await res.json();
      if (res.status !== 200 || found.data.length !== 0) throw new Error(`search answered ${res.status}: ${JSON.stringify(found).slice(0, 200)}`);
      return performance.now() - started;
    };
    await search();
    const ingest = [];
    const bare = [];
    const settle = [];
    for (let i = 0; i < rounds; i++) {
      bare.push(await post(bareUrl, "", body));
      ingest.push(await post(ingestUrl, project.ingest_token, body));
      settle.push(await search());
    }
    // The same search with nothing pending: what the first search pays for the build is the rest.
    const idle = [];
    for (let i = 0; i < rounds; i++) idle.push(await search());
    const mb = Buffer.byteLength(body) / 1024 / 1024;
    const ms = median(ingest);
    return [
      {
        figure: `log batch ingest, ${LINES.toLocaleString("en-US")} lines (${mb.toFixed(1)} MB), ms per batch`,
        value: ms.toFixed(0),
        baseline: `${median(bare).toFixed(0)} (bare json_each insert)`,
        ratio: `${(ms / median(bare)).toFixed(2)}×`,
        note: `${Math.round(LINES / (ms / 1000)).toLocaleString("en-US")} entries/s; every line counted, none dropped`,
      },
      {
        figure: `the same batch with its search index built (ingest + first search after it), ms`,
        value: (ms + median(settle) - median(idle)).toFixed(0),
        baseline: `${median(bare).toFixed(0)} (bare json_each insert, no index)`,
        ratio: `${((ms + median(settle) - median(idle)) / median(bare)).toFixed(2)}×`,
        note: `index build ≈ ${(median(settle) - median(idle)).toFixed(0)} ms a batch, off the ingest request`,
      },
    ];
  },
};
