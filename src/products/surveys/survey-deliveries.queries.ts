// The raw SQL of survey webhook deliveries: the consumer's claim and the hourly sweep's two
// statements (surveys.consumer.ts, surveys.cron.ts). Raw because each is one conditional
// UPDATE ... RETURNING that Drizzle cannot say as one statement: the sweep's new queue token is
// randomblob, its rows are picked by a subquery with ORDER BY and LIMIT, and its staleness test
// and the claim's lease use coalesce and a null-safe `IS` on a bound token. (Not named `*.sql.ts`:
// wrangler's bundler takes an import ending in `.sql` for a text module.)

/**
 * Claims a pending delivery for one attempt, counting it (?1 delivery, ?2 the message's queue token
 * or null, ?3 the lease's end, ?4 now): of two messages processed at the same time only one gets it.
 */
export const claimDelivery = (d1: D1Database, deliveryId: string, token: string | null, lockedUntil: string, now: string) =>
  d1
    .prepare(
      `UPDATE survey_webhook_deliveries SET attempts = attempts + 1, locked_until = ?3
     WHERE id = ?1 AND status = 'pending' AND queue_token IS ?2 AND (locked_until IS NULL OR locked_until <= ?4)
     RETURNING id, webhook_id, payload, response_id, attempts`,
    )
    .bind(deliveryId, token, lockedUntil, now);

/** Pending, unlocked, and no message due since ?1 (the stale cutoff); ?2 is now. */
const STALE = `status = 'pending' AND coalesce(next_attempt_at, created_at) < ?1 AND (locked_until IS NULL OR locked_until <= ?2)`;

/** Settles stale rows that already used every attempt (?3): failed, not retried. */
export const failExhaustedDeliveries = (d1: D1Database, cutoff: string, at: string, maxAttempts: number) =>
  d1
    .prepare(
      `UPDATE survey_webhook_deliveries SET status = 'failed', last_error = 'no attempt left after the queue message was lost', locked_until = NULL
     WHERE ${STALE} AND attempts >= ?3`,
    )
    .bind(cutoff, at, maxAttempts);

/** Gives up to ?4 stale rows, oldest first, a new queue token and next_attempt_at = now, returning them. */
export const requeueStaleDeliveries = (d1: D1Database, cutoff: string, at: string, maxAttempts: number, limit: number) =>
  d1
    .prepare(
      `UPDATE survey_webhook_deliveries SET queue_token = lower(hex(randomblob(16))), next_attempt_at = ?2
       WHERE id IN (SELECT id FROM survey_webhook_deliveries WHERE ${STALE} AND attempts < ?3
                    ORDER BY coalesce(next_attempt_at, created_at) LIMIT ?4)
       RETURNING id, queue_token`,
    )
    .bind(cutoff, at, maxAttempts, limit);
