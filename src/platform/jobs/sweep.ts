// The sweep of rows whose queue message was lost, declared once per product. A row is lost when
// it waits in a claimable status, was due longer than `staleMs` ago (`unattemptedMs` when it was
// never attempted) and has no live lease (its message never came, or went to the dead-letter queue), or is in flight under a lease
// that ended `inFlight.afterMs` ago (its consumer died and no redelivery came). The sweep sends
// the lost rows' messages again with sendAll, at most `limit` rows a run (oldest due first); rows
// that already used every attempt are settled as failed with a reason instead, when the product
// says so. A duplicate message is harmless: the consumer claims the row (claim.ts) before acting,
// so whichever message claims first acts and the other finds nothing to do.
//
// Each product `mark`s its re-queued rows (due = now, a new queue token, waiting again) in the same
// UPDATE ... RETURNING that picks them, which moves them out of the lost set: a row is sent once
// per stale period, not once per run; overlapping runs never send one row twice; and the run goes
// on in batches.
import { log } from "../log";
import { and, asc, eq, gte, inArray, lt, or, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { nowMs } from "../clock";
import { leaseFree, type ClaimTable } from "./claim";
import { sendAll } from "./queues";

/** The value a key column reads as (null where the column allows it). */
type ValueOf<C extends SQLiteColumn> = C["_"]["notNull"] extends true ? C["_"]["data"] : C["_"]["data"] | null;

export interface SweepSpec<T extends ClaimTable, Key extends Record<string, SQLiteColumn>, Body> {
  /** Names the sweep in logs. */
  name: string;
  table: T;
  /** The columns a message is built from. */
  key: Key;
  /** Claimable statuses a lost row waits in. */
  waiting: readonly string[];
  /** Since when a waiting row is due (its next_attempt_at, creation or last change). */
  due: SQLiteColumn | SQL;
  /** How `due` writes a time (default ISO 8601 with milliseconds), so the cutoff compares with it. */
  dueText?: (ms: number) => string;
  /** A waiting row due longer ago than this has lost its message. */
  staleMs: number;
  /**
   * Sooner for a waiting row never attempted (attempts = 0): its message was never sent or never
   * came (the enqueue of its accept failed, jobs/accept.ts). Run every minute, this bounds how
   * long accepted work can wait for a queue that refused it.
   */
  unattemptedMs?: number;
  /** The in-flight status, swept once its lease ended `afterMs` ago (and it was due before then). */
  inFlight?: { status: string; afterMs: number };
  /** Rows re-queued per run, in statements of `batch` rows (default: all in one). */
  limit: number;
  batch?: number;
  /** What a re-queued row is given (`at`: now, ms), moving it out of the lost set. */
  mark: (at: number) => SQLiteUpdateSetSource<T>;
  /** Rows with this many attempts are set failed (`set`: the status and the reason), not re-queued. */
  exhausted?: { maxAttempts: number; set: SQLiteUpdateSetSource<T> };
  queue: (env: Env) => Queue<Body>;
  /** The messages of the rows picked in one statement. */
  messages: (rows: Array<{ [K in keyof Key]: ValueOf<Key[K]> }>) => Body[];
  sendOptions?: QueueSendOptions;
  /** A refused send: thrown after the run (default), or logged and counted as `unsent`. */
  onSendError?: "throw" | "log";
}

export interface SweepResult {
  requeued: number;
  /** Rows whose messages the queue refused (onSendError "log"). */
  unsent: number;
  /** Rows set failed because they had no attempt left. */
  exhausted: number;
}

/** A product's sweep declaration, typed from its table and key columns. */
export function declareSweep<T extends ClaimTable, Key extends Record<string, SQLiteColumn>, Body>(spec: SweepSpec<T, Key, Body>): SweepSpec<T, Key, Body> {
  return spec;
}

/** Runs one product's sweep. */
export async function sweep<T extends ClaimTable, Key extends Record<string, SQLiteColumn>, Body>(
  env: Env,
  spec: SweepSpec<T, Key, Body>,
): Promise<SweepResult> {
  const db = getDb(env.DB);
  const at = nowMs();
  const { table } = spec;
  const rowid = sql`rowid`;
  const due = sql`${spec.due}`;
  const dueBefore = (ms: number) => lt(due, spec.dueText ? spec.dueText(ms) : new Date(ms).toISOString());
  const waitedTooLong =
    spec.unattemptedMs === undefined
      ? dueBefore(at - spec.staleMs)
      : or(dueBefore(at - spec.staleMs), and(eq(table.attempts, 0), dueBefore(at - spec.unattemptedMs)));
  const lost = or(
    and(inArray(table.status, [...spec.waiting]), waitedTooLong, leaseFree(table, at)),
    // The due test keeps a marked row (due now) from being picked again while its lease stays ended.
    spec.inFlight
      ? and(eq(table.status, spec.inFlight.status), lt(table.leaseUntil, at - spec.inFlight.afterMs), dueBefore(at - spec.inFlight.afterMs))
      : undefined,
  )!;
  const oldest = (where: SQL, limit: number) => db.select({ rowid }).from(table).where(where).orderBy(asc(due)).limit(limit);
  const result: SweepResult = { requeued: 0, unsent: 0, exhausted: 0 };

  let retriable: SQL = lost;
  if (spec.exhausted) {
    const failed = await db
      .update(table)
      .set({ ...spec.exhausted.set, leaseUntil: null } as SQLiteUpdateSetSource<T>)
      .where(inArray(rowid, oldest(and(lost, gte(table.attempts, spec.exhausted.maxAttempts))!, spec.limit)))
      .run();
    result.exhausted = failed.meta.changes ?? 0;
    retriable = and(lost, lt(table.attempts, spec.exhausted.maxAttempts))!;
  }

  const batch = Math.min(spec.batch ?? spec.limit, spec.limit);
  while (result.requeued + result.unsent < spec.limit) {
    const size = Math.min(batch, spec.limit - result.requeued - result.unsent);
    // Picked and moved out of the lost set in one statement.
    const rows = (await db
      .update(table)
      .set(spec.mark(at))
      .where(inArray(rowid, oldest(retriable, size)))
      .returning(spec.key)) as Parameters<typeof spec.messages>[0];
    if (rows.length === 0) break;
    try {
      await sendAll(spec.queue(env), spec.messages(rows), spec.sendOptions);
      result.requeued += rows.length;
    } catch (error) {
      if (spec.onSendError !== "log") throw error;
      // Marked: lost again a stale period later, when a run sends them.
      log.error(`${spec.name} re-queue failed`, { count: rows.length, error: String(error) });
      result.unsent += rows.length;
      break;
    }
    if (rows.length < size) break;
  }
  if (result.requeued || result.unsent || result.exhausted) log.info(`${spec.name}: swept rows whose queue message was lost`, { ...result });
  return result;
}
