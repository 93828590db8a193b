// Every error the push product answers: 404s, 422 validation bodies, the monthly quota, the
// strict bucket, malformed JSON, and the SSRF guard on subscriber endpoints.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, json, setupTeam } from "../../helpers/api";
import { setUsed, usedOf } from "../../helpers/usage";
import { nowMs, setClock } from "../../../src/platform/clock";
import { registerSubscriber } from "../../../src/products/push/push-subscribers.service";
import { generateVapidKeys } from "../../../src/products/push/vapid";
import { browserSubscription, createApp, subscribe, subscriptionJson } from "./push-helpers";

const APP_NOT_FOUND = { error: "App not found" };
const validation = (details: Record<string, string[]>) => ({ error: "Validation failed", details });

describe("push 404s", () => {
  it("answers App not found on every route of an unknown app", async () => {
    const team = await setupTeam();
    const id = crypto.randomUUID();
    const sub = subscriptionJson(await browserSubscription());
    await expectError(await call("GET", `push/apps/${id}`, { key: team.key }), 404, APP_NOT_FOUND);
    await expectError(await call("PATCH", `push/apps/${id}`, { key: team.key, body: { name: "x" } }), 404, APP_NOT_FOUND);
    await expectError(await call("DELETE", `push/apps/${id}`, { key: team.key }), 404, APP_NOT_FOUND);
    await expectError(await call("POST", `push/apps/${id}/subscribers`, { key: team.key, body: sub }), 404, APP_NOT_FOUND);
    await expectError(await call("GET", `push/apps/${id}/subscribers`, { key: team.key }), 404, APP_NOT_FOUND);
    await expectError(await call("DELETE", `push/apps/${id}/subscribers/${crypto.randomUUID()}`, { key: team.key }), 404, APP_NOT_FOUND);
    await expectError(await call("POST", `push/apps/${id}/notifications`, { key: team.key, body: { title: "t", body: "b" } }), 404, APP_NOT_FOUND);
    await expectError(await call("GET", `push/apps/${id}/notifications`, { key: team.key }), 404, APP_NOT_FOUND);
    await expectError(await call("GET", `push/apps/${id}/notifications/${crypto.randomUUID()}`, { key: team.key }), 404, APP_NOT_FOUND);
    await expectError(await call("GET", "push/nothing-here", { key: team.key }), 404, { error: "Not found" });
  });

  it("answers Subscriber not found and Notification not found", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    await expectError(await call("DELETE", `push/apps/${app.id}/subscribers/${crypto.randomUUID()}`, { key: team.key }), 404, {
      error: "Subscriber not found",
    });
    await expectError(await call("GET", `push/apps/${app.id}/notifications/${crypto.randomUUID()}`, { key: team.key }), 404, {
      error: "Notification not found",
    });
    // A subscriber of another app of the same team is not found under this app.
    const other = await createApp(team.key, { name: "other" });
    const otherSub = await subscribe(team.key, other.id, await browserSubscription());
    await expectError(await call("DELETE", `push/apps/${app.id}/subscribers/${otherSub.id}`, { key: team.key }), 404, { error: "Subscriber not found" });
    expect((await json(await call("GET", `push/apps/${other.id}`, { key: team.key }))).data.subscriber_count).toBe(1);
  });
});

