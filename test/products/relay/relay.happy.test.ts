import { afterEach, describe, expect, it } from "vitest";
import { setClock, nowSeconds } from "../../../src/platform/clock";
import { planLimits } from "../../../src/platform/plans";
import { verifyStandardWebhook } from "../../../src/platform/webhook-signature";
import { filterAdmits } from "../../../src/products/relay/relay.inbound";
import { call, expectError, json, setupTeam } from "../../helpers/api";
import { setUsed, usedOf } from "../../helpers/usage";
import {
  createDestination,
  createSource,
  deliverOnce,
  env,
  eventCount,
  getEvent,
  ingest,
  ingestSettled,
  receiver,
  storeSql,
  stripeHeaders,
  waitFor,
} from "./relay.helpers";
import { playedQueue } from "../../helpers/queues";

afterEach(() => setClock(null));

describe("relay sources and destinations", () => {
  it("creates, lists, reads, patches and deletes a source without ever returning the secret", async () => {
    const team = await setupTeam();
    const res = await call("POST", "webhooks/sources", { key: team.key, body: { name: "Stripe prod", provider: "stripe", signing_secret: "whsec_abc" } });
    expect(res.status).toBe(201);
    const created = (await json(res)).data;
    expect(created).toMatchObject({
      name: "Stripe prod",
      provider: "stripe",
      destinations_count: 0,
      enabled: true,
      retention_days: 7,
      signature_verification: true,
    });
    expect(created.slug).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(created.url).toBe(`http://app.test/in/${created.slug}`);
    expect(JSON.stringify(created)).not.toContain("whsec_abc");
    const stored = await env.DB.prepare("SELECT signing_secret FROM webhook_sources WHERE id = ?").bind(created.id).first<{ signing_secret: string }>();
    expect(stored!.signing_secret).toMatch(/^v1\./);
    expect(stored!.signing_secret).not.toContain("whsec_abc");

    const other = await createSource(team.key, { name: "second" });
    expect(other.slug).not.toBe(created.slug);
    await createDestination(team.key, created.id);

    const list = await json(await call("GET", "webhooks/sources", { key: team.key }));
    expect(list.data.map((s: { id: string }) => s.id).sort()).toEqual([other.id, created.id].sort());
    expect(list.data.find((s: { id: string }) => s.id === created.id).destinations_count).toBe(1);
    expect(JSON.stringify(list)).not.toContain("signing_secret");

    const got = await json(await call("GET", `webhooks/sources/${created.id}`, { key: team.key }));
    expect(got.data).toMatchObject({ id: created.id, destinations_count: 1 });

    const patched = await call("PATCH", `webhooks/sources/${created.id}`, {
      key: team.key,
      body: { name: "renamed", enabled: false, retention_days: 30, signing_secret: null },
    });
    expect(patched.status).toBe(200);
    expect((await json(patched)).data).toMatchObject({ name: "renamed", enabled: false, retention_days: 30, signature_verification: false });

    expect((await call("DELETE", `webhooks/sources/${created.id}`, { key: team.key })).status).toBe(204);
    expect((await call("GET", `webhooks/sources/${created.id}`, { key: team.key })).status).toBe(404);
    const leftovers = await env.DB.prepare("SELECT COUNT(*) AS n FROM webhook_destinations WHERE source_id = ?").bind(created.id).first<{ n: number }>();
    expect(leftovers!.n).toBe(0);
  });

  it("shows a destination's whsec_ secret only on create, stores it encrypted, lists, patches and deletes", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const dest = await createDestination(team.key, source.id, { url: "https://hooks.example.com/a", event_filter: ["invoice.*"] });
    expect(dest).toMatchObject({ url: "https://hooks.example.com/a", event_filter: ["invoice.*"], enabled: true });
    expect(dest.secret).toMatch(/^whsec_/);
    const stored = await env.DB.prepare("SELECT secret FROM webhook_destinations WHERE id = ?").bind(dest.id).first<{ secret: string }>();
    expect(stored!.secret).not.toContain(dest.secret);

    const list = await json(await call("GET", `webhooks/sources/${source.id}/destinations`, { key: team.key }));
    expect(list.data).toHaveLength(1);
    expect(list.data[0].secret).toBeUndefined();

    const patched = await call("PATCH", `webhooks/sources/${source.id}/destinations/${dest.id}`, {
      key: team.key,
      body: { url: "https://hooks.example.com/b", event_filter: null, enabled: false },
    });
    expect(patched.status).toBe(200);
    expect((await json(patched)).data).toMatchObject({ url: "https://hooks.example.com/b", event_filter: [], enabled: false });
    expect((await call("DELETE", `webhooks/sources/${source.id}/destinations/${dest.id}`, { key: team.key })).status).toBe(204);
    expect((await json(await call("GET", `webhooks/sources/${source.id}/destinations`, { key: team.key }))).data).toEqual([]);
  });
});

