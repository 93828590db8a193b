// Webhook relay benchmark: events per second accepted at /in/<slug> and the median time from the
// ingest request to the signed delivery reaching a local receiver.
//
// Starts its own `wrangler dev` through bench/lib.mjs withServer (free ports, a throw-away
// --persist-to with the migrations applied and an env file with fresh secrets, which include
// ALLOW_PRIVATE_TARGETS=true so deliveries may reach loopback; RATE_LIMITS=off so the public bucket
// does not cap the run, and RELAY_FORWARDS_PER_MINUTE high so the source's forward cap does not), creates a team and key through the operator API, a source and a
// destination pointing at a local Node HTTP receiver that verifies every Standard Webhooks
// signature, fires the events, prints the figures and stops everything whatever happens.
//
//   npm run bench:relay                      # 1000 events, 20 in flight
//   BENCH_EVENTS=3000 BENCH_CONCURRENCY=50 npm run bench:relay
//   (BENCH_DELIVERY_WAIT_MS, default 120000: how long to wait for the deliveries)
import { createHmac, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { median, verifyStandardWebhook as verify, withServer } from "./lib.mjs";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const DELIVERY_WAIT_MS = Number(process.env.BENCH_DELIVERY_WAIT_MS ?? 120_000);

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main() {
  // The receiver: verifies the signature, notes when each event arrived.
  let secret = "";
  const sentAt = new Map();
  const latencies = [];
  let received = 0;
  let badSignatures = 0;
  const receiver = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const arrived = performance.now();
      received++;
      if (!verify(secret, req.headers, body)) badSignatures++;
      try {
        const n = JSON.parse(body).n;
        if (n >= 0 && sentAt.has(n)) latencies.push(arrived - sentAt.get(n));
      } catch {
        badSignatures++;
      }
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const receiverUrl = `http://127.0.0.1:${receiver.address().port}/hook`;

  try {
    console.log("starting wrangler dev (temporary state and secrets, migrations applied) ...");
    await withServer(
      async ({ url: base, createTeamWithKey }) => {
        console.log(`wrangler dev up at ${base}`);
        const api = async (method, path, token, body) => {
          const res = await fetch(`${base}/api/v1/${path}`, {
            method,
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: body ? JSON.stringify(body) : undefined,
          });
          const json = await res.json();
          if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
          return json.data;
        };
        const { key } = await createTeamWithKey({ name: "bench", plan: "scale", scopes: ["webhooks:write"] });
        const signingSecret = randomBytes(16).toString("hex");
        const source = await api("POST", "webhooks/sources", key, { name: "bench", provider: "generic", signing_secret: signingSecret });
        const destination = await api("POST", `webhooks/sources/${source.id}/destinations`, key, { url: receiverUrl });
        secret = destination.secret;
        // source.url is built on APP_URL (bench/lib.mjs makes it http://127.0.0.1:<port>); fire
        // at its path on the server's own address, where wrangler dev listens, whatever APP_URL is.
        const ingestUrl = new URL(new URL(source.url).pathname, base).href;

        // Warm-up, not counted.
        const fire = async (n) => {
          const body = JSON.stringify({ type: "bench.event", n, data: { padding: "x".repeat(200) } });
          const signature = createHmac("sha256", signingSecret).update(body).digest("hex");
          sentAt.set(n, performance.now());
          const res = await fetch(ingestUrl, {
            method: "POST",
            headers: { "content-type": "application/json", "x-signature": signature, "x-event-id": `bench-${n}` },
            body,
          });
          await res.arrayBuffer();
          return res.status;
        };
        for (let i = 0; i < 20; i++) await fire(-1 - i);

        console.log(`firing ${EVENTS} events, ${CONCURRENCY} in flight ...`);
        const statuses = {};
        let next = 0;
        const started = performance.now();
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (next < EVENTS) {
              const n = next++;
              const status = await fire(n);
              statuses[status] = (statuses[status] ?? 0) + 1;
            }
          }),
        );
        const seconds = (performance.now() - started) / 1000;
        const accepted = statuses[202] ?? 0;

        const waitUntil = Date.now() + DELIVERY_WAIT_MS;
        while (latencies.length < accepted && Date.now() < waitUntil) await new Promise((r) => setTimeout(r, 200));

        console.log("");
        console.log(`accepted        ${accepted}/${EVENTS} (statuses ${JSON.stringify(statuses)}) in ${seconds.toFixed(2)} s`);
        console.log(`ingest rate     ${(accepted / seconds).toFixed(0)} events/s accepted at /in/<slug>`);
        console.log(
          `delivered       ${latencies.length}/${accepted} measured events (${received} requests received incl. warm-up), bad signatures: ${badSignatures}`,
        );
        if (latencies.length) {
          console.log(
            `latency         median ${median(latencies).toFixed(0)} ms, p90 ${percentile(latencies, 90).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms (ingest request start to delivery at the receiver)`,
          );
        }
        if (badSignatures > 0 || latencies.length < accepted) process.exitCode = 1;
      },
      // The per-source forward cap (600 a minute by default) is lifted too: one source takes every event.
      { vars: { RATE_LIMITS: "off", RELAY_FORWARDS_PER_MINUTE: "100000000" }, logLevel: "error" },
    );
  } finally {
    await new Promise((resolve) => receiver.close(resolve));
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
