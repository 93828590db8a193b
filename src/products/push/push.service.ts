// Push apps, subscribers and notifications over D1. The VAPID private key and the FCM/APNs
// credentials are stored encrypted and never leave this file in a response shape. The app's
// subscriber_count changes only in the same batch as the subscriber insert or delete that it
// counts, and only when that insert or delete really happens.
import { and, asc, desc, eq, gt, inArray, notExists, sql, type SQL } from "drizzle-orm";
import type { z } from "@hono/zod-openapi";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { pushApps, pushDeliveries, pushNotifications, pushSubscribers, type PushTarget } from "../../db/schema";
import { nowIso } from "../../platform/clock";
import { encryptSecret, fromBase64Url } from "../../platform/crypto";
import { ApiError, type FieldErrors } from "../../platform/errors";
import { consumeQuota, releaseQuota, type QuotaOwner } from "../../platform/quota";
import { checkUrl, ssrfOptions } from "../../platform/ssrf";
import { orNotFound, ownedBy, ownedRow } from "../../platform/tenancy";
import { derivePublicKey, generateVapidKeys, keysMatch, publicKeyProblem } from "./vapid";
import {
  PUSH_LIMITS,
  type CreateAppSchema,
  type ListSubscribersQuery,
  type NotificationQuery,
  type SendSchema,
  type SubscribeSchema,
  type UpdateAppSchema,
} from "./push.schemas";

export const appNotFound = () => new ApiError("not_found", "App not found");
export const subscriberNotFound = () => new ApiError("not_found", "Subscriber not found");
export const notificationNotFound = () => new ApiError("not_found", "Notification not found");

type AppRow = typeof pushApps.$inferSelect;
type SubscriberRow = typeof pushSubscribers.$inferSelect;
type NotificationRow = typeof pushNotifications.$inferSelect;

/** Queue messages of the push-sends queue. */
export type PushQueueMessage =
  | {
      kind: "fanout";
      notification_id: string;
      after: string | null;
      /** The notification's fanout_token when queued; absent only in messages queued before tokens existed. */
      token?: string;
    }
  | { kind: "send"; notification_id: string; subscriber_ids: string[] };

// Apps ----------------------------------------------------------------------------------------

