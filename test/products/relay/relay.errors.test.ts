import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { nowSeconds, setClock } from "../../../src/platform/clock";
import { loadIngestSource, receiveWebhook } from "../../../src/products/relay/relay.ingest";
import { relayStore } from "../../../src/products/relay/relay.store";
import { admin, call, expectError, json, setupTeam } from "../../helpers/api";
import { setUsed, usedOf } from "../../helpers/usage";
import {
  createDestination,
  createSource,
  env,
  eventCount,
  genericHeaders,
  githubHeaders,
  ingest,
  receiver,
  standardHeaders,
  callSettled,
  consumeRecorded,
  recordingQueue,
  storeSql,
  stripeHeaders,
} from "./relay.helpers";

afterEach(() => setClock(null));

const STALE = () => nowSeconds() - 6 * 60;

describe("inbound signatures", () => {
  it("stripe: valid accepted; wrong, stale, missing or malformed refused with 401 and nothing stored", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key, { provider: "stripe", signing_secret: "whsec_s" });
    const body = JSON.stringify({ id: "evt_a", type: "invoice.paid" });
    expect((await ingest(source.slug, body, await stripeHeaders("whsec_s", body))).status).toBe(202);
    const other = JSON.stringify({ id: "evt_b", type: "invoice.paid" });
    await expectError(await ingest(source.slug, other, await stripeHeaders("whsec_wrong", other)), 401, { error: "Invalid webhook signature" });
    await expectError(await ingest(source.slug, other, await stripeHeaders("whsec_s", other, STALE())), 401, { error: "Invalid webhook signature" });
    await expectError(await ingest(source.slug, other, await stripeHeaders("whsec_s", body)), 401, { error: "Invalid webhook signature" });
    await expectError(await ingest(source.slug, other), 401, { error: "Invalid webhook signature" });
    await expectError(await ingest(source.slug, other, { "stripe-signature": "garbage" }), 401, { error: "Invalid webhook signature" });
    // Within the 5-minute tolerance is fine; several v1 candidates are accepted when one matches.
    const ts = nowSeconds() - 4 * 60;
    const good = (await stripeHeaders("whsec_s", other, ts))["stripe-signature"];
    expect((await ingest(source.slug, other, { "stripe-signature": `${good},v1=${"0".repeat(64)}` })).status).toBe(202);
    expect(await eventCount(source.id)).toBe(2);
  });

  it("github: valid accepted with type and delivery id from the headers; wrong or missing refused", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key, { provider: "github", signing_secret: "gh-secret" });
    const body = JSON.stringify({ action: "opened" });
    const res = await ingest(source.slug, body, await githubHeaders("gh-secret", body, "pull_request", "d-1"));
    expect(res.status).toBe(202);
    expect((await json(res)).data).toMatchObject({ event_type: "pull_request", duplicate: false });
    await expectError(await ingest(source.slug, body, await githubHeaders("nope", body)), 401, { error: "Invalid webhook signature" });
    const unprefixed = (await githubHeaders("gh-secret", body))["x-hub-signature-256"].slice("sha256=".length);
    await expectError(await ingest(source.slug, body, { "x-hub-signature-256": unprefixed }), 401, { error: "Invalid webhook signature" });
    await expectError(await ingest(source.slug, body), 401, { error: "Invalid webhook signature" });
    // GitHub has no signed timestamp, so there is no staleness; a redelivery of d-1 is a duplicate.
    const again = await ingest(source.slug, body, await githubHeaders("gh-secret", body, "pull_request", "d-1"));
    expect((await json(again)).data.duplicate).toBe(true);
    expect(await eventCount(source.id)).toBe(1);
  });

  it("standard: valid accepted; wrong secret, stale timestamp or missing headers refused", async () => {
    const team = await setupTeam();
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const source = await createSource(team.key, { provider: "standard", signing_secret: secret });
    const body = JSON.stringify({ type: "user.created", data: {} });
    const res = await ingest(source.slug, body, await standardHeaders(secret, body, "msg_1"));
    expect(res.status).toBe(202);
    expect((await json(res)).data.event_type).toBe("user.created");
    await expectError(await ingest(source.slug, body, await standardHeaders("whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", body, "msg_2")), 401, {
      error: "Invalid webhook signature",
    });
    await expectError(await ingest(source.slug, body, await standardHeaders(secret, body, "msg_3", STALE())), 401, { error: "Invalid webhook signature" });
    await expectError(await ingest(source.slug, body), 401, { error: "Invalid webhook signature" });
    expect(await eventCount(source.id)).toBe(1);
  });

  it("generic: hex HMAC of the body with or without sha256=; wrong or missing refused", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key, { provider: "generic", signing_secret: "g-secret" });
    const body = JSON.stringify({ type: "thing.happened" });
    const second = JSON.stringify({ type: "thing.happened", id: "evt_2" });
    expect((await ingest(source.slug, body, await genericHeaders("g-secret", body))).status).toBe(202);
    expect((await ingest(source.slug, second, await genericHeaders("g-secret", second, "sha256="))).status).toBe(202);
    await expectError(await ingest(source.slug, body, await genericHeaders("other", body)), 401, { error: "Invalid webhook signature" });
    await expectError(await ingest(source.slug, body + " ", await genericHeaders("g-secret", body)), 401, { error: "Invalid webhook signature" });
    await expectError(await ingest(source.slug, body), 401, { error: "Invalid webhook signature" });
    expect(await eventCount(source.id)).toBe(2);
  });

  it("regression: a captured signed generic event sent again with other id or type headers is a duplicate, never a new event", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key, { provider: "generic", signing_secret: "g-secret" });
    const body = JSON.stringify({ type: "invoice.paid", amount: 10 });
    const headers = await genericHeaders("g-secret", body);
    const first = await json(await ingest(source.slug, body, { ...headers, "x-event-id": "a", "x-event-type": "invoice.paid" }));
    expect(first.data).toMatchObject({ event_type: "invoice.paid", duplicate: false });
    const extras: Array<Record<string, string>> = [
      { "x-event-id": "b", "x-event-type": "account.deleted" },
      { "webhook-id": "c" },
      { "idempotency-key": "d" },
      {},
    ];
    for (const extra of extras) {
      const again = await json(await ingest(source.slug, body, { ...headers, ...extra }));
      expect(again.data).toMatchObject({ id: first.data.id, event_type: "invoice.paid", duplicate: true });
    }
    expect(await eventCount(source.id)).toBe(1);
    // The type comes from the signed body only; an id in the body names the event.
    const withId = JSON.stringify({ type: "invoice.paid", id: "inv_1" });
    const a = await json(await ingest(source.slug, withId, { ...(await genericHeaders("g-secret", withId)), "x-event-type": "account.deleted" }));
    expect(a.data).toMatchObject({ event_type: "invoice.paid", duplicate: false });
    expect(await eventCount(source.id)).toBe(2);
  });

  it("regression (issue 23, finding 3): a captured signed GitHub body re-sent with a new delivery id or re-typed is a duplicate and reaches no filter", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key, { provider: "github", signing_secret: "gh-secret" });
    const releases = await createDestination(team.key, source.id, { event_filter: ["release"] });
    const everything = await createDestination(team.key, source.id);
    const body = JSON.stringify({ action: "opened", number: 7 });
    const first = await json(await ingest(source.slug, body, await githubHeaders("gh-secret", body, "pull_request", "d-1")));
    expect(first.data).toMatchObject({ event_type: "pull_request", duplicate: false, deliveries: 1 });
    for (const [event, delivery] of [
      ["pull_request", "d-2"],
      ["release", "d-3"],
      ["release", "d-1"],
    ]) {
      const again = await json(await ingest(source.slug, body, await githubHeaders("gh-secret", body, event, delivery)));
      expect(again.data, `${event} ${delivery}`).toEqual({ id: first.data.id, event_type: "pull_request", duplicate: true, deliveries: 0 });
    }
    expect(await eventCount(source.id)).toBe(1);
    const deliveries = async (destinationId: string) =>
      (await storeSql<{ n: number }>(source.id, "SELECT COUNT(*) AS n FROM deliveries WHERE destination_id = ?", destinationId))[0]!.n;
    expect([await deliveries(releases.id), await deliveries(everything.id)]).toEqual([0, 1]);
    // Another signed body is another event.
    const other = JSON.stringify({ action: "published" });
    expect((await json(await ingest(source.slug, other, await githubHeaders("gh-secret", other, "release", "d-1")))).data).toMatchObject({
      duplicate: false,
      deliveries: 2,
    });
  });

  it("regression (issue 23, finding 3): a signed Stripe event without an id is accepted once, whatever timestamp it is signed with", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key, { provider: "stripe", signing_secret: "whsec_stripe" });
    const body = JSON.stringify({ type: "invoice.paid", amount: 10 });
    const first = await json(await ingest(source.slug, body, await stripeHeaders("whsec_stripe", body)));
    expect(first.data).toMatchObject({ event_type: "invoice.paid", duplicate: false });
    const again = await json(await ingest(source.slug, body, await stripeHeaders("whsec_stripe", body, nowSeconds() - 60)));
    expect(again.data).toMatchObject({ id: first.data.id, duplicate: true, deliveries: 0 });
    expect(await eventCount(source.id)).toBe(1);
  });

  it("a signed Standard Webhooks message is named by its signed id: the same body under another signed id is another message", async () => {
    const team = await setupTeam();
    const secret = "whsec_" + btoa("standard-secret-32-bytes-long!!!");
    const source = await createSource(team.key, { provider: "standard", signing_secret: secret });
    const body = JSON.stringify({ type: "user.created" });
    const first = await json(await ingest(source.slug, body, await standardHeaders(secret, body, "msg_1")));
    expect((await json(await ingest(source.slug, body, await standardHeaders(secret, body, "msg_1")))).data).toMatchObject({
      id: first.data.id,
      duplicate: true,
    });
    expect((await json(await ingest(source.slug, body, await standardHeaders(secret, body, "msg_2")))).data.duplicate).toBe(false);
  });

  it("a source without a signing secret accepts unsigned events", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key, { provider: "stripe" });
    expect((await ingest(source.slug, "{}")).status).toBe(202);
  });
});

