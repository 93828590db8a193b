// Forwarding: the consumer of the "webhook-deliveries" queue, and the first attempt made from the
// ingest request. One message is one delivery (an event to a destination) of one source. The
// delivery is claimed in the source's store (store/relay-store.ts, the claim rule and lease of
// platform/jobs/claim.ts) before anything is sent, so a redelivered message never produces a second
// successful delivery; every attempt is recorded there; failures are retried through the queue on
// the schedule of relay.retry.ts, then `failed`; a destination failing for five days is disabled
// and its team's owner told (relay.health.ts, in D1 with the destination).
import { log } from "../../platform/log";
import { defineConsumer } from "../../platform/jobs/consume";
import { sendAll } from "../../platform/jobs/queues";
import { claimSpec, secondsLeft } from "../../platform/jobs/claim";
import { eq } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { teams, webhookDestinations } from "../../db/schema";
import { nowIso, nowMs, nowSeconds } from "../../platform/clock";
import { decryptSecret } from "../../platform/crypto";
import { readCapped } from "../../platform/outbound";
import { BlockedUrlError, safeFetch, ssrfOptions } from "../../platform/ssrf";
import { standardWebhookHeaders } from "../../platform/webhook-signature";
import { healthChanges, isFailingTooLong, notifyDestinationDisabled, recordHealth } from "./relay.health";
import { recordAttempt, relayStore } from "./relay.store";
import { isInboundSignatureHeader } from "./relay.inbound";
import { MAX_ATTEMPTS, RETRY_SCHEDULE_SECONDS, retryDelaySeconds } from "./relay.retry";
import { deliveryMessage, type DeliveryMessage, webhookDeliveriesQueue } from "./relay.messages";
export { deliveryMessage, type DeliveryMessage } from "./relay.messages";

export { MAX_ATTEMPTS, retryDelaySeconds };
export const DELIVERY_TIMEOUT_MS = 15_000;
/** A delivery waits `pending` and is claimed `sending` (both API-visible). */
const CLAIM = claimSpec(webhookDeliveriesQueue, { from: ["pending"], inFlight: "sending" });
/** The claim a delivery is born with for its first attempt (RelayStore.writeMany): the same lease. */
export const FIRST_ATTEMPT = { leaseMs: CLAIM.leaseMs };
const RESPONSE_BODY_BYTES = 1024;
export const USER_AGENT = "EdgePlatform-Relay/1.0";

/** The consumer of the webhook-deliveries queue: each message is handled on its own, in parallel. */
export const webhookDeliveriesConsumer = defineConsumer({
  queue: webhookDeliveriesQueue,
  schema: deliveryMessage,
  order: "parallel",
  handle: async (body, { env }) => (await attemptDelivery(env, body)).retryInSeconds,
  // The store, the database or the secret could not be read: nothing was sent; try again on the schedule.
  retryAfterError: (attempts) => retryDelaySeconds(attempts) ?? RETRY_SCHEDULE_SECONDS[MAX_ATTEMPTS - 1],
});

/**
 * The first attempt of new deliveries, started in the background (`waitUntil`) as soon as they are
 * stored and queued, so the receiver gets the event without waiting for a queue batch. Whatever the
 * outcome, nothing more is needed here: the delivery's queued message comes back when the first
 * retry is due, and the claim makes it send nothing when this attempt delivered or is still
 * sending. Never throws.
 */
