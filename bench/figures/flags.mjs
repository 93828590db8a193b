// Feature flags (issue 39): requests/s of `POST /api/v1/flags/client/bootstrap` (a client key; 50
// client-side flags of 5 rules each, every one evaluated for the request's context) and of an OFREP
// single evaluation (`POST /ofrep/v1/evaluate/flags/:key`, the same client key) against the bare
// one-D1-read route of the bench Worker (`/__bench/bare/read`), at 16 and 64 connections (goals:
// ≥ 0.8× and ≥ 0.9×; reported, never asserted). Each request names its own context key, and a
// client IP changes every 100 requests so the per-IP `flags_client_ip` bucket (120 a minute)
// refuses nothing; the team is on enterprise (the key's `flags_client` bucket and the monthly
// `evaluations` follow the plan: no limit). Answers are checked: every request 200, and a sample
// of each kind holds the 50 flags with the variant the rules give (`b`, rule 5 for the context's
// country). Also the CPU time of `evaluateAll` over 100 flags of 5 rules for one context, in this
// Node process (the evaluator the Worker runs, bundled from src/products/flags/evaluate.ts).
import { importSource } from "../../scripts/lib/source-bundle.mjs";
import { api, loadTwin } from "../lib.mjs";

const connectionSets = (process.env.CONNECTION_SETS ?? "16,64").split(",").map(Number);
const GOALS = { 16: 0.8, 64: 0.9 };
const FLAGS = 50;

/** The client IP of request n: a new address every 100 requests. */
const ipOf = (n) => {
  const k = Math.floor(n / 100);
  return `10.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}`;
};

/** Five rules; a context from country "NZ" matches the fifth only (the others test the remaining operators first). */
const RULES = [
  { id: "r1", clauses: [{ attribute: "email", op: "ends_with", values: ["@acme.dev"] }], serve: { variant: "a" } },
  { id: "r2", clauses: [{ attribute: "key", op: "in_segment", values: ["beta"] }], serve: { variant: "a" } },
  { id: "r3", clauses: [{ attribute: "app_version", op: "semver_gt", values: ["9.0.0"] }], serve: { variant: "a" } },
  { id: "r4", clauses: [{ attribute: "age", op: "gte", values: [99] }], serve: { variant: "a" } },
  { id: "r5", clauses: [{ attribute: "country", op: "in", values: ["NZ", "AU"] }], serve: { variant: "b" } },
];
const FALLTHROUGH = {
  rollout: {
    variations: [
      { variant: "a", weight: 50_000 },
      { variant: "c", weight: 50_000 },
    ],
  },
};
const contextOf = (n) => ({ targetingKey: `user-${n}`, country: "NZ", email: `user-${n}@example.com`, app_version: "1.4.2", age: 30 });

/** The CPU time of evaluating 100 flags of 5 rules for one context, per call (best of 10 batches of 200, after warming up). */
async function evaluationCpu() {
  const { prepareRuleset, evaluateAll } = await importSource('export { prepareRuleset, evaluateAll } from "./src/products/flags/evaluate.ts";');
  const flags = {};
  for (let i = 0; i < 100; i++) {
    flags[`flag-${i}`] = {
      key: `flag-${i}`,
      type: "string",
      variants: { a: "A", b: "B", c: "C" },
      off_variant: "a",
      salt: `salt-${i}`,
      version: 1,
      client_side: true,
      config: { enabled: true, rules: RULES, fallthrough: FALLTHROUGH },
    };
  }
  const segments = { beta: { key: "beta", included: ["u-1", "u-2"], excluded: [], rules: [{ clauses: [{ attribute: "plan", op: "in", values: ["beta"] }] }] } };
  const prepared = prepareRuleset({ environment: "production", version: 1, flags, segments });
  // One context matching rule 5 everywhere, one falling through to the rollout (a sha1 per flag).
  const check = evaluateAll(prepared, contextOf(0));
  if (Object.values(check).some((e) => e.variant !== "b")) throw new Error("evaluateAll did not serve rule 5's variant to every flag");
  const measure = (context) => {
    for (let i = 0; i < 500; i++) evaluateAll(prepared, { ...context, targetingKey: `warm-${i}` });
    let best = Number.POSITIVE_INFINITY;
    for (let batch = 0; batch < 10; batch++) {
      const before = process.cpuUsage();
      for (let i = 0; i < 200; i++) evaluateAll(prepared, { ...context, targetingKey: `ctx-${batch}-${i}` });
      const used = process.cpuUsage(before);
      best = Math.min(best, (used.user + used.system) / 200);
    }
    return best / 1000;
  };
  return { rule: measure(contextOf(0)), rollout: measure({ ...contextOf(0), country: "US" }) };
}

