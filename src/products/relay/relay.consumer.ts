// Forwarding: the consumer of the "webhook-deliveries" queue, and the first attempt made from the
// ingest request. One message is one delivery (an event to a destination). The delivery row is
// claimed with a conditional UPDATE before anything is sent, so a redelivered message never
// produces a second successful delivery; every attempt is recorded; failures are retried through the
// queue on the schedule of relay.retry.ts, then `failed`; a destination failing for five days is
// disabled and its team's owner told (relay.health.ts).
import { z } from "zod";
import { defineConsumer, rowId } from "../../platform/jobs/consume";
import { claim, claimSpec, secondsLeft } from "../../platform/jobs/claim";
import { eq } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { webhookDeliveries } from "../../db/schema";
import { nowIso, nowMs, nowSeconds } from "../../platform/clock";
import { decryptSecret } from "../../platform/crypto";
import { readCapped } from "../../platform/outbound";
import { BlockedUrlError, safeFetch, ssrfOptions } from "../../platform/ssrf";
import { standardWebhookHeaders } from "../../platform/webhook-signature";
import { destinationHealthStatements, isFailingTooLong, notifyDestinationDisabled } from "./relay.health";
import { isInboundSignatureHeader } from "./relay.inbound";
import { MAX_ATTEMPTS, RETRY_SCHEDULE_SECONDS, retryDelaySeconds } from "./relay.retry";

export { MAX_ATTEMPTS, retryDelaySeconds };
export const DELIVERY_TIMEOUT_MS = 15_000;
/** A delivery waits `pending` and is claimed `sending` (both API-visible). */
const CLAIM = claimSpec("webhook-deliveries", { from: ["pending"], inFlight: "sending" });
const RESPONSE_BODY_BYTES = 1024;
export const USER_AGENT = "EdgePlatform-Relay/1.0";

/** The body of one webhook-deliveries message: the delivery to attempt. Payloads stay in D1 (128 KB queue cap). */
export const deliveryMessage = z.object({ delivery_id: rowId });
export type DeliveryMessage = z.infer<typeof deliveryMessage>;

/** The consumer of the webhook-deliveries queue: each message is handled on its own, in parallel. */
export const webhookDeliveriesConsumer = defineConsumer({
  queue: "webhook-deliveries",
  schema: deliveryMessage,
  order: "parallel",
  handle: async (body, { env }) => (await attemptDelivery(env, body.delivery_id)).retryInSeconds,
  // The database or the secret could not be read: nothing was sent; try again on the schedule.
  retryAfterError: (attempts) => retryDelaySeconds(attempts) ?? RETRY_SCHEDULE_SECONDS[MAX_ATTEMPTS - 1],
});

/**
 * The first attempt of new deliveries, started in the background (`waitUntil`) as soon as they are
 * stored and queued, so the receiver gets the event without waiting for a queue batch. Whatever the
 * outcome, nothing more is needed here: the delivery's queued message comes back when the first
 * retry is due, and the claim makes it send nothing when this attempt delivered or is still
 * sending. Never throws.
 */
export async function attemptNow(env: Env, deliveryIds: string[]): Promise<void> {
  await Promise.all(
    deliveryIds.map((id) =>
      attemptDelivery(env, id).catch((error) => {
        // Nothing was recorded; the queued message attempts it when it comes.
        console.error(JSON.stringify({ msg: "relay: first attempt errored", deliveryId: id, error: String(error) }));
      }),
    ),
  );
}

export interface DeliveryOutcome {
  /** What happened: `delivered`, `retry`, `failed`, or `skipped` (nothing to do). */
  result: "delivered" | "retry" | "failed" | "skipped";
  /** Seconds until the message should come back; null to acknowledge it. */
  retryInSeconds: number | null;
}

interface ClaimedDelivery {
  id: string;
  team_id: string;
  event_id: string;
  attempts: number;
  body: string;
  content_type: string | null;
  headers: string;
  event_type: string | null;
  url: string;
  secret: string;
  enabled: number;
  destination_id: string;
  source_id: string;
  failing_since: string | null;
  owner_email: string | null;
}

