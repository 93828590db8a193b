// Load run with exact accounting: for LOAD_SECONDS (default 60) it drives, at the same time,
//   - log ingest: single entries and small NDJSON batches over several projects,
//   - webhook ingest at /in/<slug>, forwarded to a local Node receiver that verifies every
//     Standard Webhooks signature,
//   - public survey responses (start → answer → answer → complete) over several teams,
// against its own `wrangler dev` (fresh state, fresh secrets). Afterwards every ACCEPTED entry,
// event and response is counted back through the API (and the receiver): nothing lost, nothing
// doubled. A 429 or 503 is a refusal (not accepted) and is reported as such.
//
//   npm run bench:load                           # 60 s, rate limits off (see below)
//   LOAD_SECONDS=20 LOAD_WORKERS=6 npm run bench:load
//   LOAD_RATE_LIMITS=on npm run bench:load       # keep the buckets: expect many refusals
//
// Rate limits: the strict bucket (30 requests / 60 s per survey team) and log_ingest (300 / 60 s
// per token) would cap the run at a few requests per second, so by default the server runs with
// `--var RATE_LIMITS:off`; LOAD_RATE_LIMITS=on keeps them, and refusals are then counted.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import { withServer } from "./lib.mjs";

const SECONDS = Number(process.env.LOAD_SECONDS ?? 60);
const WORKERS = Number(process.env.LOAD_WORKERS ?? 4);
const RATE_LIMITS = process.env.LOAD_RATE_LIMITS ?? "off";
const LOG_PROJECTS = 4;
const SURVEY_TEAMS = 4;
// Long enough for a delivery that failed twice to land (the relay retries after 5 s, then 5 min;
// the first attempt runs at once from the ingest request).
const DRAIN_MS = Number(process.env.LOAD_DRAIN_MS ?? 420_000);

function percentile(values, p) {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

class Workload {
  constructor(name) {
    this.name = name;
    this.latencies = [];
    this.requests = 0;
    this.refused = 0;
    this.failed = 0;
    this.accepted = 0;
    this.statuses = {};
  }
  async timed(fetchPromise) {
    const started = performance.now();
    let res;
    try {
      res = await fetchPromise();
    } catch (error) {
      this.requests++;
      this.failed++;
      this.statuses.network = (this.statuses.network ?? 0) + 1;
      return null;
    }
    const text = await res.text();
    this.latencies.push(performance.now() - started);
    this.requests++;
    this.statuses[res.status] = (this.statuses[res.status] ?? 0) + 1;
    if (res.status === 429 || res.status === 503) this.refused++;
    else if (res.status >= 400) this.failed++;
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }
}

async function api(url, key, method, path, body, headers = {}) {
  const res = await fetch(`${url}/api/v1/${path}`, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** A local receiver verifying the Standard Webhooks signature of every delivery. */
function startReceiver(secrets) {
  const received = new Map(); // webhook-id -> count
  const events = new Map(); // x-relay-event-id -> count
  let badSignatures = 0;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const id = req.headers["webhook-id"];
      const ts = req.headers["webhook-timestamp"];
      const signatures = String(req.headers["webhook-signature"] ?? "").split(" ");
      const secret = secrets.get(req.url);
      let valid = false;
      if (secret && id && ts) {
        const key = Buffer.from(secret.slice("whsec_".length), "base64");
        const expected = createHmac("sha256", key).update(`${id}.${ts}.${body}`).digest();
        valid = signatures.some((s) => {
          const [version, sig] = s.split(",");
          const given = Buffer.from(sig ?? "", "base64");
          return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
        });
      }
      if (!valid) {
        badSignatures++;
        res.writeHead(401).end();
        return;
      }
      received.set(id, (received.get(id) ?? 0) + 1);
      const eventId = req.headers["x-relay-event-id"];
      events.set(eventId, (events.get(eventId) ?? 0) + 1);
      res.writeHead(200).end("ok");
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, port: server.address().port, received, events, badSignatures: () => badSignatures })),
  );
}

