// Property-based fuzzing of every operation of the OpenAPI document with fast-check: random and
// malformed JSON, wrong types per declared property, huge strings, unicode with lone surrogates,
// deep nesting, wrong content types, empty and huge bodies, garbage query and path parameters.
// Every answer must be below 500 (except the mail webhook test's documented 502), carry no stack
// trace or secret, and be in the documented error shape of the product that owns the path.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, anyIp, type RequestOptions } from "../helpers/api";
import { FUZZ_REQUESTS } from "./budget";
import { answerText, buildFixture, call, fillPath, loadOperations, paramKind, routeKey, secretFieldsIn, type Fixture, type Operation } from "./fixtures";

/** Total generated requests across all operations (the extra fixed cases come on top): budget.ts. */
const TARGET = FUZZ_REQUESTS;

let operations: Operation[];
let A: Fixture;
let requests = 0;
const statusCounts = new Map<number, number>();
const started = Date.now();

// ---- documented error shapes ------------------------------------------------------------------

type Body = Record<string, unknown>;
const isObject = (v: unknown): v is Body => !!v && typeof v === "object" && !Array.isArray(v);
const keysAre = (body: Body, allowed: string[]) => Object.keys(body).every((k) => allowed.includes(k));
const isFieldMap = (v: unknown) => isObject(v) && Object.values(v).every((m) => Array.isArray(m) && m.every((s) => typeof s === "string"));
const plainError = (b: Body) => typeof b.error === "string" && keysAre(b, ["error"]);
const validation = (key: "details" | "errors") => (b: Body) => b.error === "Validation failed" && isFieldMap(b[key]) && keysAre(b, ["error", key]);

/** The platform's universal bodies: 401/403 `{error}`, 429 `{error, retry_after}` or the monthly quota. */
function universal(status: number, body: Body): boolean {
  if (status === 401 || status === 403) return plainError(body);
  if (status === 429) {
    if (body.error === "Rate limit exceeded") return typeof body.retry_after === "number" && body.retry_after > 0 && keysAre(body, ["error", "retry_after"]);
  }
  return false;
}