export async function attemptNow(env: Env, sourceId: string, deliveryIds: string[]): Promise<void> {
  await Promise.all(
    deliveryIds.map((id) =>
      attemptDelivery(env, { delivery_id: id, source_id: sourceId }).catch((error) => {
        // Nothing was recorded; the queued message attempts it when it comes.
        log.error("relay: first attempt errored", { delivery_id: id, error: String(error) });
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

/** A destination as an attempt needs it: where to send, its secret (sealed, or opened when `cached`), and its health. */
export interface AttemptDestination {
  id: string;
  teamId: string;
  url: string;
  /** The destination secret as stored (sealed), or already decrypted when `cached`. */
  secret: string;
  /**
   * Read from an isolate's cache (up to SOURCE_CACHE_TTL_MS old) rather than from D1 now: its
   * secret is already opened, and a failed attempt reads the destination's health again before it
   * decides anything on it.
   */
  cached?: boolean;
  enabled: boolean;
  failingSince: string | null;
  ownerEmail: string | null;
}

/** The destination columns an attempt reads (here, and in the ingest's source cache). */
export const ATTEMPT_COLUMNS = {
  id: webhookDestinations.id,
  teamId: webhookDestinations.teamId,
  url: webhookDestinations.url,
  secret: webhookDestinations.secret,
  enabled: webhookDestinations.enabled,
  failingSince: webhookDestinations.failingSince,
};

/** The destinations of a source with their teams' owners, from D1. */
function readDestinations(env: Env, sourceId: string): Promise<AttemptDestination[]> {
  return getDb(env.DB)
    .select({ ...ATTEMPT_COLUMNS, ownerEmail: teams.ownerEmail })
    .from(webhookDestinations)
    .innerJoin(teams, eq(teams.id, webhookDestinations.teamId))
    .where(eq(webhookDestinations.sourceId, sourceId));
}

/** One attempt of one delivery (claimed in its source's store); safe to call twice for the same delivery. */
export async function attemptDelivery(env: Env, message: DeliveryMessage): Promise<DeliveryOutcome> {
  const { delivery_id: deliveryId, source_id: sourceId } = message;
  if (sourceId === undefined) return { result: "skipped", retryInSeconds: null };
  const store = relayStore(env, sourceId);
  // The claim in the store and the read of the destinations (control plane, D1) at the same time:
  // the delivery's destination is one of its source's, found once the claim names it.
  const [claimed, destinations] = await Promise.all([store.claim(deliveryId, nowMs(), CLAIM.leaseMs, nowIso()), readDestinations(env, sourceId)]);
  // Gone (source or event deleted) or unknown: nothing to do.
  if (!claimed) return { result: "skipped", retryInSeconds: null };
  if (!claimed.won) {
    // Another consumer holds it: come back when its lease ends, in case that consumer died.
    if (claimed.status === "sending") return { result: "skipped", retryInSeconds: secondsLeft(claimed.leaseUntil) };
    // Already final: nothing to do.
    return { result: "skipped", retryInSeconds: null };
  }
  const destination = destinations.find((d) => d.id === claimed.delivery.destinationId);
  if (!destination) {
    // Claimed, but its destination went meanwhile: the delivery goes with it, as when it is deleted.
    await store.removeDeliveries([deliveryId]);
    return { result: "skipped", retryInSeconds: null };
  }
  const { event } = claimed;
  return deliverClaimed(env, sourceId, {
    id: deliveryId,
    eventId: claimed.delivery.eventId,
    attempts: claimed.delivery.attempts,
    event: { ...event, headers: JSON.parse(event.headers) as Record<string, string> },
    destination,
  });
}

/**
 * The first attempts of an event's deliveries, claimed by the store when it stored them
 * (RelayStore.writeMany), made from the ingest request's background with the destinations its
 * isolate holds (relay.ingest.ts's source cache: no D1 read, no decryption per event). A delivery
 * left for a retry is queued for it here; when that send fails, or this isolate dies before the
 * attempt reports, the store's alarm queues it (its outbox). Never throws.
 */
export async function attemptFirst(
  env: Env,
  sourceId: string,
  event: ClaimedDelivery["event"] & { id: string },
  deliveries: Array<{ id: string; destination: AttemptDestination }>,
): Promise<void> {
  const retries: Array<{ id: string; delaySeconds: number }> = [];
  await Promise.all(
    deliveries.map(async ({ id, destination }) => {
      try {
        const outcome = await deliverClaimed(env, sourceId, { id, eventId: event.id, attempts: 1, event, destination });
        if (outcome.retryInSeconds !== null) retries.push({ id, delaySeconds: outcome.retryInSeconds });
      } catch (error) {
        // Nothing was recorded: the lease ends and the store's alarm queues the delivery.
        log.error("relay: first attempt errored", { delivery_id: id, error: String(error) });
      }
    }),
  );
  for (const delaySeconds of new Set(retries.map((r) => r.delaySeconds))) {
    const bodies = retries.filter((r) => r.delaySeconds === delaySeconds).map((r): DeliveryMessage => ({ delivery_id: r.id, source_id: sourceId }));
    await sendAll(env.WEBHOOK_QUEUE, bodies, { delaySeconds, contentType: "json" }).catch((error: unknown) => {
      // Stored as pending with its due time: the store's alarm queues it once it is overdue.
      log.error("relay: queuing a retry failed", { source_id: sourceId, deliveries: bodies.length, error: String(error) });
    });
  }
}

/** Sends a delivery this caller holds the claim of, and records the attempt and its destination's health. */
async function deliverClaimed(env: Env, sourceId: string, delivery: ClaimedDelivery): Promise<DeliveryOutcome> {
  const { destination } = delivery;
  const store = relayStore(env, sourceId);
  const deliveryId = delivery.id;
  if (!destination.enabled) {
    await store.failDisabled(deliveryId, nowIso());
    return { result: "failed", retryInSeconds: null };
  }

  const attempt = await send(env, delivery);
  const success = attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode < 300;
  if (!success && destination.cached) {
    // A failure decides on the destination's health (its first failure, or five days of them):
    // on what D1 holds now, not on what this isolate read up to SOURCE_CACHE_TTL_MS ago.
    const fresh = (await readDestinations(env, sourceId)).find((d) => d.id === destination.id);
    if (fresh) Object.assign(destination, { failingSince: fresh.failingSince, enabled: fresh.enabled });
  }
  // This failure ends five days of failures: the destination is disabled, so nothing is retried.
  const disable = !success && isFailingTooLong(destination.failingSince, nowMs());
  const retryIn = success || attempt.permanent || disable ? null : retryDelaySeconds(delivery.attempts);
  const final = retryIn === null;
  const at = nowIso();
  const dueMs = retryIn === null ? null : nowMs() + retryIn * 1000;
  // The attempt in the store (conditional on the claim, so a stale consumer never overwrites a
  // newer result) and the destination's health in D1, at the same time; the health statements
  // only when they change something (a success after failures, a first failure, the disabling).
  const health = healthChanges(destination.failingSince, { success, disable });
  const [, disabled] = await Promise.all([
    recordAttempt(env, sourceId, {
      deliveryId,
      number: delivery.attempts,
      attempt: {
        id: crypto.randomUUID(),
        attemptedAt: attempt.startedAt,
        statusCode: attempt.statusCode,
        durationMs: attempt.durationMs,
        error: attempt.error,
        responseBody: attempt.responseBody,
        retryInSeconds: retryIn,
      },
      status: success ? "delivered" : final ? "failed" : "pending",
      nextAttemptAt: dueMs === null ? null : new Date(dueMs).toISOString(),
      dueMs,
      deliveredAt: success ? at : null,
      at,
    }),
    // A health write that fails is logged, not retried: the attempt is recorded, and a retry of
    // the message would send again; the next attempt's outcome writes the health anyway.
    health
      ? recordHealth(getDb(env.DB), destination.id, { success, disable, at }).catch((error) => {
          log.error("relay: destination health not recorded", { destination_id: destination.id, error: String(error) });
          return false;
        })
      : false,
  ]);
  // What this attempt wrote is what the next one reads, where it reads an isolate's cache.
  if (health) destination.failingSince = success ? null : (destination.failingSince ?? at);
  if (disabled) {
    await notifyDestinationDisabled(env, {
      teamId: destination.teamId,
      ownerEmail: destination.ownerEmail,
      sourceId,
      destinationId: destination.id,
      url: destination.url,
      failingSince: destination.failingSince!,
    });
  }
  return { result: success ? "delivered" : final ? "failed" : "retry", retryInSeconds: retryIn };
}

/** What an attempt needs of the delivery it claimed, its event and its destination. */
interface ClaimedDelivery {
  id: string;
  eventId: string;
  attempts: number;
  event: { body: string; contentType: string | null; headers: Record<string, string>; eventType: string | null };
  destination: AttemptDestination;
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
  const secret = destination.cached ? destination.secret : await decryptSecret(env.ENCRYPTION_KEY, destination.secret, env.ENCRYPTION_KEY_PREVIOUS);
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
    const response = await safeFetch(destination.url, { method: "POST", headers, body: event.body }, { ...ssrfOptions(env), timeoutMs: DELIVERY_TIMEOUT_MS });
    const responseBody = response.body ? await readCapped(response, RESPONSE_BODY_BYTES) : null;
    const ok = response.status >= 200 && response.status < 300;
    return { startedAt, statusCode: response.status, durationMs: elapsed(), error: ok ? null : `HTTP ${response.status}`, responseBody, permanent: false };
  } catch (error) {
    const name = (error as Error)?.name;
    if (error instanceof BlockedUrlError)
      return { startedAt, statusCode: null, durationMs: elapsed(), error: error.message, responseBody: null, permanent: true };
    const message =
      name === "TimeoutError" || name === "AbortError"
        ? `timeout after ${DELIVERY_TIMEOUT_MS / 1000} s`
        : `network error: ${String((error as Error)?.message ?? error)}`;
    return { startedAt, statusCode: null, durationMs: elapsed(), error: message.slice(0, 500), responseBody: null, permanent: false };
  }
}
