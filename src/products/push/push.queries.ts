// The raw SQL of the push product over D1: the sweep's restart of stalled fan-outs. Raw
// because Drizzle cannot say it: the new fan-out token is randomblob. (The subscriber and delivery
// SQL is the app store's: store/push-store.queries.ts. Not named `*.sql.ts`: wrangler's bundler
// takes an import ending in `.sql` for a text module.)

/**
 * Gives up to `limit` stalled fan-outs (unfinished, no progress since `stuckBefore`, or never
 * started, fanout_at still its creation, since `unstartedBefore`), oldest first, a new token and
 * fanout_at = `at`, returning each with its app (whose store knows where it resumes).
 */
export const restartStalledFanouts = (d1: D1Database, at: string, stuckBefore: string, limit: number, unstartedBefore = stuckBefore) =>
  d1
    .prepare(
      `UPDATE push_notifications SET fanout_token = lower(hex(randomblob(16))), fanout_at = ?1
     WHERE id IN (SELECT id FROM push_notifications WHERE fanout_done = 0 AND (fanout_at < ?2 OR (fanout_at < ?4 AND fanout_at = created_at)) ORDER BY fanout_at LIMIT ?3)
     RETURNING id, app_id, fanout_token`,
    )
    .bind(at, stuckBefore, limit, unstartedBefore);
