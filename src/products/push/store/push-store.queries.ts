// The raw SQL of the push store, its object (push-store.ts), its reads (push-store.reads.ts) and
// its bulk work (push-store.upkeep.ts) alike: the one place the store's SQL is written (not named
// *.sql.ts: wrangler bundles an import ending in .sql as text). Raw where Drizzle cannot say it: id
// lists travel as one bound JSON array expanded with json_each (a Durable Object statement takes at
// most 100 bound parameters), tags are a JSON array column, and the sweep is a conditional UPDATE
// ... RETURNING over a subquery (the claim is platform/jobs/claim.ts's rule through the store's
// Drizzle database; SEND_CHUNK keeps its ids well under that limit); the small statements beside
// them (meta, counts, subscriber reads) are kept here too, as constants or functions of typed parts.
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

// The reads of deliveries (push-store.reads.ts).

/** Delivery rows per notification and status (?: a JSON array of notification ids). */
export const COUNTS_BY_STATUS =
  "SELECT notification_id AS id, status, count(*) AS n FROM deliveries WHERE notification_id IN (SELECT value FROM json_each(?)) GROUP BY 1, 2";

/** When each notification completed (?: a JSON array of ids). */
export const COMPLETIONS = "SELECT id, completed_at FROM notifications WHERE id IN (SELECT value FROM json_each(?))";

/** A page of one notification's results after a subscriber id: parameters notification, cursor, the status when `byStatus`, limit. */
export function resultPageSql(byStatus: boolean): string {
  return `SELECT notification_id, subscriber_id, status, attempts, status_code, error, lease_until, next_attempt_at, updated_at FROM deliveries
       WHERE notification_id = ? AND subscriber_id > ? ${byStatus ? "AND status = ?" : ""} ORDER BY subscriber_id LIMIT ?`;
}

/** Where each notification's fan-out got to: its highest subscriber id with a row (?: a JSON array of ids). */
export const FANOUT_PROGRESS =
  "SELECT notification_id AS id, max(subscriber_id) AS last FROM deliveries WHERE notification_id IN (SELECT value FROM json_each(?)) GROUP BY 1";

// The operator's import of the former D1 rows (push-store.upkeep.ts): rows keep their ids.

