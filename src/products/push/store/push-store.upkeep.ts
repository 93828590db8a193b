// The push store's bulk work, as functions over its SQLite (each runs inside the caller's
// transaction or statement): the operator's import of the former D1 rows, the alarm's sweep of
// deliveries whose queue message was lost, and delivery retention. Kept apart from the object
// (push-store.ts), whose methods call them.
import { DELIVERY_LOG_RETENTION_DAYS } from "../../../platform/retention";
import { CHANGES, IMPORT_DELIVERY, IMPORT_NOTIFICATION, IMPORT_SUBSCRIBER, PURGE_DELIVERIES, PURGE_NOTIFICATIONS, SWEEP_STUCK } from "./push-store.queries";
import type { LegacyImport } from "./push-store.types";

/** Pending deliveries that should have moved this long ago have lost their queue message. */
export const SWEEP_STUCK_MS = 15 * 60_000;
/** Delivery rows re-queued per alarm run; the rest wait for the next one. */
export const SWEEP_MAX_ROWS = 1_000;
/** Retention deletes at most this many delivery rows per statement, and this many statements per run. */
export const PURGE_CHUNK = 5_000;
export const PURGE_MAX_CHUNKS = 20;
const DAY_MS = 86_400_000;

/**
 * Imports rows of the former D1 tables. Rows keep their ids, so a repeated import takes nothing
 * twice; a legacy subscriber whose endpoint registered in the store meanwhile is skipped (the newer
 * registration wins). Returns the subscribers and delivery rows really written.
 */
export function importRows(sql: SqlStorage, rows: LegacyImport): { subscribers: number; deliveries: number } {
  let subscribers = 0;
  for (const s of rows.subscribers) {
    sql.exec(IMPORT_SUBSCRIBER, s.id, s.endpoint, s.p256dh, s.auth, s.expiration_time, s.tags, s.external_id, s.created_at, s.updated_at);
    subscribers += changes(sql);
  }
  for (const n of rows.notifications) {
    sql.exec(IMPORT_NOTIFICATION, n.id, n.created_at, n.fanout_done, n.completed_at);
  }
  let deliveries = 0;
  for (const d of rows.deliveries) {
    sql.exec(IMPORT_DELIVERY, d.notification_id, d.subscriber_id, d.status, d.attempts, d.status_code, d.error, d.lease_until, d.next_attempt_at, d.updated_at);
    deliveries += changes(sql);
  }
  return { subscribers, deliveries };
}

/**
 * The sweep of deliveries whose queue message was lost: up to SWEEP_MAX_ROWS rows pending more than
 * SWEEP_STUCK_MS past due at `now`, oldest first, are marked due now (an overlapping run does not
 * take them again) and returned.
 */
export function takeStuckRows(sql: SqlStorage, now: number): { notification_id: string; subscriber_id: string }[] {
  return sql
    .exec<{ notification_id: string; subscriber_id: string }>(
      SWEEP_STUCK,
      new Date(now).toISOString(),
      new Date(now - SWEEP_STUCK_MS).toISOString(),
      SWEEP_MAX_ROWS,
    )
    .toArray()
    .map((r) => ({ ...r }));
}

/** Retention: notifications made more than DELIVERY_LOG_RETENTION_DAYS before `now` go with their rows, in bounded steps. */
export function purgeRows(sql: SqlStorage, now: number): { deleted: number; more: boolean } {
  const cutoff = new Date(now - DELIVERY_LOG_RETENTION_DAYS * DAY_MS).toISOString();
  let deleted = 0;
  for (let i = 0; i < PURGE_MAX_CHUNKS; i++) {
    const n = sql.exec(PURGE_DELIVERIES, cutoff, PURGE_CHUNK).rowsWritten;
    deleted += n;
    if (n < PURGE_CHUNK) {
      sql.exec(PURGE_NOTIFICATIONS, cutoff);
      return { deleted, more: false };
    }
  }
  return { deleted, more: true };
}

function changes(sql: SqlStorage): number {
  return sql.exec<{ n: number }>(CHANGES).one().n;
}
