// Real-time relay (issues 15, 28): the first delivery attempt starts from the ingest request itself
// (executionCtx.waitUntil) right after the event is stored, each delivery claimed by the store as it
// is stored; the queue carries the retries only, and the source's store is the outbox: its alarm
// queues a delivery whose first attempt never reported. Here the queue records its messages instead
// of delivering them, so nothing but the ingest request can have sent what the receiver saw.
import { afterEach, describe, expect, it, vi } from "vitest";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { setClock, nowMs } from "../../../src/platform/clock";
import { planLimits } from "../../../src/platform/plans";
import { runInDurableObject } from "cloudflare:test";
import { FIRST_ATTEMPT, retryDelaySeconds } from "../../../src/products/relay/relay.consumer";
import { relayStore } from "../../../src/products/relay/relay.store";
import { FIRST_ATTEMPT_WATCH_MS } from "../../../src/products/relay/store/relay-store";
import { LEASE_ENDED_AFTER_MS, STUCK_AFTER_MS } from "../../../src/products/relay/store/relay-store.upkeep";
import { expectError, json, setupTeam } from "../../helpers/api";
import { wrappedNamespace } from "../../helpers/counting";
import { ipCounter, setUsed, usedOf } from "../../helpers/usage";
import {
  callSettled,
  consumeRecorded,
  createDestination,
  createSource,
  deliverOnce,
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
  it("delivers before any queue consumer runs, with no queue message at all", async () => {
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
      // A delivered first attempt needs no queue message: the store is the outbox.
      expect(queue.sent).toEqual([]);
      expect(await relayStore(env, source.id).lostMessages(Date.now() + 3_600_000)).toEqual([]);
    } finally {
      rx.restore();
    }
  });

  it("a first attempt that never reports is watched by the store's alarm and queued once its lease has ended; a message then finds it and sends once", async () => {
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
    const before = Date.now();
    const pending = ingestSettled(source.slug, JSON.stringify({ type: "slow" }), {}, { env: queue.env });
    await vi.waitFor(() => expect(sends).toBe(1));
    expect(queue.sent).toEqual([]);
    const [row] = await storeSql<{ id: string; status: string; attempts: number; lease_until: number }>(
      source.id,
      "SELECT id, status, attempts, lease_until FROM deliveries WHERE destination_id = ?",
      destination.id,
    );
    expect(row).toMatchObject({ status: "sending", attempts: 1 });
    // The alarm comes within the lease and its watch, so a lost first attempt is not left for the hour.
    const alarm = await runInDurableObject(relayStore(env, source.id), (_object, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeLessThanOrEqual(Date.now() + FIRST_ATTEMPT.leaseMs + FIRST_ATTEMPT_WATCH_MS);
    expect(alarm!).toBeGreaterThanOrEqual(before);
    // Under its lease it is nobody's to re-queue; once the lease has ended it is (its isolate died).
    const store = relayStore(env, source.id);
    expect(await store.lostMessages(row!.lease_until - 1)).toEqual([]);
    expect(await store.lostMessages(row!.lease_until + LEASE_ENDED_AFTER_MS + 1)).toEqual([{ delivery_id: row!.id, source_id: source.id }]);
    // A message arriving while the attempt still holds the claim sends nothing and comes back after the lease.
    const early = await deliverOnce(source.id, row!.id);
    expect(sends).toBe(1);
    expect(early.ack).not.toHaveBeenCalled();
    const delay = early.retry.mock.calls[0]![0].delaySeconds as number;
    expect(delay).toBeGreaterThan(0);
    expect(delay).toBeLessThanOrEqual(30);

    release();
    expect((await pending).status).toBe(202);
    const late = await deliverOnce(source.id, row!.id);
    expect(late.ack).toHaveBeenCalled();
    expect(sends).toBe(1);
    const [after] = await storeSql(source.id, "SELECT status, attempts FROM deliveries WHERE destination_id = ?", destination.id);
    expect(after).toEqual({ status: "delivered", attempts: 1 });
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
      // The replay's own messages only (its safety net); the ingest queued none.
      expect(queue.sent).toHaveLength(2);
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
    // Their first attempts failed (nothing listens there): each retry is queued by its attempt.
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

describe("the store as the deliveries' outbox", () => {
  /** A queue that records each sendBatch call, failing when told. */
  function brokenQueue(fail: boolean) {
    const calls: string[][] = [];
    const queue = {
      send: async () => {
        throw new Error("the relay sends in batches");
      },
      sendBatch: async (messages: Array<{ body: { delivery_id: string } }>) => {
        calls.push(messages.map((m) => m.body.delivery_id));
        if (fail) throw new Error("queue down");
      },
    } as unknown as Queue;
    return { env: { ...env, WEBHOOK_QUEUE: queue } as typeof env, calls };
  }

  it("60 events arriving together: each delivered once from its own ingest, with no queue send", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const destination = await createDestination(team.key, source.id);
    const queue = brokenQueue(false);
    const rx = receiver([destination.url], [200]);
    try {
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          callSettled("POST", `/in/${source.slug}`, {
            raw: JSON.stringify({ type: "x", n: i }),
            headers: { "content-type": "application/json" },
            env: queue.env,
          }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(60).fill(202));
      expect(rx.received).toHaveLength(60);
      expect(new Set(rx.received.map((r) => r.headers.get("webhook-id"))).size).toBe(60);
      expect(queue.calls).toEqual([]);
      const [counts] = await storeSql(source.id, "SELECT COUNT(*) AS n, SUM(status = 'delivered') AS delivered, SUM(attempts) AS attempts FROM deliveries");
      expect(counts).toEqual({ n: 60, delivered: 60, attempts: 60 });
    } finally {
      rx.restore();
    }
  });

  it("concurrent events of one source share store calls, each answered as if alone: ids, duplicates and deliveries exact", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key, { provider: "stripe" });
    const destination = await createDestination(team.key, source.id);
    const calls: Record<string, number> = {};
    const counting = wrappedNamespace(env.RELAY_STORE, (method, call) => {
      calls[method] = (calls[method] ?? 0) + 1;
      return call();
    });
    const countingEnv = { ...env, RELAY_STORE: counting } as typeof env;
    const rx = receiver([destination.url], [200]);
    try {
      // 40 events, 10 of them twice (the same provider event id): 40 stored, 10 answered duplicate.
      const bodies = Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: `evt_${i % 40}`, type: "x", n: i }));
      const results = await Promise.all(
        bodies.map((raw) => callSettled("POST", `/in/${source.slug}`, { raw, headers: { "content-type": "application/json" }, env: countingEnv })),
      );
      expect(results.map((r) => r.status)).toEqual(Array(50).fill(202));
      const answers = await Promise.all(results.map(async (r) => (await json(r)).data));
      expect(answers.filter((a) => a.duplicate)).toHaveLength(10);
      expect(new Set(answers.map((a) => a.id)).size).toBe(40);
      expect(await eventCount(source.id)).toBe(40);
      expect(rx.received).toHaveLength(40);
      expect(await usedOf(team.teamId, "webhooks")).toBe(40);
      // Fewer calls than writes: 50 ingests and 40 first attempts' records share one line.
      expect(Object.keys(calls)).toEqual(["writeMany"]);
      expect(calls.writeMany).toBeLessThan(90);
    } finally {
      rx.restore();
    }
  });

  it("a queue that refuses does not refuse the event: stored and delivered at once (202); a failed first attempt whose retry cannot be queued waits in the store for its alarm", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const destination = await createDestination(team.key, source.id);
    const queue = brokenQueue(true);
    vi.spyOn(console, "error").mockImplementation(() => {});
    const rx = receiver([destination.url], [200, 503]);
    try {
      const delivered = await callSettled("POST", `/in/${source.slug}`, {
        raw: JSON.stringify({ type: "first" }),
        headers: { "content-type": "application/json" },
        env: queue.env,
      });
      expect(delivered.status).toBe(202);
      expect(queue.calls).toEqual([]);
      const failed = await callSettled("POST", `/in/${source.slug}`, {
        raw: JSON.stringify({ type: "second" }),
        headers: { "content-type": "application/json" },
        env: queue.env,
      });
      expect(failed.status).toBe(202);
      expect(rx.received).toHaveLength(2);
      // The retry's send was tried and refused; the delivery waits pending with its due time.
      expect(queue.calls).toHaveLength(1);
      const [row] = await storeSql<{ id: string; status: string; due_ms: number }>(
        source.id,
        "SELECT id, status, due_ms FROM deliveries WHERE status != 'delivered'",
      );
      expect(row).toMatchObject({ status: "pending" });
      expect(row!.id).toBe(queue.calls[0]![0]);
      expect(await eventCount(source.id)).toBe(2);
      expect(await usedOf(team.teamId, "webhooks")).toBe(2);
      // The alarm's look-up finds it once it is overdue past the queue's own delay.
      const store = relayStore(env, source.id);
      expect(await store.lostMessages(row!.due_ms)).toEqual([]);
      expect(await store.lostMessages(row!.due_ms + STUCK_AFTER_MS + 1)).toEqual([{ delivery_id: row!.id, source_id: source.id }]);
    } finally {
      rx.restore();
    }
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
    await ipCounter("public", ip).hit(Math.floor(at / 60_000) * 60, 199);
    const fresh = await ingestSettled(source.slug, JSON.stringify({ id: "evt_second", type: "invoice.paid" }), {}, { ip });
    await expectError(fresh, 429, { error: "Rate limit exceeded", retry_after: 55 });
    const duplicate = await ingestSettled(source.slug, body, {}, { ip });
    await expectError(duplicate, 429, { error: "Rate limit exceeded", retry_after: 55 });
    expect(await eventCount(source.id)).toBe(1);
    expect(await usedOf(team.teamId, "webhooks")).toBe(1);
    // A bad signature from a full IP (not yet remembered): 429, not 401.
    const signed = await createSource(team.key, { provider: "generic", signing_secret: "bench-secret" });
    const other = "198.51.100.178";
    await ipCounter("public", other).hit(Math.floor(at / 60_000) * 60, 200);
    await expectError(await ingestSettled(signed.slug, "{}", { "x-signature": "00" }, { ip: other }), 429, { error: "Rate limit exceeded", retry_after: 55 });
  });
});