describe("event filter", () => {
  it("matches exact types, * prefixes and everything when empty", () => {
    expect(filterAdmits([], "a.b")).toBe(true);
    expect(filterAdmits([], null)).toBe(true);
    expect(filterAdmits(["*"], null)).toBe(true);
    expect(filterAdmits(["invoice.*"], "invoice.paid")).toBe(true);
    expect(filterAdmits(["invoice.*"], "invoices.paid")).toBe(false);
    expect(filterAdmits(["invoice.*"], "customer.created")).toBe(false);
    expect(filterAdmits(["invoice.*"], null)).toBe(false);
    expect(filterAdmits(["customer.created"], "customer.created")).toBe(true);
    expect(filterAdmits(["customer.created"], "customer.created.extra")).toBe(false);
    expect(filterAdmits(["a", "b.*"], "b.c")).toBe(true);
  });

  it("creates deliveries only for enabled destinations whose filter admits the event", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const invoices = await createDestination(team.key, source.id, { event_filter: ["invoice.*"] });
    const customers = await createDestination(team.key, source.id, { event_filter: ["customer.created"] });
    const all = await createDestination(team.key, source.id);
    await createDestination(team.key, source.id, { enabled: false });
    const rx = receiver([invoices.url, customers.url, all.url]);
    try {
      const res = await ingest(source.slug, JSON.stringify({ type: "invoice.paid" }));
      expect(res.status).toBe(202);
      const accepted = (await json(res)).data;
      expect(accepted).toMatchObject({ event_type: "invoice.paid", duplicate: false, deliveries: 2 });
      const event = await getEvent(team.key, source.id, accepted.id);
      expect(event.deliveries.map((d: { destination_id: string }) => d.destination_id).sort()).toEqual([invoices.id, all.id].sort());
    } finally {
      rx.restore();
    }
  });
});