describe("ingest errors", () => {
  it("unknown slug 404, disabled source 410, body over 1 MB 413, non-UTF-8 body 415", async () => {
    await expectError(await ingest("no-such-slug", "{}"), 404, { error: "Source not found" });
    const team = await setupTeam();
    const source = await createSource(team.key);
    await expectError(await ingest(source.slug, "x".repeat(1024 * 1024 + 1)), 413, { error: "Payload too large (max 1MB)" });
    expect((await ingest(source.slug, "x".repeat(1024 * 1024))).status).toBe(202);
    await expectError(await call("POST", `/in/${source.slug}`, { raw: new Uint8Array([0xff, 0xfe, 0x00]) }), 415, { error: "Body must be UTF-8 text" });
    await call("PATCH", `webhooks/sources/${source.id}`, { key: team.key, body: { enabled: false } });
    await expectError(await ingest(source.slug, "{}"), 410, { error: "Source is disabled" });
    expect(await eventCount(source.id)).toBe(1);
  });

  it("the public bucket answers 429 after 200 requests per minute from one IP", async () => {
    setClock(Date.parse("2026-05-05T12:00:10.000Z"));
    const ip = "198.51.100.77";
    for (let i = 0; i < 10; i++) {
      const batch = await Promise.all(Array.from({ length: 20 }, () => ingest("unknown-slug", "{}", {}, { ip })));
      for (const res of batch) expect(res.status).toBe(404);
    }
    const refused = await ingest("unknown-slug", "{}", {}, { ip });
    expect(refused.headers.get("retry-after")).toBe("50");
    await expectError(refused, 429, { error: "Rate limit exceeded", retry_after: 50 });
    // Another IP has its own bucket.
    expect((await ingest("unknown-slug", "{}", {}, { ip: "198.51.100.78" })).status).toBe(404);
  });

  it("counts every received event towards the webhooks quota and answers 429 when it is exhausted", async () => {
    const team = await setupTeam({ plan: "free" });
    const source = await createSource(team.key);
    expect((await ingest(source.slug, "{}")).status).toBe(202);
    const used = { used: await usedOf(team.teamId, "webhooks") };
    expect(used!.used).toBe(1);
    await setUsed(team.teamId, "webhooks", 10000);
    await expectError(await ingest(source.slug, "{}"), 429, { error: "Monthly usage limit exceeded. Upgrade your plan." });
    expect(await eventCount(source.id)).toBe(1);
    // Upgrading lifts it.
    await admin("PATCH", `teams/${team.teamId}`, { plan: "pro" });
    expect((await ingest(source.slug, "{}")).status).toBe(202);
  });

  it("answers 202 duplicate for a copy of a stored event even when the quota is exhausted; a new event gets 429", async () => {
    const team = await setupTeam({ plan: "free" });
    const source = await createSource(team.key, { provider: "stripe" });
    const body = JSON.stringify({ id: "evt_kept", type: "invoice.paid" });
    const first = (await json(await ingest(source.slug, body))).data;
    await setUsed(team.teamId, "webhooks", 10000);
    const again = await ingest(source.slug, body);
    expect(again.status).toBe(202);
    expect((await json(again)).data).toEqual({ id: first.id, event_type: "invoice.paid", duplicate: true, deliveries: 0 });
    const fresh = JSON.stringify({ id: "evt_new", type: "invoice.paid" });
    await expectError(await ingest(source.slug, fresh), 429, { error: "Monthly usage limit exceeded. Upgrade your plan." });
    expect(await eventCount(source.id)).toBe(1);
    const used = { used: await usedOf(team.teamId, "webhooks") };
    expect(used!.used).toBe(10000);
  });

  it("answers 503 with nothing stored, nothing sent and the unit given back when the source's store fails", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const destination = await createDestination(team.key, source.id);
    // The store's object cannot be reached: every call to it fails as an unreachable object's does.
    const unreachable = {
      get: () => ({ ingest: () => Promise.reject(new Error("Network connection lost.")) }),
      idFromName: (name: string) => env.RELAY_STORE.idFromName(name),
    };
    const queue = recordingQueue();
    const brokenEnv = { ...queue.env, RELAY_STORE: unreachable } as unknown as typeof env;
    vi.spyOn(console, "error").mockImplementation(() => {});
    const rx = receiver([destination.url]);
    try {
      await expectError(
        await callSettled("POST", `/in/${source.slug}`, {
          raw: JSON.stringify({ id: "evt_1", type: "x" }),
          headers: { "content-type": "application/json" },
          env: brokenEnv,
        }),
        503,
        {
          error: "Event could not be stored; retry later",
        },
      );
      expect(await usedOf(team.teamId, "webhooks")).toBe(0);
      expect(await relayStore(env, source.id).stats()).toMatchObject({ events: 0, deliveries: 0 });
      // The messages queued beside the failed write find no delivery: acknowledged, nothing sent.
      for (const message of await consumeRecorded(queue.sent)) expect(message.ack).toHaveBeenCalled();
      expect(rx.received).toEqual([]);
      // Once the store answers again, the sender's retry is stored as a new event, not a duplicate.
      const retried = await ingest(source.slug, JSON.stringify({ id: "evt_1", type: "x" }));
      expect((await json(retried)).data).toMatchObject({ duplicate: false, deliveries: 1 });
    } finally {
      rx.restore();
    }
  });

  it("answers 202 when the queue refuses: the event is stored, its first attempt delivers it, and no unit is given back", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const destination = await createDestination(team.key, source.id);
    const brokenQueue = { sendBatch: vi.fn(async () => Promise.reject(new Error("queue down"))) };
    const brokenEnv = { ...env, WEBHOOK_QUEUE: brokenQueue } as unknown as typeof env;
    const background: Promise<unknown>[] = [];
    const rx = receiver([destination.url]);
    try {
      const found = await loadIngestSource(env, source.slug);
      const inbound = { headers: new Headers(), body: "{}", contentType: "application/json" };
      const result = await receiveWebhook(brokenEnv, found, inbound, { waitUntil: (p) => void background.push(p) });
      expect(result).toMatchObject({ duplicate: false, deliveries: 1 });
      await Promise.all(background);
      expect(rx.received).toHaveLength(1);
    } finally {
      rx.restore();
    }
    // The store is the outbox: nothing was queued for a first attempt that delivered.
    expect(brokenQueue.sendBatch).not.toHaveBeenCalled();
    expect(await eventCount(source.id)).toBe(1);
    expect(await usedOf(team.teamId, "webhooks")).toBe(1);
  });
});

