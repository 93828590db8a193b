// The client API and OFREP: client keys see only the client-side flags of their environment, the
// buckets flags_client_ip then flags_client, CORS preflights uncounted, ETag/304 without a unit,
// OFREP's shapes and TARGETING_KEY_MISSING, credential confusion both ways, revocation at once.
import { env } from "cloudflare:test";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { setClock } from "../../../src/platform/clock";
import { unlimitedUnitsSettled } from "../../../src/platform/quota";
import { getMeter } from "../../../src/platform/rate-limit/limiter";
import { call, expectError, json } from "../../helpers/api";
import { failMeterUnits, ipCounter } from "../../helpers/usage";
import { createClientKey, createFlag, flagsTeam } from "./flags-helpers";

const rollout = {
  rollout: {
    variations: [
      { variant: "on", weight: 50_000 },
      { variant: "off", weight: 50_000 },
    ],
  },
};

async function team(plan?: string) {
  const t = await flagsTeam({ plan });
  await createFlag(t.key, { key: "public-banner", client_side: true, environments: { production: { enabled: true } } });
  await createFlag(t.key, { key: "server-only", environments: { production: { enabled: true } } });
  await createFlag(t.key, { key: "by-key", client_side: true, environments: { production: { enabled: true, fallthrough: rollout } } });
  const client = await createClientKey(t.key, "production", { name: "web" });
  return { ...t, client };
}

