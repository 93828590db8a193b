// Delivery to a local push service: VAPID, RFC 8291 payload, 404/410 removal, retries on 503,
// redelivery without duplicates, fan-out in chunks. The first test goes through the real
// push-sends queue end to end; the others play the queue (test/helpers/queues.ts), delivering
// what the app sent to the Worker's consumer at once instead of after the queue's batch timeout.
// Delivery rows are read (and, for a few cases, written) inside the app's store (storeRows).
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { call, json, setupTeam } from "../../helpers/api";
import { playedQueue } from "../../helpers/queues";
import { backoffSeconds } from "../../../src/platform/backoff";
import { nowMs, setClock } from "../../../src/platform/clock";
import { deliveriesOf } from "../../../src/platform/jobs/queues";
import { MAX_ATTEMPTS, pushSendsConsumer, SEND_CHUNK, SEND_TIMEOUT_MS, STALE_CLAIM_MS } from "../../../src/products/push/push.consumer";
import { pushSendsQueue } from "../../../src/products/push/push.messages";
import { browserSubscription, createApp, decryptPush, fakeBatch, pushService, storeRows, subscribe, verifyJwt, waitForCompletion } from "./push-helpers";

let restore: (() => void) | null = null;
afterEach(() => {
  restore?.();
  restore = null;
});

/** A delivery row, read inside the app's store. */
async function deliveryRow(appId: string, notificationId: string, subscriberId: string) {
  const [row] = await storeRows<{ status: string; attempts: number; status_code: number | null; error: string | null }>(
    appId,
    "SELECT * FROM deliveries WHERE notification_id = ? AND subscriber_id = ?",
    notificationId,
    subscriberId,
  );
  return row ?? null;
}

/** A notification of an app whose fan-out is done, written as the API and the store would have: its D1 row and the store's. */
async function fannedOutNotification(team: { teamId: string }, appId: string, id: string, at: string, recipients: number) {
  await env.DB.prepare(
    `INSERT INTO push_notifications (id, team_id, app_id, payload, ttl, urgency, target, vapid_subject, recipients, fanout_done, created_at)
     VALUES (?, ?, ?, '{"title":"t"}', 60, 'normal', '{"type":"all"}', 'mailto:ops@example.com', ?, 1, ?)`,
  )
    .bind(id, team.teamId, appId, recipients, at)
    .run();
  await storeRows(appId, "INSERT INTO notifications (id, created_at, fanout_done) VALUES (?, ?, 1)", id, at);
}