const randomIp = () => `10.${(Math.random() * 255) | 0}.${(Math.random() * 255) | 0}.${(Math.random() * 255) | 0}`;

await withServer(
  async ({ url, createTeamWithKey }) => {
    console.log(`wrangler dev at ${url}; RATE_LIMITS=${RATE_LIMITS}; ${SECONDS} s; ${WORKERS} workers per workload`);
    const team = await createTeamWithKey({ plan: "enterprise", name: "load" });

    // --- set-up -------------------------------------------------------------------------------
    const projects = [];
    for (let i = 0; i < LOG_PROJECTS; i++) {
      const p = (await api(url, team.key, "POST", "logs/projects", { name: `load-${i}`, daily_limit_mb: 100_000 })).data;
      projects.push({ id: p.id, token: p.ingest_token, accepted: 0 });
    }

    const secrets = new Map();
    const receiver = await startReceiver(secrets);
    const source = (await api(url, team.key, "POST", "webhooks/sources", { name: "load", provider: "generic" })).data;
    const destination = (await api(url, team.key, "POST", `webhooks/sources/${source.id}/destinations`, { url: `http://127.0.0.1:${receiver.port}/hook` }))
      .data;
    secrets.set("/hook", destination.secret);

    const surveys = [];
    for (let i = 0; i < SURVEY_TEAMS; i++) {
      const owner = await createTeamWithKey({ plan: "enterprise", name: `survey-${i}` });
      const survey = (await api(url, owner.key, "POST", "surveys", { name: `Load ${i}`, slug: `load-${i}-${Date.now()}` })).data;
      const q1 = (await api(url, owner.key, "POST", `surveys/${survey.id}/questions`, { type: "text", title: "Why?", position: 1 })).data;
      const q2 = (await api(url, owner.key, "POST", `surveys/${survey.id}/questions`, { type: "rating", title: "Score", position: 2 })).data;
      await api(url, owner.key, "POST", `surveys/${survey.id}/activate`);
      surveys.push({ key: owner.key, id: survey.id, slug: survey.slug, q1: q1.id, q2: q2.id, started: 0, completed: 0 });
    }

    // --- load -----------------------------------------------------------------------------------
    const logs = new Workload("log ingest (requests)");
    const relay = new Workload("webhook ingest /in/<slug>");
    const responses = new Workload("survey responses (requests)");
    const acceptedEvents = new Set();
    let entriesAccepted = 0;
    let seq = 0;
    const deadline = Date.now() + SECONDS * 1000;
    const started = Date.now();

    const logWorker = async (w) => {
      for (let n = 0; Date.now() < deadline; n++) {
        const project = projects[(w + n) % projects.length];
        if (n % 2 === 0) {
          const r = await logs.timed(() =>
            fetch(`${url}/api/v1/logs/ingest`, {
              method: "POST",
              headers: { authorization: `Bearer ${project.token}`, "content-type": "application/json" },
              body: JSON.stringify({ message: `single ${w}-${n}`, level: "info", stream: `w${w}` }),
            }),
          );
          if (r?.status === 202) {
            project.accepted += 1;
            entriesAccepted += 1;
          }
        } else {
          const lines = 5 + (n % 16);
          const body = Array.from({ length: lines }, (_, i) =>
            JSON.stringify({ message: `batch ${w}-${n}-${i}`, level: i % 5 ? "info" : "error", stream: `w${w}` }),
          ).join("\n");
          const r = await logs.timed(() =>
            fetch(`${url}/api/v1/logs/ingest/batch`, {
              method: "POST",
              headers: { authorization: `Bearer ${project.token}`, "content-type": "application/x-ndjson" },
              body,
            }),
          );
          if (r?.status === 202) {
            if (r.body.count !== lines || r.body.dropped !== 0) throw new Error(`batch answered ${JSON.stringify(r.body)} for ${lines} valid lines`);
            project.accepted += r.body.count;
            entriesAccepted += r.body.count;
          }
        }
      }
    };

    const relayWorker = async () => {
      while (Date.now() < deadline) {
        const body = JSON.stringify({ type: "load.event", seq: seq++, nonce: Math.random() });
        const r = await relay.timed(() =>
          fetch(`${url}/in/${source.slug}`, { method: "POST", headers: { "content-type": "application/json", "cf-connecting-ip": randomIp() }, body }),
        );
        if (r?.status === 202) {
          if (r.body.data.duplicate) throw new Error("a fresh event was reported as a duplicate");
          acceptedEvents.add(r.body.data.id);
        }
      }
    };

    const surveyWorker = async (w) => {
      for (let n = 0; Date.now() < deadline; n++) {
        const survey = surveys[(w + n) % surveys.length];
        const ip = randomIp();
        const post = (path, body) =>
          responses.timed(() =>
            fetch(`${url}/api/v1/surveys/${survey.slug}/${path}`, {
              method: "POST",
              headers: { "content-type": "application/json", "cf-connecting-ip": ip },
              body: body === undefined ? undefined : JSON.stringify(body),
            }),
          );
        const start = await post("responses", {});
        if (start?.status !== 201) continue;
        survey.started++;
        const id = start.body.data.id;
        // A refused step is retried (as a client honouring Retry-After would), until the run ends.
        const step = async (path, body, okStatus) => {
          while (Date.now() < deadline + 30_000) {
            const r = await post(`responses/${id}/${path}`, body);
            if (r?.status === okStatus) return true;
            if (r && r.status !== 429 && r.status !== 503) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
            await new Promise((res) => setTimeout(res, 200));
          }
          return false;
        };
        if (!(await step("answers", { question_id: survey.q1, value: `because ${n}` }, 200))) continue;
        if (!(await step("answers", { question_id: survey.q2, value: 1 + (n % 5) }, 200))) continue;
        if (await step("complete", undefined, 200)) survey.completed++;
      }
    };

    const runs = [];
    for (let w = 0; w < WORKERS; w++) runs.push(logWorker(w), relayWorker(w), surveyWorker(w));
    await Promise.all(runs);
    const elapsed = (Date.now() - started) / 1000;

    // --- accounting -----------------------------------------------------------------------------
    const problems = [];
    let storedEntries = 0;

    // Log entries: every accepted entry is stored exactly once (messages are unique).
    for (const project of projects) {
      const seen = new Set();
      let duplicates = 0;
      let cursor = null;
      do {
        const page = await api(url, team.key, "GET", `logs/projects/${project.id}/entries?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
        for (const entry of page.data) {
          if (seen.has(entry.message)) duplicates++;
          seen.add(entry.message);
        }
        cursor = page.pagination.next_cursor;
      } while (cursor);
      storedEntries += seen.size;
      if (seen.size !== project.accepted || duplicates)
        problems.push(`logs project ${project.id}: accepted ${project.accepted}, stored ${seen.size}, duplicates ${duplicates}`);
    }

    // Relay: every accepted event is stored, and delivered exactly once once the queue drains.
    let storedEvents = 0;
    let cursor = null;
    do {
      const page = await api(url, team.key, "GET", `webhooks/sources/${source.id}/events?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      storedEvents += page.data.filter((e) => acceptedEvents.has(e.id)).length;
      cursor = page.pagination.has_more ? page.pagination.next_cursor : null;
    } while (cursor);
    if (storedEvents !== acceptedEvents.size) problems.push(`relay: accepted ${acceptedEvents.size} events, stored ${storedEvents}`);
    const drainStart = Date.now();
    while (receiver.events.size < acceptedEvents.size && Date.now() - drainStart < DRAIN_MS) await new Promise((r) => setTimeout(r, 500));
    const drainSeconds = (Date.now() - drainStart) / 1000;
    await new Promise((r) => setTimeout(r, 3000)); // a late duplicate would show up here
    const missing = [...acceptedEvents].filter((id) => !receiver.events.has(id)).length;
    const doubled = [...receiver.events.values()].filter((n) => n > 1).length;
    const unknown = [...receiver.events.keys()].filter((id) => !acceptedEvents.has(id)).length;
    for (const id of [...acceptedEvents].filter((id) => !receiver.events.has(id)).slice(0, 10)) {
      const detail = (await api(url, team.key, "GET", `webhooks/sources/${source.id}/events/${id}`)).data;
      console.error(
        `undelivered event ${id}: ${JSON.stringify(detail.deliveries.map((d) => ({ status: d.status, attempts: d.attempts_count, last_error: d.last_error, next_attempt_at: d.next_attempt_at, tries: d.attempts.map((a) => [a.attempted_at, a.status_code, a.error]) })))}`,
      );
    }
    if (missing || doubled || unknown || receiver.badSignatures()) {
      problems.push(`relay deliveries: missing ${missing}, delivered twice ${doubled}, unknown ${unknown}, bad signatures ${receiver.badSignatures()}`);
    }

    // Surveys: response_count and the responses list match the completed responses exactly.
    let started_ = 0;
    let completed = 0;
    for (const survey of surveys) {
      const detail = (await api(url, survey.key, "GET", `surveys/${survey.id}`)).data;
      const list = await api(url, survey.key, "GET", `surveys/${survey.id}/responses?status=completed&per_page=1`);
      const all = await api(url, survey.key, "GET", `surveys/${survey.id}/responses?per_page=1`);
      started_ += survey.started;
      completed += survey.completed;
      if (detail.response_count !== survey.completed || list.pagination.total !== survey.completed || all.pagination.total !== survey.started) {
        problems.push(
          `survey ${survey.slug}: started ${survey.started} (listed ${all.pagination.total}), completed ${survey.completed} (response_count ${detail.response_count}, listed ${list.pagination.total})`,
        );
      }
    }
    receiver.server.close();

    // --- report ---------------------------------------------------------------------------------
    const row = (w, unit, accepted) =>
      `| ${w.name} | ${w.requests} | ${(w.requests / elapsed).toFixed(1)} | ${percentile(w.latencies, 50).toFixed(0)} | ${percentile(w.latencies, 99).toFixed(0)} | ${accepted} ${unit} (${(accepted / elapsed).toFixed(1)}/s) | ${w.refused} | ${w.failed} | ${JSON.stringify(w.statuses)} |`;
    console.log(`\nLoad run: ${elapsed.toFixed(1)} s, RATE_LIMITS=${RATE_LIMITS}, ${WORKERS} concurrent clients per workload (${WORKERS * 3} in all)\n`);
    console.log("| workload | requests | req/s | p50 ms | p99 ms | accepted | refused (429/503) | other errors | statuses |");
    console.log("|---|---|---|---|---|---|---|---|---|");
    console.log(row(logs, "entries", entriesAccepted));
    console.log(row(relay, "events", acceptedEvents.size));
    console.log(row(responses, "completed responses", completed));
    console.log(
      `\nAccounting: log entries stored ${storedEntries}/${entriesAccepted} accepted; relay events stored ${storedEvents}/${acceptedEvents.size}, delivered once ${receiver.events.size - doubled}/${acceptedEvents.size} (queue drained in ${drainSeconds.toFixed(1)} s), signatures verified ${[...receiver.received.values()].reduce((a, b) => a + b, 0)}; survey responses started ${started_}, completed ${completed} (response_count and lists match).`,
    );
    if (problems.length) {
      console.error(`\nACCOUNTING FAILED:\n- ${problems.join("\n- ")}`);
      process.exitCode = 1;
    } else {
      console.log("\nEverything accepted is accounted for: nothing lost, nothing doubled.");
    }
  },
  // The relay's per-source forward cap (600 a minute by default) would refuse most of one source's
  // events at this rate: the run measures throughput, so it is lifted like the buckets.
  { vars: { RATE_LIMITS, RELAY_FORWARDS_PER_MINUTE: "100000000" } },
);
