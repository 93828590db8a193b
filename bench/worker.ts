// Bench-only Worker entry: the production Worker (src/index.ts) plus the bare baselines and the
// fast seeding helper of `npm run bench`, under /__bench/. Only bench/lib.mjs starts it
// (`wrangler dev bench/worker.ts`, which overrides `main` for that local run); wrangler.toml's
// `main` stays src/index.ts, so nothing here is reachable in a deployed Worker.
//
//   POST /__bench/bare/relay     verifies a hex HMAC-SHA256 of the body (x-signature, the relay's
//                                `generic` scheme) and inserts one D1 row: the relay's bare twin
//   GET  /__bench/bare/read?team=<id>  a bare JSON answer after one D1 read (a team's usage rows
//                                of the month, the read GET /usage made before the meter): the
//                                yardstick of the auth figure
//   POST /__bench/bare/read?team=<id>&bytes=<n>  the same read after parsing the body (JSON, or a
//                                urlencoded form), answered
//                                with about n bytes of JSON: the twin of a POST route's shape (a
//                                body in, a larger answer out), to tell the shape's cost from ours
//   GET  /__bench/bare/counted   a bare JSON answer after one call to the rate-limit Durable Object
//                                (one counter, the call every exactly counted request makes): the
//                                floor of an authenticated route, measured beside GET /health
//   POST /__bench/bare/relay-counted  the bare relay route after one rate-limit Durable Object call
//                                (the per-IP `public` bucket every /in/<slug> request is counted in):
//                                the floor of an ingest that must count exactly
//   POST /__bench/bare/ingest    parses an NDJSON body and inserts it with json_each, ~900 KB per
//                                statement in one batch: log batch ingest's bare twin
//   POST /__bench/seed/survey    (operator token) imports completed responses into a survey's
//                                store (as the operator's migration does), far faster than the
//                                public flow could
//   POST /__bench/seed/analytics (operator token) writes events into a site's store through the
//                                store's own append (the ingest batch's call, so the rollup and the
//                                tallies are made as in production) with chosen times over past days
//   GET  /__bench/key-cache      (operator token) entries of the isolate's key cache, so the auth
//                                figure can check that keys are resolved once, not per request
//   *    /__bench/unlogged/<path>  the production Worker's <path> with REQUEST_LOG=off: the twin of
//                                an authenticated route without the request log and "last used"
//   GET  /__bench/request-log?team=<id>  (operator token) rows held in a team's request log, so the
//                                request-log figure can check the logged run was written
import worker from "../src/index";
import type { Env } from "../src/env";
import { keyCacheSizes } from "../src/platform/auth";
import { requestLogSettled, requestLogStore } from "../src/platform/request-log/request-log";
import type { StoredResponse } from "../src/products/surveys/store/survey-rows";
import { surveyStore } from "../src/products/surveys/surveys.store";
import { analyticsStore } from "../src/products/analytics/analytics.store";
import type { StoredEvent } from "../src/products/analytics/store/analytics-store";
import { hmacSha256, timingSafeEqual, toHex } from "../src/platform/crypto";

export {
  AnalyticsSaltStore,
  AnalyticsStore,
  FlagStore,
  FormStore,
  LogStore,
  PushStore,
  RateLimiter,
  RelayStore,
  RequestLogStore,
  SurveyStore,
} from "../src/index";

/** The secret of the bare relay route; bench/figures/relay.mjs signs with it (a Worker module may export handlers only). */
const BARE_RELAY_SECRET = "bench-bare-relay-secret";

let tablesReady: Promise<unknown> | null = null;