describe("validation", () => {
  it("refuses bad source input with 422 and field details", async () => {
    const team = await setupTeam();
    const bad = await call("POST", "webhooks/sources", { key: team.key, body: { name: "", provider: "shopify", retention_days: 91 } });
    expect(bad.status).toBe(422);
    const body = await json(bad);
    expect(body.error).toBe("Validation failed");
    expect(Object.keys(body.details).sort()).toEqual(["name", "provider", "retention_days"]);
    await expectError(await call("POST", "webhooks/sources", { key: team.key, body: { name: "x", provider: "github", retention_days: 0 } }), 422, {
      error: "Validation failed",
      details: { retention_days: ["must be at least 1"] },
    });
    const notJson = await call("POST", "webhooks/sources", { key: team.key, raw: "{", headers: { "content-type": "application/json" } });
    expect(notJson.status).toBeGreaterThanOrEqual(400);
    expect(notJson.status).toBeLessThan(500);
    const source = await createSource(team.key);
    const patch = await call("PATCH", `webhooks/sources/${source.id}`, { key: team.key, body: { enabled: "yes" } });
    expect(patch.status).toBe(422);
    expect((await json(patch)).details.enabled).toBeDefined();
  });

  it("refuses bad destination input: URL the SSRF guard rejects, bad filter entries, too many destinations", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    await expectError(await call("POST", `webhooks/sources/${source.id}/destinations`, { key: team.key, body: { url: "ftp://example.com/x" } }), 422, {
      error: "Validation failed",
      details: { url: ["must use https"] },
    });
    await expectError(await call("POST", `webhooks/sources/${source.id}/destinations`, { key: team.key, body: { url: "not a url" } }), 422, {
      error: "Validation failed",
      details: { url: ["must be a valid URL"] },
    });
    await expectError(await call("POST", `webhooks/sources/${source.id}/destinations`, { key: team.key, body: { url: "https://u:p@example.com/" } }), 422, {
      error: "Validation failed",
      details: { url: ["must not contain credentials"] },
    });
    const filter = await call("POST", `webhooks/sources/${source.id}/destinations`, {
      key: team.key,
      body: { url: "https://example.com/", event_filter: ["a*b"] },
    });
    expect(filter.status).toBe(422);
    expect((await json(filter)).details["event_filter.0"]).toBeDefined();
    const dest = await createDestination(team.key, source.id);
    await expectError(await call("PATCH", `webhooks/sources/${source.id}/destinations/${dest.id}`, { key: team.key, body: { url: "gopher://x" } }), 422, {
      error: "Validation failed",
      details: { url: ["must use https"] },
    });
    for (let i = 1; i < 20; i++) await createDestination(team.key, source.id);
    await expectError(await call("POST", `webhooks/sources/${source.id}/destinations`, { key: team.key, body: { url: "https://example.com/21" } }), 422, {
      error: "Validation failed",
      details: { source_id: ["has reached the limit of 20 destinations"] },
    });
  });

  it("refuses a bad events cursor or filter", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    await expectError(await call("GET", `webhooks/sources/${source.id}/events?cursor=bogus`, { key: team.key }), 422, {
      error: "Validation failed",
      details: { cursor: ["is invalid"] },
    });
    const bad = await call("GET", `webhooks/sources/${source.id}/events?status=weird&limit=500`, { key: team.key });
    expect(bad.status).toBe(422);
    expect(Object.keys((await json(bad)).details).sort()).toEqual(["limit", "status"]);
  });
});

