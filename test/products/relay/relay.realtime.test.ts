// Real-time relay (issue 15): the first delivery attempt starts from the ingest request itself
// (executionCtx.waitUntil) right after the event is stored; the queue is the safety net and carries
// the retries. Here the queue records its messages instead of delivering them, so nothing but the
// ingest request can have sent what the receiver saw; the test then plays the queue.
import { afterEach, describe, expect, it, vi } from "vitest";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { setClock, nowMs } from "../../../src/platform/clock";
import { planLimits } from "../../../src/platform/plans";
import { retryDelaySeconds } from "../../../src/products/relay/relay.consumer";
import { relayStore } from "../../../src/products/relay/relay.store";
import { expectError, json, setupTeam } from "../../helpers/api";
import { setUsed, usedOf } from "../../helpers/usage";
import {
  callSettled,
  consumeRecorded,
  createDestination,
  createSource,
  env,
  eventCount,
  getEvent,
  ingestSettled,
  receiver,
  recordingQueue,
  storeSql,
} from "./relay.helpers";

afterEach(() => {
  vi.restoreAllMocks();
  setClock(null);
});

describe("first delivery from the ingest request", () => {
  it("delivers before any queue consumer runs; the queued message then sends nothing more", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const destination = await createDestination(team.key, source.id);
    const queue = recordingQueue();
    const rx = receiver([destination.url], [200]);
    try {
      const body = JSON.stringify({ type: "order.created", id: "o_1" });
      const res = await ingestSettled(source.slug, body, {}, { env: queue.env });
      expect(res.status).toBe(202);
      const accepted = (await json(res)).data;
      // Delivered by the ingest request's own background work: the queue delivered nothing.
      expect(rx.received).toHaveLength(1);
      expect(rx.received[0]!.body).toBe(body);
      expect(() => new StandardWebhook(destination.secret).verify(rx.received[0]!.body, Object.fromEntries(rx.received[0]!.headers))).not.toThrow();
      const event = await getEvent(team.key, source.id, accepted.id);
      expect(event.deliveries).toHaveLength(1);
      expect(event.deliveries[0]).toMatchObject({ status: "delivered", attempts_count: 1, last_status_code: 200 });

      // The safety-net message was queued all the same, due when the first retry would be.
      expect(queue.sent).toEqual([{ body: { delivery_id: event.deliveries[0].id, source_id: source.id }, delaySeconds: retryDelaySeconds(1) }]);
      const [message] = await consumeRecorded(queue.sent);
      expect(message!.ack).toHaveBeenCalled();
      expect(message!.retry).not.toHaveBeenCalled();
      expect(rx.received).toHaveLength(1);
      expect((await getEvent(team.key, source.id, accepted.id)).deliveries[0].attempts).toHaveLength(1);
    } finally {
      rx.restore();
    }
  });

  it("a queued message arriving while the first attempt is still sending sends nothing and comes back after the lease", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const destination = await createDestination(team.key, source.id);
    const queue = recordingQueue();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let sends = 0;
    const real = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      if (request.url !== destination.url) return real(input, init);
      sends++;
      await held; // the receiver is slow to answer
      return new Response("ok");
    });
    const pending = ingestSettled(source.slug, JSON.stringify({ type: "slow" }), {}, { env: queue.env });
    await vi.waitFor(() => expect(sends).toBe(1));
    expect(queue.sent).toHaveLength(1);

    const [early] = await consumeRecorded(queue.sent);
    expect(sends).toBe(1);
    expect(early!.ack).not.toHaveBeenCalled();
    const delay = early!.retry.mock.calls[0]![0].delaySeconds as number;
    expect(delay).toBeGreaterThan(0);
    expect(delay).toBeLessThanOrEqual(30);

    release();
    expect((await pending).status).toBe(202);
    const [late] = await consumeRecorded(queue.sent, 2);
    expect(late!.ack).toHaveBeenCalled();
    expect(sends).toBe(1);
    const [row] = await storeSql(source.id, "SELECT status, attempts FROM deliveries WHERE destination_id = ?", destination.id);
    expect(row).toEqual({ status: "delivered", attempts: 1 });
  });

  it("a failing first attempt is retried through the queue when its message comes", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const destination = await createDestination(team.key, source.id);
    const queue = recordingQueue();
    const rx = receiver([destination.url], [503, 200]);
    try {
      const accepted = (await json(await ingestSettled(source.slug, JSON.stringify({ type: "x" }), {}, { env: queue.env }))).data;
      expect(rx.received).toHaveLength(1);
      const first = (await getEvent(team.key, source.id, accepted.id)).deliveries[0];
      expect(first).toMatchObject({ status: "pending", attempts_count: 1, last_status_code: 503 });
      expect(first.attempts[0]).toMatchObject({ number: 1, status_code: 503, retry_in_seconds: retryDelaySeconds(1) });

      setClock(nowMs() + retryDelaySeconds(1)! * 1000);
      const [message] = await consumeRecorded(queue.sent);
      expect(message!.ack).toHaveBeenCalled();
      expect(rx.received).toHaveLength(2);
      // The same delivery: the receiver sees the same webhook-id on the retry.
      expect(rx.received[1]!.headers.get("webhook-id")).toBe(rx.received[0]!.headers.get("webhook-id"));
      const delivery = (await getEvent(team.key, source.id, accepted.id)).deliveries[0];
      expect(delivery).toMatchObject({ status: "delivered", attempts_count: 2 });
    } finally {
      rx.restore();
    }
  });

  it("a replay is sent from the replay request too, to each destination once", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const a = await createDestination(team.key, source.id);
    const b = await createDestination(team.key, source.id);
    const queue = recordingQueue();
    const rx = receiver([a.url, b.url], [200]);
    try {
      const accepted = (await json(await ingestSettled(source.slug, JSON.stringify({ type: "x" }), {}, { env: queue.env }))).data;
      expect(rx.received).toHaveLength(2);
      const res = await callSettled("POST", `webhooks/sources/${source.id}/events/${accepted.id}/replay`, { key: team.key, env: queue.env });
      expect(res.status).toBe(202);
      expect(rx.received.map((r) => r.url).sort()).toEqual([a.url, a.url, b.url, b.url].sort());
      expect(queue.sent).toHaveLength(4);
      const messages = await consumeRecorded(queue.sent);
      for (const m of messages) expect(m.ack).toHaveBeenCalled();
      expect(rx.received).toHaveLength(4);
    } finally {
      rx.restore();
    }
  });
});