describe("ingest and forwarding", () => {
  it("stores the raw body, content type and filtered headers, answers 202 and forwards a verifiable Standard Webhooks delivery", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key, { provider: "stripe", signing_secret: "whsec_stripe_test" });
    const dest = await createDestination(team.key, source.id);
    const rx = receiver([dest.url]);
    try {
      const body = JSON.stringify({ id: "evt_1", type: "invoice.paid", data: { amount: 10 } }, null, 2);
      const res = await ingest(source.slug, body, {
        ...(await stripeHeaders("whsec_stripe_test", body)),
        "x-custom": "kept",
        cookie: "a=b",
        "x-forwarded-for": "1.2.3.4",
      });
      expect(res.status).toBe(202);
      const accepted = (await json(res)).data;

      const stored = await getEvent(team.key, source.id, accepted.id);
      expect(stored).toMatchObject({ body, content_type: "application/json", event_type: "invoice.paid", provider_event_id: "evt_1" });
      expect(stored.headers["x-custom"]).toBe("kept");
      expect(stored.headers.cookie).toBeUndefined();
      expect(stored.headers["x-forwarded-for"]).toBeUndefined();
      expect(stored.headers["cf-connecting-ip"]).toBeUndefined();

      // The ingest request itself forwards it (its background attempt, not the queue).
      const delivered = await waitFor(async () => rx.received[0]);
      expect(delivered.body).toBe(body);
      expect(delivered.headers.get("content-type")).toBe("application/json");
      expect(delivered.headers.get("stripe-signature")).toBeNull();
      expect(delivered.headers.get("x-custom")).toBe("kept");
      expect(delivered.headers.get("x-relay-event-id")).toBe(accepted.id);
      const ok = await verifyStandardWebhook(
        dest.secret,
        {
          id: delivered.headers.get("webhook-id"),
          timestamp: delivered.headers.get("webhook-timestamp"),
          signature: delivered.headers.get("webhook-signature"),
        },
        delivered.body,
        nowSeconds(),
      );
      expect(ok).toBe(true);
      expect(
        await verifyStandardWebhook(
          "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
          {
            id: delivered.headers.get("webhook-id"),
            timestamp: delivered.headers.get("webhook-timestamp"),
            signature: delivered.headers.get("webhook-signature"),
          },
          delivered.body,
          nowSeconds(),
        ),
      ).toBe(false);

      const event = await waitFor(async () => {
        const e = await getEvent(team.key, source.id, accepted.id);
        return e.deliveries[0].status === "delivered" ? e : undefined;
      });
      expect(event.delivery_status).toBe("delivered");
      expect(event.deliveries[0].attempts).toHaveLength(1);
      expect(event.deliveries[0].attempts[0]).toMatchObject({ number: 1, status_code: 200, error: null, retry_in_seconds: null });
      expect(delivered.headers.get("webhook-id")).toBe(event.deliveries[0].id);
    } finally {
      rx.restore();
    }
  });

  it("drops a duplicate of a provider event id without forwarding it again", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key, { provider: "stripe" });
    const body = JSON.stringify({ id: "evt_dup", type: "charge.succeeded" });
    const first = (await json(await ingest(source.slug, body))).data;
    const second = await ingest(source.slug, body);
    expect(second.status).toBe(202);
    expect((await json(second)).data).toEqual({ id: first.id, event_type: "charge.succeeded", duplicate: true, deliveries: 0 });
    expect(await eventCount(source.id)).toBe(1);
  });

  it("retries a failing destination on the schedule (5 s, then 5 min), recording every attempt, then succeeds", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const dest = await createDestination(team.key, source.id);
    const rx = receiver([dest.url], [500, 502, 200]);
    try {
      const accepted = (await json(await ingest(source.slug, JSON.stringify({ type: "order.created" })))).data;
      // Attempt 1 comes from the ingest request itself (its background attempt).
      const first = await waitFor(async () => {
        const e = await getEvent(team.key, source.id, accepted.id);
        return e.deliveries[0].attempts.length === 1 && e.deliveries[0].status === "pending" ? e.deliveries[0] : undefined;
      });
      expect(first.attempts[0]).toMatchObject({ status_code: 500, error: "HTTP 500", retry_in_seconds: 5, response_body: "answer 500" });
      expect(first.next_attempt_at).not.toBeNull();

      const second = await deliverOnce(source.id, first.id, 2);
      expect(second.retry).toHaveBeenCalledWith({ delaySeconds: 300 });
      expect(second.ack).not.toHaveBeenCalled();
      const third = await deliverOnce(source.id, first.id, 3);
      expect(third.ack).toHaveBeenCalled();
      expect(third.retry).not.toHaveBeenCalled();

      const event = await getEvent(team.key, source.id, accepted.id);
      const delivery = event.deliveries[0];
      expect(delivery).toMatchObject({ status: "delivered", attempts_count: 3, last_status_code: 200, last_error: null, next_attempt_at: null });
      expect(
        delivery.attempts.map((a: { number: number; status_code: number; retry_in_seconds: number | null }) => [a.number, a.status_code, a.retry_in_seconds]),
      ).toEqual([
        [1, 500, 5],
        [2, 502, 300],
        [3, 200, null],
      ]);
      for (const a of delivery.attempts) {
        expect(typeof a.duration_ms).toBe("number");
        expect(a.attempted_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      }
      expect(rx.received).toHaveLength(3);

      // A redelivered message of a delivered delivery sends nothing and is acknowledged.
      const again = await deliverOnce(source.id, first.id, 4);
      expect(again.ack).toHaveBeenCalled();
      expect(rx.received).toHaveLength(3);
    } finally {
      rx.restore();
    }
  });

  it("marks a delivery failed after the last attempt (timeouts and network errors count as failures)", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const dest = await createDestination(team.key, source.id);
    const timeout = new DOMException("The operation timed out", "TimeoutError");
    const rx = receiver([dest.url], [timeout, new TypeError("connection refused"), 503]);
    try {
      const accepted = (await json(await ingest(source.slug, JSON.stringify({ type: "x" })))).data;
      const first = await waitFor(async () => {
        const e = await getEvent(team.key, source.id, accepted.id);
        return e.deliveries[0].attempts.length === 1 && e.deliveries[0].status === "pending" ? e.deliveries[0] : undefined;
      });
      expect(first.attempts[0]).toMatchObject({ status_code: null, error: "timeout after 15 s" });
      const delays: number[] = [];
      for (let n = 2; n <= 8; n++) {
        const message = await deliverOnce(source.id, first.id, n);
        if (n < 8) delays.push(message.retry.mock.calls[0][0].delaySeconds);
        else {
          expect(message.ack).toHaveBeenCalled();
          expect(message.retry).not.toHaveBeenCalled();
        }
      }
      expect(delays).toEqual([300, 1800, 7200, 18000, 36000, 36000]);
      const event = await getEvent(team.key, source.id, accepted.id);
      expect(event.delivery_status).toBe("failed");
      const delivery = event.deliveries[0];
      expect(delivery).toMatchObject({ status: "failed", attempts_count: 8, last_status_code: 503, next_attempt_at: null });
      expect(delivery.attempts).toHaveLength(8);
      expect(delivery.attempts[1].error).toBe("network error: connection refused");
      expect(delivery.attempts[7].retry_in_seconds).toBeNull();
      // Nothing more is sent for a failed delivery.
      const after = await deliverOnce(source.id, first.id, 9);
      expect(after.ack).toHaveBeenCalled();
      expect(rx.received).toHaveLength(8);
    } finally {
      rx.restore();
    }
  });

  it("never sends twice when two consumers claim the same delivery at once", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const dest = await createDestination(team.key, source.id);
    // The first attempt (from the ingest request) fails, so the delivery waits for its retry.
    const rx = receiver([dest.url], [503, 200]);
    // The retry's queue message is held (test/helpers/queues.ts) and handed to the Worker's own
    // consumer after the three claims, instead of waiting for the real queue's batch.
    const queue = playedQueue("webhook-deliveries");
    try {
      const accepted = (await json(await ingestSettled(source.slug, JSON.stringify({ type: "x" }), {}, { env: queue.env }))).data;
      const event = await getEvent(team.key, source.id, accepted.id);
      expect(event.deliveries[0].status).toBe("pending");
      const id = event.deliveries[0].id;
      await Promise.all([deliverOnce(source.id, id), deliverOnce(source.id, id), deliverOnce(source.id, id)]);
      await waitFor(async () => (await getEvent(team.key, source.id, accepted.id)).deliveries[0].status === "delivered");
      // The worker's own consumer sees the retry's message too, and sends nothing more.
      expect(await queue.deliver()).toHaveLength(1);
      expect(rx.received).toHaveLength(2);
      expect((await getEvent(team.key, source.id, accepted.id)).deliveries[0].attempts).toHaveLength(2);
    } finally {
      rx.restore();
    }
  });

  it("replays an event to the destinations that admit it now and answers 202 with their ids", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const a = await createDestination(team.key, source.id);
    const rx = receiver([a.url], [200]);
    try {
      const accepted = (await json(await ingest(source.slug, JSON.stringify({ type: "invoice.paid" })))).data;
      await waitFor(async () => rx.received.length === 1);
      const b = await createDestination(team.key, source.id, { event_filter: ["invoice.*"] });
      await createDestination(team.key, source.id, { event_filter: ["customer.*"] });
      await createDestination(team.key, source.id, { enabled: false });
      const res = await call("POST", `webhooks/sources/${source.id}/events/${accepted.id}/replay`, { key: team.key });
      expect(res.status).toBe(202);
      const body = await json(res);
      expect(body).toEqual({ data: { count: 2, destination_ids: [a.id, b.id] } });
      const event = await getEvent(team.key, source.id, accepted.id);
      expect(event.deliveries).toHaveLength(3);
      expect(
        event.deliveries
          .filter((d: { trigger: string }) => d.trigger === "replay")
          .map((d: { destination_id: string }) => d.destination_id)
          .sort(),
      ).toEqual([a.id, b.id].sort());
      await waitFor(async () => rx.received.length === 2);
      // A replay is a new delivery: a new webhook-id, the same event.
      expect(rx.received[1].headers.get("webhook-id")).not.toBe(rx.received[0].headers.get("webhook-id"));
      expect(rx.received[1].headers.get("x-relay-event-id")).toBe(accepted.id);
    } finally {
      rx.restore();
    }
  });
});

