// Forwarding: the consumer of the "webhook-deliveries" queue, and the first attempt made from the
// ingest request. One message is one delivery (an event to a destination). The delivery row is
// claimed with a conditional UPDATE before anything is sent, so a redelivered message never
// produces a second successful delivery; every attempt is recorded; failures are retried through the
// queue on the schedule of relay.retry.ts, then `failed`; a destination failing for five days is
// disabled and its team's owner told (relay.health.ts).
import { defineConsumer } from "../../platform/jobs/consume";
import { claim, claimSpec, secondsLeft } from "../../platform/jobs/claim";
import { and, eq, sql } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { teams, webhookAttempts, webhookDeliveries, webhookDestinations, webhookEvents } from "../../db/schema";
import { nowIso, nowMs, nowSeconds } from "../../platform/clock";
import { decryptSecret } from "../../platform/crypto";
import { readCapped } from "../../platform/outbound";
import { BlockedUrlError, safeFetch, ssrfOptions } from "../../platform/ssrf";
import { standardWebhookHeaders } from "../../platform/webhook-signature";
import { destinationHealthStatements, isFailingTooLong, notifyDestinationDisabled } from "./relay.health";
import { isInboundSignatureHeader } from "./relay.inbound";
import { MAX_ATTEMPTS, RETRY_SCHEDULE_SECONDS, retryDelaySeconds } from "./relay.retry";
import { deliveryMessage } from "./relay.messages";
export { deliveryMessage, type DeliveryMessage } from "./relay.messages";

export { MAX_ATTEMPTS, retryDelaySeconds };
export const DELIVERY_TIMEOUT_MS = 15_000;
/** A delivery waits `pending` and is claimed `sending` (both API-visible). */
const CLAIM = claimSpec("webhook-deliveries", { from: ["pending"], inFlight: "sending" });
const RESPONSE_BODY_BYTES = 1024;
export const USER_AGENT = "EdgePlatform-Relay/1.0";


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

