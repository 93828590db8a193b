// The client package (clients/typescript): its committed document is the app's and its committed
// types are generated from that document; its createClient against a local HTTP server (the key,
// Idempotency-Key on POSTs kept across retries, retries of 429 and 5xx with Retry-After honoured,
// none of 4xx, network failures, orThrow); and the e2e module that drives it fails to compile when
// the document changes under it (types generated from altered copies). Needs the tools of
// clients/typescript (`npm ci --prefix clients/typescript`, as CI does); skipped without them.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { buildOpenApiDocument } from "../lib/openapi-document.mjs";
import { checkTypedClient, clientToolsInstalled, COMMITTED_DOCUMENT, COMMITTED_TYPES, documentText, generateTypes } from "../lib/typed-client.mjs";

const skip = clientToolsInstalled() ? false : "clients/typescript is not installed (npm ci --prefix clients/typescript)";

/** Compiles against `doc`; returns the compiler's complaint, or null when it compiles. */
function compile(doc) {
  try {
    checkTypedClient(JSON.stringify(doc));
    return null;
  } catch (error) {
    return String(error.message);
  }
}

test("the typed client compiles against the document, and not against a document that breaks it", { skip, timeout: 180_000 }, async () => {
  const doc = await buildOpenApiDocument();
  assert.equal(compile(doc), null);

  const changes = {
    "a path renamed": (d) => {
      d.paths["/api/v1/logs/project-list"] = d.paths["/api/v1/logs/projects"];
      delete d.paths["/api/v1/logs/projects"];
    },
    "a response field renamed": (d) => {
      const schema = d.components.schemas.LogProjectWithToken.allOf[1];
      schema.properties.token = schema.properties.ingest_token;
      delete schema.properties.ingest_token;
      schema.required = ["token"];
    },
    "a new required body field": (d) => {
      d.components.schemas.CreateSurvey.properties.owner = { type: "string" };
      d.components.schemas.CreateSurvey.required.push("owner");
    },
    "a path parameter renamed": (d) => {
      const item = d.paths["/api/v1/surveys/{survey}/responses"];
      for (const op of [item.get, item.post]) for (const p of op.parameters) if (p.name === "survey") p.name = "slug";
      d.paths["/api/v1/surveys/{slug}/responses"] = item;
      delete d.paths["/api/v1/surveys/{survey}/responses"];
    },
  };
  for (const [name, change] of Object.entries(changes)) {
    const altered = structuredClone(doc);
    change(altered);
    const complaint = compile(altered);
    assert.ok(complaint, `${name}: the typed client still compiled`);
    assert.match(complaint, /typed-client\.mjs\(\d+,\d+\): error TS/, `${name}: ${complaint}`);
  }
});