/** One attempt of one delivery; safe to call twice for the same delivery. */
export async function attemptDelivery(env: Env, deliveryId: string): Promise<DeliveryOutcome> {
  // The claim and the read of what it claimed in one round trip (one transaction): the read runs
  // after the claim and sees the attempt it counted; a claim that lost reads who holds the row.
  const claimQuery = claim(getDb(env.DB), webhookDeliveries, CLAIM, eq(webhookDeliveries.id, deliveryId), { updatedAt: nowIso() })
    .returning({ id: webhookDeliveries.id })
    .toSQL();
  const [won, read] = await env.DB.batch([
    env.DB.prepare(claimQuery.sql).bind(...claimQuery.params),
    env.DB.prepare(
      `SELECT d.status, d.lease_until, d.id, d.team_id, d.event_id, d.attempts, e.body, e.content_type, e.headers, e.event_type, t.url, t.secret,
         t.enabled, t.id AS destination_id, t.source_id, t.failing_since, (SELECT owner_email FROM teams WHERE id = d.team_id) AS owner_email
       FROM webhook_deliveries d LEFT JOIN webhook_events e ON e.id = d.event_id LEFT JOIN webhook_destinations t ON t.id = d.destination_id
       WHERE d.id = ?`,
    ).bind(deliveryId),
  ]);
  const row = read!.results[0] as (ClaimedDelivery & { status: string; lease_until: number | null }) | undefined;
  if (won!.results.length === 0) {
    // Another consumer holds it: come back when its lease ends, in case that consumer died.
    if (row?.status === "sending") return { result: "skipped", retryInSeconds: secondsLeft(row.lease_until) };
    // Gone (source, destination or event deleted) or already final: nothing to do.
    return { result: "skipped", retryInSeconds: null };
  }
  // Claimed, but its event or destination went meanwhile (the cascade takes the row with them).
  if (!row || row.url === null || row.body === null) return { result: "skipped", retryInSeconds: null };
  const delivery: ClaimedDelivery = row;

  if (!delivery.enabled) {
    await env.DB.prepare(
      "UPDATE webhook_deliveries SET status = 'failed', attempts = attempts - 1, lease_until = NULL, last_error = ?2, next_attempt_at = NULL, updated_at = ?3 WHERE id = ?1",
    )
      .bind(deliveryId, "destination disabled", nowIso())
      .run();
    return { result: "failed", retryInSeconds: null };
  }

  const attempt = await send(env, delivery);
  const success = attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode < 300;
  // This failure ends five days of failures: the destination is disabled, so nothing is retried.
  const disable = !success && isFailingTooLong(delivery.failing_since, nowMs());
  const retryIn = success || attempt.permanent || disable ? null : retryDelaySeconds(delivery.attempts);
  const final = retryIn === null;
  const at = nowIso();
  const status = success ? "delivered" : final ? "failed" : "pending";
  const results = await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO webhook_attempts (id, team_id, delivery_id, number, attempted_at, status_code, duration_ms, error, response_body, retry_in_seconds)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).bind(
      crypto.randomUUID(),
      delivery.team_id,
      deliveryId,
      delivery.attempts,
      attempt.startedAt,
      attempt.statusCode,
      attempt.durationMs,
      attempt.error,
      attempt.responseBody,
      retryIn,
    ),
    // Conditional on the claim, so a stale consumer never overwrites a newer result.
    env.DB.prepare(
      `UPDATE webhook_deliveries SET status = ?3, lease_until = NULL, last_status_code = ?4, last_error = ?5, next_attempt_at = ?6,
       delivered_at = ?7, updated_at = ?8 WHERE id = ?1 AND status = 'sending' AND attempts = ?2`,
    ).bind(
      deliveryId,
      delivery.attempts,
      status,
      attempt.statusCode,
      attempt.error,
      retryIn === null ? null : new Date(nowMs() + retryIn * 1000).toISOString(),
      success ? at : null,
      at,
    ),
    ...destinationHealthStatements(env.DB, delivery.destination_id, { success, disable, at }),
  ]);
  // The disabling statement is last and conditional on `enabled`: one notice, however many fail at once.
  if (disable && results[results.length - 1]!.results.length > 0) {
    await notifyDestinationDisabled(env, { teamId: delivery.team_id, ownerEmail: delivery.owner_email, sourceId: delivery.source_id, destinationId: delivery.destination_id, url: delivery.url, failingSince: delivery.failing_since! });
  }
  return { result: success ? "delivered" : final ? "failed" : "retry", retryInSeconds: retryIn };
}

interface AttemptResult {
  startedAt: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
  /** True when retrying cannot help (the URL is refused by the SSRF guard). */
  permanent: boolean;
}

/** Sends the stored body with Standard Webhooks headers signed by the destination secret. */
async function send(env: Env, delivery: ClaimedDelivery): Promise<AttemptResult> {
  const secret = await decryptSecret(env.ENCRYPTION_KEY, delivery.secret, env.ENCRYPTION_KEY_PREVIOUS);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(JSON.parse(delivery.headers) as Record<string, string>)) {
    if (!isInboundSignatureHeader(name)) headers[name] = value;
  }
  headers["content-type"] = delivery.content_type ?? "application/octet-stream";
  headers["user-agent"] = USER_AGENT;
  headers["x-relay-event-id"] = delivery.event_id;
  if (delivery.event_type) headers["x-relay-event-type"] = delivery.event_type;
  Object.assign(headers, await standardWebhookHeaders(secret, delivery.id, nowSeconds(), delivery.body));

  const startedAt = nowIso();
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const response = await safeFetch(
      delivery.url,
      { method: "POST", headers, body: delivery.body },
      { ...ssrfOptions(env), timeoutMs: DELIVERY_TIMEOUT_MS },
    );
    const responseBody = response.body ? await readCapped(response, RESPONSE_BODY_BYTES) : null;
    const ok = response.status >= 200 && response.status < 300;
    return { startedAt, statusCode: response.status, durationMs: elapsed(), error: ok ? null : `HTTP ${response.status}`, responseBody, permanent: false };
  } catch (error) {
    const name = (error as Error)?.name;
    if (error instanceof BlockedUrlError) return { startedAt, statusCode: null, durationMs: elapsed(), error: error.message, responseBody: null, permanent: true };
    const message =
      name === "TimeoutError" || name === "AbortError" ? `timeout after ${DELIVERY_TIMEOUT_MS / 1000} s` : `network error: ${String((error as Error)?.message ?? error)}`;
    return { startedAt, statusCode: null, durationMs: elapsed(), error: message.slice(0, 500), responseBody: null, permanent: false };
  }
}