/** A legacy subscriber, unless its id or endpoint is held (SUBSCRIBER_COLUMNS in order). */
export const IMPORT_SUBSCRIBER = `INSERT OR IGNORE INTO subscribers (${SUBSCRIBER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** A legacy notification (id, created_at, fanout_done, completed_at), merged with one held: done stays done. */
export const IMPORT_NOTIFICATION = `INSERT INTO notifications (id, created_at, fanout_done, completed_at) VALUES (?, ?, ?, ?)
       ON CONFLICT DO UPDATE SET fanout_done = max(fanout_done, excluded.fanout_done), completed_at = coalesce(completed_at, excluded.completed_at)`;

/** A legacy delivery row, unless held. */
export const IMPORT_DELIVERY = `INSERT OR IGNORE INTO deliveries (notification_id, subscriber_id, status, attempts, status_code, error, lease_until, next_attempt_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** Rows changed by the statement before (SQLite's changes()). */
export const CHANGES = "SELECT changes() AS n";

// The object's own statements (push-store.ts).

/** The subscriber of an endpoint (?). */
export const SUBSCRIBER_BY_ENDPOINT = "SELECT id FROM subscribers WHERE endpoint = ?";

/** A subscriber by id (?). */
export const SUBSCRIBER_BY_ID = `SELECT ${SUBSCRIBER_COLUMNS} FROM subscribers WHERE id = ?`;

/** Subscribers by id (?: a JSON array of ids). */
export const SUBSCRIBERS_BY_IDS = `SELECT ${SUBSCRIBER_COLUMNS} FROM subscribers WHERE id IN (SELECT value FROM json_each(?))`;

/** A new subscriber (SUBSCRIBER_COLUMNS in order). */
export const INSERT_SUBSCRIBER = `INSERT INTO subscribers (${SUBSCRIBER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** The columns a registration of a known endpoint may change. */
export type SubscriberUpdateColumn = "p256dh" | "auth" | "expiration_time" | "updated_at" | "tags" | "external_id";

/** Updates `columns` of a subscriber: their values in order, then its id. */
export function updateSubscriberSql(columns: readonly SubscriberUpdateColumn[]): string {
  return `UPDATE subscribers SET ${columns.map((column) => `${column} = ?`).join(", ")} WHERE id = ?`;
}

/** The WHERE clause (empty for none) and parameters of the subscriber list's filters. */
export function subscriberFilter(query: { tag?: string; externalId?: string }): { clause: string; params: string[] } {
  const where: string[] = [];
  const params: string[] = [];
  if (query.tag !== undefined) {
    where.push("EXISTS (SELECT 1 FROM json_each(subscribers.tags) t WHERE t.value = ?)");
    params.push(query.tag);
  }
  if (query.externalId !== undefined) {
    where.push("external_id = ?");
    params.push(query.externalId);
  }
  return { clause: where.length ? `WHERE ${where.join(" AND ")}` : "", params };
}

/** A page of subscribers under `clause` (subscriberFilter's), oldest first: its parameters, then limit and offset. */
export function subscriberPageSql(clause: string): string {
  return `SELECT ${SUBSCRIBER_COLUMNS} FROM subscribers ${clause} ORDER BY created_at, id LIMIT ? OFFSET ?`;
}

/** The subscribers under `clause` (subscriberFilter's), counted. */
export function countSubscribersSql(clause: string): string {
  return `SELECT count(*) AS n FROM subscribers ${clause}`;
}

/** Deletes subscribers (?: a JSON array of ids), returning the ids really deleted. */
export const DELETE_SUBSCRIBERS = "DELETE FROM subscribers WHERE id IN (SELECT value FROM json_each(?)) RETURNING id";

/** The listed ids (?: a JSON array) that are not subscribers. */
export const UNKNOWN_SUBSCRIBERS = "SELECT value FROM json_each(?) WHERE value NOT IN (SELECT id FROM subscribers)";

/** The recipients of a target (targetWhere's SQL) made by a time: parameters the time, then the target's. */
export function countRecipientsSql(target: string): string {
  return `SELECT count(*) AS n FROM subscribers WHERE created_at <= ? AND ${target}`;
}

/** The next recipients of a target in id order: parameters the time, the target's, the id after which, the limit. */
export function recipientPageSql(target: string): string {
  return `SELECT id FROM subscribers WHERE created_at <= ? AND ${target} AND id > ? ORDER BY id LIMIT ?`;
}

/** A notification's row (id, created_at), kept if it exists. */
export const INSERT_NOTIFICATION = "INSERT INTO notifications (id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING";

/** A notification's fan-out is done (?: id). */
export const MARK_FANOUT_DONE = "UPDATE notifications SET fanout_done = 1 WHERE id = ?";

/** The delivery rows of a notification (?: id), counted. */
export const COUNT_DELIVERIES = "SELECT count(*) AS total FROM deliveries WHERE notification_id = ?";

/** A row when one of the listed subscribers' deliveries of a notification is being sent (notification, JSON array of subscriber ids). */
export const ANY_SENDING_AMONG =
  "SELECT 1 FROM deliveries WHERE notification_id = ? AND status = 'sending' AND subscriber_id IN (SELECT value FROM json_each(?)) LIMIT 1";

/** Whether any delivery row is left: one row looked at. */
export const ANY_DELIVERY = "SELECT 1 FROM deliveries LIMIT 1";

/** A number the object keeps (?: key). */
export const GET_META = "SELECT value FROM meta WHERE key = ?";

/** Sets a number the object keeps (key, value). */
export const SET_META = "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value";