/** The public shape of an app: no private key, no credentials. */
export function toApp(row: AppRow) {
  return {
    id: row.id,
    name: row.name,
    vapid_public_key: row.vapidPublicKey,
    subscriber_count: row.subscriberCount,
    settings: row.settings,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export async function listApps(env: Env, teamId: string) {
  const rows = await getDb(env.DB).select().from(pushApps).where(ownedBy(pushApps, teamId)).orderBy(desc(pushApps.createdAt), desc(pushApps.id));
  return rows.map(toApp);
}

async function loadApp(env: Env, teamId: string, appId: string): Promise<AppRow> {
  const rows = await getDb(env.DB).select().from(pushApps).where(ownedRow(pushApps, teamId, appId)).limit(1);
  return orNotFound(rows[0], appNotFound());
}

export async function getApp(env: Env, teamId: string, appId: string) {
  return toApp(await loadApp(env, teamId, appId));
}

/**
 * The key pair to store: generated when neither key is given, the public key derived when only
 * the private key is given, and a supplied pair checked to belong together.
 */
async function resolveVapidKeys(publicKey: string | undefined, privateKey: string | undefined) {
  if (publicKey === undefined && privateKey === undefined) return generateVapidKeys();
  const details: FieldErrors = {};
  if (publicKey !== undefined) {
    const problem = await publicKeyProblem(publicKey);
    if (problem) details.vapid_public_key = [problem];
  }
  if (privateKey === undefined) {
    details.vapid_private_key = ["is required when vapid_public_key is supplied (no private key can be generated for a given public key)"];
    throw ApiError.validation(details);
  }
  const derived = await derivePublicKey(privateKey);
  if (!derived) details.vapid_private_key = ["must be a base64url-encoded 32-byte P-256 private key (the JWK `d`)"];
  if (Object.keys(details).length) throw ApiError.validation(details);
  if (publicKey === undefined) return { publicKey: derived!, privateKey };
  if (derived !== publicKey || !(await keysMatch(publicKey, privateKey))) {
    throw ApiError.validation({ vapid_private_key: ["does not match vapid_public_key"] });
  }
  return { publicKey, privateKey };
}

async function sealCredentials(env: Env, value: unknown): Promise<string | null> {
  if (value === null || value === undefined) return null;
  return encryptSecret(env.ENCRYPTION_KEY, typeof value === "string" ? value : JSON.stringify(value));
}

export async function createApp(env: Env, teamId: string, input: z.infer<typeof CreateAppSchema>) {
  const keys = await resolveVapidKeys(input.vapid_public_key, input.vapid_private_key);
  const now = nowIso();
  const row: AppRow = {
    id: crypto.randomUUID(),
    teamId,
    name: input.name,
    vapidPublicKey: keys.publicKey,
    vapidPrivateKeyEnc: await encryptSecret(env.ENCRYPTION_KEY, keys.privateKey),
    fcmCredentialsEnc: await sealCredentials(env, input.fcm_credentials),
    apnsCredentialsEnc: await sealCredentials(env, input.apns_credentials),
    settings: input.settings ?? {},
    subscriberCount: 0,
    createdAt: now,
    updatedAt: now,
  };
  await getDb(env.DB).insert(pushApps).values(row);
  return toApp(row);
}

export async function updateApp(env: Env, teamId: string, appId: string, input: z.infer<typeof UpdateAppSchema>) {
  const changes: Partial<AppRow> = { updatedAt: nowIso() };
  if (input.name !== undefined) changes.name = input.name;
  if (input.settings !== undefined) changes.settings = input.settings;
  if (input.fcm_credentials !== undefined) changes.fcmCredentialsEnc = await sealCredentials(env, input.fcm_credentials);
  if (input.apns_credentials !== undefined) changes.apnsCredentialsEnc = await sealCredentials(env, input.apns_credentials);
  const rows = await getDb(env.DB).update(pushApps).set(changes).where(ownedRow(pushApps, teamId, appId)).returning();
  return toApp(orNotFound(rows[0], appNotFound()));
}

/** Deletes the app; its subscribers, notifications and deliveries go with it (FK cascade). */
export async function deleteApp(env: Env, teamId: string, appId: string): Promise<void> {
  const rows = await getDb(env.DB).delete(pushApps).where(ownedRow(pushApps, teamId, appId)).returning({ id: pushApps.id });
  orNotFound(rows[0], appNotFound());
}

// Subscribers ---------------------------------------------------------------------------------

export function toSubscriber(row: SubscriberRow) {
  return {
    id: row.id,
    app_id: row.appId,
    endpoint: row.endpoint,
    expiration_time: row.expirationTime,
    tags: row.tags,
    external_id: row.externalId,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

function keyBytes(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_\-+/]+=*$/.test(text)) return null;
  try {
    return fromBase64Url(text);
  } catch {
    return null;
  }
}

/** Field problems of a PushSubscription: https endpoint past the SSRF guard, P-256 key, 16-byte auth. */
async function subscriptionProblems(env: Env, input: z.infer<typeof SubscribeSchema>): Promise<FieldErrors> {
  const details: FieldErrors = {};
  let protocol = "";
  try {
    protocol = new URL(input.endpoint).protocol;
  } catch {
    details.endpoint = ["must be a valid URL"];
  }
  if (!details.endpoint) {
    // Push services are https only (RFC 8030), whatever ALLOW_PRIVATE_TARGETS says.
    const reason = protocol !== "https:" ? "must use https" : checkUrl(input.endpoint, ssrfOptions(env));
    if (reason) details.endpoint = [reason];
  }
  const p256dh = keyBytes(input.keys.p256dh);
  let validPoint = !!p256dh && p256dh.byteLength === 65 && p256dh[0] === 0x04;
  if (validPoint) {
    try {
      await crypto.subtle.importKey("raw", p256dh!, { name: "ECDH", namedCurve: "P-256" }, false, []);
    } catch {
      validPoint = false;
    }
  }
  if (!validPoint) details["keys.p256dh"] = ["must be a base64url-encoded 65-byte uncompressed P-256 public key"];
  const auth = keyBytes(input.keys.auth);
  if (!auth || auth.byteLength !== 16) details["keys.auth"] = ["must be a base64url-encoded 16-byte secret"];
  return details;
}

/**
 * Registers a subscription, or updates the one with the same endpoint. Returns whether it was new.
 * The count goes up only when no row with that endpoint existed, in the same batch as the upsert.
 */
export async function registerSubscriber(env: Env, teamId: string, appId: string, input: z.infer<typeof SubscribeSchema>) {
  await loadApp(env, teamId, appId);
  const details = await subscriptionProblems(env, input);
  if (Object.keys(details).length) throw ApiError.validation(details);
  const db = getDb(env.DB);
  const now = nowIso();
  const tags = input.tags ? [...new Set(input.tags)] : undefined;
  const sameEndpoint = db
    .select({ one: sql`1` })
    .from(pushSubscribers)
    .where(and(eq(pushSubscribers.appId, appId), eq(pushSubscribers.endpoint, input.endpoint)));
  const [counted, rows] = await db.batch([
    db
      .update(pushApps)
      .set({ subscriberCount: sql`${pushApps.subscriberCount} + 1` })
      .where(and(ownedRow(pushApps, teamId, appId), notExists(sameEndpoint))),
    db
      .insert(pushSubscribers)
      .values({
        id: crypto.randomUUID(),
        teamId,
        appId,
        endpoint: input.endpoint,
        p256dh: input.keys.p256dh,
        auth: input.keys.auth,
        expirationTime: input.expirationTime == null ? null : Math.round(input.expirationTime),
        tags: tags ?? [],
        externalId: input.external_id ?? null,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoUpdate({
        target: [pushSubscribers.appId, pushSubscribers.endpoint],
        set: {
          p256dh: sql`excluded.p256dh`,
          auth: sql`excluded.auth`,
          expirationTime: sql`excluded.expiration_time`,
          // Omitted tags / external_id keep their stored values; null clears external_id.
          ...(tags ? { tags: sql`excluded.tags` } : {}),
          ...(input.external_id !== undefined ? { externalId: sql`excluded.external_id` } : {}),
          updatedAt: sql`excluded.updated_at`,
        },
      })
      .returning(),
  ]);
  return { subscriber: toSubscriber(rows[0]), created: counted.meta.changes === 1 };
}

export async function listSubscribers(env: Env, teamId: string, appId: string, query: z.infer<typeof ListSubscribersQuery>) {
  await loadApp(env, teamId, appId);
  const db = getDb(env.DB);
  const filters: SQL[] = [eq(pushSubscribers.appId, appId), eq(pushSubscribers.teamId, teamId)];
  if (query.tag) filters.push(sql`EXISTS (SELECT 1 FROM json_each(${pushSubscribers.tags}) WHERE json_each.value = ${query.tag})`);
  if (query.external_id) filters.push(eq(pushSubscribers.externalId, query.external_id));
  const where = and(...filters);
  const [rows, totals] = await db.batch([
    db
      .select()
      .from(pushSubscribers)
      .where(where)
      .orderBy(asc(pushSubscribers.createdAt), asc(pushSubscribers.id))
      .limit(query.per_page)
      .offset((query.page - 1) * query.per_page),
    db.select({ total: sql<number>`count(*)` }).from(pushSubscribers).where(where),
  ]);
  const total = Number(totals[0]?.total ?? 0);
  return {
    data: rows.map(toSubscriber),
    pagination: { page: query.page, per_page: query.per_page, total, total_pages: Math.ceil(total / query.per_page) },
  };
}

/** Deletes a subscriber; the count goes down in the same batch, only if a row was deleted. */
export async function deleteSubscriber(env: Env, teamId: string, appId: string, subscriberId: string): Promise<void> {
  await loadApp(env, teamId, appId);
  const removed = await removeSubscribers(env, appId, [subscriberId], teamId);
  if (removed === 0) throw subscriberNotFound();
}

/**
 * Deletes subscribers of an app and lowers subscriber_count by the number really deleted, in one
 * batch. Used by DELETE and by the consumer when a push service answers 404 or 410.
 */
export async function removeSubscribers(env: Env, appId: string, ids: string[], teamId?: string): Promise<number> {
  if (ids.length === 0) return 0;
  const [, deleted] = await getDb(env.DB).batch(removeSubscribersStatements(env, appId, ids, teamId));
  return deleted.length;
}

/** The two statements of removeSubscribers, for callers that add them to a larger batch. */
export function removeSubscribersStatements(env: Env, appId: string, ids: string[], teamId?: string) {
  const db = getDb(env.DB);
  const match = and(
    eq(pushSubscribers.appId, appId),
    inArray(pushSubscribers.id, ids),
    ...(teamId ? [eq(pushSubscribers.teamId, teamId)] : []),
  );
  return [
    db
      .update(pushApps)
      .set({ subscriberCount: sql`${pushApps.subscriberCount} - (SELECT count(*) FROM ${pushSubscribers} WHERE ${match})` })
      .where(eq(pushApps.id, appId)),
    db.delete(pushSubscribers).where(match).returning({ id: pushSubscribers.id }),
  ] as const;
}

// Notifications -------------------------------------------------------------------------------

/** The subscribers a target selects (always scoped to the app by the caller). */
export function targetFilter(target: PushTarget): SQL | undefined {
  if (target.type === "subscribers") {
    return sql`${pushSubscribers.id} IN (SELECT value FROM json_each(${JSON.stringify(target.subscriber_ids)}))`;
  }
  if (target.type === "tags") {
    return sql`EXISTS (SELECT 1 FROM json_each(${pushSubscribers.tags}) WHERE json_each.value IN (SELECT value FROM json_each(${JSON.stringify(target.tags)})))`;
  }
  return undefined;
}

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
