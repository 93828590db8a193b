// Retry delays for queue consumers: exponential by attempt, capped, so a failing receiver is
// retried at 10 s, 20 s, 40 s, ... up to the cap.

/** Delay in seconds before retry number `attempts` (1 = first delivery failed). */
export function backoffSeconds(attempts: number, baseSeconds = 10, capSeconds = 3600): number {
  return Math.min(capSeconds, baseSeconds * 2 ** Math.max(0, attempts - 1));
}
