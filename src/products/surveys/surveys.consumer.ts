// Consumer of the survey-webhooks queue: each message names one delivery row (one webhook, one
// event). The body is signed with Standard Webhooks headers; the delivery id is the `webhook-id`,
// stable across retries.
//
// Exactly one delivery per row, whatever the queue does: an attempt first claims the row with one
// conditional UPDATE (still pending, the message carries the row's current queue token, and no
// other attempt holds an unexpired lock). A delivered or failed row, a message of a superseded
// token (the original of a delivery the sweeper re-queued) and a duplicate of a message being
// processed are acknowledged without sending; only a row locked by an attempt that may have
// crashed is retried later.
import { defineConsumer } from "../../platform/jobs/consume";
import { claim as claimRows, claimSpec, secondsLeft } from "../../platform/jobs/claim";
import { and, eq, isNull } from "drizzle-orm";
import { getDb } from "../../db/client";
import { surveys, surveyWebhookDeliveries, surveyWebhooks } from "../../db/schema/surveys";
import { completedPayload } from "./survey-webhooks.service";
import { fromStored, surveyStore } from "./surveys.store";
import type { Env } from "../../env";
import { backoffSeconds } from "../../platform/backoff";
import { nowIso, nowMs, nowSeconds } from "../../platform/clock";
import { decryptSecret } from "../../platform/crypto";
import { BlockedUrlError, safeFetch, ssrfOptions } from "../../platform/ssrf";
import { standardWebhookHeaders } from "../../platform/webhook-signature";
import { surveyWebhookMessage, type SurveyWebhookMessage, surveyWebhooksQueue } from "./surveys.messages";
export { surveyWebhookMessage, type SurveyWebhookMessage } from "./surveys.messages";

/** Deliveries are attempted this many times before they are marked failed: every delivery the queue makes. */
export const MAX_DELIVERY_ATTEMPTS = surveyWebhooksQueue.claim.maxAttempts;
export const DELIVERY_TIMEOUT_MS = 10_000;
/** How long a claim holds a delivery: well beyond one attempt's timeout. */
export const CLAIM_LEASE_MS = surveyWebhooksQueue.claim.leaseMs;
/** A delivery stays `pending` while an attempt holds it: only the lease says it is held. */
const CLAIM = claimSpec(surveyWebhooksQueue, { from: ["pending"], inFlight: "pending" });

type Outcome = { kind: "done" } | { kind: "retry"; delaySeconds: number };
/** What an attempt needs of the delivery row it claimed. */
interface ClaimedDelivery {
  id: string;
  webhook_id: string;
  /** Rows written before deliveries referenced their response carry their body. */
  payload: string | null;
  response_id: string | null;
  survey_id: string;
  /** Attempts so far, this one included. */
  attempts: number;
}

/**
 * Claims the delivery for one attempt, counting it, if the message carries the row's current
 * queue token: one conditional UPDATE, so of two messages processed at the same time only one
 * gets the row.
 */
async function claim(env: Env, deliveryId: string, token: string | null): Promise<ClaimedDelivery | null> {
  const t = surveyWebhookDeliveries;
  const current = and(eq(t.id, deliveryId), token === null ? isNull(t.queueToken) : eq(t.queueToken, token));
  const [row] = await claimRows(getDb(env.DB), t, CLAIM, current).returning({
    id: t.id,
    webhook_id: t.webhookId,
    payload: t.payload,
    response_id: t.responseId,
    survey_id: t.surveyId,
    attempts: t.attempts,
  });
  return row ?? null;
}

/** Why a message could not claim its delivery: only a lock held by another attempt is worth a retry. */
async function unclaimed(env: Env, deliveryId: string, token: string | null): Promise<Outcome> {
  const row = await getDb(env.DB)
    .select({ status: surveyWebhookDeliveries.status, queueToken: surveyWebhookDeliveries.queueToken, leaseUntil: surveyWebhookDeliveries.leaseUntil })
    .from(surveyWebhookDeliveries)
    .where(eq(surveyWebhookDeliveries.id, deliveryId))
    .get();
  // Gone (webhook or survey deleted), settled, or superseded by a re-queued message.
  if (row?.status !== "pending" || row.queueToken !== token || row.leaseUntil === null) return { kind: "done" };
  // Another attempt holds it: come back when its lock has expired, in case it never finishes.
  return { kind: "retry", delaySeconds: secondsLeft(row.leaseUntil) };
}

