// Webhook relay (issue 15 b): events/s accepted at /in/<slug> (a signed `generic` source with one
// destination at a local receiver) against the bare twin of the bench Worker (verify a hex HMAC,
// insert one D1 row), and the ingest-to-delivery latency at the receiver, for one event alone and
// as the median of 200 events sent one after another, against the bare signed POST round trip.
// Asserts that every accepted event reaches the receiver exactly once with a valid signature.
import { randomBytes } from "node:crypto";
import { api, hexHmac, startReceiver } from "../lib.mjs";

/** bench/worker.ts BARE_RELAY_SECRET. */
const BARE_SECRET = "bench-bare-relay-secret";
const SEQUENTIAL = 200;
const DRAIN_MS = Number(process.env.RELAY_DRAIN_MS ?? 240_000);

/**
 * The client IP of event n: a provider sends from a handful of addresses, so 150 events share one
 * (their per-IP `public` counter is one object, whose calls the isolate coalesces), and the bucket
 * (200 per 60 s per IP) never caps the run.
 */
const ipOf = (n) => {
  const k = Math.floor(n / 150);
  return `10.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}`;
};
const connectionSets = (process.env.CONNECTION_SETS ?? "16,64").split(",").map(Number);
const eventBody = (n) => JSON.stringify({ id: `evt-${n}`, type: "bench.event", n, data: { padding: "x".repeat(200) } });

