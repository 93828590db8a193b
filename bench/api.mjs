// `npm run bench`: every performance figure of the platform in one run against one `wrangler dev`,
// each as a ratio against a bare baseline measured in the same run (absolute times on a shared
// machine drift; ratios hold). Each figure is a module in bench/figures/ exporting
// `{ name, run(ctx) }`; `run` returns rows `{ figure, value, baseline, ratio, goal, note }` and
// asserts correctness itself (throws when an answer is wrong), never a timing.
// ROUNDS (default 3), DURATION (seconds per load run, default 5), CONNECTIONS (default 20) and
// FIGURES (comma-separated names, default all; names may also be given as arguments:
// `node bench/api.mjs ingest`) tune the run. Figures: analytics, analytics-query, auth, console-logs, flags, forms, ingest, logs, relay, request-log, surveys.
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { LOCAL_OBSERVABILITY, load, median, STATE_ON_DISK, THROUGH_PROXY, withServer } from "./lib.mjs";

const rounds = Number(process.env.ROUNDS ?? 3);
const duration = Number(process.env.DURATION ?? 5);
const connections = Number(process.env.CONNECTIONS ?? 20);
const named = [...(process.env.FIGURES?.split(",") ?? []), ...process.argv.slice(2)].filter(Boolean);
const only = named.length ? new Set(named) : null;

const dir = join(dirname(fileURLToPath(import.meta.url)), "figures");
const figures = [];
for (const file of readdirSync(dir)
  .filter((f) => f.endsWith(".mjs"))
  .sort()) {
  const figure = (await import(pathToFileURL(join(dir, file)).href)).default;
  if (!only || only.has(figure.name)) figures.push(figure);
}
if (only && figures.length !== only.size) {
  console.error(
    `unknown figure in ${[...only].join(", ")}; known: ${readdirSync(dir)
      .map((f) => f.replace(/\.mjs$/, ""))
      .join(", ")}`,
  );
  process.exit(2);
}

const rows = [];
let failed = 0;
const started = performance.now();
// The relay figure sends thousands of events a minute to one source: its forward cap (600 a minute by
// default) is lifted so the figure measures ingest, not refusals (the cap's count still runs).
await withServer(
  async (server) => {
    const ctx = { ...server, load, median, rounds, duration, connections };
    for (const figure of figures) {
      const t = performance.now();
      try {
        rows.push(...(await figure.run(ctx)));
        console.error(`figure ${figure.name}: ${((performance.now() - t) / 1000).toFixed(0)} s`);
      } catch (error) {
        failed++;
        console.error(`figure ${figure.name} failed: ${error?.stack ?? error}`);
      }
    }
  },
  { vars: { RELAY_FORWARDS_PER_MINUTE: "100000000", ...JSON.parse(process.env.BENCH_VARS ?? "{}") } },
);
console.error(`whole run: ${((performance.now() - started) / 1000).toFixed(0)} s`);

console.log(
  `\nFigures: medians of ${rounds} rounds, each a ratio against its bare baseline of the same run; wrangler's local trace collector ${LOCAL_OBSERVABILITY ? "on" : "off (LOCAL_OBSERVABILITY=on to measure with it)"}; the server's state ${STATE_ON_DISK ? "on disk" : "in memory (BENCH_STATE=disk to measure it on disk)"}; the load ${THROUGH_PROXY ? "through wrangler dev's proxy" : "sent to the Worker's workerd, not through wrangler dev's proxy (BENCH_PROXY=on to send it through)"}.\n`,
);
console.log("| figure | value | bare baseline | ratio | goal | note |\n|---|---|---|---|---|---|");
for (const r of rows) {
  console.log(`| ${r.figure} | ${r.value} | ${r.baseline} | ${r.ratio} | ${r.goal ?? ""} | ${r.note ?? ""} |`);
}
if (failed) {
  console.error(`\n${failed} figure(s) failed`);
  process.exit(1);
}