/** One POST of the delivery to its webhook: the receiver's status, or why there was none. */
async function attempt(env: Env, delivery: ClaimedDelivery): Promise<{ status: number | null; error: string | null; blocked: boolean }> {
  try {
    const hook = await getDb(env.DB)
      .select({ url: surveyWebhooks.url, secretEncrypted: surveyWebhooks.secretEncrypted })
      .from(surveyWebhooks)
      .where(eq(surveyWebhooks.id, delivery.webhook_id))
      .get();
    if (!hook) return { status: null, error: "webhook deleted", blocked: true };
    const body = delivery.payload ?? (await bodyOf(env, delivery.survey_id, delivery.response_id));
    if (body === null) return { status: null, error: "response deleted", blocked: true };
    const secret = await decryptSecret(env.ENCRYPTION_KEY, hook.secretEncrypted, env.ENCRYPTION_KEY_PREVIOUS);
    const headers = await standardWebhookHeaders(secret, delivery.id, nowSeconds(), body);
    const response = await safeFetch(
      hook.url,
      { method: "POST", headers: { ...headers, "content-type": "application/json", "user-agent": "edge-platform-surveys/1" }, body },
      { ...ssrfOptions(env), timeoutMs: DELIVERY_TIMEOUT_MS },
    );
    await response.body?.cancel();
    return { status: response.status, error: response.ok ? null : `receiver answered ${response.status}`, blocked: false };
  } catch (e) {
    // A refused URL will not get better.
    if (e instanceof BlockedUrlError) return { status: null, error: e.message, blocked: true };
    return { status: null, error: `request failed: ${String((e as Error)?.message ?? e)}`, blocked: false };
  }
}

/** The delivery body, built from the one stored copy: the completed response (in its survey's store) and its survey. */
async function bodyOf(env: Env, surveyId: string, responseId: string | null): Promise<string | null> {
  if (!responseId) return null;
  const survey = await getDb(env.DB)
    .select({ id: surveys.id, slug: surveys.slug, name: surveys.name, teamId: surveys.teamId })
    .from(surveys)
    .where(eq(surveys.id, surveyId))
    .get();
  if (!survey) return null;
  const stored = await surveyStore(env, survey.id).get(responseId);
  return stored ? completedPayload(survey, fromStored(survey, stored)) : null;
}

async function deliver(env: Env, message: SurveyWebhookMessage, messageAttempts: number): Promise<Outcome> {
  const token = message.token ?? null;
  const delivery = await claim(env, message.delivery_id, token);
  if (!delivery) return unclaimed(env, message.delivery_id, token);

  const result = await attempt(env, delivery);
  const db = getDb(env.DB);
  if (result.status !== null && result.error === null) {
    await db
      .update(surveyWebhookDeliveries)
      .set({ status: "delivered", lastStatus: result.status, lastError: null, leaseUntil: null, deliveredAt: nowIso() })
      .where(eq(surveyWebhookDeliveries.id, delivery.id));
    return { kind: "done" };
  }
  // The row counts every attempt, across re-queued messages; the message's own count says when
  // the queue itself would give up.
  const attemptNo = Math.max(messageAttempts, delivery.attempts);
  const final = result.blocked || attemptNo >= MAX_DELIVERY_ATTEMPTS;
  const delaySeconds = backoffSeconds(attemptNo);
  await db
    .update(surveyWebhookDeliveries)
    .set({
      status: final ? "failed" : "pending",
      lastStatus: result.status,
      lastError: result.error,
      leaseUntil: null,
      nextAttemptAt: final ? null : new Date(nowMs() + delaySeconds * 1000).toISOString(),
    })
    .where(eq(surveyWebhookDeliveries.id, delivery.id));
  return final ? { kind: "done" } : { kind: "retry", delaySeconds };
}

/** The consumer of the survey-webhooks queue. */
export const surveyWebhooksConsumer = defineConsumer({
  queue: surveyWebhooksQueue,
  schema: surveyWebhookMessage,
  handle: async (body, { env, attempts }) => {
    const outcome = await deliver(env, body, attempts);
    return outcome.kind === "done" ? null : outcome.delaySeconds;
  },
});
