// The raw SQL of the push product over D1: the sweep's restart of stalled fan-outs (raw because
// Drizzle cannot say it: the new fan-out token is randomblob), and the operator's one-time move of
// the former D1 tables into the app stores (push.migrate.ts: each table read in key order, what was
// imported deleted through one bound JSON array of keys). The subscriber and delivery SQL is the app store's:
// store/push-store.queries.ts. Not named `*.sql.ts`: wrangler's bundler takes an import ending in
// `.sql` for a text module.

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

/** Up to ?1 legacy subscribers in (app, id) order, each with whether its app still exists. */
export const LEGACY_SUBSCRIBERS = `SELECT s.id, s.app_id, s.endpoint, s.p256dh, s.auth, s.expiration_time, s.tags, s.external_id, s.created_at, s.updated_at,
              (SELECT count(*) FROM push_apps a WHERE a.id = s.app_id) AS app_exists
       FROM push_subscribers s ORDER BY s.app_id, s.id LIMIT ?1`;

/** Up to ?1 legacy delivery rows in key order, each with its notification (null app: the notification is gone). */
export const LEGACY_DELIVERIES = `SELECT d.notification_id, d.subscriber_id, d.status, d.attempts, d.status_code, d.error, d.lease_until, d.next_attempt_at, d.updated_at,
              n.app_id, n.created_at AS n_created_at, n.fanout_done, n.completed_at
       FROM push_deliveries d LEFT JOIN push_notifications n ON n.id = d.notification_id ORDER BY d.notification_id, d.subscriber_id LIMIT ?1`;

/** Deletes the legacy subscribers moved (?1 a JSON array of ids). */
export const DELETE_LEGACY_SUBSCRIBERS = "DELETE FROM push_subscribers WHERE id IN (SELECT value FROM json_each(?1))";

/** Deletes the legacy delivery rows moved (?1 a JSON array of [notification id, subscriber id]). */
export const DELETE_LEGACY_DELIVERIES =
  "DELETE FROM push_deliveries WHERE (notification_id, subscriber_id) IN (SELECT value->>0, value->>1 FROM json_each(?1))";

/** Retention's step (deleteInSteps): up to ?2 notification rows made before ?1 (their delivery rows go on the app store's alarm). */
export const DELETE_OLD_NOTIFICATIONS = "DELETE FROM push_notifications WHERE id IN (SELECT id FROM push_notifications WHERE created_at < ?1 LIMIT ?2)";
