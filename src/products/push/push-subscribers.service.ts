// Push subscribers: register a browser PushSubscription (or update the one with the same
// endpoint), list and delete, each one call to the app's store (store/push-store.ts), which counts
// the subscribers in the same transaction as the insert or delete (exact under parallel
// registrations: the object runs one call at a time). The app row's subscriber_count is then
// written from the store's answer (push.store.ts syncCount).
import type { z } from "@hono/zod-openapi";
import type { Env } from "../../env";
import { nowIso } from "../../platform/clock";
import { fromBase64Url } from "../../platform/crypto";
import { ApiError, type FieldErrors } from "../../platform/errors";
import { checkUrl, ssrfOptions } from "../../platform/ssrf";
import { loadApp } from "./push-apps.service";
import { inStore, pushStore, syncCount } from "./push.store";
import type { ListSubscribersQuery, SubscribeSchema } from "./push.schemas";
import type { SubscriberRecord } from "./store/push-store.types";

export const subscriberNotFound = () => new ApiError("not_found", "Subscriber not found");

export function toSubscriber(appId: string, row: SubscriberRecord) {
  return {
    id: row.id,
    app_id: appId,
    endpoint: row.endpoint,
    expiration_time: row.expiration_time,
    tags: JSON.parse(row.tags) as string[],
    external_id: row.external_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
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
  if (auth?.byteLength !== 16) details["keys.auth"] = ["must be a base64url-encoded 16-byte secret"];
  return details;
}

/**
 * Registers a subscription, or updates the one with the same endpoint. Returns whether it was new.
 * The store counts it only when no subscriber had that endpoint, in the same transaction.
 */
export async function registerSubscriber(env: Env, teamId: string, appId: string, input: z.infer<typeof SubscribeSchema>) {
  await loadApp(env, teamId, appId);
  const details = await subscriptionProblems(env, input);
  if (Object.keys(details).length) throw ApiError.validation(details);
  const result = await inStore(() =>
    pushStore(env, appId).register(appId, {
      id: crypto.randomUUID(),
      endpoint: input.endpoint,
      p256dh: input.keys.p256dh,
      auth: input.keys.auth,
      expiration_time: input.expirationTime == null ? null : Math.round(input.expirationTime),
      // Omitted tags / external_id keep their stored values; null clears external_id.
      ...(input.tags ? { tags: [...new Set(input.tags)] } : {}),
      ...(input.external_id !== undefined ? { external_id: input.external_id } : {}),
      at: nowIso(),
    }),
  );
  if (result.created) await syncCount(env, appId, result.count);
  return { subscriber: toSubscriber(appId, result.subscriber), created: result.created };
}

export async function listSubscribers(env: Env, teamId: string, appId: string, query: z.infer<typeof ListSubscribersQuery>) {
  await loadApp(env, teamId, appId);
  const { rows, total } = await inStore(() =>
    pushStore(env, appId).list({ page: query.page, perPage: query.per_page, tag: query.tag, externalId: query.external_id }),
  );
  return {
    data: rows.map((row) => toSubscriber(appId, row)),
    pagination: { page: query.page, per_page: query.per_page, total, total_pages: Math.ceil(total / query.per_page) },
  };
}

/** Deletes a subscriber; the store lowers its count in the same transaction, only if a row was deleted. */
export async function deleteSubscriber(env: Env, teamId: string, appId: string, subscriberId: string): Promise<void> {
  await loadApp(env, teamId, appId);
  const { removed, count } = await inStore(() => pushStore(env, appId).remove(appId, [subscriberId]));
  if (removed === 0) throw subscriberNotFound();
  await syncCount(env, appId, count);
}
