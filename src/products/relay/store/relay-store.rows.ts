// The rows a relay store takes and answers (an ingested event, a claim, an attempt's record, the
// former D1 tables' rows of the migration)
// and the work of its alarm over them: retention's deletes in bounded steps (by time and by the
// byte budget) and the look-up of lost deliveries.
import type * as schema from "./relay-store.schema";

/** An event as ingest stores it (headers as JSON text). */
export type StoredEvent = typeof schema.events.$inferInsert & { id: string; providerEventId: string | null };

/** What a claim answers: the delivery won with its event, or who holds it (null: gone or unknown). */
export type ClaimResult =
  | {
      won: true;
      delivery: { id: string; eventId: string; destinationId: string; attempts: number };
      event: { body: string; contentType: string | null; headers: string; eventType: string | null };
    }
  | { won: false; status: string; leaseUntil: number | null }
  | null;

/** An attempt's outcome, written only while the claim that made it still holds the delivery. */
export interface AttemptRecord {
  deliveryId: string;
  /** The delivery's attempt count at its claim: the attempt's number. */
  number: number;
  attempt: {
    id: string;
    attemptedAt: string;
    statusCode: number | null;
    durationMs: number;
    error: string | null;
    responseBody: string | null;
    retryInSeconds: number | null;
  };
  status: "delivered" | "failed" | "pending";
  nextAttemptAt: string | null;
  dueMs: number | null;
  deliveredAt: string | null;
  at: string;
}

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

/**
 * Runs a retention step's deletes (attempts, deliveries, events: the last one's changes() are the
 * events) in transactions of at most RETENTION_CHUNK events, RETENTION_MAX_CHUNKS of them, until
 * `limit` events are deleted or none is left. `params` come before the step's bound.
 */
export function deleteInSteps(storage: DurableObjectStorage, deletes: string[], params: unknown[], limit: number): { deleted: number; more: boolean } {
  let deleted = 0;
  for (let i = 0; i < RETENTION_MAX_CHUNKS; i++) {
    const bound = Math.min(RETENTION_CHUNK, limit - deleted);
    const rows = storage.transactionSync(() => {
      for (const statement of deletes) storage.sql.exec(statement, ...params, bound);
      return storage.sql.exec<{ n: number }>("SELECT changes() AS n").one().n;
    });
    deleted += rows;
    if (rows < bound || deleted >= limit) return { deleted, more: false };
  }
  return { deleted, more: true };
}

/** How many of the oldest events to delete so the rows' estimated bytes fit `budget` (0 when they do), from one count of the rows. */
export function eventsOverBudget(storage: DurableObjectStorage, budget: number): number {
  const { events, bytes } = storage.sql
    .exec<{ events: number; bytes: number }>(
      `SELECT count(*) AS events, ${ESTIMATE_SQL} + (SELECT count(*) FROM deliveries) * ${ROW_BYTES.delivery} + (SELECT count(*) FROM attempts) * ${ROW_BYTES.attempt} AS bytes FROM events`,
    )
    .one();
  const over = bytes - budget;
  return over <= 0 || events === 0 ? 0 : Math.ceil(over / (bytes / events));
}

/** One retention step: attempts, deliveries, then the events (the last statement's changes() is the events deleted). */
export const expiredEvents = {
  deletes: [
    `DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE event_id IN (${EXPIRED}))`,
    `DELETE FROM deliveries WHERE event_id IN (${EXPIRED})`,
    `DELETE FROM events WHERE id IN (${EXPIRED})`,
  ],
};

/** The oldest events (?1 the step's bound): the byte budget's step, the same three deletes. */
const OLDEST = "SELECT id FROM events ORDER BY received_at, id LIMIT ?1";
export const oldestEvents = {
  deletes: [
    `DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE event_id IN (${OLDEST}))`,
    `DELETE FROM deliveries WHERE event_id IN (${OLDEST})`,
    `DELETE FROM events WHERE id IN (${OLDEST})`,
  ],
};

/**
 * The byte budget of one store: the oldest events go while the rows' estimate passes 8 GB (the
 * object's limit is 10 GB; the rest is headroom for the estimate's error and free pages). The
 * estimate is counted only once the database file passes 6 GB.
 */
export const STORE_BUDGET_BYTES = 8 * 1024 ** 3;
export const STORE_CHECK_FROM_BYTES = 6 * 1024 ** 3;

/**
 * Bytes per row beyond an event's body and headers, with its indexes, from the rows measured in
 * test/products/relay/relay.store.test.ts (an event of 1 KB body with one delivery and one attempt
 * took ~2.3 KB in all): ~450 for the event row, ~450 per delivery, ~350 per attempt.
 */
export const ROW_BYTES = { event: 450, delivery: 450, attempt: 350 };
/** An events aggregate of their estimated bytes (bodies, headers and the event row's overhead). */
export const ESTIMATE_SQL = `coalesce(sum(size_bytes + length(headers) + ${ROW_BYTES.event}), 0)`;

/** A delivery still pending this long after it was due lost its queue message. */
export const STUCK_AFTER_MS = 15 * 60_000;
/**
 * A delivery still `sending` this long after its lease ended lost whoever was sending it: the
 * ingest request that made its first attempt (no queue message stands behind a first attempt) or a
 * consumer whose message did not come back. Short: a first attempt has nothing else to retry it,
 * and the claim makes a second message harmless.
 */
export const LEASE_ENDED_AFTER_MS = 5_000;

/**
 * Deliveries whose queue message was lost (?1 now - STUCK_AFTER_MS, ?2 now - LEASE_ENDED_AFTER_MS,
 * ?3 the bound): `pending` and due for more than STUCK_AFTER_MS, or `sending` with a lease that
 * ended LEASE_ENDED_AFTER_MS ago. No cap is settled here: the consumer fails a delivery after its
 * last attempt.
 */
export const lostDeliveries = {
  afterMs: STUCK_AFTER_MS,
  leaseEndedMs: LEASE_ENDED_AFTER_MS,
  limit: 1_000,
  sql: `SELECT id FROM deliveries WHERE (status = 'pending' AND due_ms < ?1) OR (status = 'sending' AND lease_until < ?2) LIMIT ?3`,
};