export default {
  name: "relay",
  async run({ url, createTeamWithKey, load, median, rounds, duration, connections }) {
    const receiver = await startReceiver();
    try {
      const team = await createTeamWithKey({ plan: "scale", scopes: ["webhooks:write"] });
      const signingSecret = randomBytes(16).toString("hex");
      const source = await api(url, "POST", "webhooks/sources", team.key, { name: "bench", provider: "generic", signing_secret: signingSecret });
      const destination = await api(url, "POST", `webhooks/sources/${source.id}/destinations`, team.key, { url: receiver.url });
      receiver.secret = destination.secret;
      const ingestUrl = new URL(new URL(source.url).pathname, url).href;
      // The same ingest with no destination: what receiving costs without the delivery that each
      // event's background work then makes on the same two cores (fetch, receiver, two D1 writes).
      const quiet = await api(url, "POST", "webhooks/sources", team.key, { name: "bench-no-destination", provider: "generic", signing_secret: signingSecret });
      const quietUrl = new URL(new URL(quiet.url).pathname, url).href;
      const bareUrl = `${url}/__bench/bare/relay`;

      let next = 0;
      const accepted = new Set();
      /** An autocannon request that signs a fresh event per request and notes which were accepted. */
      const signed = (secret, track) => ({
        method: "POST",
        setupRequest: (req, context) => {
          const n = next++;
          context.n = n;
          const body = eventBody(n);
          return {
            ...req,
            body,
            headers: { ...req.headers, "content-type": "application/json", "x-signature": hexHmac(secret, body), "cf-connecting-ip": ipOf(n) },
          };
        },
        onResponse: (status, _body, context) => {
          if (track && status === 202) accepted.add(context.n);
        },
      });
      const send = async (target, secret, n) => {
        const body = eventBody(n);
        const started = performance.now();
        const res = await fetch(target, {
          method: "POST",
          headers: { "content-type": "application/json", "x-signature": hexHmac(secret, body), "cf-connecting-ip": ipOf(n) },
          body,
        });
        await res.arrayBuffer();
        if (res.status !== 202) throw new Error(`${target} answered ${res.status}`);
        return { started, rtt: performance.now() - started };
      };

      // Warm-up of both paths (their events count like the others).
      for (let i = 0; i < 10; i++) {
        const n = next++;
        await send(ingestUrl, signingSecret, n);
        accepted.add(n);
        await send(bareUrl, BARE_SECRET, next++);
      }

      const bySet = new Map();
      for (const connections of connectionSets) {
        const runs = { bare: [], relay: [], ingestOnly: [] };
        for (let i = 0; i < rounds; i++) {
          runs.bare.push(await load({ title: `bare relay, ${connections}`, url: bareUrl, duration, connections, requests: [signed(BARE_SECRET, false)] }));
          const run = await load({ title: `relay ingest, ${connections}`, url: ingestUrl, duration, connections, requests: [signed(signingSecret, true)] });
          if (run.non2xx > 0) throw new Error(`${run.non2xx} non-2xx answers at /in/<slug>: ${JSON.stringify(run.statuses)}`);
          runs.relay.push(run);
          const alone = await load({
            title: `relay ingest, no destination, ${connections}`,
            url: quietUrl,
            duration,
            connections,
            requests: [signed(signingSecret, false)],
          });
          if (alone.non2xx > 0) throw new Error(`${alone.non2xx} non-2xx answers at /in/<slug> without destination: ${JSON.stringify(alone.statuses)}`);
          runs.ingestOnly.push(alone);
        }
        bySet.set(connections, runs);
      }

      // Every accepted event delivered before latencies are taken (else they queue behind them).
      const delivered = () => [...accepted].every((n) => receiver.arrivals.has(n));
      await receiver.until(delivered, DRAIN_MS, `${accepted.size} deliveries`);

      const bareRtt = [];
      for (let i = 0; i < 50; i++) bareRtt.push((await send(bareUrl, BARE_SECRET, next++)).rtt);
      const latencyOf = async (count) => {
        const sent = new Map();
        for (let i = 0; i < count; i++) {
          const n = next++;
          sent.set(n, (await send(ingestUrl, signingSecret, n)).started);
          accepted.add(n);
        }
        await receiver.until(() => [...sent.keys()].every((n) => receiver.arrivals.has(n)), DRAIN_MS, `${count} sequential deliveries`);
        return [...sent].map(([n, started]) => receiver.arrivals.get(n).at - started);
      };
      const alone = median(await latencyOf(1));
      const sequential = median(await latencyOf(SEQUENTIAL));

      const twice = [...receiver.arrivals.values()].filter((a) => a.count > 1).length;
      if (twice > 0) throw new Error(`${twice} events delivered more than once`);
      if (receiver.badSignatures > 0) throw new Error(`${receiver.badSignatures} deliveries with a bad signature`);
      const missing = [...accepted].filter((n) => !receiver.arrivals.has(n)).length;
      if (missing > 0) throw new Error(`${missing} accepted events never delivered`);

      const rps = (runs) => median(runs.map((r) => r.requestsPerSecond));
      const rtt = median(bareRtt);
      const check = `${accepted.size} accepted events each delivered exactly once, signatures valid`;
      const ratios = (runs, of) => runs.map((r, i) => (r.requestsPerSecond / of[i].requestsPerSecond).toFixed(2)).join(", ");
      return [
        ...[...bySet].flatMap(([connections, { bare, relay, ingestOnly }]) => [
          {
            figure: `relay ingest at /in/<slug>, requests/s at ${connections} connections`,
            value: rps(relay).toFixed(0),
            baseline: `${rps(bare).toFixed(0)} (HMAC + one D1 insert)`,
            ratio: `${(rps(relay) / rps(bare)).toFixed(2)}×`,
            goal: "≥ 0.5×",
            note: `rounds: ${ratios(relay, bare)}; ${check}`,
          },
          {
            figure: `relay ingest, source without destination, requests/s at ${connections} connections`,
            value: rps(ingestOnly).toFixed(0),
            baseline: `${rps(bare).toFixed(0)} (HMAC + one D1 insert)`,
            ratio: `${(rps(ingestOnly) / rps(bare)).toFixed(2)}×`,
            note: `rounds: ${ratios(ingestOnly, bare)}; receiving alone: no delivery shares the CPU`,
          },
        ]),
        {
          figure: "ingest-to-delivery, one event alone, ms",
          value: alone.toFixed(0),
          baseline: `${rtt.toFixed(1)} (bare signed POST round trip)`,
          ratio: `${(alone / rtt).toFixed(1)}×`,
          goal: "≤ 4×",
        },
        {
          figure: `ingest-to-delivery, median of ${SEQUENTIAL} sent one after another, ms`,
          value: sequential.toFixed(0),
          baseline: `${rtt.toFixed(1)} (bare signed POST round trip)`,
          ratio: `${(sequential / rtt).toFixed(1)}×`,
          goal: "≤ 4×",
        },
      ];
    } finally {
      await receiver.close();
    }
  },
};
