// The one-time move of push subscribers and deliveries from the former D1 tables
// (`push_subscribers`, `push_deliveries`, where every app's rows lived before the per-app stores)
// into each app's store. The operator runs it in steps (POST /api/v1/admin/push/migrate-stores)
// until `more` is false. Each step reads up to `limit` of each table in key order, imports each
// app's share into its store (one call per app, one transaction), deletes from D1 what was
// imported, and writes the app's subscriber_count from the store's answer. A step that stops
// between import and delete repeats nothing: rows keep their ids, which the store imports once.
// Rows of apps that no longer exist are deleted, not moved (`dropped`).
import { log } from "../../platform/log";
import type { Env } from "../../env";
import { ApiError } from "../../platform/errors";
import { DELETE_LEGACY_DELIVERIES, DELETE_LEGACY_SUBSCRIBERS, LEGACY_DELIVERIES, LEGACY_SUBSCRIBERS } from "./push.queries";
import { pushStore, syncCount } from "./push.store";
import type { DeliveryRecord, LegacyImport, SubscriberRecord } from "./store/push-store.types";

/** Rows of each table per step: a subscriber is under 3 KB, so a step stays small in memory and in one store call. */
export const MIGRATE_MAX_ROWS = 1_000;

type LegacySubscriber = SubscriberRecord & { app_id: string; app_exists: number };
type LegacyDelivery = DeliveryRecord & { app_id: string | null; n_created_at: string; fanout_done: number; completed_at: string | null };

/** One step: moves up to `limit` subscribers and up to `limit` delivery rows. */
export async function migrateLegacyPush(env: Env, limit: number): Promise<{ subscribers: number; deliveries: number; dropped: number; more: boolean }> {
  const [subs, dels] = await env.DB.batch([env.DB.prepare(LEGACY_SUBSCRIBERS).bind(limit), env.DB.prepare(LEGACY_DELIVERIES).bind(limit)]);
  const subscribers = subs.results as LegacySubscriber[];
  const deliveries = dels.results as LegacyDelivery[];

  type Share = LegacyImport & { subscriberIds: string[]; deliveryKeys: [string, string][]; notificationIds: Set<string> };
  const byApp = new Map<string, Share>();
  const share = (appId: string): Share => {
    const existing = byApp.get(appId);
    if (existing) return existing;
    const fresh: Share = { subscribers: [], notifications: [], deliveries: [], subscriberIds: [], deliveryKeys: [], notificationIds: new Set() };
    byApp.set(appId, fresh);
    return fresh;
  };
  const droppedSubscribers: string[] = [];
  const droppedDeliveries: [string, string][] = [];
  for (const { app_id, app_exists, ...row } of subscribers) {
    if (!app_exists) {
      droppedSubscribers.push(row.id);
      continue;
    }
    const s = share(app_id);
    s.subscribers.push(row);
    s.subscriberIds.push(row.id);
  }
  for (const { app_id, n_created_at, fanout_done, completed_at, ...row } of deliveries) {
    const key: [string, string] = [row.notification_id, row.subscriber_id];
    if (app_id === null) {
      droppedDeliveries.push(key);
      continue;
    }
    const s = share(app_id);
    if (!s.notificationIds.has(row.notification_id)) {
      s.notificationIds.add(row.notification_id);
      s.notifications.push({ id: row.notification_id, created_at: n_created_at, fanout_done, completed_at });
    }
    s.deliveries.push(row);
    s.deliveryKeys.push(key);
  }

  const imported = await Promise.allSettled(
    [...byApp].map(async ([appId, { subscriberIds, deliveryKeys, subscribers, notifications, deliveries }]) => {
      const answer = await pushStore(env, appId).importLegacy(appId, { subscribers, notifications, deliveries });
      return { appId, subscriberIds, deliveryKeys, count: answer.count };
    }),
  );
  const done = imported.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const subscriberIds = [...done.flatMap((d) => d.subscriberIds), ...droppedSubscribers];
  const deliveryKeys = [...done.flatMap((d) => d.deliveryKeys), ...droppedDeliveries];
  const deletes = [];
  if (subscriberIds.length) deletes.push(env.DB.prepare(DELETE_LEGACY_SUBSCRIBERS).bind(JSON.stringify(subscriberIds)));
  if (deliveryKeys.length) {
    deletes.push(env.DB.prepare(DELETE_LEGACY_DELIVERIES).bind(JSON.stringify(deliveryKeys)));
  }
  if (deletes.length) await env.DB.batch(deletes);
  await Promise.all(done.map((d) => syncCount(env, d.appId, d.count)));

  const failed = imported.find((r) => r.status === "rejected");
  if (failed) {
    log.error("push migration: a store did not answer", { error: String((failed as PromiseRejectedResult).reason) });
    throw new ApiError("unavailable", "A push store did not answer; what was moved is recorded, run the step again");
  }
  return {
    subscribers: done.reduce((n, d) => n + d.subscriberIds.length, 0),
    deliveries: done.reduce((n, d) => n + d.deliveryKeys.length, 0),
    dropped: droppedSubscribers.length + droppedDeliveries.length,
    more: subscribers.length === limit || deliveries.length === limit,
  };
}
