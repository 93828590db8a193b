// The raw SQL of the push store (not named *.sql.ts: wrangler bundles an import ending in .sql as
// text), each where Drizzle cannot say it: id lists travel as one bound JSON array expanded with
// json_each (a Durable Object statement takes at most 100 bound parameters), tags are a JSON array
// column, and the sweep is a conditional UPDATE ... RETURNING over a subquery (the claim is
// platform/jobs/claim.ts's rule through the store's Drizzle database; SEND_CHUNK keeps its ids
// well under that limit).
import type { PushTarget } from "../../../db/schema";

export const SUBSCRIBER_COLUMNS = "id, endpoint, p256dh, auth, expiration_time, tags, external_id, created_at, updated_at";

/** Statuses of a delivery that is not finished. */
export const PENDING = ["queued", "sending", "retrying"] as const;

/** The subscribers a target selects: SQL and its parameters (none for every subscriber). */
export function targetWhere(target: PushTarget): { sql: string; params: string[] } {
  if (target.type === "subscribers") return { sql: "id IN (SELECT value FROM json_each(?))", params: [JSON.stringify(target.subscriber_ids)] };
  if (target.type === "tags") {
    return {
      sql: "EXISTS (SELECT 1 FROM json_each(subscribers.tags) t WHERE t.value IN (SELECT value FROM json_each(?)))",
      params: [JSON.stringify(target.tags)],
    };
  }
  return { sql: "1", params: [] };
}

/** One queued delivery row per subscriber id of a fan-out chunk (?1 notification, ?2 time, ?3 JSON ids); rows that exist are kept. */
export const INSERT_DELIVERIES = `INSERT INTO deliveries (notification_id, subscriber_id, status, attempts, next_attempt_at, updated_at)
  SELECT ?1, value, 'queued', 0, ?2, ?2 FROM json_each(?3) WHERE true ON CONFLICT DO NOTHING`;

/** The result of one send (?1 notification, ?2 subscriber, ?3 status, ?4 code, ?5 error, ?6 next attempt, ?7 time). */
export const RECORD_DELIVERY = `UPDATE deliveries SET status = ?3, status_code = ?4, error = ?5, lease_until = NULL, next_attempt_at = ?6, updated_at = ?7
  WHERE notification_id = ?1 AND subscriber_id = ?2`;

/** Marks ?1 completed at ?2 once its fan-out is done and none of its deliveries is pending. */
export const COMPLETE_IF_DONE = `UPDATE notifications SET completed_at = ?2
  WHERE id = ?1 AND fanout_done = 1 AND completed_at IS NULL
    AND NOT EXISTS (SELECT 1 FROM deliveries WHERE notification_id = ?1 AND status IN ('queued', 'sending', 'retrying'))`;

/**
 * The sweep of deliveries whose queue message was lost: up to ?3 rows pending whose due time
 * (fan-out, retry, end of claim, last sweep) is before ?2, oldest first, get next_attempt_at = ?1,
 * so an overlapping run does not take them again.
 */
export const SWEEP_STUCK = `UPDATE deliveries SET next_attempt_at = ?1
  WHERE rowid IN (SELECT rowid FROM deliveries WHERE status IN ('queued', 'sending', 'retrying') AND coalesce(next_attempt_at, '') < ?2
                  ORDER BY next_attempt_at LIMIT ?3)
  RETURNING notification_id, subscriber_id`;

/** One retention step: up to ?2 delivery rows of notifications made before ?1. */
export const PURGE_DELIVERIES = `DELETE FROM deliveries WHERE rowid IN (
  SELECT d.rowid FROM notifications n JOIN deliveries d ON d.notification_id = n.id WHERE n.created_at < ?1 LIMIT ?2)`;

/** After the rows: notifications made before ?1 that hold no delivery. */
export const PURGE_NOTIFICATIONS = `DELETE FROM notifications WHERE created_at < ?1
  AND NOT EXISTS (SELECT 1 FROM deliveries WHERE notification_id = notifications.id)`;

/** D1: the app's count, unless D1 already holds a newer one (?2 the store's sequence of count changes). */
export const SYNC_COUNT = "UPDATE push_apps SET subscriber_count = ?1, subscriber_count_seq = ?2 WHERE id = ?3 AND subscriber_count_seq < ?2";
