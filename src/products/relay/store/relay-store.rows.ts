// The rows a relay store takes (an ingested event, the former D1 tables' rows of the migration)
// and the statements of its alarm: retention's deletes and the look-up of lost deliveries.
import type * as schema from "./relay-store.schema";

/** An event as ingest stores it (headers as JSON text). */
export type StoredEvent = typeof schema.events.$inferInsert & { id: string; providerEventId: string | null };

/** Rows of the former D1 tables for one source, in the store's shape (the migration's import). */
export interface LegacyRows {
  events: Array<typeof schema.events.$inferInsert>;
  deliveries: Array<typeof schema.deliveries.$inferInsert>;
  attempts: Array<typeof schema.attempts.$inferInsert>;
}

/** Retention deletes at most this many events per step, and this many steps per alarm. */
export const RETENTION_CHUNK = 1_000;
export const RETENTION_MAX_CHUNKS = 20;

/** The oldest expired events (?1 the cutoff, ?2 the step's bound). */
const EXPIRED = "SELECT id FROM events WHERE received_at < ?1 ORDER BY received_at LIMIT ?2";

/** One retention step: attempts, deliveries, then the events (the last statement's changes() is the events deleted). */
export const expiredEvents = {
  deletes: [
    `DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE event_id IN (${EXPIRED}))`,
    `DELETE FROM deliveries WHERE event_id IN (${EXPIRED})`,
    `DELETE FROM events WHERE id IN (${EXPIRED})`,
  ],
};

/** A delivery still pending this long after it was due (or claimed by a consumer this long dead) lost its message. */
export const STUCK_AFTER_MS = 15 * 60_000;

/**
 * Deliveries whose queue message was lost (?1 now - STUCK_AFTER_MS, ?2 the bound): `pending` and
 * due for more than STUCK_AFTER_MS, or `sending` with a lease that ended that long ago. No cap is
 * settled here: the consumer fails a delivery after its last attempt.
 */
export const lostDeliveries = {
  afterMs: STUCK_AFTER_MS,
  limit: 1_000,
  sql: `SELECT id FROM deliveries WHERE (status = 'pending' AND due_ms < ?1) OR (status = 'sending' AND lease_until < ?1) LIMIT ?2`,
};