describe("retention", () => {
  it("each source's store deletes events older than its retention_days, with their deliveries and attempts", async () => {
    const team = await setupTeam();
    const short = await createSource(team.key, { retention_days: 1 });
    const long = await createSource(team.key, { retention_days: 30 });
    await createDestination(team.key, short.id);
    const start = Date.parse("2026-04-01T00:00:00.000Z");
    setClock(start);
    const old = (await json(await ingest(short.slug, JSON.stringify({ type: "old" })))).data.id;
    const oldLong = (await json(await ingest(long.slug, "{}"))).data.id;
    setClock(start + 20 * 3600_000);
    const recent = (await json(await ingest(short.slug, "{}"))).data.id;
    const ids = async (sourceId: string) => (await storeSql<{ id: string }>(sourceId, "SELECT id FROM events")).map((r) => r.id);
    expect(await storeSql(short.id, "SELECT id FROM deliveries WHERE event_id = ?", old)).toHaveLength(1);
    // 25 hours after the first events: only the 1-day source's first event has expired.
    const at = start + 25 * 3600_000;
    expect(await relayStore(env, short.id).purgeExpired(at)).toEqual({ deleted: 1, more: false });
    expect(await relayStore(env, long.id).purgeExpired(at)).toEqual({ deleted: 0, more: false });
    expect(await ids(short.id)).toEqual([recent]);
    expect(await ids(long.id)).toEqual([oldLong]);
    expect(await storeSql(short.id, "SELECT id FROM deliveries WHERE event_id = ?", old)).toEqual([]);
    expect(await storeSql(short.id, "SELECT a.id FROM attempts a LEFT JOIN deliveries d ON d.id = a.delivery_id WHERE d.id IS NULL")).toEqual([]);
    // 31 days on, the 30-day source's event goes too; running twice is harmless.
    for (const store of [relayStore(env, short.id), relayStore(env, long.id)]) {
      await store.purgeExpired(start + 31 * 86400_000);
      expect(await store.purgeExpired(start + 31 * 86400_000)).toEqual({ deleted: 0, more: false });
    }
    expect(await ids(long.id)).toEqual([]);
    expect(await ids(short.id)).toEqual([]);
  });

  it("runs on the store's own alarm (real time), with the retention a PATCH set", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key, { retention_days: 30 });
    await createDestination(team.key, source.id);
    // Received two days before the real now: kept under 30 days, expired once the source keeps 1.
    setClock(Date.now() - 2 * 86400_000);
    await ingest(source.slug, JSON.stringify({ type: "x" }));
    setClock(null);
    const store = relayStore(env, source.id);
    expect(await runInDurableObject(store, (_o, state) => state.storage.getAlarm())).not.toBeNull();
    expect(await runDurableObjectAlarm(store)).toBe(true);
    expect((await store.stats()).events).toBe(1);
    expect((await call("PATCH", `webhooks/sources/${source.id}`, { key: team.key, body: { retention_days: 1 } })).status).toBe(200);
    // The alarm set itself again while events are held.
    expect(await runDurableObjectAlarm(store)).toBe(true);
    expect(await store.stats()).toMatchObject({ events: 0, deliveries: 0, attempts: 0 });
  });
});

describe("destinations on our own ingest (regression, issue 37 finding 5)", () => {
  it("a destination at APP_URL's host under /in/ is refused (422) on create and PATCH, in any spelling of the host", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    for (const url of [source.url, `http://APP.TEST./in/${source.slug}`, "http://app.test:8443/in/other", "http://app.test/in/"]) {
      await expectError(await call("POST", `webhooks/sources/${source.id}/destinations`, { key: team.key, body: { url } }), 422, {
        error: "Validation failed",
        details: { url: ["must not point to this platform's own ingest addresses (/in/...)"] },
      });
    }
    const destination = await createDestination(team.key, source.id);
    expect((await call("PATCH", `webhooks/sources/${source.id}/destinations/${destination.id}`, { key: team.key, body: { url: source.url } })).status).toBe(
      422,
    );
    // Other paths of another host stay allowed.
    expect((await call("POST", `webhooks/sources/${source.id}/destinations`, { key: team.key, body: { url: "http://127.0.0.1:9/in/x" } })).status).toBe(201);
  });
});
