// What a push subscriber and a delivery row cost, measured from real rows rather than estimated:
// N realistic subscribers imported into an app's store and N delivery rows written by the store's
// fan-out and results (the code paths of production), the object's database size read before and
// after (tables and indexes, as SQLite stores them); the same rows in the former D1 tables, by D1's
// own size_after, and D1's notification rows (which stay there). The figures are printed (the push README's arithmetic is taken from them) and
// bounded, so a schema change that makes a row much larger fails here.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { pushStore } from "../../../src/products/push/push.store";
import type { SubscriberRecord } from "../../../src/products/push/store/push-store.types";
import { setupTeam } from "../../helpers/api";
import { browserSubscription, createApp } from "./push-helpers";

const N = 4_000;

async function storeSize(appId: string): Promise<number> {
  return runInDurableObject(pushStore(env, appId), async (_o, state) => state.storage.sql.databaseSize);
}

describe("push row sizes", () => {
  it("measures bytes per subscriber and per delivery in the store and in D1", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const sub = await browserSubscription();
    const at = new Date().toISOString();
    // An FCM endpoint is ~190 characters (the longest of the common push services), keys as browsers give them.
    const rows: SubscriberRecord[] = Array.from({ length: N }, () => ({
      id: crypto.randomUUID(),
      endpoint: `https://fcm.googleapis.com/fcm/send/${crypto.randomUUID().replace(/-/g, "")}:APA91b${"x".repeat(120)}`,
      p256dh: sub.keys.p256dh,
      auth: sub.keys.auth,
      expiration_time: null,
      tags: '["news"]',
      external_id: `user-${crypto.randomUUID().slice(0, 8)}`,
      created_at: at,
      updated_at: at,
    }));
    const store = pushStore(env, app.id);
    const empty = await storeSize(app.id);
    await store.importLegacy(app.id, { subscribers: rows, notifications: [], deliveries: [] });
    const withSubscribers = await storeSize(app.id);

    // One notification to all of them: the fan-out writes the rows, then every result is recorded.
    const notification = { id: crypto.randomUUID(), createdAt: new Date(Date.now() + 1000).toISOString(), target: { type: "all" as const } };
    let after: string | null = null;
    for (;;) {
      const step = await store.fanOut(notification, after, 1000, at);
      if (step.done) break;
      after = step.ids[step.ids.length - 1];
    }
    const sorted = rows.map((r) => r.id).sort();
    for (let i = 0; i < N; i += 500) {
      const outcomes = sorted.slice(i, i + 500).map((subscriberId) => ({ subscriberId, status: "delivered" as const, statusCode: 201, error: null }));
      await store.record(app.id, notification.id, outcomes, null, new Date().toISOString());
    }
    const withDeliveries = await storeSize(app.id);

    // The same rows in the former D1 tables.
    const d1Before = (await env.DB.prepare("SELECT 1").run()).meta.size_after;
    const statements = rows.map((r) =>
      env.DB.prepare(
        `INSERT INTO push_subscribers (id, team_id, app_id, endpoint, p256dh, auth, expiration_time, tags, external_id, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).bind(r.id, team.teamId, app.id, r.endpoint, r.p256dh, r.auth, r.expiration_time, r.tags, r.external_id, r.created_at, r.updated_at),
    );
    for (let i = 0; i < statements.length; i += 500) await env.DB.batch(statements.slice(i, i + 500));
    const d1Subscribers = (await env.DB.prepare("SELECT 1").run()).meta.size_after;
    await env.DB.prepare(
      `INSERT INTO push_notifications (id, team_id, app_id, payload, ttl, urgency, target, vapid_subject, recipients, fanout_done, created_at)
       VALUES (?, ?, ?, '{"title":"t"}', 60, 'normal', '{"type":"all"}', 'mailto:ops@example.com', ?, 1, ?)`,
    )
      .bind(notification.id, team.teamId, app.id, N, at)
      .run();
    await env.DB.prepare(
      `INSERT INTO push_deliveries (notification_id, subscriber_id, status, attempts, status_code, updated_at)
       SELECT ?1, id, 'delivered', 1, 201, ?2 FROM push_subscribers WHERE app_id = ?3`,
    )
      .bind(notification.id, at, app.id)
      .run();
    const d1Deliveries = (await env.DB.prepare("SELECT 1").run()).meta.size_after;

    // Notification rows (they stay in D1): a typical payload of ~250 bytes.
    const payload = JSON.stringify({
      notification_id: crypto.randomUUID(),
      app_id: app.id,
      title: "Your order has shipped",
      body: "Order 4711 left our warehouse and arrives on Thursday.",
      icon: "https://cdn.example.com/icon.png",
      url: "/orders/4711",
      data: { order: 4711 },
    });
    const notes = Array.from({ length: N }, () =>
      env.DB.prepare(
        `INSERT INTO push_notifications (id, team_id, app_id, payload, ttl, urgency, target, vapid_subject, recipients, fanout_done, fanout_token, fanout_at, created_at, completed_at)
         VALUES (?, ?, ?, ?, 86400, 'normal', '{"type":"all"}', 'mailto:owner@example.com', 120, 1, ?, ?, ?, ?)`,
      ).bind(crypto.randomUUID(), team.teamId, app.id, payload, crypto.randomUUID(), at, at, at),
    );
    for (let i = 0; i < notes.length; i += 500) await env.DB.batch(notes.slice(i, i + 500));
    const d1Notifications = (await env.DB.prepare("SELECT 1").run()).meta.size_after;

    const figures = {
      store_bytes_per_subscriber: Math.round((withSubscribers - empty) / N),
      store_bytes_per_delivery: Math.round((withDeliveries - withSubscribers) / N),
      d1_bytes_per_subscriber: Math.round((d1Subscribers - d1Before) / N),
      d1_bytes_per_delivery: Math.round((d1Deliveries - d1Subscribers) / N),
      d1_bytes_per_notification: Math.round((d1Notifications - d1Deliveries) / N),
    };
    console.log(JSON.stringify({ msg: "push row sizes", rows: N, ...figures }));
    expect(figures.store_bytes_per_subscriber).toBeGreaterThan(300);
    expect(figures.store_bytes_per_subscriber).toBeLessThan(1200);
    expect(figures.store_bytes_per_delivery).toBeGreaterThan(80);
    expect(figures.store_bytes_per_delivery).toBeLessThan(500);
    await env.DB.prepare("DELETE FROM push_apps WHERE id = ?").bind(app.id).run();
  }, 120_000);
});