describe("push delivery", () => {
  it("claims a chunk of sends under the queue's lease (declared with it, push.messages.ts), which outlasts a chunk's timeout", () => {
    expect(STALE_CLAIM_MS).toBe(pushSendsQueue.claim.leaseMs);
    expect(MAX_ATTEMPTS).toBe(pushSendsQueue.claim.maxAttempts);
    expect(pushSendsQueue.claim.leaseMs).toBeGreaterThan(SEND_TIMEOUT_MS);
  });

  it("sends an encrypted, VAPID-signed message that the subscriber decrypts to the exact JSON", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key, { name: "Shop", settings: { default_icon: "https://cdn.example.com/i.png", default_url: "/home" } });
    const sub = await browserSubscription();
    const registered = await subscribe(team.key, app.id, sub);
    const service = pushService();
    restore = service.restore;

    const res = await call("POST", `push/apps/${app.id}/notifications`, {
      key: team.key,
      body: { title: "Hello", body: "Your order shipped", data: { order: 42, tags: ["a"] }, ttl: 3600, urgency: "high", topic: "order-42" },
    });
    expect(res.status).toBe(202);
    const accepted = (await json(res)).data;
    expect(accepted).toMatchObject({ status: "queued", recipients: 1, counts: { queued: 1, delivered: 0, failed: 0, removed: 0 } });

    const done = await waitForCompletion(team.key, app.id, accepted.id);
    expect(done.counts).toEqual({ queued: 0, delivered: 1, failed: 0, removed: 0 });
    expect(done.results).toEqual([expect.objectContaining({ subscriber_id: registered.id, status: "delivered", attempts: 1, status_code: 201, error: null })]);
    expect(service.requests).toHaveLength(1);
    const [req] = service.requests;
    expect(req.url).toBe(sub.endpoint);
    expect(req.headers).toMatchObject({ "content-encoding": "aes128gcm", ttl: "3600", urgency: "high", topic: "order-42" });

    // RFC 8292: vapid t=<JWT signed by the app's key>, k=<the app's public key>.
    const match = /^vapid t=([^,]+), k=(.+)$/.exec(req.headers.authorization);
    expect(match).not.toBeNull();
    expect(match![2]).toBe(app.vapid_public_key);
    const claims = await verifyJwt(match![1], app.vapid_public_key);
    expect(claims).toMatchObject({ aud: "https://push.example.com", sub: "mailto:owner@example.com" });
    expect(claims.exp as number).toBeGreaterThan(Math.floor(Date.now() / 1000));

    const plaintext = await decryptPush(req.body, sub);
    expect(plaintext).toBe(
      JSON.stringify({
        notification_id: accepted.id,
        app_id: app.id,
        title: "Hello",
        body: "Your order shipped",
        icon: "https://cdn.example.com/i.png",
        url: "/home",
        data: { order: 42, tags: ["a"] },
      }),
    );
    expect(JSON.parse(plaintext)).toEqual(done.payload);

    // One quota unit per recipient.
    const usage = await json(await call("GET", "usage", { key: team.key }));
    expect(usage.data.services.push.used).toBe(1);
  });

  it("removes a subscriber the push service answers 410 or 404 for, and lowers subscriber_count", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const gone = await browserSubscription("https://push.example.com/gone");
    const missing = await browserSubscription("https://push.example.com/missing");
    const alive = await browserSubscription("https://push.example.com/alive");
    const goneId = (await subscribe(team.key, app.id, gone)).id;
    const missingId = (await subscribe(team.key, app.id, missing)).id;
    await subscribe(team.key, app.id, alive);
    const service = pushService((req) => (req.url.endsWith("/gone") ? 410 : req.url.endsWith("/missing") ? 404 : 201));
    restore = service.restore;
    const queue = playedQueue("push-sends");

    const sent = (await json(await call("POST", `push/apps/${app.id}/notifications`, { key: team.key, body: { title: "t", body: "b" }, env: queue.env }))).data;
    await queue.deliver();
    const done = await waitForCompletion(team.key, app.id, sent.id);
    expect(done.counts).toEqual({ queued: 0, delivered: 1, failed: 0, removed: 2 });
    expect(done.results.find((r: { subscriber_id: string }) => r.subscriber_id === goneId)).toMatchObject({ status: "removed", status_code: 410 });
    expect(done.results.find((r: { subscriber_id: string }) => r.subscriber_id === missingId)).toMatchObject({ status: "removed", status_code: 404 });

    const after = (await json(await call("GET", `push/apps/${app.id}`, { key: team.key }))).data;
    expect(after.subscriber_count).toBe(1);
    const list = await json(await call("GET", `push/apps/${app.id}/subscribers`, { key: team.key }));
    expect(list.data.map((s: { endpoint: string }) => s.endpoint)).toEqual([alive.endpoint]);
  });

  it("retries 503 with backoff, then delivers; redelivery never sends twice", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const sub = await browserSubscription();
    const subscriberId = (await subscribe(team.key, app.id, sub)).id;
    let status = 503;
    const service = pushService(() => status);
    restore = service.restore;
    const queue = playedQueue("push-sends");

    const sent = (await json(await call("POST", `push/apps/${app.id}/notifications`, { key: team.key, body: { title: "t", body: "b" }, env: queue.env }))).data;
    // The queue's first delivery (fan-out, then the send) made the first attempt and scheduled a retry.
    await queue.deliver();
    const first = await deliveryRow(app.id, sent.id, subscriberId);
    expect(first).toMatchObject({ status: "retrying", attempts: 1, status_code: 503 });
    expect(service.requests).toHaveLength(1);
    const detail = (await json(await call("GET", `push/apps/${app.id}/notifications/${sent.id}`, { key: team.key }))).data;
    expect(detail).toMatchObject({ status: "sending", counts: { queued: 1, delivered: 0, failed: 0, removed: 0 } });

    // Second delivery of the send message (as the queue would after the delay): 503 again.
    const message = { kind: "send", notification_id: sent.id, subscriber_ids: [subscriberId] };
    const second = fakeBatch([{ body: message, attempts: 2 }]);
    await pushSendsConsumer.consume(second.batch, env);
    expect(second.records[0].retried).toEqual({ delaySeconds: backoffSeconds(2) });
    expect(second.records[0].acked).toBe(false);
    expect(await deliveryRow(app.id, sent.id, subscriberId)).toMatchObject({ status: "retrying", attempts: 2 });

    // Third: the push service recovered.
    status = 201;
    const third = fakeBatch([{ body: message, attempts: 3 }]);
    await pushSendsConsumer.consume(third.batch, env);
    expect(third.records[0].acked).toBe(true);
    expect(await deliveryRow(app.id, sent.id, subscriberId)).toMatchObject({ status: "delivered", attempts: 3, status_code: 201 });
    expect(service.requests).toHaveLength(3);

    // Redelivered again (at-least-once queue): nothing is sent.
    const again = fakeBatch([
      { body: message, attempts: 4 },
      { body: message, attempts: 1 },
    ]);
    await pushSendsConsumer.consume(again.batch, env);
    expect(again.records.every((r) => r.acked)).toBe(true);
    expect(service.requests).toHaveLength(3);
    const done = await waitForCompletion(team.key, app.id, sent.id);
    expect(done.counts).toEqual({ queued: 0, delivered: 1, failed: 0, removed: 0 });
  });

  it("records a failure after the last attempt and on a non-retryable answer", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const flaky = await browserSubscription("https://push.example.com/flaky");
    const rejected = await browserSubscription("https://push.example.com/rejected");
    const flakyId = (await subscribe(team.key, app.id, flaky)).id;
    const rejectedId = (await subscribe(team.key, app.id, rejected)).id;
    const service = pushService((req) => (req.url.endsWith("/flaky") ? 503 : 403));
    restore = service.restore;
    const queue = playedQueue("push-sends");

    const sent = (await json(await call("POST", `push/apps/${app.id}/notifications`, { key: team.key, body: { title: "t", body: "b" }, env: queue.env }))).data;
    await queue.deliver();
    expect((await deliveryRow(app.id, sent.id, flakyId))?.status).toBe("retrying");
    expect(await deliveryRow(app.id, sent.id, rejectedId)).toMatchObject({
      status: "failed",
      status_code: 403,
      error: "push service answered 403: push service says no",
    });

    // Simulate the remaining queue attempts until the last one.
    for (let attempt = 2; attempt <= MAX_ATTEMPTS; attempt++) {
      const { batch, records } = fakeBatch([{ body: { kind: "send", notification_id: sent.id, subscriber_ids: [flakyId] }, attempts: attempt }]);
      await pushSendsConsumer.consume(batch, env);
      if (attempt < MAX_ATTEMPTS) expect(records[0].retried).toEqual({ delaySeconds: backoffSeconds(attempt) });
      else expect(records[0].acked).toBe(true);
    }
    const row = await deliveryRow(app.id, sent.id, flakyId);
    expect(row).toMatchObject({ status: "failed", attempts: MAX_ATTEMPTS, status_code: 503 });
    expect(row!.error).toContain(`gave up after ${MAX_ATTEMPTS} attempts`);
    const done = await waitForCompletion(team.key, app.id, sent.id);
    expect(done.counts).toEqual({ queued: 0, delivered: 0, failed: 2, removed: 0 });
    const failedOnly = (await json(await call("GET", `push/apps/${app.id}/notifications/${sent.id}?status=failed&limit=1`, { key: team.key }))).data;
    expect(failedOnly.results).toHaveLength(1);
    expect(failedOnly.results_next_cursor).not.toBeNull();
  });

  it("fans a large audience out in chunks through the queue, one message per subscriber", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    // 620 subscribers written directly (the registration endpoint is rate limited): two fan-out
    // chunks and 25 send messages. They share one browser key pair; endpoints differ.
    const sub = await browserSubscription();
    const total = 620;
    const ids: string[] = [];
    const rows = [];
    for (let i = 0; i < total; i++) {
      const id = crypto.randomUUID();
      ids.push(id);
      rows.push([id, `https://push.example.com/bulk/${i}`, sub.keys.p256dh, sub.keys.auth]);
    }
    // Into the app's store, in one statement.
    await storeRows(
      app.id,
      `INSERT INTO subscribers (id, endpoint, p256dh, auth, tags, created_at, updated_at)
       SELECT value->>0, value->>1, value->>2, value->>3, '["bulk"]', '2020-01-01T00:00:00.000Z', '2020-01-01T00:00:00.000Z' FROM json_each(?)`,
      JSON.stringify(rows),
    );
    const service = pushService();
    restore = service.restore;
    const queue = playedQueue("push-sends");

    const res = await call("POST", `push/apps/${app.id}/notifications`, {
      key: team.key,
      body: { title: "Sale", body: "50% off", tags: ["bulk"] },
      env: queue.env,
    });
    expect(res.status).toBe(202);
    const sent = (await json(res)).data;
    expect(sent.recipients).toBe(total);
    await queue.deliver();
    const done = (await json(await call("GET", `push/apps/${app.id}/notifications/${sent.id}?limit=1`, { key: team.key }))).data;
    expect(done.status).toBe("completed");
    expect(done.counts).toEqual({ queued: 0, delivered: total, failed: 0, removed: 0 });
    const urls = service.requests.map((r) => r.url);
    expect(urls).toHaveLength(total);
    expect(new Set(urls).size).toBe(total);
    expect(SEND_CHUNK).toBeLessThanOrEqual(25);
  }, 90_000);

  it("leaves a fresh claim of another consumer alone and takes over a stale one", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const sub = await browserSubscription();
    const subscriberId = (await subscribe(team.key, app.id, sub)).id;
    // A notification whose only delivery is being sent by a consumer that then died.
    const notificationId = crypto.randomUUID();
    const claimedAt = new Date(nowMs()).toISOString();
    await fannedOutNotification(team, app.id, notificationId, claimedAt, 1);
    await storeRows(
      app.id,
      "INSERT INTO deliveries (notification_id, subscriber_id, status, attempts, lease_until, updated_at) VALUES (?, ?, 'sending', 1, ?, ?)",
      notificationId,
      subscriberId,
      Date.parse(claimedAt) + STALE_CLAIM_MS,
      claimedAt,
    );
    const service = pushService();
    restore = service.restore;
    const message = { kind: "send", notification_id: notificationId, subscriber_ids: [subscriberId] };

    const fresh = fakeBatch([{ body: message, attempts: 2 }]);
    await pushSendsConsumer.consume(fresh.batch, env);
    expect(fresh.records[0].retried).toEqual({ delaySeconds: STALE_CLAIM_MS / 1000 });
    expect(service.requests).toHaveLength(0);

    setClock(nowMs() + STALE_CLAIM_MS + 1000);
    try {
      const stale = fakeBatch([{ body: message, attempts: 3 }]);
      await pushSendsConsumer.consume(stale.batch, env);
      expect(stale.records[0].acked).toBe(true);
    } finally {
      setClock(null);
    }
    expect(service.requests).toHaveLength(1);
    expect(await deliveryRow(app.id, notificationId, subscriberId)).toMatchObject({ status: "delivered", attempts: 2 });
    const done = (await json(await call("GET", `push/apps/${app.id}/notifications/${notificationId}`, { key: team.key }))).data;
    expect(done).toMatchObject({ status: "completed", counts: { queued: 0, delivered: 1, failed: 0, removed: 0 } });
  });

  it("a redelivered fan-out message writes no duplicate rows and sends each subscriber once", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const subs = [await browserSubscription(), await browserSubscription()];
    for (const sub of subs) await subscribe(team.key, app.id, sub);
    const notificationId = crypto.randomUUID();
    await env.DB.prepare(
      `INSERT INTO push_notifications (id, team_id, app_id, payload, ttl, urgency, target, vapid_subject, recipients, fanout_done, created_at)
       VALUES (?, ?, ?, '{"title":"t"}', 60, 'normal', '{"type":"all"}', 'mailto:ops@example.com', 2, 0, ?)`,
    )
      .bind(notificationId, team.teamId, app.id, new Date(nowMs() + 1000).toISOString())
      .run();
    const service = pushService();
    restore = service.restore;
    const queue = playedQueue("push-sends");
    const fanout = { kind: "fanout", notification_id: notificationId, after: null };
    const { batch, records } = fakeBatch([{ body: fanout }, { body: fanout, attempts: 2 }]);
    await pushSendsConsumer.consume(batch, queue.env);
    expect(records.every((r) => r.acked)).toBe(true);
    const [rows] = await storeRows<{ n: number }>(app.id, "SELECT count(*) AS n FROM deliveries WHERE notification_id = ?", notificationId);
    expect(rows.n).toBe(2);
    // The send messages the fan-out queued.
    await queue.deliver();
    const done = await waitForCompletion(team.key, app.id, notificationId);
    expect(done.counts).toEqual({ queued: 0, delivered: 2, failed: 0, removed: 0 });
    expect(service.requests.map((r) => r.url).sort()).toEqual(subs.map((s) => s.endpoint).sort());
  });

  it("records the failure on the queue's last delivery of a message instead of leaving it to the dead-letter queue", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const subscriberId = (await subscribe(team.key, app.id, await browserSubscription())).id;
    const notificationId = crypto.randomUUID();
    const at = new Date(nowMs()).toISOString();
    await fannedOutNotification(team, app.id, notificationId, at, 1);
    await storeRows(
      app.id,
      "INSERT INTO deliveries (notification_id, subscriber_id, status, attempts, updated_at) VALUES (?, ?, 'retrying', 1, ?)",
      notificationId,
      subscriberId,
      at,
    );
    const service = pushService(() => 503);
    restore = service.restore;
    const { batch, records } = fakeBatch([
      { body: { kind: "send", notification_id: notificationId, subscriber_ids: [subscriberId] }, attempts: deliveriesOf("push-sends") },
    ]);
    await pushSendsConsumer.consume(batch, env);
    expect(records[0]).toMatchObject({ acked: true, retried: null });
    expect(service.requests).toHaveLength(1);
    expect(await deliveryRow(app.id, notificationId, subscriberId)).toMatchObject({ status: "failed", attempts: 2, status_code: 503 });
  });
});