/** One attempt of one delivery; safe to call twice for the same delivery. */
export async function attemptDelivery(env: Env, deliveryId: string): Promise<DeliveryOutcome> {
  const db = getDb(env.DB);
  const byId = eq(webhookDeliveries.id, deliveryId);
  // The claim and the read of what it claimed in one round trip (one transaction): the read runs
  // after the claim and sees the attempt it counted; a claim that lost reads who holds the row.
  const [won, [row]] = await db.batch([
    claim(db, webhookDeliveries, CLAIM, byId, { updatedAt: nowIso() }).returning({ id: webhookDeliveries.id }),
    db
      .select({
        status: webhookDeliveries.status,
        leaseUntil: webhookDeliveries.leaseUntil,
        id: webhookDeliveries.id,
        teamId: webhookDeliveries.teamId,
        eventId: webhookDeliveries.eventId,
        attempts: webhookDeliveries.attempts,
        // Not the destination's own id column: D1's batch answers rows keyed by column name, and
        // two columns named `id` would overwrite each other.
        destinationId: webhookDeliveries.destinationId,
        event: { body: webhookEvents.body, contentType: webhookEvents.contentType, headers: webhookEvents.headers, eventType: webhookEvents.eventType },
        destination: {
          sourceId: webhookDestinations.sourceId,
          url: webhookDestinations.url,
          secret: webhookDestinations.secret,
          enabled: webhookDestinations.enabled,
          failingSince: webhookDestinations.failingSince,
        },
        ownerEmail: teams.ownerEmail,
      })
      .from(webhookDeliveries)
      .leftJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
      .leftJoin(webhookDestinations, eq(webhookDestinations.id, webhookDeliveries.destinationId))
      .leftJoin(teams, eq(teams.id, webhookDeliveries.teamId))
      .where(byId)
      .limit(1),
  ]);
  if (won.length === 0) {
    // Another consumer holds it: come back when its lease ends, in case that consumer died.
    if (row?.status === "sending") return { result: "skipped", retryInSeconds: secondsLeft(row.leaseUntil) };
    // Gone (source, destination or event deleted) or already final: nothing to do.
    return { result: "skipped", retryInSeconds: null };
  }
  // Claimed, but its event or destination went meanwhile (the cascade takes the row with them).
  if (!row?.event || !row.destination) return { result: "skipped", retryInSeconds: null };
  const { event, destination } = row;
  const delivery: ClaimedDelivery = { id: row.id, teamId: row.teamId, eventId: row.eventId, attempts: row.attempts, event, destination };

  if (!destination.enabled) {
    await db
      .update(webhookDeliveries)
      .set({ status: "failed", attempts: sql`${webhookDeliveries.attempts} - 1`, leaseUntil: null, lastError: "destination disabled", nextAttemptAt: null, updatedAt: nowIso() })
      .where(byId);
    return { result: "failed", retryInSeconds: null };
  }

  const attempt = await send(env, delivery);
  const success = attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode < 300;
  // This failure ends five days of failures: the destination is disabled, so nothing is retried.
  const disable = !success && isFailingTooLong(destination.failingSince, nowMs());
  const retryIn = success || attempt.permanent || disable ? null : retryDelaySeconds(delivery.attempts);
  const final = retryIn === null;
  const at = nowIso();
  const [, , ...health] = await db.batch([
    db.insert(webhookAttempts).values({
      id: crypto.randomUUID(),
      teamId: delivery.teamId,
      deliveryId,
      number: delivery.attempts,
      attemptedAt: attempt.startedAt,
      statusCode: attempt.statusCode,
      durationMs: attempt.durationMs,
      error: attempt.error,
      responseBody: attempt.responseBody,
      retryInSeconds: retryIn,
    }),
    // Conditional on the claim, so a stale consumer never overwrites a newer result.
    db
      .update(webhookDeliveries)
      .set({
        status: success ? "delivered" : final ? "failed" : "pending",
        leaseUntil: null,
        lastStatusCode: attempt.statusCode,
        lastError: attempt.error,
        nextAttemptAt: retryIn === null ? null : new Date(nowMs() + retryIn * 1000).toISOString(),
        deliveredAt: success ? at : null,
        updatedAt: at,
      })
      .where(and(byId, eq(webhookDeliveries.status, "sending"), eq(webhookDeliveries.attempts, delivery.attempts))),
    ...destinationHealthStatements(db, row.destinationId, { success, disable, at }),
  ]);
  // The disabling statement is last and returns the destination only if it was still enabled: one notice, however many fail at once.
  const disabled = health[health.length - 1];
  if (disable && Array.isArray(disabled) && disabled.length > 0) {
    await notifyDestinationDisabled(env, { teamId: delivery.teamId, ownerEmail: row.ownerEmail, sourceId: destination.sourceId, destinationId: row.destinationId, url: destination.url, failingSince: destination.failingSince! });
  }
  return { result: success ? "delivered" : final ? "failed" : "retry", retryInSeconds: retryIn };
}

/** What an attempt needs of the delivery it claimed, its event and its destination. */
interface ClaimedDelivery {
  id: string;
  teamId: string;
  eventId: string;
  attempts: number;
  event: { body: string; contentType: string | null; headers: Record<string, string>; eventType: string | null };
  destination: { url: string; secret: string };
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
  const { event, destination } = delivery;
  const secret = await decryptSecret(env.ENCRYPTION_KEY, destination.secret, env.ENCRYPTION_KEY_PREVIOUS);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers)) {
    if (!isInboundSignatureHeader(name)) headers[name] = value;
  }
  headers["content-type"] = event.contentType ?? "application/octet-stream";
  headers["user-agent"] = USER_AGENT;
  headers["x-relay-event-id"] = delivery.eventId;
  if (event.eventType) headers["x-relay-event-type"] = event.eventType;
  Object.assign(headers, await standardWebhookHeaders(secret, delivery.id, nowSeconds(), event.body));

  const startedAt = nowIso();
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const response = await safeFetch(
      destination.url,
      { method: "POST", headers, body: event.body },
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