export default {
  name: "flags",
  async run({ url, createTeamWithKey, load, median, rounds, duration }) {
    const rows = [];
    const cpu = await evaluationCpu();
    for (const [what, ms] of [
      ["a rule matching (the 5th)", cpu.rule],
      ["no rule matching (the rollout: one sha1 per flag)", cpu.rollout],
    ]) {
      rows.push({
        figure: `evaluateAll, 100 flags of 5 rules, one context, ${what}: CPU ms per call (Node, best of 10 batches)`,
        value: ms.toFixed(3),
        baseline: "",
        ratio: "",
        goal: "< 1 ms",
        note: ms < 1 ? "met" : "not met",
      });
    }

    const team = await createTeamWithKey({ plan: "enterprise", scopes: ["flags:read", "flags:write"], domains: [] });
    await api(url, "POST", "flags/segments", team.key, {
      key: "beta",
      name: "Beta",
      included: ["u-1", "u-2"],
      rules: [{ clauses: [{ attribute: "plan", op: "in", values: ["beta"] }] }],
    });
    for (let i = 0; i < FLAGS; i++) {
      await api(url, "POST", "flags", team.key, {
        key: `flag-${i}`,
        type: "string",
        variants: { a: "A", b: "B", c: "C" },
        off_variant: "a",
        client_side: true,
        environments: { production: { enabled: true, rules: RULES, fallthrough: FALLTHROUGH } },
      });
    }
    const clientKey = (await api(url, "POST", "flags/environments/production/client-keys", team.key, { name: "bench" })).key;
    const bootstrapUrl = `${url}/api/v1/flags/client/bootstrap`;
    const ofrepUrl = `${url}/ofrep/v1/evaluate/flags/flag-7`;
    const bareUrl = `${url}/__bench/bare/read?team=${team.teamId}`;
    let next = 0;
    let bootstrapBytes = 0;
    const headers = (n) => ({ authorization: `Bearer ${clientKey}`, "content-type": "application/json", "cf-connecting-ip": ipOf(n) });

    // The answers, checked once each before the runs (and the isolate warmed).
    for (let i = 0; i < 20; i++) {
      const n = next++;
      const res = await fetch(bootstrapUrl, { method: "POST", headers: headers(n), body: JSON.stringify({ context: contextOf(n) }) });
      const text = await res.text();
      bootstrapBytes = Buffer.byteLength(text);
      const body = JSON.parse(text);
      if (res.status !== 200) throw new Error(`the bootstrap answered ${res.status}: ${JSON.stringify(body)}`);
      const wrong = body.flags.filter((f) => f.variant !== "b" || f.reason !== "TARGETING_MATCH");
      if (body.flags.length !== FLAGS || wrong.length > 0) throw new Error(`the bootstrap answered ${body.flags.length} flags, ${wrong.length} not rule 5's b`);
      const single = await fetch(ofrepUrl, { method: "POST", headers: headers(next++), body: JSON.stringify({ context: contextOf(n) }) });
      const entry = await single.json();
      if (single.status !== 200 || entry.key !== "flag-7" || entry.variant !== "b" || entry.value !== "B" || entry.reason !== "TARGETING_MATCH") {
        throw new Error(`the OFREP evaluation answered ${single.status}: ${JSON.stringify(entry)}`);
      }
      await (await fetch(bareUrl)).arrayBuffer();
    }

    const post = {
      method: "POST",
      setupRequest: (req) => {
        const n = next++;
        return { ...req, body: JSON.stringify({ context: contextOf(n) }), headers: { ...req.headers, ...headers(n) } };
      },
    };
    const kinds = [
      { name: "bootstrap", title: `POST /flags/client/bootstrap (${FLAGS} flags of 5 rules)`, url: bootstrapUrl },
      { name: "ofrep", title: "POST /ofrep/v1/evaluate/flags/:key (client key)", url: ofrepUrl },
    ];
    // The bootstrap's shape without its work: the same POSTs to the bare read, answered with as
    // many bytes as a bootstrap (not a goal's yardstick; it tells the shape's cost from ours).
    const shapeUrl = `${url}/__bench/bare/read?team=${team.teamId}&bytes=${bootstrapBytes}`;
    for (const connections of connectionSets) {
      const runs = { bare: [], shape: [], bootstrap: [], ofrep: [] };
      for (let i = 0; i < rounds; i++) {
        runs.bare.push(await load({ title: `bare one-D1-read, ${connections}`, url: bareUrl, duration, connections }));
        runs.shape.push(await loadTwin({ title: `bare read as a bootstrap's POST, ${connections}`, url: shapeUrl, duration, connections, requests: [post] }));
        for (const kind of kinds) {
          const run = await load({ title: `${kind.name}, ${connections}`, url: kind.url, duration, connections, requests: [post] });
          const other = Object.entries(run.statuses).filter(([code]) => code !== "200");
          if (other.length > 0 || run.errors > 0)
            throw new Error(`${kind.title}: answers other than 200: ${JSON.stringify(run.statuses)}, ${run.errors} errors`);
          runs[kind.name].push(run);
        }
      }
      const rps = (list) => median(list.map((r) => r.requestsPerSecond));
      rows.push({
        figure: `bare one-D1-read as a POST of the bootstrap's body with a ${bootstrapBytes}-byte answer, ${connections} connections, req/s`,
        value: rps(runs.shape).toFixed(0),
        baseline: `${rps(runs.bare).toFixed(0)} (bare one-D1-read route)`,
        ratio: `${(rps(runs.shape) / rps(runs.bare)).toFixed(2)}×`,
        goal: "",
        note: `the shape alone; the bootstrap is ${(rps(runs.bootstrap) / rps(runs.shape)).toFixed(2)}× of it, OFREP ${(rps(runs.ofrep) / rps(runs.shape)).toFixed(2)}×`,
      });
      for (const kind of kinds) {
        const ratio = rps(runs[kind.name]) / rps(runs.bare);
        const perRound = runs[kind.name].map((r, i) => (r.requestsPerSecond / runs.bare[i].requestsPerSecond).toFixed(2)).join(", ");
        rows.push({
          figure: `${kind.title}, ${connections} connections, req/s`,
          value: rps(runs[kind.name]).toFixed(0),
          baseline: `${rps(runs.bare).toFixed(0)} (bare one-D1-read route)`,
          ratio: `${ratio.toFixed(2)}×`,
          goal: `≥ ${GOALS[connections] ?? 0.8}×`,
          note: `${ratio >= (GOALS[connections] ?? 0.8) ? "met" : "not met"}; rounds ${perRound}; p50 ${median(runs[kind.name].map((r) => r.p50))} ms`,
        });
      }
    }
    return rows;
  },
};
