// The OpenFeature provider package (clients/openfeature) as built: its bundle holds the platform's
// own evaluator (esbuild's metafile names src/products/flags/evaluate.ts and sha1.ts as inputs;
// the package's sources define no evaluation of their own), and the shared vectors
// (test/products/flags/vectors.json) resolved through @openfeature/server-sdk and the package's
// server provider give the vectors' values, variants, reasons and versions. Then the provider's
// refresh against a local stand-in of the ruleset endpoint (ETag, 304 kept, a change emits
// ConfigurationChanged) and the web provider's bootstrap (ETag/304, a context change, exposures and
// custom events sent to track, errors mapped). The real server is the e2e suite `flags`.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { buildPackage, DIST, PACKAGE_DIR, ROOT } from "../../clients/openfeature/build.mjs";

const vectors = JSON.parse(readFileSync(join(ROOT, "test", "products", "flags", "vectors.json"), "utf8"));
let metafile;
let server;
let web;

/** A local HTTP server answering `handler(req, body)` → { status, headers, body }; records what it saw. */
async function stubServer(handler) {
  const seen = [];
  const http = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      const answer = handler(req, body);
      res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
      res.end(answer.body === undefined ? undefined : JSON.stringify(answer.body));
    });
  });
  await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${http.address().port}`, seen, close: () => new Promise((resolve) => http.close(resolve)) };
}

before(async () => {
  metafile = await buildPackage({ types: false });
  server = await import(pathToFileURL(join(DIST, "server.js")).href);
  web = await import(pathToFileURL(join(DIST, "web.js")).href);
});

describe("the bundle runs the platform's evaluator", () => {
  test("dist/server.js is built from src/products/flags/evaluate.ts and sha1.ts", () => {
    const inputs = Object.keys(metafile.outputs[Object.keys(metafile.outputs).find((o) => o.endsWith("server.js"))].inputs);
    assert.ok(
      inputs.some((i) => i.endsWith("src/products/flags/evaluate.ts") && !i.includes("clients/")),
      inputs.join(", "),
    );
    assert.ok(inputs.some((i) => i.endsWith("src/products/flags/sha1.ts") && !i.includes("clients/")));
    // The package's own sources hash and bucket nothing: the evaluation is the bundled one.
    for (const file of readdirSync(join(PACKAGE_DIR, "src"))) {
      const text = readFileSync(join(PACKAGE_DIR, "src", file), "utf8");
      assert.doesNotMatch(
        text,
        /sha1|parseInt\(|createHash|subtle\.digest|semver|function\s+(bucket|evaluate|match)/i,
        `clients/openfeature/src/${file} evaluates on its own`,
      );
    }
  });
});

describe("the shared vectors through @openfeature/server-sdk and the server provider", () => {
  let OpenFeature;
  let client;
  let stub;
  let provider;
  let ruleset = vectors.ruleset;
  before(async () => {
    ({ OpenFeature } = await import("@openfeature/server-sdk"));
    stub = await stubServer((req) => {
      if (req.headers.authorization !== "Bearer edp_test") return { status: 401, body: { error: "Invalid or missing API key" } };
      if (!req.url.startsWith("/api/v1/flags/ruleset?environment=production")) return { status: 404, body: { error: "Not found" } };
      const etag = `"${ruleset.version}"`;
      if (req.headers["if-none-match"] === etag) return { status: 304, headers: { etag } };
      return { status: 200, headers: { etag }, body: { data: ruleset } };
    });
    provider = new server.EdgeFlagsProvider({ baseUrl: stub.url, apiKey: "edp_test", refreshIntervalMs: 0 });
    await OpenFeature.setProviderAndWait("vectors", provider);
    client = OpenFeature.getClient("vectors");
  });
  after(async () => {
    await OpenFeature.close();
    await stub.close();
  });

  const detailsOf = (flag, context, type) => {
    if (type === "boolean") return client.getBooleanDetails(flag, false, context);
    if (type === "number") return client.getNumberDetails(flag, -1, context);
    if (type === "json") return client.getObjectDetails(flag, { default: true }, context);
    return client.getStringDetails(flag, "default", context);
  };

  for (const vector of vectors.cases) {
    test(vector.name, async () => {
      const type = vectors.ruleset.flags[vector.flag]?.type ?? "string";
      const details = await detailsOf(vector.flag, vector.context, type);
      const { expected } = vector;
      if (expected.error_code === "FLAG_NOT_FOUND") {
        assert.equal(details.errorCode, "FLAG_NOT_FOUND");
        assert.equal(details.reason, "ERROR");
        assert.equal(details.value, "default");
      } else if (expected.bucket_missing === "key") {
        // As OFREP answers it: a rollout by key cannot place a context without one.
        assert.equal(details.errorCode, "TARGETING_KEY_MISSING");
        assert.equal(details.reason, "ERROR");
      } else {
        assert.equal(details.errorCode, undefined, details.errorMessage);
        assert.deepEqual(details.value, expected.value);
        assert.equal(details.variant, expected.variant);
        assert.equal(details.reason, expected.reason);
        assert.deepEqual(details.flagMetadata, { version: expected.version });
      }
    });
  }

  test("a value of another type than asked is TYPE_MISMATCH, with the default value", async () => {
    const details = await client.getBooleanDetails("targeting", true, { key: "u1" });
    assert.equal(details.errorCode, "TYPE_MISMATCH");
    assert.equal(details.value, true);
  });

  test("a Date in the context is compared as the ISO string the HTTP paths would receive", async () => {
    const at = new Date("2026-01-02T03:04:05.000Z");
    const details = await client.getStringDetails("targeting", "default", { key: "u1", country: "US", name: at });
    assert.equal(details.reason, "DEFAULT");
  });

  test("refresh: If-None-Match answered 304 keeps the ruleset; a new one emits ConfigurationChanged with the changed flags", async () => {
    const before = provider.stats;
    assert.equal(await provider.refresh(), false);
    assert.deepEqual(provider.stats, { ...before, notModified: before.notModified + 1 });
    assert.equal(stub.seen.at(-1).headers["if-none-match"], `"${vectors.ruleset.version}"`);

    const changes = [];
    const { ProviderEvents } = await import("@openfeature/server-sdk");
    client.addHandler(ProviderEvents.ConfigurationChanged, (event) => changes.push(event.flagsChanged));
    const next = structuredClone(vectors.ruleset);
    next.version += 1;
    next.flags["kill-switch"].version += 1;
    next.flags["kill-switch"].config.enabled = true;
    next.segments.beta.included.push("u-new");
    ruleset = next;
    assert.equal(await provider.refresh(), true);
    assert.equal(provider.rulesetVersion, next.version);
    assert.equal((await client.getBooleanDetails("kill-switch", false, { key: "u1" })).reason, "TARGETING_MATCH");
    assert.equal((await client.getStringDetails("targeting", "x", { key: "u-new", country: "US" })).variant, "silver");
    await new Promise((resolve) => setImmediate(resolve));
    // kill-switch moved; targeting uses the changed segment.
    assert.deepEqual(changes, [["kill-switch", "targeting"]]);
  });

  test("a failed first fetch leaves the provider in error; the first ruleset received makes it ready", async () => {
    let down = true;
    const flaky = await stubServer(() =>
      down ? { status: 503, body: { error: "down" } } : { status: 200, headers: { etag: '"7"' }, body: { data: vectors.ruleset } },
    );
    try {
      const late = new server.EdgeFlagsProvider({ baseUrl: flaky.url, apiKey: "edp_test", refreshIntervalMs: 0 });
      await assert.rejects(OpenFeature.setProviderAndWait("late", late), /503/);
      const lateClient = OpenFeature.getClient("late");
      assert.equal(lateClient.providerStatus, "ERROR");
      assert.equal((await lateClient.getBooleanDetails("kill-switch", true, { key: "u1" })).value, true);
      down = false;
      assert.equal(await late.refresh(), true);
      assert.equal(lateClient.providerStatus, "READY");
      assert.equal((await lateClient.getBooleanDetails("kill-switch", true, { key: "u1" })).reason, "DISABLED");
      // A failed refresh keeps the ruleset and marks it stale until the next success.
      down = true;
      await assert.rejects(late.refresh(), /503/);
      assert.equal(lateClient.providerStatus, "STALE");
      assert.equal((await lateClient.getBooleanDetails("kill-switch", true, { key: "u1" })).reason, "DISABLED");
      down = false;
      await late.refresh();
      assert.equal(lateClient.providerStatus, "READY");
      assert.deepEqual(late.stats, { fetched: 2, notModified: 0, failed: 2 });
    } finally {
      await flaky.close();
    }
  });

  test("a refused key is a fatal error at initialization", async () => {
    const bad = new server.EdgeFlagsProvider({ baseUrl: stub.url, apiKey: "edp_wrong", refreshIntervalMs: 0 });
    await assert.rejects(OpenFeature.setProviderAndWait("refused", bad), /401/);
    assert.equal(OpenFeature.getClient("refused").providerStatus, "FATAL");
  });
});

describe("the web provider over the client bootstrap", () => {
  let OpenFeature;
  let stub;
  let provider;
  let revision = 1;
  const entriesFor = (context) => [
    {
      key: "banner",
      value: context.targetingKey === "vip" ? "gold" : "plain",
      variant: context.targetingKey === "vip" ? "gold" : "plain",
      reason: "TARGETING_MATCH",
      metadata: { version: revision },
    },
    { key: "dark-mode", value: true, variant: "on", reason: "DEFAULT", metadata: { version: 1 } },
    { key: "rollout", errorCode: "TARGETING_KEY_MISSING", errorDetails: "send targetingKey" },
  ];
  before(async () => {
    ({ OpenFeature } = await import("@openfeature/web-sdk"));
    stub = await stubServer((req, body) => {
      if (req.headers.authorization !== "Bearer fck_test") return { status: 401, body: { error: "Invalid or missing client key" } };
      if (req.url === "/api/v1/flags/client/track") return { status: 202, body: { accepted: JSON.parse(body).events.length } };
      const { context } = JSON.parse(body);
      const etag = `"${revision}-${context.targetingKey ?? ""}"`;
      if (req.headers["if-none-match"] === etag) return { status: 304, headers: { etag } };
      return { status: 200, headers: { etag }, body: { flags: entriesFor(context) } };
    });
    provider = new web.EdgeFlagsWebProvider({ baseUrl: stub.url, clientKey: "fck_test", trackExposures: true, flushIntervalMs: 60_000 });
    await OpenFeature.setContext({ targetingKey: "user-1" });
    await OpenFeature.setProviderAndWait(provider);
  });
  after(async () => {
    await OpenFeature.close();
    await stub.close();
  });

  test("resolves from the bootstrap; unknown flags, error entries and other types map to OpenFeature's codes", () => {
    const client = OpenFeature.getClient();
    assert.deepEqual(client.getStringDetails("banner", "x"), {
      flagKey: "banner",
      flagMetadata: { version: 1 },
      value: "plain",
      variant: "plain",
      reason: "TARGETING_MATCH",
    });
    assert.equal(client.getBooleanValue("dark-mode", false), true);
    assert.equal(client.getBooleanDetails("nope", false).errorCode, "FLAG_NOT_FOUND");
    assert.equal(client.getBooleanDetails("rollout", false).errorCode, "TARGETING_KEY_MISSING");
    assert.equal(client.getNumberDetails("banner", 3).errorCode, "TYPE_MISMATCH");
    assert.deepEqual(JSON.parse(stub.seen[0].body), { context: { targetingKey: "user-1" } });
  });

  test("refresh sends If-None-Match (304 keeps the answers); a context change bootstraps again", async () => {
    assert.equal(await provider.refresh(), false);
    assert.equal(provider.stats.notModified, 1);
    revision = 2;
    assert.equal(await provider.refresh(), true);
    assert.deepEqual(OpenFeature.getClient().getStringDetails("banner", "x").flagMetadata, { version: 2 });
    await OpenFeature.setContext({ targetingKey: "vip" });
    assert.equal(OpenFeature.getClient().getStringValue("banner", "x"), "gold");
    assert.equal(stub.seen.at(-1).headers["if-none-match"], undefined);
  });

  test("a failed revalidation keeps the answers as stale; the next answer makes the provider ready", async () => {
    const client = OpenFeature.getClient();
    const realFetch = globalThis.fetch;
    const flaky = new web.EdgeFlagsWebProvider({
      baseUrl: stub.url,
      clientKey: "fck_test",
      fetch: (input, init) => (flaky.down ? Promise.reject(new Error("offline")) : realFetch(input, init)),
    });
    await OpenFeature.setProviderAndWait("flaky", flaky);
    const flakyClient = OpenFeature.getClient("flaky");
    flaky.down = true;
    await assert.rejects(flaky.refresh(), /offline/);
    assert.equal(flakyClient.providerStatus, "STALE");
    assert.equal(flakyClient.getStringValue("banner", "x"), "gold");
    flaky.down = false;
    await flaky.refresh();
    assert.equal(flakyClient.providerStatus, "READY");
    assert.equal(client.getStringValue("banner", "x"), "gold");
  });

  test("exposures (once per flag and variant for a context) and tracked events reach POST /flags/client/track", async () => {
    const client = OpenFeature.getClient();
    client.getStringValue("banner", "x");
    client.getStringValue("banner", "x");
    client.track("checkout", { value: 42 });
    await provider.flush();
    const sent = stub.seen.filter((r) => r.url === "/api/v1/flags/client/track").flatMap((r) => JSON.parse(r.body).events);
    const exposures = sent.filter((e) => e.kind === "exposure").map((e) => `${e.context_key}:${e.flag}:${e.variant}`);
    assert.deepEqual(exposures.sort(), ["user-1:banner:plain", "user-1:dark-mode:on", "vip:banner:gold"]);
    assert.deepEqual(
      sent.filter((e) => e.kind === "custom").map(({ name, context_key, value }) => ({ name, context_key, value })),
      [{ name: "checkout", context_key: "vip", value: 42 }],
    );
    assert.equal(provider.stats.tracked, sent.length);
  });
});
