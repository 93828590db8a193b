// Retry delays for queue consumers: exponential by attempt, capped, so a failing receiver is
// retried at 10 s, 20 s, 40 s, ... up to the cap.

/** Delay in seconds before retry number `attempts` (1 = first delivery failed). */
export function backoffSeconds(attempts: number, baseSeconds = 10, capSeconds = 3600): number {
  return Math.min(capSeconds, baseSeconds * 2 ** Math.max(0, attempts - 1));
}

/**
 * The webhook retry schedule (Svix's, the one users compare webhook services by): the delay before
 * each attempt from the previous one, in seconds: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h,
 * 10 h, 10 h: eight attempts over about 27.6 hours. The relay's deliveries and the forms' webhook
 * deliveries follow it; every delay stays within the 12 h a queue message may be delayed.
 */
export const WEBHOOK_RETRY_SCHEDULE_SECONDS = [0, 5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600] as const;

/** Seconds from failed webhook attempt number `attempts` to the next one; null when it was the last of the schedule. */
export function webhookRetryDelaySeconds(attempts: number): number | null {
  if (!Number.isInteger(attempts) || attempts < 1 || attempts >= WEBHOOK_RETRY_SCHEDULE_SECONDS.length) return null;
  return WEBHOOK_RETRY_SCHEDULE_SECONDS[attempts]!;
}