/** The bench's own tables, created once per isolate (local D1 only). */
function benchTables(env: Env): Promise<unknown> {
  tablesReady ??= env.DB.batch([
    env.DB.prepare("CREATE TABLE IF NOT EXISTS bench_relay_events (id TEXT PRIMARY KEY, body TEXT NOT NULL, received_at TEXT NOT NULL)"),
    // The columns and indexes of log_entries (migrations/0002_logs.sql).
    env.DB.prepare(
      `CREATE TABLE IF NOT EXISTS bench_log_entries (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, team_id TEXT NOT NULL, project_id TEXT NOT NULL,
       stream TEXT, level TEXT NOT NULL, message TEXT NOT NULL, service TEXT, trace_id TEXT, span_id TEXT, metadata TEXT, created_at INTEGER NOT NULL)`,
    ),
    env.DB.prepare("CREATE INDEX IF NOT EXISTS bench_log_entries_time_idx ON bench_log_entries (project_id, created_at)"),
    env.DB.prepare("CREATE INDEX IF NOT EXISTS bench_log_entries_level_idx ON bench_log_entries (project_id, level, created_at)"),
  ]);
  return tablesReady;
}

const json = (body: unknown, status = 200) => Response.json(body, { status });

async function bareRelay(request: Request, env: Env): Promise<Response> {
  const body = await request.text();
  const expected = toHex(await hmacSha256(BARE_RELAY_SECRET, body));
  if (!timingSafeEqual(request.headers.get("x-signature") ?? "", expected)) return json({ error: "Invalid webhook signature" }, 401);
  await benchTables(env);
  await env.DB.prepare("INSERT INTO bench_relay_events (id, body, received_at) VALUES (?, ?, ?)")
    .bind(crypto.randomUUID(), body, new Date().toISOString())
    .run();
  return json({ ok: true }, 202);
}

/** The counter the bare counted route hits: one object, a limit no run reaches. */
const BARE_COUNTER_KEY = "bench:bare-counted";

/** One request counted in the bench's counter object, as every exactly counted request is. */
async function countOnce(env: Env): Promise<number> {
  const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(BARE_COUNTER_KEY));
  const [count] = await stub.hitAll(Math.floor(Date.now() / 60_000) * 60, [{ name: "", limit: Number.MAX_SAFE_INTEGER }]);
  return count!;
}

async function bareCounted(env: Env): Promise<Response> {
  return json({ status: "ok", count: await countOnce(env) });
}

/** One D1 read, the month's usage rows of a team: what GET /usage read before the meter held them. */
async function bareRead(request: Request, env: Env): Promise<Response> {
  const team = new URL(request.url).searchParams.get("team") ?? "";
  const { results } = await env.DB.prepare("SELECT service, used FROM usage_counters WHERE team_id = ? AND period = ?")
    .bind(team, new Date().toISOString().slice(0, 7))
    .all();
  return json({ data: results });
}

/** bareRead of a POST: the body parsed (JSON, or a urlencoded form), the answer padded to about `bytes` bytes. */
async function bareReadPosted(request: Request, env: Env): Promise<Response> {
  // Read as bytes, as the routes read their bodies (readBodyCapped): under `wrangler dev`, `.text()`
  // on an urlencoded body makes workerd log a warning ("does not appear to be text") with its stack
  // through the inspector to wrangler's Node process, 1.5-2 ms of CPU a request no deployed Worker spends.
  const text = new TextDecoder().decode(await request.arrayBuffer());
  const parsed: unknown = request.headers.get("content-type")?.includes("urlencoded") ? new URLSearchParams(text) : JSON.parse(text);
  const url = new URL(request.url);
  const team = url.searchParams.get("team") ?? "";
  const bytes = Math.min(1_000_000, Number(url.searchParams.get("bytes") ?? 0) || 0);
  const { results } = await env.DB.prepare("SELECT service, used FROM usage_counters WHERE team_id = ? AND period = ?")
    .bind(team, new Date().toISOString().slice(0, 7))
    .all();
  const answer = { data: results, got: typeof parsed, pad: "" };
  answer.pad = "x".repeat(Math.max(0, bytes - JSON.stringify(answer).length));
  return json(answer);
}

