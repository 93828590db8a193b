// `npm run bench:profile -- <figure>`: where the Worker's time goes while one figure of bench/figures/
// runs (one round, CONNECTION_SETS and DURATION as for `npm run bench`). The V8 CPU profiler of
// wrangler dev's inspector samples the Worker's thread (its Durable Objects run there too under
// wrangler dev) every 200 µs; the profile is written to bench/profiles/<figure>.cpuprofile (open it
// in Chromium's DevTools, Performance panel) and summed up here: self time by function, and time by
// the top of each call chain (a request's handler, a Durable Object's method, a timer).
//
// Read it as a map, not a measure: the profiler slows the Worker, and the time the runtime spends
// entering a Durable Object or a binding call lands on whichever line of ours is on the stack (a
// function's first line, a call). `npm run bench` gives the figures.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import WebSocket from "ws";
import { load, median, withServer } from "./lib.mjs";
import { freePort } from "../scripts/lib/dev-server.mjs";

const name = process.argv[2];
if (!name) {
  console.error("usage: npm run bench:profile -- <figure>   (a module of bench/figures/)");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const figure = (await import(pathToFileURL(join(here, "figures", `${name}.mjs`)).href)).default;

/** One Chrome DevTools Protocol session on the Worker's inspector. */
async function inspect(port) {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let id = 0;
  const waiting = new Map();
  ws.on("message", (data) => {
    const message = JSON.parse(data.toString());
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  });
  return {
    send: (method, params = {}) =>
      new Promise((resolve) => {
        waiting.set(++id, resolve);
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}

/** Frames of wrangler's middleware facade and Hono's dispatch, and anonymous wrappers. */
const PLUMBING = /^(fetch|__facade_\w+|next|dispatch|#dispatch|__name|)$/;

/** Self time by function and time by the top of the call chain, as percentages of the profile. */
function summarize(profile, top = 25) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const label = (n) =>
    `${n.callFrame.functionName || "(anonymous)"} ${n.callFrame.url ? `${n.callFrame.url.split("/").pop()}:${n.callFrame.lineNumber + 1}` : "(native)"}`;
  const self = new Map();
  const chains = new Map();
  let total = 0;
  profile.samples.forEach((sample, i) => {
    const t = profile.timeDeltas[i] ?? 0;
    total += t;
    const node = nodes.get(sample);
    self.set(label(node), (self.get(label(node)) ?? 0) + t);
    const chain = [];
    for (let cur = sample; cur !== undefined; cur = parent.get(cur)) chain.unshift(nodes.get(cur));
    // The runtime's and Hono's dispatch frames are skipped: the chain is named by the first two of ours.
    const ours = chain.slice(1).filter((n) => !PLUMBING.test(n.callFrame.functionName));
    const head = (ours.length ? ours : chain.slice(1))
      .slice(0, 2)
      .map((n) => n.callFrame.functionName || "(anonymous)")
      .join(" > ");
    chains.set(head, (chains.get(head) ?? 0) + t);
  });
  const lines = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`)
      .join("\n");
  return `Profile of ${(total / 1e6).toFixed(1)} s. Self time by function:\n${lines(self)}\n\nBy the top of the call chain:\n${lines(chains)}`;
}

const inspectorPort = await freePort();
await withServer(
  async (server) => {
    const session = await inspect(inspectorPort);
    try {
      await session.send("Profiler.enable");
      await session.send("Profiler.setSamplingInterval", { interval: 200 });
      await session.send("Profiler.start");
      const rows = await figure.run({ ...server, load, median, rounds: 1, duration: Number(process.env.DURATION ?? 5), connections: 20 });
      const { result } = await session.send("Profiler.stop");
      for (const row of rows) console.log(`${row.figure}: ${row.value} against ${row.baseline} (${row.ratio}, under the profiler)`);
      mkdirSync(join(here, "profiles"), { recursive: true });
      const file = join(here, "profiles", `${name}.cpuprofile`);
      writeFileSync(file, JSON.stringify(result.profile));
      console.log(`\n${summarize(result.profile)}\n\nWritten to ${file}`);
    } finally {
      session.close();
    }
  },
  { inspectorPort },
);
