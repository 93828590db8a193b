// The claim of a row a queue consumer is about to act on, over the standard columns every claimed
// table has (`status`, `attempts`, `lease_until`, and `next_attempt_at` where a product schedules
// retries): one conditional UPDATE ... RETURNING moves the row from a claimable status (or from
// the in-flight status once the lease of the consumer that held it has ended) to in flight, counts
// the attempt and takes a lease. Of two consumers claiming the same row at once exactly one gets
// it, and a consumer that dies mid-way gives the row back when its lease ends. Products keep their
// own status names (some are API-visible) and pass them in; the lease of each queue and its
// attempt cap live in CLAIMS below, the one place they are set.
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

/**
 * Each claiming queue's lease (how long a claimed row belongs to its consumer: longer than one
 * attempt's outbound timeout, so a live consumer never loses its row) and attempt cap (attempts of
 * one row before it is `failed`; from QUEUES where it is every delivery the queue makes).
 */
export const CLAIMS = {
  /** Relay: 15 s delivery timeout + 15 s; 8 attempts, the length of relay.retry.ts's schedule (a test holds both). */
  "webhook-deliveries": { leaseMs: 30_000, maxAttempts: 8 },
  /** Mail: 2 minutes, the provider call's timeout and more; 5 sends of one message. */
  "mail-sends": { leaseMs: 120_000, maxAttempts: 5 },
  /** Push: a chunk of 25 sends with a 10 s timeout each, in parallel; 5 sends per subscriber. */
  "push-sends": { leaseMs: 5 * 60_000, maxAttempts: 5 },
  /** Survey webhooks: well beyond the 10 s request timeout; every delivery the queue makes (max_retries 8, plus the first; a test holds both). */
  "survey-webhooks": { leaseMs: 60_000, maxAttempts: 9 },
  /** Audit exports: one render and one R2 put; a failed render is final, so no cap. */
  "report-export": { leaseMs: 2 * 60_000, maxAttempts: null },
  /** Audit scans: the fetch ends within 10 s, the grade and the findings write follow; 5 claims of one scan. */
  "audit-scans": { leaseMs: 60_000, maxAttempts: 5 },
} as const satisfies Partial<Record<string, { leaseMs: number; maxAttempts: number | null }>>;

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

/** The claim spec of `queue`'s rows with the product's status names. */
export function claimSpec(queue: keyof typeof CLAIMS, statuses: { from: readonly string[]; inFlight: string }): ClaimSpec {
  return { ...statuses, leaseMs: CLAIMS[queue].leaseMs };
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