describe("replay metering", () => {
  it("a stored event consumes one webhooks unit per started 64 KB; a duplicate gives all of them back", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const used = async () => (await usedOf(team.teamId, "webhooks")) ?? 0;
    const big = JSON.stringify({ type: "bulk.export", id: "evt_big", data: "x".repeat(200 * 1024) });
    expect((await ingest(source.slug, big, { "x-event-id": "evt_big" })).status).toBe(202);
    expect(await used()).toBe(Math.ceil(new TextEncoder().encode(big).byteLength / (64 * 1024)));
    expect(await used()).toBe(4);
    const again = await json(await ingest(source.slug, big, { "x-event-id": "evt_big" }));
    expect(again.data.duplicate).toBe(true);
    expect(await used()).toBe(4);
    expect((await ingest(source.slug, JSON.stringify({ type: "small", id: "evt_small" }))).status).toBe(202);
    expect(await used()).toBe(5);
  });

  it("consumes one webhooks unit per delivery it creates; short of units: 429 and nothing is created", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const accepted = (await json(await ingest(source.slug, JSON.stringify({ type: "invoice.paid" })))).data;
    await createDestination(team.key, source.id);
    await createDestination(team.key, source.id);
    const used = async () => (await usedOf(team.teamId, "webhooks")) ?? 0;
    const before = await used();
    const res = await call("POST", `webhooks/sources/${source.id}/events/${accepted.id}/replay`, { key: team.key });
    expect((await json(res)).data.count).toBe(2);
    expect(await used()).toBe(before + 2);
    // One unit left of the plan's limit, two deliveries asked for.
    const limit = planLimits("pro").monthly.webhooks as number;
    await setUsed(team.teamId, "webhooks", limit - 1);
    const refused = await call("POST", `webhooks/sources/${source.id}/events/${accepted.id}/replay`, { key: team.key });
    await expectError(refused, 429, { error: "Monthly usage limit exceeded. Upgrade your plan." });
    const event = await getEvent(team.key, source.id, accepted.id);
    expect(event.deliveries.filter((d: { trigger: string }) => d.trigger === "replay")).toHaveLength(2);
    expect(await used()).toBe(limit - 1);
  });
});