test("the committed document is the app's, and the committed types are generated from it (else: npm run client:update)", {
  skip,
  timeout: 180_000,
}, async () => {
  const committed = readFileSync(COMMITTED_DOCUMENT, "utf8");
  assert.ok(committed === documentText(await buildOpenApiDocument()), "clients/typescript/openapi.json is stale: run `npm run client:update`");
  const dir = mkdtempSync(join(tmpdir(), "edge-client-types-"));
  try {
    generateTypes(committed, join(dir, "schema.d.ts"));
    assert.ok(
      readFileSync(join(dir, "schema.d.ts"), "utf8") === readFileSync(COMMITTED_TYPES, "utf8"),
      "clients/typescript/schema.d.ts is stale: run `npm run client:update`",
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the package names its entry points and depends on openapi-fetch", () => {
  const pkg = JSON.parse(readFileSync(new URL("../../clients/typescript/package.json", import.meta.url), "utf8"));
  assert.equal(pkg.name, "@edge-platform/client");
  assert.deepEqual(pkg.exports["."], { types: "./index.d.ts", default: "./index.js" });
  assert.ok(pkg.dependencies["openapi-fetch"]);
  for (const file of ["index.js", "index.d.ts", "schema.d.ts", "openapi.json"]) assert.ok(pkg.files.includes(file), file);
});

describe("createClient against a local server", { skip }, () => {
  /** Each request the server saw: method, url, authorization, idempotency-key. */
  let seen = [];
  /** Answers to give, in order (then 200 {data: {ok: true}}). */
  let script = [];
  let server;
  let url;
  let client;
  before(async () => {
    client = await import("../../clients/typescript/index.js");
    server = createServer((req, res) => {
      seen.push({ method: req.method, url: req.url, authorization: req.headers.authorization, key: req.headers["idempotency-key"] });
      const next = script.shift() ?? { status: 200, body: { data: { ok: true } } };
      if (next.hangUp) return req.socket.destroy();
      res.writeHead(next.status, { "content-type": "application/json", "x-request-id": "req-1", ...next.headers });
      res.end(JSON.stringify(next.body));
    });
    await new Promise((done) => server.listen(0, "127.0.0.1", done));
    url = `http://127.0.0.1:${server.address().port}`;
  });
  after(() => server.close());
  const reset = (answers) => {
    seen = [];
    script = answers;
  };

  test("sends the key, and one Idempotency-Key on a POST, the same on every retry of a 5xx", async () => {
    reset([
      { status: 503, body: { error: "Log storage temporarily unavailable" } },
      { status: 502, body: { error: "x" } },
    ]);
    const api = client.createClient(`${url}/`, "edp_test", { baseDelayMs: 5 });
    const result = await api.POST("/api/v1/logs/projects", { body: { name: "api" } });
    assert.equal(result.response.status, 200);
    assert.deepEqual(result.data, { data: { ok: true } });
    assert.equal(seen.length, 3);
    assert.ok(seen.every((r) => r.authorization === "Bearer edp_test" && r.url === "/api/v1/logs/projects"));
    assert.match(seen[0].key, /^[0-9a-f-]{36}$/);
    assert.ok(seen.every((r) => r.key === seen[0].key));
  });

  test("a GET carries no Idempotency-Key; a caller's own key is kept", async () => {
    reset([]);
    const api = client.createClient(url, "edp_test");
    await api.GET("/api/v1/usage");
    await api.POST("/api/v1/surveys", { body: { name: "s", slug: "s" }, headers: { "idempotency-key": "mine-1" } });
    assert.equal(seen[0].key, undefined);
    assert.equal(seen[1].key, "mine-1");
  });

  test("honours Retry-After on a 429, then succeeds", async () => {
    reset([{ status: 429, body: { error: "Rate limit exceeded", retry_after: 1 }, headers: { "retry-after": "1" } }]);
    const api = client.createClient(url, "edp_test", { baseDelayMs: 5 });
    const result = await api.GET("/api/v1/usage");
    assert.equal(result.response.status, 200);
    assert.equal(seen.length, 2);
    // The wait is the server's Retry-After, not the backoff (capped by maxDelayMs).
    const options = { retries: 3, baseDelayMs: 5, maxDelayMs: 30_000 };
    assert.equal(client.retryDelay(1, new Response(null, { headers: { "retry-after": "7" } }), options), 7000);
    assert.equal(client.retryDelay(1, new Response(null, { headers: { "retry-after": "90" } }), options), 30_000);
    const backoff = client.retryDelay(3, new Response(null, { status: 503 }), options);
    assert.ok(backoff >= 10 && backoff <= 20, `third retry backs off within [10, 20] ms: ${backoff}`);
  });

  test("does not retry 400, 401, 403, 404 or 422", async () => {
    for (const status of [400, 401, 403, 404, 422]) {
      reset([{ status, body: { error: "no" } }]);
      const result = await client.createClient(url, "edp_test", { baseDelayMs: 5 }).POST("/api/v1/surveys", { body: { name: "s", slug: "s" } });
      assert.equal(result.response.status, status);
      assert.deepEqual(result.error, { error: "no" });
      assert.equal(seen.length, 1, `status ${status} was retried`);
    }
  });

  test("gives up after `retries` and answers the last failure; retries a dropped connection", async () => {
    reset([500, 500, 500].map((status) => ({ status, body: { error: "Internal server error" } })));
    const result = await client.createClient(url, "edp_test", { retries: 2, baseDelayMs: 5 }).GET("/api/v1/usage");
    assert.equal(result.response.status, 500);
    assert.equal(seen.length, 3);

    reset([{ hangUp: true }]);
    const recovered = await client.createClient(url, "edp_test", { baseDelayMs: 5 }).GET("/api/v1/usage");
    assert.equal(recovered.response.status, 200);
    assert.equal(seen.length, 2);
  });

  test("orThrow returns the data, or throws EdgePlatformError with the status, body, request id and Retry-After", async () => {
    reset([]);
    const api = client.createClient(url, "edp_test", { retries: 0 });
    assert.deepEqual(await client.orThrow(api.GET("/api/v1/usage")), { data: { ok: true } });
    reset([{ status: 429, body: { error: "Rate limit exceeded", retry_after: 12 }, headers: { "retry-after": "12" } }]);
    await assert.rejects(client.orThrow(api.GET("/api/v1/usage")), (error) => {
      assert.ok(error instanceof client.EdgePlatformError);
      assert.equal(error.status, 429);
      assert.equal(error.message, "429 Rate limit exceeded");
      assert.deepEqual(error.body, { error: "Rate limit exceeded", retry_after: 12 });
      assert.equal(error.requestId, "req-1");
      assert.equal(error.retryAfter, 12);
      return true;
    });
    reset([{ status: 404, body: { data: null, meta: { request_id: "r" }, error: { code: "not_found", message: "Not found" } } }]);
    await assert.rejects(client.orThrow(api.GET("/api/v1/usage")), /404 Not found/);
  });
});
