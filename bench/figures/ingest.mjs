// Log batch ingest (issue 15 e, formerly bench/ingest.mjs): POST /api/v1/logs/ingest/batch with a
// LINES-line NDJSON body (default 10,000, ~2.2 MB) against the bench Worker's bare twin, which
// parses the same body and inserts it with json_each (~900 KB per statement, one batch) into a
// table shaped like log_entries. Median time per batch over ROUNDS alternating pairs after one
// warm-up each; asserts every line was stored (count) and none dropped.
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
    const ingest = [];
    const bare = [];
    for (let i = 0; i < rounds; i++) {
      bare.push(await post(bareUrl, "", body));
      ingest.push(await post(ingestUrl, project.ingest_token, body));
    }
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
    ];
  },
};
