// Push notifications: accept one (defaults from the app's settings, payload size, recipients
// counted, one `push` quota unit per recipient, fan-out queued; nothing is sent inside the
// request), list them, and read one with its per-subscriber delivery results. The fan-out and the
// sends are push.consumer.ts; its queue messages are declared here, where the first is sent.
import { and, asc, desc, eq, gt, inArray, sql, type SQL } from "drizzle-orm";
import type { z } from "@hono/zod-openapi";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { pushDeliveries, pushNotifications, pushSubscribers, type PushTarget } from "../../db/schema";
import { nowIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { consumeQuota, releaseQuota, type QuotaOwner } from "../../platform/quota";
import { orNotFound } from "../../platform/tenancy";
import { loadApp } from "./push-apps.service";
import type { PushQueueMessage } from "./push.consumer";
import { targetFilter } from "./push.queries";
import { PUSH_LIMITS, type NotificationQuery, type SendSchema } from "./push.schemas";

export const notificationNotFound = () => new ApiError("not_found", "Notification not found");

type NotificationRow = typeof pushNotifications.$inferSelect;

/** Subscribers of a notification: the app's, registered no later than the notification, in the target. */
export function recipientsFilter(n: Pick<NotificationRow, "appId" | "createdAt" | "target">): SQL {
  return and(eq(pushSubscribers.appId, n.appId), sql`${pushSubscribers.createdAt} <= ${n.createdAt}`, targetFilter(n.target)) as SQL;
}

/**
 * Accepts a notification: resolves defaults from the app's settings, checks the payload fits one
 * push message, counts the recipients, consumes one `push` quota unit per recipient and queues the
 * fan-out. Nothing is sent inside the request.
 */
export async function sendNotification(env: Env, owner: QuotaOwner, appId: string, input: z.infer<typeof SendSchema>) {
  const app = await loadApp(env, owner.teamId, appId);
  const settings = app.settings as Record<string, unknown>;
  const id = crypto.randomUUID();
  const payload = JSON.stringify({
    notification_id: id,
    app_id: app.id,
    title: input.title,
    body: input.body,
    icon: input.icon ?? (settings.default_icon as string | undefined) ?? null,
    url: input.url ?? (settings.default_url as string | undefined) ?? null,
    data: input.data ?? null,
  });
  const size = new TextEncoder().encode(payload).byteLength;
  if (size > PUSH_LIMITS.MAX_PAYLOAD_BYTES) {
    throw ApiError.validation({ payload: [`is ${size} bytes once encoded; the maximum is ${PUSH_LIMITS.MAX_PAYLOAD_BYTES}`] });
  }
  const db = getDb(env.DB);
  const target: PushTarget = input.subscriber_ids
    ? { type: "subscribers", subscriber_ids: [...new Set(input.subscriber_ids)] }
    : input.tags
      ? { type: "tags", tags: [...new Set(input.tags)] }
      : { type: "all" };
  if (target.type === "subscribers") {
    const found = await db
      .select({ id: pushSubscribers.id })
      .from(pushSubscribers)
      .where(and(eq(pushSubscribers.appId, app.id), targetFilter(target)));
    const known = new Set(found.map((row) => row.id));
    const unknown = target.subscriber_ids.filter((sid) => !known.has(sid));
    if (unknown.length) throw ApiError.validation({ subscriber_ids: [`unknown subscriber ids: ${unknown.slice(0, 20).join(", ")}`] });
  }
  const createdAt = nowIso();
  const [{ count }] = await db
    .select({ count: sql<number>`count(*)` })
    .from(pushSubscribers)
    .where(recipientsFilter({ appId: app.id, createdAt, target }));
  const recipients = Number(count);
  if (recipients > 0) await consumeQuota(env, owner, "push", recipients);
  const row: NotificationRow = {
    id,
    teamId: owner.teamId,
    appId: app.id,
    payload,
    ttl: input.ttl ?? (settings.default_ttl as number | undefined) ?? 86_400,
    urgency: input.urgency ?? (settings.default_urgency as NotificationRow["urgency"] | undefined) ?? "normal",
    topic: input.topic ?? null,
    target,
    vapidSubject:
      (settings.vapid_subject as string | undefined) ?? (owner.ownerEmail ? `mailto:${owner.ownerEmail}` : env.APP_URL),
    recipients,
    fanoutDone: recipients === 0,
    fanoutToken: recipients === 0 ? null : crypto.randomUUID(),
    fanoutAt: createdAt,
    createdAt,
    completedAt: recipients === 0 ? createdAt : null,
  };
  await db.insert(pushNotifications).values(row);
  if (recipients > 0) {
    try {
      await env.PUSH_QUEUE.send({ kind: "fanout", notification_id: id, after: null, token: row.fanoutToken! } satisfies PushQueueMessage);
    } catch (error) {
      // Nothing was queued: undo the notification and give the units back.
      await db.delete(pushNotifications).where(eq(pushNotifications.id, id));
      await releaseQuota(env, owner.teamId, "push", recipients);
      throw error;
    }
  }
  return toNotification(row, {});
}

type Counts = Partial<Record<string, number>>;

function toNotification(row: NotificationRow, byStatus: Counts) {
  const delivered = byStatus.delivered ?? 0;
  const failed = byStatus.failed ?? 0;
  const removed = byStatus.removed ?? 0;
  const started = Object.values(byStatus).some((n) => (n ?? 0) > 0);
  return {
    id: row.id,
    app_id: row.appId,
    status: row.completedAt ? ("completed" as const) : started ? ("sending" as const) : ("queued" as const),
    payload: JSON.parse(row.payload) as Record<string, unknown>,
    ttl: row.ttl,
    urgency: row.urgency,
    topic: row.topic,
    target: row.target as Record<string, unknown>,
    recipients: row.recipients,
    counts: { queued: Math.max(0, row.recipients - delivered - failed - removed), delivered, failed, removed },
    created_at: row.createdAt,
    completed_at: row.completedAt,
  };
}

async function countsOf(env: Env, ids: string[]): Promise<Map<string, Counts>> {
  const out = new Map<string, Counts>();
  if (ids.length === 0) return out;
  const rows = await getDb(env.DB)
    .select({ id: pushDeliveries.notificationId, status: pushDeliveries.status, n: sql<number>`count(*)` })
    .from(pushDeliveries)
    .where(inArray(pushDeliveries.notificationId, ids))
    .groupBy(pushDeliveries.notificationId, pushDeliveries.status);
  for (const row of rows) {
    const counts = out.get(row.id) ?? {};
    counts[row.status] = Number(row.n);
    out.set(row.id, counts);
  }
  return out;
}

export async function listNotifications(env: Env, teamId: string, appId: string, limit: number) {
  await loadApp(env, teamId, appId);
  const rows = await getDb(env.DB)
    .select()
    .from(pushNotifications)
    .where(and(eq(pushNotifications.appId, appId), eq(pushNotifications.teamId, teamId)))
    .orderBy(desc(pushNotifications.createdAt), desc(pushNotifications.id))
    .limit(limit);
  const counts = await countsOf(env, rows.map((row) => row.id));
  return rows.map((row) => toNotification(row, counts.get(row.id) ?? {}));
}

export async function getNotification(env: Env, teamId: string, appId: string, id: string, query: z.infer<typeof NotificationQuery>) {
  await loadApp(env, teamId, appId);
  const db = getDb(env.DB);
  const rows = await db
    .select()
    .from(pushNotifications)
    .where(and(eq(pushNotifications.id, id), eq(pushNotifications.appId, appId), eq(pushNotifications.teamId, teamId)))
    .limit(1);
  const row = orNotFound(rows[0], notificationNotFound());
  const filters: SQL[] = [eq(pushDeliveries.notificationId, id)];
  if (query.status) filters.push(eq(pushDeliveries.status, query.status));
  if (query.cursor) filters.push(gt(pushDeliveries.subscriberId, query.cursor));
  const [counts, results] = await Promise.all([
    countsOf(env, [id]),
    db
      .select()
      .from(pushDeliveries)
      .where(and(...filters))
      .orderBy(asc(pushDeliveries.subscriberId))
      .limit(query.limit + 1),
  ]);
  const page = results.slice(0, query.limit);
  return {
    ...toNotification(row, counts.get(id) ?? {}),
    results: page.map((r) => ({
      subscriber_id: r.subscriberId,
      status: r.status,
      attempts: r.attempts,
      status_code: r.statusCode,
      error: r.error,
      updated_at: r.updatedAt,
    })),
    results_next_cursor: results.length > query.limit ? page[page.length - 1].subscriberId : null,
  };
}