/** The error shape each product documents in its README, by path prefix. */
const SHAPES: Array<{ prefix: RegExp; name: string; ok: (status: number, body: Body, path: string) => boolean }> = [
  {
    // Everything under /orgs is the audit product's mount, so any error there (an unknown path too)
    // is in the audit envelope.
    prefix: /^\/api\/v1\/orgs(\/|$)/,
    name: "audit envelope",
    ok: (_s, b) =>
      b.data === null &&
      isObject(b.meta) &&
      typeof b.meta.request_id === "string" &&
      isObject(b.error) &&
      typeof b.error.code === "string" &&
      typeof b.error.message === "string" &&
      (b.error.details === undefined || isFieldMap(b.error.details)) &&
      keysAre(b, ["data", "meta", "error"]),
  },
  { prefix: /^\/api\/v1\/logs\/ingest(\/|$)/, name: "log ingest {error}", ok: (_s, b) => plainError(b) },
  { prefix: /^\/api\/v1\/logs(\/|$)/, name: "logs {error} / {error, details}", ok: (_s, b) => plainError(b) || validation("details")(b) },
  { prefix: /^\/api\/v1\/webhooks\/sources(\/|$)/, name: "relay {error} / {error, details}", ok: (_s, b) => plainError(b) || validation("details")(b) },
  { prefix: /^\/in(\/|$)/, name: "relay ingest {error}", ok: (_s, b) => plainError(b) || validation("details")(b) },
  {
    prefix: /^\/api\/v1\/(emails|webhooks)(\/|$)/,
    name: "mail {error} / {error, code} / {error, details} / 502 {error: {message, detail}}",
    ok: (s, b, path) =>
      plainError(b) ||
      validation("details")(b) ||
      (typeof b.error === "string" && typeof b.code === "string" && keysAre(b, ["error", "code"])) ||
      (s === 502 && /\/webhooks\/[^/]+\/test$/.test(path) && isObject(b.error) && typeof b.error.message === "string" && typeof b.error.detail === "string") ||
      (s === 503 && /\/domains\/[^/]+\/verify$/.test(path) && plainError(b)),
  },
  { prefix: /^\/api\/v1\/push(\/|$)/, name: "push {error} / {error, details}", ok: (_s, b) => plainError(b) || validation("details")(b) },
  {
    prefix: /^\/api\/v1\/surveys(\/|$)/,
    name: "surveys {error} / {error, errors} / flow 409 extras",
    ok: (s, b) =>
      plainError(b) ||
      validation("errors")(b) ||
      (s === 422 && typeof b.error === "string" && isFieldMap(b.errors) && keysAre(b, ["error", "errors"])) ||
      (s === 409 && typeof b.error === "string" && keysAre(b, ["error", "expected_question_id", "finished", "next_question_id"])),
  },
  {
    // The public Forms endpoint: {ok: false, error, code}, or the fields to fix (also on a 413 of files).
    prefix: /^\/f(\/|$)/,
    name: "forms public {ok: false, error, code} / {ok: false, errors}",
    ok: (_s, b) =>
      b.ok === false &&
      keysAre(b, ["ok", "error", "code", "errors"]) &&
      ((typeof b.error === "string" && typeof b.code === "string") || (Array.isArray(b.errors) && b.errors.length > 0 && b.error === undefined)),
  },
  {
    // OFREP answers an evaluation's refusal in its own shape (a bulk one without `key`); the
    // credential's and the buckets' refusals are the platform's.
    prefix: /^\/ofrep\/v1(\/|$)/,
    name: "OFREP {key, errorCode, errorDetails} / platform {error}",
    ok: (s, b) =>
      plainError(b) ||
      ((s === 400 || s === 404) &&
        typeof b.errorCode === "string" &&
        typeof b.errorDetails === "string" &&
        (b.key === undefined || typeof b.key === "string") &&
        keysAre(b, ["key", "errorCode", "errorDetails"])),
  },
  { prefix: /^\//, name: "platform {error} / {error, details}", ok: (_s, b) => plainError(b) || validation("details")(b) },
];

/** Stack frames and source locations: never in an answer. */
const STACK = [/\n\s+at \S/, /\bat [\w$.<>]+ \((?:file|\/|[\w-]+\.(?:ts|js))/, /\.(?:ts|js|mjs):\d+:\d+/, /node_modules\//];

const MONTHLY = "Monthly usage limit exceeded. Upgrade your plan.";

function checkAnswer(label: string, path: string, status: number, type: string, text: string): void {
  const mailTest502 = status === 502 && /^\/api\/v1\/webhooks\/[^/]+\/test$/.test(path);
  // Domain verification answers a documented 503 when the resolver (loopback in the tests) fails.
  const resolver503 = status === 503 && /^\/api\/v1\/domains\/[^/]+\/verify$/.test(path) && text.includes("DNS resolver");
  expect(status < 500 || mailTest502 || resolver503, `${label} answered ${status}: ${text.slice(0, 500)}`).toBe(true);
  for (const pattern of STACK) expect(pattern.test(text), `${label}: stack trace in body: ${text.slice(0, 500)}`).toBe(false);
  const leaked = A.secrets.filter((s) => text.includes(s));
  expect(leaked.length, `${label}: secret value in body`).toBe(0);
  if (status < 400) return;
  // The public audit viewer answers dead links with an HTML page.
  if (path.startsWith("/insights/") && type.includes("text/html")) return;
  // A form post that is not JSON is a browser's: its refusal is an HTML page saying what to fix.
  if (path.startsWith("/f/") && type.includes("text/html")) return;
  expect(type, `${label}: error content type`).toContain("application/json");
  const body = JSON.parse(text) as Body;
  expect(isObject(body), `${label}: error body is an object`).toBe(true);
  expect(secretFieldsIn(body), `${label}: secret field`).toEqual([]);
  if (universal(status, body)) return;
  if (status === 429 && body.error === MONTHLY && keysAre(body, ["error"])) return;
  const shape = SHAPES.find((s) => s.prefix.test(path))!;
  expect(shape.ok(status, body, path), `${label}: ${status} not in the ${shape.name} shape: ${text.slice(0, 500)}`).toBe(true);
}

// ---- request generation -----------------------------------------------------------------------

interface FuzzRequest {
  path: string;
  query: string;
  body?: string | Uint8Array;
  contentType?: string;
}

/** A minimal valid value for a JSON schema: the base that the mutations start from. */
function sample(schema: any, depth = 0): unknown {
  if (!schema || depth > 6) return null;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return sample(variants.find((v: any) => v.type !== "null") ?? variants[0], depth + 1);
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((s: any) => sample(s, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== "null") : schema.type;
  switch (type) {
    case "object": {
      const out: Body = {};
      for (const name of schema.required ?? []) out[name] = sample(schema.properties?.[name], depth + 1);
      return out;
    }
    case "array":
      return schema.minItems ? Array.from({ length: schema.minItems }, () => sample(schema.items, depth + 1)) : [];
    case "integer":
    case "number":
      return schema.minimum ?? schema.exclusiveMinimum ?? 1;
    case "boolean":
      return true;
    case "string":
      if (schema.format === "email") return "a@example.com";
      if (schema.format === "uri" || schema.format === "url") return "https://example.com/x";
      return "x".repeat(Math.max(1, schema.minLength ?? 1));
    default:
      return "x";
  }
}

const LONE_SURROGATES = ["\uD800", "\uDFFF", "\uDBFF\uDC00x\uD83D", "a\u0000b", "\u202Eevil", "💥🏳️‍🌈", "\uFEFF"];

const unicodeString = fc
  .tuple(fc.string({ unit: "binary", maxLength: 40 }), fc.constantFrom(...LONE_SURROGATES), fc.string({ unit: "grapheme", maxLength: 20 }))
  .map(([a, b, c]) => a + b + c);

/** A value of a type other than the declared one. */
function wrongValue(schema: any): fc.Arbitrary<unknown> {
  const type = Array.isArray(schema?.type) ? schema.type[0] : schema?.type;
  const all: Array<fc.Arbitrary<unknown>> = [
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.constantFrom(Number.MAX_SAFE_INTEGER * 4, -1, 0, 1e308, -0.5),
    unicodeString,
    fc.array(fc.jsonValue(), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue(), { maxKeys: 4 }),
    fc.constantFrom("", " ", "null", "true", "1e999", "-1", "__proto__", "constructor", "../../etc/passwd", "<script>alert(1)</script>", "' OR 1=1 --"),
  ];
  const wrong = all.filter((_, i) => {
    if (type === "string") return i !== 5 && i !== 8;
    if (type === "integer" || type === "number") return i !== 2 && i !== 3 && i !== 4;
    if (type === "boolean") return i !== 1;
    if (type === "array") return i !== 6;
    if (type === "object") return i !== 7;
    return true;
  });
  return fc.oneof(...wrong);
}

function nest(depth: number, leaf: unknown, asArray: boolean): string {
  return asArray ? "[".repeat(depth) + JSON.stringify(leaf) + "]".repeat(depth) : '{"a":'.repeat(depth) + JSON.stringify(leaf) + "}".repeat(depth);
}

function bodyArbitrary(op: Operation): fc.Arbitrary<{ body?: string; contentType?: string }> {
  const json = op.bodyTypes[0] ?? "application/json";
  const base = (sample(op.bodySchema) ?? {}) as Body;
  const props: Array<[string, any]> = Object.entries(op.bodySchema?.properties ?? {});
  const withProp = (valueArb: (schema: any) => fc.Arbitrary<unknown>) =>
    props.length
      ? fc.constantFrom(...props).chain(([name, schema]) => valueArb(schema).map((value) => JSON.stringify({ ...base, [name]: value })))
      : valueArb({}).map((value) => JSON.stringify(value));
  const asJson = (arb: fc.Arbitrary<string>) => arb.map((body) => ({ body, contentType: json }));
  const ndjsonLines = fc.array(fc.oneof(fc.json(), fc.constant(JSON.stringify(base)), withProp(wrongValue), unicodeString), { maxLength: 20 });
  return fc.oneof(
    { weight: 4, arbitrary: asJson(withProp(wrongValue)) },
    { weight: 2, arbitrary: asJson(fc.json({ maxDepth: 4 })) },
    { weight: 2, arbitrary: asJson(fc.anything({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? "")) },
    { weight: 1, arbitrary: asJson(fc.nat().map((n) => JSON.stringify(base).slice(0, n % Math.max(1, JSON.stringify(base).length)))) },
    { weight: 1, arbitrary: asJson(withProp(() => unicodeString)) },
    { weight: 1, arbitrary: asJson(fc.constantFrom(...LONE_SURROGATES).map((s) => `{"message":"${s}","name":"${s}"}`)) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom(
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/xml",
            "application/json; charset=utf-16",
            "",
          ),
          fc.boolean(),
        )
        .map(([contentType, valid]) => ({ body: valid ? JSON.stringify(base) : "a=1&b=2", contentType })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { body: "", contentType: json },
        { body: undefined, contentType: undefined },
        { body: "null", contentType: json },
        { body: "   ", contentType: json },
      ),
    },
    { weight: 1, arbitrary: asJson(fc.tuple(fc.integer({ min: 900, max: 1100 }), fc.boolean()).map(([d, arr]) => nest(d, 1, arr))) },
    { weight: 1, arbitrary: asJson(withProp(() => fc.integer({ min: 900, max: 1100 }).map((d) => JSON.parse(nest(Math.min(d, 990), "x", false))))) },
    {
      weight: op.bodyTypes.includes("application/x-ndjson") ? 4 : 0,
      arbitrary: ndjsonLines.map((lines) => ({ body: lines.join("\n"), contentType: "application/x-ndjson" })),
    },
  );
}

function queryArbitrary(op: Operation): fc.Arbitrary<string> {
  const names = op.params.filter((p) => p.in === "query").map((p) => p.name);
  if (!names.length) return fc.constant("");
  const value = fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.integer().map(String),
    fc.constantFrom("-1", "0", "1e9", "NaN", "9999999999999999999999", "true", "", "%00", "2026-13-45", "1' OR '1'='1"),
    unicodeString,
  );
  return fc
    .array(fc.tuple(fc.constantFrom(...names, "unknown_param"), value), { maxLength: 5 })
    .map((pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v.replace(/[\uD800-\uDFFF]/g, "?"))}`).join("&"));
}

/** Path parameters: mostly the fixture's real ids (to reach the handlers), sometimes garbage. */
function pathArbitrary(op: Operation): fc.Arbitrary<string> {
  const names = op.params.filter((p) => p.in === "path").map((p) => p.name);
  // Operations that would destroy the fixture (or rotate its token) only ever get unknown ids.
  const destructive = op.method === "DELETE" || op.path.endsWith("/rotate-token") || op.path.startsWith("/api/v1/admin");
  const garbage = fc.oneof(
    fc.uuid(),
    fc.string({ minLength: 1, maxLength: 30 }),
    fc.constantFrom("..", "%2e%2e", "0", "-1", "null", "x".repeat(2000), "' OR 1=1 --", "\u0000"),
    unicodeString,
  );
  return fc.array(fc.tuple(fc.boolean(), garbage), { minLength: names.length, maxLength: names.length }).map((choices) => {
    const values: Record<string, string> = {};
    names.forEach((name, i) => {
      const real = A.ids[paramKind(op.path, name, op.security === null)];
      const [useReal, junk] = choices[i];
      values[name] = !destructive && real && useReal ? real : junk.replace(/[\uD800-\uDFFF]/g, "?") || "x";
    });
    return fillPath(op.path, (name) => values[name]);
  });
}

function credential(op: Operation): string | null {
  if (op.security === "bearerAuth") return A.team.key;
  if (op.security === "ingestToken") return A.ids.ingestToken;
  if (op.security === "adminToken") return ADMIN_TOKEN;
  return null;
}

async function send(op: Operation, req: FuzzRequest): Promise<void> {
  const method = op.method;
  const url = `${req.path}${req.query ? `?${req.query}` : ""}`;
  const headers: Record<string, string> = {};
  if (req.contentType) headers["content-type"] = req.contentType;
  const options: RequestOptions = { key: credential(op), ip: anyIp(), headers };
  if (req.body !== undefined && method !== "GET" && method !== "DELETE") options.raw = req.body as BodyInit;
  const res = await call(method, url, options);
  const text = await answerText(res);
  requests++;
  statusCounts.set(res.status, (statusCounts.get(res.status) ?? 0) + 1);
  // The shape is chosen by the path the Worker sees: `..` segments are resolved by URL parsing.
  const seen = new URL(req.path.startsWith("/") ? req.path : `/api/v1/${req.path}`, "http://app.test").pathname;
  checkAnswer(
    `${method} ${url.slice(0, 200)} [${req.contentType ?? "-"}] ${typeof req.body === "string" ? req.body.slice(0, 200) : ""}`,
    seen,
    res.status,
    res.headers.get("content-type") ?? "",
    text,
  );
}

beforeAll(async () => {
  ({ operations } = await loadOperations());
  A = await buildFixture("enterprise");
}, 60_000);

afterAll(() => {
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const statuses = [...statusCounts.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([s, n]) => `${s}:${n}`)
    .join(" ");
  console.log(`[fuzz] ${requests} requests over ${operations.length} operations in ${seconds} s; statuses ${statuses}`);
});

describe("fuzzing every operation of the OpenAPI document", () => {
  it("covers every operation", () => {
    expect(operations.length).toBeGreaterThan(80);
  });

  // First, while the team's `flags` strict family (30 a minute) is still open: the fuzz below spends it.
  it("an OFREP evaluation's refusal is checked in OFREP's shape (the full fuzz's counterexample, seed 3917083)", async () => {
    const op = operations.find((o) => o.method === "POST" && o.path === "/ofrep/v1/evaluate/flags/{key}")!;
    const path = "/ofrep/v1/evaluate/flags/%0B%3F%3F%3F%3F%EF%B8%8F%E2%80%8D%3F%3F%3F%3F%3F%3F%3F%3F.%3F%3F%E1%97%88%3F%3F%3F%3F%3F%3F%3F%3F%EA%8F%BE";
    const before = statusCounts.get(404) ?? 0;
    await send(op, { path, query: "", body: "   ", contentType: "application/json" });
    expect(statusCounts.get(404) ?? 0).toBe(before + 1);
  });

  it(`${TARGET}+ generated requests: no 5xx, no stack trace, no secret, each error in its product's shape`, { timeout: 170_000 }, async () => {
    const runs = Math.ceil(TARGET / operations.length);
    for (const op of operations) {
      const arbitrary = fc.record({
        path: pathArbitrary(op),
        query: queryArbitrary(op),
        body:
          op.bodyTypes.length || op.method === "POST" || op.method === "PATCH" || op.method === "PUT"
            ? bodyArbitrary(op)
            : fc.constant({ body: undefined, contentType: undefined }),
      });
      await fc.assert(
        fc.asyncProperty(arbitrary, async ({ path, query, body }) => {
          await send(op, { path, query, body: body.body, contentType: body.contentType });
        }),
        { numRuns: runs, endOnFailure: true, verbose: 1 },
      );
    }
    expect(requests).toBeGreaterThanOrEqual(TARGET);
  });

  it("huge strings (~100 KB per property) and huge bodies (~2 MB) on every operation with a body", { timeout: 120_000 }, async () => {
    const before = requests;
    const huge = "é".repeat(50_000) + "x".repeat(1_000);
    for (const op of operations.filter((op) => op.bodyTypes.length)) {
      const base = (sample(op.bodySchema) ?? {}) as Body;
      const path = fillPath(op.path, (name) =>
        op.method === "DELETE" ? crypto.randomUUID() : (A.ids[paramKind(op.path, name, op.security === null)] ?? crypto.randomUUID()),
      );
      const type = op.bodyTypes[0];
      const props = Object.keys(op.bodySchema?.properties ?? {}).slice(0, 6);
      for (const name of props) await send(op, { path, query: "", body: JSON.stringify({ ...base, [name]: huge }), contentType: type });
      const bigArray = JSON.stringify({ ...base, [props[0] ?? "x"]: Array.from({ length: 60_000 }, (_, i) => `item-${i}-${"y".repeat(20)}`) });
      await send(op, { path, query: "", body: bigArray, contentType: type });
      const twoMb = type === "application/x-ndjson" ? (JSON.stringify({ message: "m".repeat(1000) }) + "\n").repeat(2100) : bigArray;
      await send(op, { path, query: "", body: new TextEncoder().encode(twoMb), contentType: type });
    }
    expect(requests - before).toBeGreaterThan(150);
  });

  it("nesting at SQLite's JSON depth limit (1000) in stored JSON fields: log metadata, survey settings, push data", async () => {
    const ops = new Map(operations.map((op) => [routeKey(op), op]));
    const deep = (depth: number) => JSON.parse(nest(depth, "x", false));
    for (const depth of [998, 999, 1000, 1001, 1500]) {
      await send(ops.get("POST /api/v1/logs/ingest")!, {
        path: "/api/v1/logs/ingest",
        query: "",
        body: JSON.stringify({ message: "deep", metadata: deep(depth) }),
        contentType: "application/json",
      });
      await send(ops.get("POST /api/v1/logs/ingest/batch")!, {
        path: "/api/v1/logs/ingest/batch",
        query: "",
        body: `${JSON.stringify({ message: "deep", metadata: deep(depth) })}\n{"message":"fine"}`,
        contentType: "application/x-ndjson",
      });
      await send(ops.get("POST /api/v1/surveys")!, {
        path: "/api/v1/surveys",
        query: "",
        body: JSON.stringify({ name: "deep", slug: `deep-${crypto.randomUUID().slice(0, 8)}`, settings: deep(depth) }),
        contentType: "application/json",
      });
      await send(ops.get("PATCH /api/v1/push/apps/{app_id}")!, {
        path: `/api/v1/push/apps/${A.ids.pushApp}`,
        query: "",
        body: JSON.stringify({ settings: { extra: deep(depth) } }),
        contentType: "application/json",
      });
      await send(ops.get("POST /api/v1/push/apps/{app_id}/notifications")!, {
        path: `/api/v1/push/apps/${A.ids.pushApp}/notifications`,
        query: "",
        body: JSON.stringify({ title: "t", body: "b", data: deep(depth) }),
        contentType: "application/json",
      });
      await send(ops.get("POST /api/v1/webhooks/sources")!, {
        path: "/api/v1/webhooks/sources",
        query: "",
        body: JSON.stringify({ name: deep(depth), provider: "generic" }),
        contentType: "application/json",
      });
    }
  });

  it("the shape predicates reject bodies outside the documented shapes (the checks can fail)", () => {
    const bad: Array<[string, number, unknown]> = [
      ["/api/v1/orgs/x/projects/y/audit/findings", 422, { error: "Validation failed", details: {} }],
      ["/api/v1/surveys", 422, { error: "Validation failed", details: { a: ["b"] } }],
      ["/api/v1/push/apps", 422, { error: "Validation failed", errors: { a: ["b"] } }],
      ["/api/v1/logs/ingest", 422, { error: "x", details: { a: ["b"] } }],
      ["/api/v1/emails", 500, { error: "Internal server error" }],
      ["/api/v1/push/apps", 404, { error: "x", stack: "Error: x\n    at f (src/a.ts:1:2)" }],
    ];
    for (const [path, status, body] of bad) {
      expect(() => checkAnswer("probe", path, status, "application/json", JSON.stringify(body))).toThrow();
    }
    expect(() => checkAnswer("probe", "/api/v1/emails", 422, "application/json", JSON.stringify({ error: "x", code: "invalid_stream" }))).not.toThrow();
  });
});
