// Push subscribers: register a browser PushSubscription (or update the one with the same
// endpoint), list, delete, and the removal the consumer uses when a push service answers 404 or
// 410. The app's subscriber_count changes only in the same batch as the subscriber insert or
// delete that it counts, and only when that insert or delete really happens.
import { and, asc, eq, inArray, notExists, sql, type SQL } from "drizzle-orm";
import type { z } from "@hono/zod-openapi";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { pushApps, pushSubscribers } from "../../db/schema";
import { nowIso } from "../../platform/clock";
import { fromBase64Url } from "../../platform/crypto";
import { ApiError, type FieldErrors } from "../../platform/errors";
import { checkUrl, ssrfOptions } from "../../platform/ssrf";
import { ownedRow } from "../../platform/tenancy";
import { loadApp } from "./push-apps.service";
import { hasTag } from "./push.queries";
import type { ListSubscribersQuery, SubscribeSchema } from "./push.schemas";

export const subscriberNotFound = () => new ApiError("not_found", "Subscriber not found");

type SubscriberRow = typeof pushSubscribers.$inferSelect;

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
  if (query.tag) filters.push(hasTag(query.tag));
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
