// The raw SQL of the push product: the subscriber filters, the fan-out's delivery rows, and the
// hourly sweep's restart of stalled fan-outs. Raw because Drizzle cannot say it: tags are a JSON
// array column and targets and fan-out chunks carry their id lists as one bound JSON array
// (json_each: one parameter however long the list, under D1's 100 bound parameters); the sweep's
// new fan-out token is randomblob, and its UPDATE ... RETURNING returns a correlated subquery.
// (Not named `*.sql.ts`: wrangler's bundler takes an import ending in `.sql` for a text module.)
import { sql, type SQL } from "drizzle-orm";
import { pushSubscribers, type PushTarget } from "../../db/schema";

/** The subscriber carries this tag. */
export const hasTag = (tag: string): SQL => sql`EXISTS (SELECT 1 FROM json_each(${pushSubscribers.tags}) WHERE json_each.value = ${tag})`;

/** The subscribers a target selects (always scoped to the app by the caller). */
export function targetFilter(target: PushTarget): SQL | undefined {
  if (target.type === "subscribers") {
    return sql`${pushSubscribers.id} IN (SELECT value FROM json_each(${JSON.stringify(target.subscriber_ids)}))`;
  }
  if (target.type === "tags") {
    return sql`EXISTS (SELECT 1 FROM json_each(${pushSubscribers.tags}) WHERE json_each.value IN (SELECT value FROM json_each(${JSON.stringify(target.tags)})))`;
  }
  return undefined;
}

/** One queued delivery row per subscriber id of a fan-out chunk; rows that exist already are kept. */
export const insertDeliveries = (d1: D1Database, notificationId: string, at: string, subscriberIds: string[]) =>
  d1
    .prepare(
      `INSERT INTO push_deliveries (notification_id, subscriber_id, status, attempts, next_attempt_at, updated_at)
       SELECT ?1, value, 'queued', 0, ?2, ?2 FROM json_each(?3) WHERE true ON CONFLICT DO NOTHING`,
    )
    .bind(notificationId, at, JSON.stringify(subscriberIds));

/**
 * Gives up to `limit` stalled fan-outs (unfinished, no progress since `stuckBefore`), oldest first,
 * a new token and fanout_at = `at`, returning each with the last subscriber that has a delivery row.
 */
export const restartStalledFanouts = (d1: D1Database, at: string, stuckBefore: string, limit: number) =>
  d1
    .prepare(
      `UPDATE push_notifications SET fanout_token = lower(hex(randomblob(16))), fanout_at = ?1
     WHERE id IN (SELECT id FROM push_notifications WHERE fanout_done = 0 AND fanout_at < ?2 ORDER BY fanout_at LIMIT ?3)
     RETURNING id, fanout_token,
       (SELECT max(d.subscriber_id) FROM push_deliveries d WHERE d.notification_id = push_notifications.id) AS resume_after`,
    )
    .bind(at, stuckBefore, limit);
