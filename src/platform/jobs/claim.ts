// The claim of a row a queue consumer is about to act on, over the standard columns every claimed
// table has (`status`, `attempts`, `lease_until`, and `next_attempt_at` where a product schedules
// retries): one conditional UPDATE ... RETURNING moves the row from a claimable status (or from
// the in-flight status once the lease of the consumer that held it has ended) to in flight, counts
// the attempt and takes a lease. Of two consumers claiming the same row at once exactly one gets
// it, and a consumer that dies mid-way gives the row back when its lease ends. Products keep their
// own status names (some are API-visible) and pass them in; the lease of each queue and its
// attempt cap are declared once, with the queue (`defineQueue`'s `claim`, in the product's
// `*.messages.ts`), and read from there: the platform names no product queue.
//
// `lease_until` is an INTEGER of milliseconds since the epoch in every table. Why ms and not ISO
// text: the lease is compared with now on every claim and never shown by an API, a number compares
// without depending on one string format (ISO text with and without milliseconds, as audit and
// mail wrote it, do not order correctly against each other), it is what the clock gives (nowMs)
// and what a queue delay is computed from, and it is the smallest to store and index.
import { and, eq, inArray, isNull, lt, or, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable, SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import type { Db } from "../../db/client";
import { nowMs } from "../clock";
import type { QueueClaim, QueueDeclaration } from "./queues";

/** A table with the standard claim columns. */
export type ClaimTable = SQLiteTable & { status: SQLiteColumn; attempts: SQLiteColumn; leaseUntil: SQLiteColumn };

/** How a product's rows are claimed: its status names and its queue's lease. */
export interface ClaimSpec {
  /** Statuses a row waits in to be claimed (with no live lease). */
  from: readonly string[];
  /** The status of a claimed row; may be one of `from` when the product shows no in-flight status. */
  inFlight: string;
  leaseMs: number;
}

/** The claim spec of `queue`'s rows (a queue declared with its `claim`) with the product's status names. */
export function claimSpec(queue: QueueDeclaration & { claim: QueueClaim }, statuses: { from: readonly string[]; inFlight: string }): ClaimSpec {
  return { ...statuses, leaseMs: queue.claim.leaseMs };
}

/** No live lease at `at` (ms): none was taken, it was released, or it has ended. */
export function leaseFree(table: ClaimTable, at: number): SQL {
  return or(isNull(table.leaseUntil), lt(table.leaseUntil, at))!;
}

/** A row claimable at `at`: waiting with no live lease, or in flight under a lease that has ended. */
export function claimableAt(table: ClaimTable, spec: ClaimSpec, at: number): SQL {
  return or(and(inArray(table.status, [...spec.from]), leaseFree(table, at)), and(eq(table.status, spec.inFlight), lt(table.leaseUntil, at)))!;
}

/**
 * Claims the rows of `table` that `where` selects and that are claimable now: in flight, one more
 * attempt, leased until now + the lease. `set` adds the product's own columns (updated_at, ...).
 * Returns the UPDATE; the caller adds `.returning(...)` for the rows it won (none: another
 * consumer holds them, or they are finished or gone).
 */
export function claim<T extends ClaimTable>(db: Db, table: T, spec: ClaimSpec, where: SQL | undefined, set: SQLiteUpdateSetSource<T> = {}) {
  const at = nowMs();
  return db
    .update(table)
    .set(claimSet(table, spec, at, set))
    .where(and(where, claimableAt(table, spec, at)));
}

/**
 * What a claim at `at` (ms) writes: in flight, one more attempt, leased until at + the lease, plus
 * the product's own columns. With claimableAt, the whole rule, for a Durable Object store's rows
 * as well (its Drizzle database, and the time its caller passes).
 */
export function claimSet<T extends ClaimTable>(table: T, spec: ClaimSpec, at: number, set: SQLiteUpdateSetSource<T> = {}): SQLiteUpdateSetSource<T> {
  return { ...set, status: spec.inFlight, attempts: sql`${table.attempts} + 1`, leaseUntil: at + spec.leaseMs } as SQLiteUpdateSetSource<T>;
}

/** Seconds until a lease ends (at least 1): when a message that found its row held should come back. */
export function secondsLeft(leaseUntil: number | null): number {
  return Math.max(1, Math.ceil(((leaseUntil ?? 0) - nowMs()) / 1000));
}