async function bareIngest(request: Request, env: Env): Promise<Response> {
  const text = await request.text();
  const rows: unknown[][] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const e = JSON.parse(line) as Record<string, unknown>;
    rows.push([
      crypto.randomUUID(),
      e.stream ?? null,
      e.level ?? "info",
      e.message,
      e.service ?? null,
      e.trace_id ?? null,
      e.span_id ?? null,
      e.metadata ? JSON.stringify(e.metadata) : null,
    ]);
  }
  await benchTables(env);
  const insert = env.DB.prepare(
    `INSERT INTO bench_log_entries (id, team_id, project_id, stream, level, message, service, trace_id, span_id, metadata, created_at)
     SELECT value->>0, 'bench', 'bench', value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, value->>7, ?2 FROM json_each(?1)`,
  );
  const statements: D1PreparedStatement[] = [];
  let chunk: string[] = [];
  let bytes = 0;
  const flush = () => {
    if (chunk.length) statements.push(insert.bind(`[${chunk.join(",")}]`, Date.now()));
    chunk = [];
    bytes = 0;
  };
  for (const row of rows) {
    const encoded = JSON.stringify(row);
    if (bytes + encoded.length > 900_000) flush();
    chunk.push(encoded);
    bytes += encoded.length + 1;
  }
  flush();
  await env.DB.batch(statements);
  return json({ ok: true, count: rows.length }, 202);
}

interface SeedSurvey {
  survey_id: string;
  count: number;
  /** Answers of response i: `values[q][i % values[q].length]` for each question id q. */
  values: Record<string, unknown[]>;
}

/** Rows per import call: ~300 bytes each, far below an RPC's size. */
const SEED_CHUNK = 5_000;

/**
 * Imports `count` completed responses into the survey's store in chunks of SEED_CHUNK rows
 * (the store counts them into the summary in the same transaction), then adds them to the
 * survey's response_count.
 */
async function seedSurvey(request: Request, env: Env): Promise<Response> {
  if (request.headers.get("authorization") !== `Bearer ${env.ADMIN_TOKEN}`) return json({ error: "Invalid or missing admin token" }, 401);
  const input = (await request.json()) as SeedSurvey;
  const survey = await env.DB.prepare("SELECT team_id FROM surveys WHERE id = ?").bind(input.survey_id).first<{ team_id: string }>();
  if (!survey) return json({ error: "Survey not found" }, 404);
  const { results: questions } = await env.DB.prepare("SELECT id, type FROM survey_questions WHERE survey_id = ?")
    .bind(input.survey_id)
    .all<{ id: string; type: string }>();
  const values = Object.entries(input.values);
  const at = new Date().toISOString();
  const store = surveyStore(env, input.survey_id);
  const owner = { surveyId: input.survey_id, teamId: survey.team_id };
  for (let from = 0; from < input.count; from += SEED_CHUNK) {
    const rows: StoredResponse[] = [];
    for (let i = from; i < Math.min(input.count, from + SEED_CHUNK); i++) {
      const answers = Object.fromEntries(values.map(([id, list]) => [id, { value: list[i % list.length], version: 1, answered_at: at }]));
      rows.push({
        id: crypto.randomUUID(),
        status: "completed",
        respondent: "{}",
        answers: JSON.stringify(answers),
        path: "[]",
        next_question_id: null,
        generated_questions: "[]",
        completion_id: crypto.randomUUID(),
        started_at: at,
        updated_at: at,
        completed_at: at,
      });
    }
    await store.importResponses(owner, rows, questions);
  }
  await env.DB.prepare("UPDATE surveys SET response_count = response_count + ? WHERE id = ?").bind(input.count, input.survey_id).run();
  return json({ ok: true, count: input.count }, 201);
}

interface SeedAnalytics {
  site_id: string;
  /** Events `from` to `from + count - 1` of the series (a figure seeds a large series in several calls). */
  from: number;
  count: number;
  /** Visits spread over this many UTC days, today included (visit v on the day `v % days` before today). */
  days: number;
  /** Events per visit: event i belongs to visit `floor(i / per_visit)`, one visitor per visit. */
  per_visit: number;
  /** Event i: `pages[i % n]`, `names[i % n]`; its visit v: `sources[v % n]`, `countries[v % n]` ("" for none). */
  pages: string[];
  names: string[];
  sources: string[];
  countries: string[];
}

/** Events per append call: ~150 bytes each, far below an RPC's size (the ingest's batch carries 500). */
const ANALYTICS_SEED_CHUNK = 5_000;
const DAY_MS = 86_400_000;

