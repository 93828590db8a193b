// The push-sends queue. A `fanout` message has the app's store (store/push-store.ts) write the
// delivery rows of the next chunk of a notification's recipients in id order (one call, one
// batched insert), queues `send` messages for them and queues the next chunk, so 100,000
// subscribers are never handled by one request or one invocation. A `send` message claims its
// delivery rows in the store, encrypts and signs one Web Push message per subscriber with
// @block65/webcrypto-web-push, POSTs it through the SSRF guard, and records the results in the
// store (one call), then writes the app's subscriber_count if a push service removed some.
//
// Exactly-once per subscriber: a delivery row is claimed (queued/retrying -> sending) by one
// conditional UPDATE in the store before its message is sent, so a redelivered queue message finds
// it already claimed or done and sends nothing. A claim older than STALE_CLAIM_MS (a consumer that
// died mid-send) may be taken again.
//
// Fan-out is one chain of messages per notification, identified by the notification's
// fanout_token: a `fanout` message with another token does nothing. The hourly sweep (push.cron.ts)
// replaces the token when it restarts a stalled chain, so a late original cannot start a second one.
import { defineConsumer } from "../../platform/jobs/consume";
import { sendAll } from "../../platform/jobs/queues";
import { discardBody, readCapped } from "../../platform/outbound";
import { buildPushPayload } from "@block65/webcrypto-web-push";
import { and, eq, sql } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { pushApps, pushNotifications } from "../../db/schema";
import { backoffSeconds } from "../../platform/backoff";
import { nowIso, nowMs } from "../../platform/clock";
import { decryptSecret } from "../../platform/crypto";
import { releaseQuota } from "../../platform/quota";
import { BlockedUrlError, safeFetch, ssrfOptions } from "../../platform/ssrf";
import { pushStore, syncCount } from "./push.store";
import { sendMessages, type Outcome, type SubscriberRecord } from "./store/push-store.types";
import { pushQueueMessage, type PushQueueMessage, pushSendsQueue } from "./push.messages";
export { pushQueueMessage, SEND_CHUNK, type PushQueueMessage } from "./push.messages";

/** Recipients written per fan-out message (one INSERT ... SELECT statement). */
export const FANOUT_CHUNK = 500;
/** Sends per subscriber before a retryable failure (429, 5xx, network) is recorded as failed. */
export const MAX_ATTEMPTS = pushSendsQueue.claim.maxAttempts;
export const SEND_TIMEOUT_MS = 10_000;
/** The lease of a claimed row: a claim older than this (its consumer died) may be taken over. */
export const STALE_CLAIM_MS = pushSendsQueue.claim.leaseMs;

/** The consumer of the push-sends queue. */
export const pushSendsConsumer = defineConsumer({
  queue: pushSendsQueue,
  schema: pushQueueMessage,
  handle: async (body, { env, isLastAttempt }) => {
    if (body.kind === "fanout") {
      await fanOut(env, body.notification_id, body.after, body.token);
      return null;
    }
    return sendChunk(env, body.notification_id, body.subscriber_ids, isLastAttempt);
  },
});

/**
 * One chunk of the fan-out: one store call writes the chunk's delivery rows. Safe to run twice:
 * rows that exist are kept. A message whose token is not the notification's current one (a sweep
 * restarted the chain) does nothing.
 */
export async function fanOut(env: Env, notificationId: string, after: string | null, token?: string): Promise<void> {
  const db = getDb(env.DB);
  const [n] = await db.select().from(pushNotifications).where(eq(pushNotifications.id, notificationId)).limit(1);
  if (!n || n.fanoutDone) return;
  if ((n.fanoutToken ?? undefined) !== token) return;
  const step = await pushStore(env, n.appId).fanOut({ id: n.id, createdAt: n.createdAt, target: n.target }, after, FANOUT_CHUNK, nowIso());
  await sendAll(env.PUSH_QUEUE, sendMessages(step.ids.map((id) => ({ notification_id: notificationId, subscriber_id: id }))));
  if (!step.done) {
    await env.PUSH_QUEUE.send({ kind: "fanout", notification_id: notificationId, after: step.ids[step.ids.length - 1], token } satisfies PushQueueMessage);
    // Progress: the sweep leaves this chain alone for another SWEEP_STUCK_MS.
    await db
      .update(pushNotifications)
      .set({ fanoutAt: nowIso() })
      .where(
        and(
          eq(pushNotifications.id, notificationId),
          token === undefined ? sql`${pushNotifications.fanoutToken} IS NULL` : eq(pushNotifications.fanoutToken, token),
        ),
      );
    return;
  }
  // Last chunk: recipients become the rows really written (subscribers deleted meanwhile drop
  // out) and their quota units go back. Only the run that flips fanout_done releases.
  const [done] = await db
    .update(pushNotifications)
    .set({ fanoutDone: true, recipients: step.total })
    .where(and(eq(pushNotifications.id, notificationId), eq(pushNotifications.fanoutDone, false)))
    .returning({ recipients: pushNotifications.recipients });
  if (!done) return;
  await releaseQuota(env, n.teamId, "push", n.recipients - done.recipients);
}

/**
 * Sends one chunk. Returns null when the message is done, or the delay in seconds after which it
 * should be delivered again (some subscribers need a retry, or are claimed by another consumer).
 */
