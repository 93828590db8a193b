// A relay store's bulk work, as functions over its SQLite (relay-store.ts's methods and alarm call
// them): the operator's import of the former D1 rows, retention's deletes in bounded steps (by time
// and by the byte budget) and the look-up of deliveries whose queue message was lost. Its SQL is
// relay-store.queries.ts's.
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { CHANGES, DELETE_EXPIRED, DELETE_OLDEST, ESTIMATE_BYTES, LOST_DELIVERIES } from "./relay-store.queries";
import type { LegacyRows } from "./relay-store.rows";
import * as schema from "./relay-store.schema";

const DAY_MS = 86_400_000;

/** Retention deletes at most this many events per step, and this many steps per alarm. */
export const RETENTION_CHUNK = 1_000;
export const RETENTION_MAX_CHUNKS = 20;

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
      return storage.sql.exec<{ n: number }>(CHANGES).one().n;
    });
    deleted += rows;
    if (rows < bound || deleted >= limit) return { deleted, more: false };
  }
  return { deleted, more: true };
}

/** How many of the oldest events to delete so the rows' estimated bytes fit `budget` (0 when they do), from one count of the rows. */
export function eventsOverBudget(storage: DurableObjectStorage, budget: number): number {
  const { events, bytes } = storage.sql.exec<{ events: number; bytes: number }>(ESTIMATE_BYTES).one();
  const over = bytes - budget;
  return over <= 0 || events === 0 ? 0 : Math.ceil(over / (bytes / events));
}

/**
 * The byte budget of one store: the oldest events go while the rows' estimate passes 8 GB (the
 * object's limit is 10 GB; the rest is headroom for the estimate's error and free pages). The
 * estimate is counted only once the database file passes 6 GB.
 */
export const STORE_BUDGET_BYTES = 8 * 1024 ** 3;
export const STORE_CHECK_FROM_BYTES = 6 * 1024 ** 3;

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
  sql: LOST_DELIVERIES,
};

/**
 * Imports rows of the former D1 tables (inside the caller's transaction), keeping their ids: a row
 * whose id is held is skipped. Returns the events imported.
 */
export function importRows(db: DrizzleSqliteDODatabase<typeof schema>, rows: LegacyRows): number {
  let count = 0;
  for (const event of rows.events) count += db.insert(schema.events).values(event).onConflictDoNothing().returning({ id: schema.events.id }).all().length;
  for (const delivery of rows.deliveries) db.insert(schema.deliveries).values(delivery).onConflictDoNothing().run();
  for (const attempt of rows.attempts) db.insert(schema.attempts).values(attempt).onConflictDoNothing().run();
  return count;
}

/**
 * Retention: deletes the events received more than `retentionDays` before `now`, with their
 * deliveries and attempts, oldest first, in bounded steps. `more` is true when the run stopped at its bound.
 */
export function purgeExpiredRows(storage: DurableObjectStorage, retentionDays: number, now: number): { deleted: number; more: boolean } {
  return deleteInSteps(storage, DELETE_EXPIRED, [new Date(now - retentionDays * DAY_MS).toISOString()], Infinity);
}

/**
 * The byte budget: while the rows' estimated bytes (eventsOverBudget) pass `budget`, deletes the
 * oldest events with their deliveries and attempts, in bounded steps, so a source receiving more
 * than its retention can hold never reaches the object's 10 GB (see the README's arithmetic).
 * Looked at only once the database file passes `checkFrom`: small stores never count their rows.
 */
export function trimRowsToBudget(storage: DurableObjectStorage, budget: number, checkFrom: number): { deleted: number; more: boolean } {
  if (storage.sql.databaseSize < checkFrom) return { deleted: 0, more: false };
  const excess = eventsOverBudget(storage, budget);
  return excess === 0 ? { deleted: 0, more: false } : deleteInSteps(storage, DELETE_OLDEST, [], excess);
}

/** The ids of the deliveries whose queue message was lost at `now`, at most lostDeliveries.limit. */
export function lostDeliveryIds(sql: SqlStorage, now: number): string[] {
  return sql
    .exec<{ id: string }>(lostDeliveries.sql, now - lostDeliveries.afterMs, now - lostDeliveries.leaseEndedMs, lostDeliveries.limit)
    .toArray()
    .map((row) => row.id);
}