/**
 * Event i of the series a figure describes, at a time of its visit's day (today's before now): the
 * visit starts at a spread time of its day and its events follow one second apart; the visitor is
 * the visit's own hash (16 hex characters, as the ingest makes), so no visitor spans two days.
 */
function seededEvent(input: SeedAnalytics, i: number, now: number): StoredEvent {
  const v = Math.floor(i / input.per_visit);
  const dayStart = Math.floor(now / DAY_MS) * DAY_MS - (v % input.days) * DAY_MS;
  const span = Math.max(1, Math.min(DAY_MS, now - dayStart) - input.per_visit * 1000);
  const pick = <T>(list: T[], n: number) => list[n % list.length]!;
  return {
    ts: dayStart + ((v * 7919 * 1000) % span) + (i % input.per_visit) * 1000,
    name: pick(input.names, i),
    page: pick(input.pages, i),
    visitor: v.toString(16).padStart(16, "0"),
    source: pick(input.sources, v),
    country: pick(input.countries, v),
    props: null,
  };
}

/** Writes events of the figure's series into the site's store, ANALYTICS_SEED_CHUNK per append. */
async function seedAnalytics(request: Request, env: Env): Promise<Response> {
  if (request.headers.get("authorization") !== `Bearer ${env.ADMIN_TOKEN}`) return json({ error: "Invalid or missing admin token" }, 401);
  const input = (await request.json()) as SeedAnalytics;
  const site = await env.DB.prepare("SELECT id FROM analytics_sites WHERE id = ?").bind(input.site_id).first<{ id: string }>();
  if (!site) return json({ error: "Site not found" }, 404);
  const now = Date.now();
  const store = analyticsStore(env, site.id);
  let stored = 0;
  for (let from = input.from; from < input.from + input.count; from += ANALYTICS_SEED_CHUNK) {
    const events: StoredEvent[] = [];
    for (let i = from; i < Math.min(input.from + input.count, from + ANALYTICS_SEED_CHUNK); i++) events.push(seededEvent(input, i, now));
    stored += await store.append(events);
  }
  return json({ ok: true, count: stored }, 201);
}

export default {
  ...worker,
  async fetch(request, env, ctx) {
    const { pathname } = new URL(request.url);
    if (request.method === "POST" && pathname === "/__bench/bare/relay") return bareRelay(request, env);
    if (request.method === "GET" && pathname === "/__bench/bare/read") return bareRead(request, env);
    if (request.method === "POST" && pathname === "/__bench/bare/read") return bareReadPosted(request, env);
    if (request.method === "GET" && pathname === "/__bench/bare/counted") return bareCounted(env);
    if (request.method === "POST" && pathname === "/__bench/bare/relay-counted") {
      await countOnce(env);
      return bareRelay(request, env);
    }
    if (request.method === "POST" && pathname === "/__bench/bare/ingest") return bareIngest(request, env);
    if (request.method === "POST" && pathname === "/__bench/seed/survey") return seedSurvey(request, env);
    if (request.method === "POST" && pathname === "/__bench/seed/analytics") return seedAnalytics(request, env);
    if (request.method === "GET" && pathname === "/__bench/key-cache") {
      if (request.headers.get("authorization") !== `Bearer ${env.ADMIN_TOKEN}`) return json({ error: "Invalid or missing admin token" }, 401);
      return json(keyCacheSizes(env.DB));
    }
    if (pathname.startsWith("/__bench/unlogged/")) {
      const url = new URL(request.url);
      url.pathname = pathname.slice("/__bench/unlogged".length);
      return worker.fetch(new Request(url, request), { ...env, REQUEST_LOG: "off" }, ctx);
    }
    if (request.method === "GET" && pathname === "/__bench/request-log") {
      if (request.headers.get("authorization") !== `Bearer ${env.ADMIN_TOKEN}`) return json({ error: "Invalid or missing admin token" }, 401);
      await requestLogSettled(env);
      return json({ held: await requestLogStore(env, new URL(request.url).searchParams.get("team") ?? "").count() });
    }
    return worker.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