describe("events list", () => {
  it("lists newest first with a cursor and filters by type and delivery status", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const base = Date.parse("2026-03-01T10:00:00.000Z");
    const types = ["invoice.paid", "invoice.created", "customer.created", "invoice.paid", "charge.failed"];
    const ids: string[] = [];
    for (let i = 0; i < types.length; i++) {
      setClock(base + i * 1000);
      ids.push((await json(await ingest(source.slug, JSON.stringify({ type: types[i] })))).data.id);
    }
    setClock(null);
    const page1 = await json(await call("GET", `webhooks/sources/${source.id}/events?limit=2`, { key: team.key }));
    expect(page1.data.map((e: { id: string }) => e.id)).toEqual([ids[4], ids[3]]);
    expect(page1.pagination).toMatchObject({ has_more: true, limit: 2 });
    const page2 = await json(await call("GET", `webhooks/sources/${source.id}/events?limit=2&cursor=${page1.pagination.next_cursor}`, { key: team.key }));
    expect(page2.data.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
    const page3 = await json(await call("GET", `webhooks/sources/${source.id}/events?limit=2&cursor=${page2.pagination.next_cursor}`, { key: team.key }));
    expect(page3.data.map((e: { id: string }) => e.id)).toEqual([ids[0]]);
    expect(page3.pagination).toEqual({ next_cursor: null, has_more: false, limit: 2 });

    const exact = await json(await call("GET", `webhooks/sources/${source.id}/events?type=invoice.paid`, { key: team.key }));
    expect(exact.data.map((e: { id: string }) => e.id)).toEqual([ids[3], ids[0]]);
    const prefix = await json(await call("GET", `webhooks/sources/${source.id}/events?type=invoice.*`, { key: team.key }));
    expect(prefix.data.map((e: { id: string }) => e.id)).toEqual([ids[3], ids[1], ids[0]]);
    expect(prefix.data[0]).toMatchObject({ source_id: source.id, event_type: "invoice.paid", delivery_status: "none", content_type: "application/json" });
    expect(prefix.data[0].body).toBeUndefined();
    expect((await json(await call("GET", `webhooks/sources/${source.id}/events?type=INVOICE.*`, { key: team.key }))).data).toEqual([]);
    expect((await json(await call("GET", `webhooks/sources/${source.id}/events?type=*`, { key: team.key }))).data).toHaveLength(5);

    const none = await json(await call("GET", `webhooks/sources/${source.id}/events?status=none`, { key: team.key }));
    expect(none.data).toHaveLength(5);
    expect((await json(await call("GET", `webhooks/sources/${source.id}/events?status=delivered`, { key: team.key }))).data).toEqual([]);

    const dest = await createDestination(team.key, source.id);
    const rx = receiver([dest.url], [200]);
    try {
      const id = (await json(await ingest(source.slug, JSON.stringify({ type: "late" })))).data.id;
      await waitFor(async () => (await getEvent(team.key, source.id, id)).delivery_status === "delivered");
      const delivered = await json(await call("GET", `webhooks/sources/${source.id}/events?status=delivered`, { key: team.key }));
      expect(delivered.data.map((e: { id: string }) => e.id)).toEqual([id]);
    } finally {
      rx.restore();
    }
  });
});