describe("flags: client API", () => {
  it("a client key is shown once, listed by prefix, and bootstraps the client-side flags only", async () => {
    const t = await team();
    expect(t.client.key).toMatch(/^fck_[A-Za-z0-9_-]{43}$/);
    const list = (await json(await call("GET", "flags/environments/production/client-keys", { key: t.key }))).data;
    expect(list).toEqual([expect.objectContaining({ id: t.client.id, name: "web", prefix: t.client.key.slice(0, 10) })]);
    expect(JSON.stringify(list)).not.toContain(t.client.key);

    const res = await call("POST", "flags/client/bootstrap", { key: t.client.key, body: { context: { key: "u1" } } });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBe("6000"); // flags_client at the pro plan's rate × 60
    const body = await json(res);
    expect(body.flags.map((f: { key: string }) => f.key)).toEqual(["by-key", "public-banner"]);
    expect(body.flags[1]).toEqual({ key: "public-banner", value: true, reason: "DEFAULT", variant: "on", metadata: { version: 1 } });
    // Without a key a rollout by key serves the first variation here (OFREP says TARGETING_KEY_MISSING).
    const keyless = await json(await call("POST", "flags/client/bootstrap", { key: t.client.key, body: { context: {} } }));
    expect(keyless.flags[0]).toMatchObject({ key: "by-key", errorCode: "TARGETING_KEY_MISSING" });
  });

  it("ETag: the same context and no change answers 304, spending no unit", async () => {
    const t = await team();
    const first = await call("POST", "flags/client/bootstrap", { key: t.client.key, body: { context: { key: "u1" } } });
    const etag = first.headers.get("etag")!;
    const usage = async () => (await json(await call("GET", "usage", { key: t.key }))).data.services.flags.used;
    const before = await usage();
    const again = await call("POST", "flags/client/bootstrap", { key: t.client.key, body: { context: { key: "u1" } }, headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(await usage()).toBe(before);
    const other = await call("POST", "flags/client/bootstrap", { key: t.client.key, body: { context: { key: "u2" } }, headers: { "if-none-match": etag } });
    expect(other.status).toBe(200);
    expect(await usage()).toBe(before + 1);
    await call("PATCH", "flags/public-banner", { key: t.key, body: { environments: { production: { enabled: false } } } });
    const changed = await call("POST", "flags/client/bootstrap", { key: t.client.key, body: { context: { key: "u1" } }, headers: { "if-none-match": etag } });
    expect(changed.status).toBe(200);
  });

  it("an unlimited plan's units wait for no meter call: concurrent bootstraps, a 304 and a refused origin cost exactly what they did, in a batch", async () => {
    const t = await team("enterprise");
    const usage = async () => {
      await unlimitedUnitsSettled(env);
      return (await json(await call("GET", "usage", { key: t.key }))).data.services.flags;
    };
    expect(await usage()).toMatchObject({ used: 0, limit: null });
    const meter = getMeter(env);
    const ask = vi.spyOn(meter, "ask");
    onTestFinished(() => ask.mockRestore());
    const unitsAsked = () => ask.mock.calls.filter(([, , item]) => item.quota?.service === "flags");

    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => call("POST", "flags/client/bootstrap", { key: t.client.key, body: { context: { key: `u${i}` } } })),
    );
    expect(answers.map((res) => res.status)).toEqual(Array(40).fill(200));
    // The answers were given before any unit reached the meter: the units wait in the batch.
    const asked = unitsAsked().length;
    expect(asked).toBeLessThan(40);
    const first = answers[0]!;
    const again = await call("POST", "flags/client/bootstrap", {
      key: t.client.key,
      body: { context: { key: "u0" } },
      headers: { "if-none-match": first.headers.get("etag")! },
    });
    expect(again.status).toBe(304);
    const limited = await createClientKey(t.key, "production", { allowed_origins: ["https://app.example.com"] });
    const refused = await call("POST", "flags/client/bootstrap", { key: limited.key, body: { context: {} }, headers: { origin: "https://elsewhere.example" } });
    expect(refused.status).toBe(403);
    const ofrep = await call("POST", "/ofrep/v1/evaluate/flags/public-banner", { key: t.client.key, body: { context: { targetingKey: "u1" } } });
    expect(ofrep.status).toBe(200);
    // The team key's evaluation spends its unit the same way.
    const evaluated = await call("POST", "flags/evaluate", { key: t.key, body: { environment: "production", context: { key: "u1" } } });
    expect(evaluated.status).toBe(200);
    expect(await usage()).toMatchObject({ used: 42, limit: null });
    // Every unit reached the meter in sums, never one call a request.
    const amounts = unitsAsked().map(([, , item]) => item.quota!.amount);
    expect(amounts.reduce((a, b) => a + b, 0)).toBe(42);
    expect(amounts.length).toBeLessThan(42);
  });

  it("an unlimited plan's batch the meter cannot take is logged; the answers stand", async () => {
    const t = await team("enterprise");
    const { errors } = failMeterUnits("flags", { givesBack: true });
    const res = await call("POST", "flags/client/bootstrap", { key: t.client.key, body: { context: { key: "u1" } } });
    expect(res.status).toBe(200);
    await unlimitedUnitsSettled(env);
    expect(errors.mock.calls.map((args) => String(args[0]))).toContainEqual(expect.stringContaining("unlimited units: batch not written"));
  });

  it("credential confusion: a team key answers 401 on client endpoints, a client key 401 on server endpoints", async () => {
    const t = await team();
    await expectError(await call("POST", "flags/client/bootstrap", { key: t.key, body: { context: { key: "u" } } }), 401, {
      error: "Invalid or missing client key",
    });
    await expectError(await call("POST", "flags/evaluate", { key: t.client.key, body: { environment: "production", context: {} } }), 401, {
      error: "Invalid or missing API key",
    });
    await expectError(await call("GET", "flags", { key: t.client.key }), 401, { error: "Invalid or missing API key" });
    await expectError(await call("POST", "flags/client/bootstrap", { body: { context: {} } }), 401, { error: "Invalid or missing client key" });
  });

  it("a deleted client key is refused at once", async () => {
    const t = await team();
    expect((await call("POST", "flags/client/bootstrap", { key: t.client.key, body: { context: {} } })).status).toBe(200);
    expect((await call("DELETE", `flags/environments/production/client-keys/${t.client.id}`, { key: t.key })).status).toBe(204);
    await expectError(await call("POST", "flags/client/bootstrap", { key: t.client.key, body: { context: {} } }), 401, {
      error: "Invalid or missing client key",
    });
  });

  it("CORS: a preflight from any origin is answered uncounted; allowed_origins refuses other origins", async () => {
    const t = await team();
    const pre = await call("OPTIONS", "flags/client/bootstrap", { headers: { origin: "https://anywhere.example", "access-control-request-method": "POST" } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("https://anywhere.example");
    expect(pre.headers.get("x-ratelimit-limit")).toBeNull();
    const limited = await createClientKey(t.key, "production", { allowed_origins: ["https://app.example.com"] });
    const ok = await call("POST", "flags/client/bootstrap", { key: limited.key, body: { context: {} }, headers: { origin: "https://app.example.com" } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    await expectError(
      await call("POST", "flags/client/bootstrap", { key: limited.key, body: { context: {} }, headers: { origin: "https://evil.example" } }),
      403,
      {
        error: "Origin not allowed for this client key",
      },
    );
  });

  it("flags_client_ip counts per client network before the key: 120 per window, then 429 with Retry-After", async () => {
    // One window for the whole test, whatever the real clock does meanwhile.
    setClock(Date.UTC(2031, 6, 1, 9, 0, 1));
    onTestFinished(() => setClock(null));
    const t = await team();
    const ip = "198.51.100.7";
    for (let i = 0; i < 120; i++) {
      const res = await call("POST", "flags/client/track", { key: t.client.key, ip, body: { events: [{ kind: "custom", name: "n", context_key: "u" }] } });
      expect(res.status).toBe(202);
    }
    const refused = await call("POST", "flags/client/track", { key: "fck_wrong", ip, body: { events: [{ kind: "custom", name: "n", context_key: "u" }] } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    // Another network is not affected, and the team's default bucket was never counted.
    expect((await call("POST", "flags/client/bootstrap", { key: t.client.key, body: { context: {} } })).status).toBe(200);
    const usage = await call("GET", "usage", { key: t.key });
    // Counted in the default bucket: the setup (three flags and a client key) and this read; none of the client calls.
    expect(Number(usage.headers.get("x-ratelimit-remaining"))).toBe(5995);
  });

  it("flags_client_ip counts an IPv6 client by its /64: a full /64 is refused from any of its addresses, the next /64 is not", async () => {
    setClock(Date.UTC(2031, 6, 1, 9, 0, 1));
    onTestFinished(() => setClock(null));
    const t = await team();
    await ipCounter("flags_client_ip", "2001:db8:72:1::1").hit(Date.UTC(2031, 6, 1, 9, 0, 0) / 1000, 120);
    const body = { context: { targetingKey: "u" } };
    expect((await call("POST", "flags/client/bootstrap", { key: t.client.key, ip: "2001:db8:72:1:ffff::2", body })).status).toBe(429);
    expect((await call("POST", "flags/client/bootstrap", { key: t.client.key, ip: "2001:db8:72:2::1", body })).status).toBe(200);
  });

  it("track: exposures count in insights for client-side flags only, never marking a flag fresh", async () => {
    const t = await team();
    const res = await call("POST", "flags/client/track", {
      key: t.client.key,
      body: {
        events: [
          { kind: "exposure", flag: "public-banner", variant: "on", context_key: "u1" },
          { kind: "exposure", flag: "server-only", variant: "on", context_key: "u1" },
          { kind: "exposure", flag: "nope", variant: "on", context_key: "u1" },
        ],
      },
    });
    expect(res.status).toBe(202);
    expect((await json(res)).accepted).toBe(1);
    const { flushInsights } = await import("../../../src/products/flags/flags.insights");
    const { env } = await import("cloudflare:test");
    await flushInsights(env);
    const insights = (await json(await call("GET", "flags/public-banner/insights", { key: t.key }))).data;
    expect(insights.last_evaluated_at).toBeNull();
    expect(insights.hours).toEqual([expect.objectContaining({ environment: "production", variant: "on", exposures: 1 })]);
    await expectError(await call("POST", "flags/client/track", { key: t.client.key, body: { events: [] } }), 422, {
      error: "Validation failed",
      details: { events: ["must have at least one event"] },
    });
  });
});

describe("flags: OFREP", () => {
  it("single evaluation with either credential, in OFREP's shapes", async () => {
    const t = await team();
    let res = await call("POST", "/ofrep/v1/evaluate/flags/server-only", { key: t.key, body: { context: { targetingKey: "u1" } } });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ key: "server-only", value: true, reason: "DEFAULT", variant: "on", metadata: { version: 1 } });
    // A client key sees client-side flags only.
    await expectError(await call("POST", "/ofrep/v1/evaluate/flags/server-only", { key: t.client.key, body: { context: { targetingKey: "u1" } } }), 404, {
      key: "server-only",
      errorCode: "FLAG_NOT_FOUND",
      errorDetails: "flag not found",
    });
    res = await call("POST", "/ofrep/v1/evaluate/flags/by-key", { key: t.client.key, body: { context: { targetingKey: "u1" } } });
    expect((await json(res)).reason).toBe("SPLIT");
    await expectError(await call("POST", "/ofrep/v1/evaluate/flags/by-key", { key: t.key, body: { context: { plan: "x" } } }), 400, {
      key: "by-key",
      errorCode: "TARGETING_KEY_MISSING",
      errorDetails: "flag by-key is a rollout by the context's key: send targetingKey",
    });
    await expectError(
      await call("POST", "/ofrep/v1/evaluate/flags/by-key", { key: t.key, raw: "{not json", headers: { "content-type": "application/json" } }),
      400,
      {
        key: "by-key",
        errorCode: "PARSE_ERROR",
        errorDetails: "the body is not JSON",
      },
    );
    await expectError(await call("POST", "/ofrep/v1/evaluate/flags/by-key", { key: t.key, body: { context: [1] } }), 400, {
      key: "by-key",
      errorCode: "INVALID_CONTEXT",
      errorDetails: "context must be an object",
    });
    // X-Environment chooses the team key's environment: development was never configured.
    res = await call("POST", "/ofrep/v1/evaluate/flags/server-only", {
      key: t.key,
      body: { context: { targetingKey: "u1" } },
      headers: { "x-environment": "development" },
    });
    expect((await json(res)).reason).toBe("DISABLED");
  });

  it("bulk with ETag/304; a key without flags:read is refused; no key 401", async () => {
    const t = await team();
    const res = await call("POST", "/ofrep/v1/evaluate/flags", { key: t.key, body: { context: { targetingKey: "u1" } } });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.flags.map((f: { key: string }) => f.key)).toEqual(["by-key", "public-banner", "server-only"]);
    const again = await call("POST", "/ofrep/v1/evaluate/flags", {
      key: t.key,
      body: { context: { targetingKey: "u1" } },
      headers: { "if-none-match": res.headers.get("etag")! },
    });
    expect(again.status).toBe(304);
    const { addKey } = await import("../../helpers/api");
    const other = await addKey(t.teamId, ["logs:read"]);
    await expectError(await call("POST", "/ofrep/v1/evaluate/flags", { key: other.key, body: {} }), 403, { error: "Insufficient scope" });
    await expectError(await call("POST", "/ofrep/v1/evaluate/flags", { body: {} }), 401, { error: "Invalid or missing API key" });
  });
});