describe("a replay whose queue refuses (the accept step)", () => {
  it("answers 202 with its units taken, attempts each delivery at once, and the store's alarm re-queues a delivery still pending once overdue", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const destination = await createDestination(team.key, source.id);
    const queue = recordingQueue();
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    // The receiver takes the ingest's delivery, then fails the replay's first attempt.
    const rx = receiver([destination.url], [200, 500]);
    try {
      const accepted = (await json(await ingestSettled(source.slug, JSON.stringify({ type: "x" }), {}, { env: queue.env }))).data;
      const used = await usedOf(team.teamId, "webhooks");
      const refusing = {
        ...queue.env,
        WEBHOOK_QUEUE: { send: vi.fn(), sendBatch: vi.fn(async () => Promise.reject(new Error("queue down"))) },
      } as unknown as typeof env;
      const res = await callSettled("POST", `webhooks/sources/${source.id}/events/${accepted.id}/replay`, { key: team.key, env: refusing });
      expect(res.status).toBe(202);
      expect((await json(res)).data).toMatchObject({ count: 1, destination_ids: [destination.id] });
      expect(errors.mock.calls.map(([line]) => String(line)).some((line) => line.includes("relay replay: enqueue failed"))).toBe(true);
      expect(await usedOf(team.teamId, "webhooks")).toBe((used ?? 0) + 1);
      // The first attempt ran from the request all the same (and failed: the delivery waits).
      expect(rx.received).toHaveLength(2);
      const replayed = (await getEvent(team.key, source.id, accepted.id)).deliveries.find(
        (d: { attempts_count: number; status: string }) => d.status !== "delivered",
      );
      expect(replayed).toMatchObject({ status: "pending", attempts_count: 1 });
      // Once overdue (its retry due + 15 minutes), the store's alarm finds it.
      const store = relayStore(env, source.id);
      expect(await store.lostMessages(nowMs())).toEqual([]);
      expect(await store.lostMessages(nowMs() + 16 * 60_000 + 60_000)).toEqual([{ delivery_id: replayed.id, source_id: source.id }]);
    } finally {
      rx.restore();
    }
  });
});