describe("deliveries that cannot be sent", () => {
  it("ends a delivery as failed without sending when its destination was disabled or its URL is now refused", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const event = (await json(await ingest(source.slug, JSON.stringify({ type: "x" })))).data;
    const disabled = await createDestination(team.key, source.id, { enabled: false });
    const refused = await createDestination(team.key, source.id);
    await env.DB.prepare("UPDATE webhook_destinations SET url = 'ftp://example.com/x' WHERE id = ?").bind(refused.id).run();
    const rx = receiver([disabled.url, "ftp://example.com/x"], [200]);
    try {
      const at = new Date().toISOString();
      const ids = [crypto.randomUUID(), crypto.randomUUID()];
      for (const [i, destinationId] of [disabled.id, refused.id].entries()) {
        await storeSql(
          source.id,
          "INSERT INTO deliveries (id, event_id, destination_id, status, attempts, trigger, created_at, updated_at) VALUES (?, ?, ?, 'pending', 0, 'replay', ?, ?)",
          ids[i],
          event.id,
          destinationId,
          at,
          at,
        );
      }
      const first = await deliverOnce(source.id, ids[0]);
      const second = await deliverOnce(source.id, ids[1]);
      expect(first.ack).toHaveBeenCalled();
      expect(second.ack).toHaveBeenCalled();
      expect(first.retry).not.toHaveBeenCalled();
      expect(second.retry).not.toHaveBeenCalled();
      const detail = await getEvent(team.key, source.id, event.id);
      const byId = Object.fromEntries(detail.deliveries.map((d: { id: string }) => [d.id, d]));
      expect(byId[ids[0]]).toMatchObject({ status: "failed", last_error: "destination disabled", attempts_count: 0, attempts: [] });
      expect(byId[ids[1]]).toMatchObject({ status: "failed", last_error: "URL refused: must use https", attempts_count: 1 });
      expect(byId[ids[1]].attempts[0]).toMatchObject({ status_code: null, retry_in_seconds: null });
      expect(detail.delivery_status).toBe("failed");
      expect(rx.received).toHaveLength(0);
    } finally {
      rx.restore();
    }
  });
});
