// The relay's retry policy: when each attempt of a delivery is made, how many there are (the cap
// is the queue's claim, relay.messages.ts, one per step of the schedule), how many queue deliveries
// that takes (the queue table's, and so wrangler.toml's, `max_retries` of "webhook-deliveries"
// must match QUEUE_MAX_RETRIES; tests hold both), and when a destination that keeps failing is
// disabled. It follows Svix's schedule, the one users compare webhook services by.
import { WEBHOOK_RETRY_SCHEDULE_SECONDS } from "../../platform/backoff";
import { webhookDeliveriesQueue } from "./relay.messages";

/** Delay before each attempt, from the previous one, in seconds: the platform's webhook schedule (platform/backoff.ts). */
export const RETRY_SCHEDULE_SECONDS = WEBHOOK_RETRY_SCHEDULE_SECONDS;

/** Attempts per delivery before it is marked `failed`: one per step of the schedule (the claim table's cap; a test holds both). */
export const MAX_ATTEMPTS = webhookDeliveriesQueue.claim.maxAttempts;

/**
 * `max_retries` of the "webhook-deliveries" consumer. When the queue makes every attempt (the
 * request's background attempt never ran), the eight attempts take one delivery and seven retries;
 * three more cover a message that comes back after another attempt's lease or after a database
 * error. Past that the message goes to the dead-letter queue, and the hourly sweep re-queues a
 * delivery still pending.
 */
export const QUEUE_MAX_RETRIES = MAX_ATTEMPTS - 1 + 3;

/** A destination whose every attempt has failed for this long is disabled (and its owner told). */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 3600_000;

/** Seconds from failed attempt number `attempts` to the next one; null when it was the last. */
export function retryDelaySeconds(attempts: number): number | null {
  if (!Number.isInteger(attempts) || attempts < 1 || attempts >= MAX_ATTEMPTS) return null;
  return RETRY_SCHEDULE_SECONDS[attempts]!;
}