describe("the ingest write", () => {
  it("stores the event and its deliveries together after its quota units; parallel ingests never pass the quota", async () => {
    const team = await setupTeam({ plan: "free" });
    const source = await createSource(team.key);
    await createDestination(team.key, source.id);
    const queue = recordingQueue();
    const limit = planLimits("free").monthly.webhooks as number;
    await setUsed(team.teamId, "webhooks", limit - 3);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        callSettled("POST", `/in/${source.slug}`, {
          raw: JSON.stringify({ type: "x", n: i }),
          headers: { "content-type": "application/json" },
          env: queue.env,
        }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([202, 202, 202, 429, 429, 429, 429, 429]);
    for (const r of results.filter((r) => r.status === 429)) await expectError(r, 429, { error: "Monthly usage limit exceeded. Upgrade your plan." });
    expect(await eventCount(source.id)).toBe(3);
    const [counts] = await storeSql(source.id, "SELECT COUNT(*) AS deliveries FROM deliveries");
    expect({ ...counts, used: await usedOf(team.teamId, "webhooks") }).toEqual({ deliveries: 3, used: limit });
    expect(queue.sent).toHaveLength(3);
  });

  it("taking units in the batch still warns the owner once at 80 % of the limit", async () => {
    const team = await setupTeam({ plan: "free", ownerEmail: "owner@warned.dev" });
    const source = await createSource(team.key);
    const limit = planLimits("free").monthly.webhooks as number;
    await setUsed(team.teamId, "webhooks", limit * 0.8 - 2);
    const warnings = () =>
      env.DB.prepare("SELECT \"to\", subject FROM platform_outbox WHERE team_id = ? AND kind = 'usage_warning'")
        .bind(team.teamId)
        .all<{ to: string; subject: string }>();
    expect((await ingestSettled(source.slug, JSON.stringify({ type: "a" }))).status).toBe(202);
    expect((await warnings()).results).toEqual([]);
    expect((await ingestSettled(source.slug, JSON.stringify({ type: "b" }))).status).toBe(202);
    expect((await ingestSettled(source.slug, JSON.stringify({ type: "c" }))).status).toBe(202);
    expect((await warnings()).results).toEqual([{ to: "owner@warned.dev", subject: "You have used 80% of your monthly webhooks quota" }]);
  });

  it("refuses in the order a sender expects although the checks run at once: 429 before 413 before 404", async () => {
    const ip = "198.51.100.91";
    setClock(Date.parse("2026-06-01T12:00:05.000Z"));
    await expectError(await callSettled("POST", "/in/no-such-slug", { raw: "x".repeat(1024 * 1024 + 1), ip }), 413, { error: "Payload too large (max 1MB)" });
    await expectError(await callSettled("POST", "/in/no-such-slug", { raw: "{}", ip }), 404, { error: "Source not found" });
    for (let i = 0; i < 198; i++) await callSettled("POST", "/in/no-such-slug", { raw: "{}", ip });
    const limited = await callSettled("POST", "/in/no-such-slug", { raw: "x".repeat(1024 * 1024 + 1), ip });
    await expectError(limited, 429, { error: "Rate limit exceeded", retry_after: 55 });
  });
});

describe("queue sends shared by concurrent ingests", () => {
  /** A queue that records each sendBatch call, holding the first until released, failing when told. */
  function heldQueue() {
    const calls: string[][] = [];
    let release!: () => void;
    const first = new Promise<void>((resolve) => (release = resolve));
    let fail = false;
    const queue = {
      send: async () => {
        throw new Error("ingest sends in batches");
      },
      sendBatch: async (messages: Array<{ body: { delivery_id: string } }>) => {
        calls.push(messages.map((m) => m.body.delivery_id));
        if (calls.length === 1) await first;
        if (fail) throw new Error("queue down");
      },
    } as unknown as Queue;
    return { env: { ...env, WEBHOOK_QUEUE: queue } as typeof env, calls, release, failNext: () => (fail = true) };
  }

  it("60 events arriving together: every delivery queued exactly once, in far fewer sendBatch calls than events", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    await createDestination(team.key, source.id, { url: "http://127.0.0.1:9/never" });
    const queue = heldQueue();
    const pending = Array.from({ length: 60 }, (_, i) =>
      callSettled("POST", `/in/${source.slug}`, { raw: JSON.stringify({ type: "x", n: i }), headers: { "content-type": "application/json" }, env: queue.env }),
    );
    // The first send holds while the other ingests get in line behind it.
    for (let i = 0; i < 500 && queue.calls.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    await new Promise((resolve) => setTimeout(resolve, 50));
    queue.release();
    const results = await Promise.all(pending);
    expect(results.map((r) => r.status)).toEqual(Array(60).fill(202));
    const sent = queue.calls.flat();
    expect(sent).toHaveLength(60);
    expect(new Set(sent).size).toBe(60);
    const rows = await storeSql<{ id: string }>(source.id, "SELECT id FROM deliveries");
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(sent));
    expect(queue.calls.length).toBeLessThan(30);
  });

  it("a shared sendBatch that fails fails every ingest it carried: each answers 503, keeps nothing and gives its unit back", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    await createDestination(team.key, source.id, { url: "http://127.0.0.1:9/never" });
    const queue = heldQueue();
    vi.spyOn(console, "error").mockImplementation(() => {});
    const first = callSettled("POST", `/in/${source.slug}`, {
      raw: JSON.stringify({ type: "first" }),
      headers: { "content-type": "application/json" },
      env: queue.env,
    });
    for (let i = 0; i < 500 && queue.calls.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    const behind = Array.from({ length: 5 }, (_, i) =>
      callSettled("POST", `/in/${source.slug}`, {
        raw: JSON.stringify({ type: "behind", n: i }),
        headers: { "content-type": "application/json" },
        env: queue.env,
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    queue.failNext();
    queue.release();
    const results = await Promise.all([first, ...behind]);
    for (const res of results) await expectError(res, 503, { error: "Event could not be queued; retry later" });
    expect(await eventCount(source.id)).toBe(0);
    expect(await usedOf(team.teamId, "webhooks")).toBe(0);
  });
});

describe("the per-IP bucket counted beside the event's checks", () => {
  it("a refusal still comes first: 429 over a bad signature, over a duplicate, and the units taken meanwhile are given back", async () => {
    const at = Date.parse("2031-06-01T12:00:05.000Z");
    setClock(at);
    const team = await setupTeam();
    const source = await createSource(team.key, { provider: "stripe" });
    const body = JSON.stringify({ id: "evt_first", type: "invoice.paid" });
    const ip = "198.51.100.177";
    expect((await ingestSettled(source.slug, body, {}, { ip })).status).toBe(202);
    expect(await usedOf(team.teamId, "webhooks")).toBe(1);
    // The window of this IP is full (the 200 of the public bucket; this is not yet remembered as refused here).
    await env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`public:ip:${ip}`)).hit(Math.floor(at / 60_000) * 60, 199);
    const fresh = await ingestSettled(source.slug, JSON.stringify({ id: "evt_second", type: "invoice.paid" }), {}, { ip });
    await expectError(fresh, 429, { error: "Rate limit exceeded", retry_after: 55 });
    const duplicate = await ingestSettled(source.slug, body, {}, { ip });
    await expectError(duplicate, 429, { error: "Rate limit exceeded", retry_after: 55 });
    expect(await eventCount(source.id)).toBe(1);
    expect(await usedOf(team.teamId, "webhooks")).toBe(1);
    // A bad signature from a full IP (not yet remembered): 429, not 401.
    const signed = await createSource(team.key, { provider: "generic", signing_secret: "bench-secret" });
    const other = "198.51.100.178";
    await env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`public:ip:${other}`)).hit(Math.floor(at / 60_000) * 60, 200);
    await expectError(await ingestSettled(signed.slug, "{}", { "x-signature": "00" }, { ip: other }), 429, { error: "Rate limit exceeded", retry_after: 55 });
  });
});