describe("push app validation", () => {
  it("refuses a missing or blank name, bad settings and malformed JSON", async () => {
    const team = await setupTeam();
    const post = (body: unknown) => call("POST", "push/apps", { key: team.key, body });
    const missing = await json(await post({}));
    expect(missing).toEqual(validation({ name: [expect.any(String)] }));
    await expectError(await post({ name: "  " }), 422, validation({ name: ["can't be blank"] }));
    const badSettings = await post({ name: "a", settings: "dark" });
    expect(badSettings.status).toBe(422);
    expect(Object.keys((await json(badSettings)).details)).toEqual(["settings"]);
    await expectError(
      await post({ name: "a", settings: { default_url: "javascript:alert(1)" } }),
      422,
      validation({ "settings.default_url": ["must be an http(s) URL or a path starting with /"] }),
    );
    await expectError(
      await post({ name: "a", settings: { vapid_subject: "someone" } }),
      422,
      validation({ "settings.vapid_subject": ["must be a mailto: or https: URI"] }),
    );
    await expectError(await call("POST", "push/apps", { key: team.key, raw: "{not json", headers: { "content-type": "application/json" } }), 400, {
      error: "Malformed JSON in request body",
    });
    await expectError(
      await call("POST", "push/apps", { key: team.key, raw: "[1]", headers: { "content-type": "application/json" } }),
      422,
      validation({ _body: ["must be an object"] }),
    );
  });

  it("refuses bad, incomplete and mismatched VAPID keys with a clear 422", async () => {
    const team = await setupTeam();
    const a = await generateVapidKeys();
    const b = await generateVapidKeys();
    const post = (body: Record<string, unknown>) => call("POST", "push/apps", { key: team.key, body: { name: "k", ...body } });
    await expectError(
      await post({ vapid_public_key: a.publicKey }),
      422,
      validation({ vapid_private_key: ["is required when vapid_public_key is supplied (no private key can be generated for a given public key)"] }),
    );
    await expectError(
      await post({ vapid_public_key: "not-a-key", vapid_private_key: a.privateKey }),
      422,
      validation({ vapid_public_key: ["must be a base64url-encoded 65-byte uncompressed P-256 public key"] }),
    );
    // 65 bytes, 0x04 prefix, but not a point on the curve.
    const offCurve = Buffer.from([4, ...new Array(64).fill(7)]).toString("base64url");
    await expectError(
      await post({ vapid_public_key: offCurve, vapid_private_key: a.privateKey }),
      422,
      validation({ vapid_public_key: ["is not a point on the P-256 curve"] }),
    );
    await expectError(
      await post({ vapid_public_key: a.publicKey, vapid_private_key: "short" }),
      422,
      validation({ vapid_private_key: ["must be a base64url-encoded 32-byte P-256 private key (the JWK `d`)"] }),
    );
    // 32 bytes of 0xff is above the curve order: not a private key.
    await expectError(
      await post({ vapid_private_key: Buffer.alloc(32, 0xff).toString("base64url") }),
      422,
      validation({ vapid_private_key: ["must be a base64url-encoded 32-byte P-256 private key (the JWK `d`)"] }),
    );
    await expectError(
      await post({ vapid_public_key: a.publicKey, vapid_private_key: b.privateKey }),
      422,
      validation({ vapid_private_key: ["does not match vapid_public_key"] }),
    );
    expect(await json(await call("GET", "push/apps", { key: team.key }))).toEqual({ data: [] });
  });

  it("refuses a PATCH that changes keys or blanks the name", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const keys = await generateVapidKeys();
    await expectError(
      await call("PATCH", `push/apps/${app.id}`, { key: team.key, body: { vapid_public_key: keys.publicKey } }),
      422,
      validation({ vapid_public_key: ["cannot be changed; create a new app to rotate keys"] }),
    );
    await expectError(await call("PATCH", `push/apps/${app.id}`, { key: team.key, body: { name: "" } }), 422, validation({ name: ["can't be blank"] }));
    expect((await json(await call("GET", `push/apps/${app.id}`, { key: team.key }))).data).toEqual(app);
  });
});

describe("push subscriber validation", () => {
  it("refuses non-https endpoints and malformed keys", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const sub = await browserSubscription();
    const post = (body: unknown) => call("POST", `push/apps/${app.id}/subscribers`, { key: team.key, body });
    await expectError(await post(subscriptionJson(sub, { endpoint: "http://push.example.com/x" })), 422, validation({ endpoint: ["must use https"] }));
    await expectError(await post(subscriptionJson(sub, { endpoint: "not a url" })), 422, validation({ endpoint: ["must be a valid URL"] }));
    await expectError(
      await post({ ...subscriptionJson(sub), keys: { p256dh: sub.keys.auth, auth: sub.keys.p256dh } }),
      422,
      validation({
        "keys.p256dh": ["must be a base64url-encoded 65-byte uncompressed P-256 public key"],
        "keys.auth": ["must be a base64url-encoded 16-byte secret"],
      }),
    );
    const offCurve = Buffer.from([4, ...new Array(64).fill(9)]).toString("base64url");
    await expectError(
      await post({ ...subscriptionJson(sub), keys: { p256dh: offCurve, auth: sub.keys.auth } }),
      422,
      validation({ "keys.p256dh": ["must be a base64url-encoded 65-byte uncompressed P-256 public key"] }),
    );
    const missingKeys = await post({ endpoint: sub.endpoint });
    expect(missingKeys.status).toBe(422);
    expect(Object.keys((await json(missingKeys)).details)).toEqual(["keys"]);
    expect((await json(await call("GET", `push/apps/${app.id}`, { key: team.key }))).data.subscriber_count).toBe(0);
  });

  it("refuses endpoints the SSRF guard blocks when private targets are not allowed", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const sub = await browserSubscription();
    const prodEnv = { ...env, ALLOW_PRIVATE_TARGETS: "false" };
    for (const endpoint of ["https://127.0.0.1/push", "https://169.254.169.254/latest", "https://localhost/push", "https://push.internal/x"]) {
      const error = await registerSubscriber(prodEnv, team.teamId, app.id, subscriptionJson(sub, { endpoint }) as never).catch((e) => e);
      expect({ endpoint, status: error.status, details: error.details }).toEqual({
        endpoint,
        status: 422,
        details: { endpoint: ["must not point to a private or internal address"] },
      });
    }
    const ok = await registerSubscriber(prodEnv, team.teamId, app.id, subscriptionJson(sub) as never);
    expect(ok.created).toBe(true);
  });

  it("limits registration to the strict bucket (30 per minute per team)", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const body = subscriptionJson(await browserSubscription());
    // Pin the clock 10 s into a window so the 31 requests cannot straddle a window rollover.
    const windowStart = Math.floor(nowMs() / 60_000) * 60_000 + 60_000;
    setClock(windowStart + 10_000);
    let limited: Response;
    try {
      for (let i = 0; i < 30; i++) {
        const res = await call("POST", `push/apps/${app.id}/subscribers`, { key: team.key, body });
        expect(res.status).toBe(i === 0 ? 201 : 200);
      }
      limited = await call("POST", `push/apps/${app.id}/subscribers`, { key: team.key, body });
    } finally {
      setClock(null);
    }
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("50");
    expect(await json(limited)).toEqual({ error: "Rate limit exceeded", retry_after: 50 });
    // Other push endpoints are not in the strict bucket.
    expect((await call("GET", `push/apps/${app.id}/subscribers`, { key: team.key })).status).toBe(200);
  });
});