export async function sendChunk(env: Env, notificationId: string, subscriberIds: string[], lastDelivery = false): Promise<number | null> {
  const db = getDb(env.DB);
  const [n] = await db
    .select({
      id: pushNotifications.id,
      appId: pushNotifications.appId,
      payload: pushNotifications.payload,
      ttl: pushNotifications.ttl,
      urgency: pushNotifications.urgency,
      topic: pushNotifications.topic,
      vapidSubject: pushNotifications.vapidSubject,
      publicKey: pushApps.vapidPublicKey,
      privateKeyEnc: pushApps.vapidPrivateKeyEnc,
    })
    .from(pushNotifications)
    .innerJoin(pushApps, eq(pushApps.id, pushNotifications.appId))
    .where(eq(pushNotifications.id, notificationId))
    .limit(1);
  if (!n || subscriberIds.length === 0) return null; // the app or notification was deleted

  const store = pushStore(env, n.appId);
  // If this consumer dies, the claim may be taken over at its end: the alarm sweep's due time.
  const { claimed, busy } = await store.claim(notificationId, subscriberIds, nowMs());
  // Rows another consumer is sending right now: look again once its claim could have gone stale.
  if (claimed.length === 0) return busy ? Math.ceil(STALE_CLAIM_MS / 1000) : null;

  const vapid = {
    subject: n.vapidSubject,
    publicKey: n.publicKey,
    privateKey: await decryptSecret(env.ENCRYPTION_KEY, n.privateKeyEnc, env.ENCRYPTION_KEY_PREVIOUS),
  };
  const options = { ttl: n.ttl, urgency: n.urgency, ...(n.topic ? { topic: n.topic } : {}) };

  const outcomes = await Promise.all(
    claimed.map(async ({ subscriberId, attempts, subscriber }): Promise<Outcome> => {
      if (!subscriber) return { subscriberId, status: "failed", statusCode: null, error: "subscriber was deleted before delivery" };
      const outcome = await deliver(env, n.payload, options, vapid, subscriber);
      // The queue will not deliver this message again after its last delivery: record the failure now.
      if (outcome.status === "retrying" && (attempts >= MAX_ATTEMPTS || lastDelivery)) {
        return { ...outcome, subscriberId, status: "failed", error: `gave up after ${attempts} attempts: ${outcome.error}` };
      }
      return { ...outcome, subscriberId };
    }),
  );

  // The message comes back after the longest delay any of its retries needs.
  const retries = outcomes.filter((o) => o.status === "retrying");
  const attemptsOf = new Map(claimed.map((c) => [c.subscriberId, c.attempts]));
  const retryIn = retries.length
    ? Math.max(...retries.map((o) => Math.max(backoffSeconds(attemptsOf.get(o.subscriberId) ?? 1), Math.min(o.retryAfter ?? 0, 3600))))
    : null;
  const retryAt = retryIn === null ? null : new Date(nowMs() + retryIn * 1000).toISOString();
  // Results, the removal of subscriptions the push service said are gone (the count lowered by the
  // rows really deleted) and the completion check: one store transaction; then the app row's count.
  const { removed, count } = await store.record(n.appId, notificationId, outcomes, retryAt, nowIso());
  if (removed > 0) await syncCount(env, n.appId, count);

  if (retryIn === null) return busy ? Math.ceil(STALE_CLAIM_MS / 1000) : null;
  return retryIn;
}

type SendOptions = { ttl: number; urgency: "low" | "normal" | "high"; topic?: string };

/** One Web Push message to one subscriber, classified. */
async function deliver(
  env: Env,
  payload: string,
  options: SendOptions,
  vapid: { subject: string; publicKey: string; privateKey: string },
  sub: SubscriberRecord,
): Promise<Omit<Outcome, "subscriberId">> {
  let request: Awaited<ReturnType<typeof buildPushPayload>>;
  try {
    request = await buildPushPayload(
      { data: payload, options },
      { endpoint: sub.endpoint, expirationTime: sub.expiration_time, keys: { p256dh: sub.p256dh, auth: sub.auth } },
      vapid,
    );
  } catch (error) {
    return { status: "failed", statusCode: null, error: `could not build the message: ${(error as Error).message}` };
  }
  let response: Response;
  try {
    response = await safeFetch(sub.endpoint, request as RequestInit, { ...ssrfOptions(env), timeoutMs: SEND_TIMEOUT_MS });
  } catch (error) {
    if (error instanceof BlockedUrlError) return { status: "failed", statusCode: null, error: error.message };
    return { status: "retrying", statusCode: null, error: `network error: ${(error as Error).message}` };
  }
  const code = response.status;
  if (code >= 200 && code < 300) {
    await discardBody(response);
    return { status: "delivered", statusCode: code, error: null };
  }
  const text = (await readCapped(response, 1024)).slice(0, 200);
  if (code === 404 || code === 410) return { status: "removed", statusCode: code, error: `subscription gone (${code})` };
  const error = `push service answered ${code}${text ? `: ${text}` : ""}`;
  if (code === 429 || code >= 500) {
    const retryAfter = Number(response.headers.get("retry-after"));
    return { status: "retrying", statusCode: code, error, retryAfter: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined };
  }
  return { status: "failed", statusCode: code, error };
}