describe("push notification validation and quota", () => {
  it("refuses bad notifications with 422", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const sub = await subscribe(team.key, app.id, await browserSubscription());
    const post = (body: unknown) => call("POST", `push/apps/${app.id}/notifications`, { key: team.key, body });
    const noTitle = await post({ body: "b" });
    expect(noTitle.status).toBe(422);
    expect(Object.keys((await json(noTitle)).details)).toEqual(["title"]);
    await expectError(
      await post({ title: "t", body: "b", subscriber_ids: [sub.id], tags: ["x"] }),
      422,
      validation({ tags: ["give either subscriber_ids or tags, not both"] }),
    );
    const unknownId = crypto.randomUUID();
    await expectError(
      await post({ title: "t", body: "b", subscriber_ids: [sub.id, unknownId] }),
      422,
      validation({ subscriber_ids: [`unknown subscriber ids: ${unknownId}`] }),
    );
    const tooBig = await json(await post({ title: "t", body: "b", data: { blob: "x".repeat(4000) } }));
    expect(tooBig.details.payload[0]).toMatch(/^is \d+ bytes once encoded; the maximum is 3993$/);
    for (const body of [
      { title: "t", body: "b", urgency: "urgent" },
      { title: "t", body: "b", topic: "has spaces" },
      { title: "t", body: "b", ttl: 0 },
      { title: "t", body: "b", icon: "ftp://x" },
    ]) {
      const res = await post(body);
      expect(res.status).toBe(422);
      expect((await json(res)).error).toBe("Validation failed");
    }
    expect(await json(await call("GET", `push/apps/${app.id}/notifications`, { key: team.key }))).toEqual({ data: [] });
  });

  it("answers the monthly quota 429 when the recipients do not fit, and queues nothing", async () => {
    const team = await setupTeam({ plan: "free" });
    const app = await createApp(team.key);
    await subscribe(team.key, app.id, await browserSubscription());
    await subscribe(team.key, app.id, await browserSubscription());
    // Free plan: 10,000 push messages a month; 9,999 are used, two recipients do not fit.
    await setUsed(team.teamId, "push", 9999);
    await expectError(await call("POST", `push/apps/${app.id}/notifications`, { key: team.key, body: { title: "t", body: "b" } }), 429, {
      error: "Monthly usage limit exceeded. Upgrade your plan.",
    });
    expect(await json(await call("GET", `push/apps/${app.id}/notifications`, { key: team.key }))).toEqual({ data: [] });
    const usage = { used: await usedOf(team.teamId, "push") };
    expect(usage!.used).toBe(9999);
  });
});

describe("notifications without recipients (regression, issue 37 finding 5)", () => {
  it("answers 422 when the target reaches no subscriber, stores nothing and spends no unit", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const before = await usedOf(team.teamId, "push");
    for (const body of [
      { title: "t", body: "b" },
      { title: "t", body: "b", tags: ["nobody"] },
    ]) {
      await expectError(
        await call("POST", `push/apps/${app.id}/notifications`, { key: team.key, body }),
        422,
        validation({ recipients: ["the notification reaches no subscriber"] }),
      );
    }
    await subscribe(team.key, app.id, await browserSubscription(), { tags: ["some"] });
    await expectError(
      await call("POST", `push/apps/${app.id}/notifications`, { key: team.key, body: { title: "t", body: "b", tags: ["nobody"] } }),
      422,
      validation({ recipients: ["the notification reaches no subscriber"] }),
    );
    const row = await env.DB.prepare("SELECT count(*) AS n FROM push_notifications WHERE app_id = ?").bind(app.id).first<{ n: number }>();
    expect(row!.n).toBe(0);
    expect(await usedOf(team.teamId, "push")).toBe(before);
  });
});
