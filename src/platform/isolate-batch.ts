// Work an isolate gathers from many requests and writes in batches after they have answered (the
// request log, a key's "last used"). I/O started by one request dies with that request, so the
// batch is never written by a timer nobody owns: every request that adds an item calls drain()
// from its own waitUntil, and drain() writes what is pending from the caller's own request,
// leading the next write itself when none is in flight. A leader waits `lingerMs` for more items,
// writes, and goes on leading while anything is pending, so it writes the items added during its
// write too. While a write is in flight one other request stands by (with a timer of its own
// pending, so the runtime does not cancel it as hung) to lead the next write should the leader's
// request have ended; the drains of the rest return at once, since the leader or the standby
// writes their items. (Every request waiting, each re-attaching to the write's promise every
// 25 ms, cost a sixth of the isolate's CPU once writes lingered: docs/BENCHMARKS.md.) An item
// added by a request that ended before it was written stays pending for the next request's
// drain: it is not lost with the request that added it.
import { log } from "./log";
import { nowMs } from "./clock";

export interface IsolateBatchOptions<T> {
  /** Writes one batch; a rejection drops the batch (logged): the work is best effort. */
  send: (items: T[]) => Promise<void>;
  /** Items one write carries at most. */
  batchMax: number;
  /** Items held at most while writes fail or lag; past it the oldest are dropped (logged). */
  pendingMax: number;
  /** Name in the logs. */
  name: string;
  /**
   * How long a leading drain waits for more items before it writes (0: at once). The wait runs on
   * the leading request's own timer, after its answer; a write then carries the items of every
   * request that arrived meanwhile instead of a few, so the calls per request fall at any load.
   */
  lingerMs?: number;
}

/** A write in flight longer than this is taken as lost with its request (cancelled): the next drain leads. */
export const BATCH_STALE_MS = 30_000;
/** A standby that has not looked at the write in flight for this long is taken as lost with its request. */
const STANDBY_STALE_MS = 1000;
/** How often a waiting drain looks at the write in flight. */
const WAIT_STEP_MS = 25;

export class IsolateBatch<T> {
  private pending: T[] = [];
  private inFlight: { done: Promise<void>; since: number } | null = null;
  /** When the drain standing by for the write in flight last looked (null: none stands by). */
  private standbySince: number | null = null;
  /** Items dropped since the last log line about it. */
  private dropped = 0;

  constructor(private readonly options: IsolateBatchOptions<T>) {}

  /** Holds an item for the next write (synchronous: nothing on the request's path waits). */
  add(item: T): void {
    this.pending.push(item);
    if (this.pending.length > this.options.pendingMax) {
      this.dropped += this.pending.length - this.options.pendingMax;
      this.pending.splice(0, this.pending.length - this.options.pendingMax);
    }
  }

  /** Items waiting for a write. */
  get size(): number {
    return this.pending.length;
  }

  /**
   * Writes what is pending, or leaves it to the write in flight and its standby: then it answers
   * null at once and the caller has nothing to keep alive (under load, most requests: no waitUntil
   * of their own). Otherwise a promise, never rejecting, for the waitUntil of the request that
   * added an item.
   */
  drain(): Promise<void> | null {
    return this.covered() ? null : this.run(false);
  }

  /** A live write is in flight and a live standby waits for it: they write whatever is added now. */
  private covered(): boolean {
    const flight = this.inFlight;
    if (!flight || nowMs() - flight.since >= BATCH_STALE_MS) return false;
    // A standby that has not looked for a second was lost with its request: a drain replaces it.
    return this.standbySince !== null && nowMs() - this.standbySince < STANDBY_STALE_MS;
  }

  /** Resolves once nothing is pending and no write is in flight (or the write in flight is stale): tests, shutdown. */
  settled(): Promise<void> {
    return this.run(true);
  }

  private async run(toTheEnd: boolean): Promise<void> {
    for (;;) {
      const flight = this.inFlight;
      if (flight && nowMs() - flight.since < BATCH_STALE_MS) {
        const standby = this.covered();
        if (standby && !toTheEnd) return;
        const standing = !standby;
        if (standing) this.standbySince = nowMs();
        // A timer of this request is pending at every moment (see the header); the loop looks again.
        // The timer is cleared once the race is decided, so a long wait holds one timer, not many.
        let timer: ReturnType<typeof setTimeout> | undefined;
        const settled = await Promise.race([
          flight.done.then(() => true),
          new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), WAIT_STEP_MS))),
        ]);
        clearTimeout(timer);
        if (standing) this.standbySince = null;
        // The write is done but its leader never came back to say so (its request ended first, and
        // workerd drops the continuations of an ended request): the waiter clears the flight, or
        // every drain would spin on a settled promise until the flight went stale.
        if (settled && this.inFlight === flight) this.inFlight = null;
        continue;
      }
      if (this.pending.length === 0) return;
      const done = this.lead();
      const mine = { done, since: nowMs() };
      this.inFlight = mine;
      await done;
      if (this.inFlight === mine) this.inFlight = null;
    }
  }

  /** Waits the linger (unless a full batch is already pending), then writes what is pending, up to a batch. */
  private async lead(): Promise<void> {
    const linger = this.options.lingerMs ?? 0;
    if (linger > 0 && this.pending.length < this.options.batchMax) await new Promise((resolve) => setTimeout(resolve, linger));
    const batch = this.pending.splice(0, this.options.batchMax);
    if (batch.length > 0) await this.write(batch);
  }

  private async write(batch: T[]): Promise<void> {
    try {
      await this.options.send(batch);
    } catch (error) {
      this.dropped += batch.length;
      log.error(`${this.options.name}: batch not written`, { items: batch.length, error: String(error) });
    }
    if (this.dropped > 0) {
      log.error(`${this.options.name}: items dropped`, { items: this.dropped });
      this.dropped = 0;
    }
  }
}

/**
 * One batch per binding, made on first use: `batchPer((namespace) => options)` answers the batch
 * of a binding (an isolate has one environment in production; tests may pass others). The options
 * are made from the binding the batch writes to.
 */
export function batchPer<B extends object, T>(options: (binding: B) => IsolateBatchOptions<T>): (binding: B) => IsolateBatch<T> {
  const batches = new WeakMap<B, IsolateBatch<T>>();
  return (binding) => {
    let batch = batches.get(binding);
    if (!batch) {
      batch = new IsolateBatch<T>(options(binding));
      batches.set(binding, batch);
    }
    return batch;
  };
}

/** A batch's items by the object each goes to (a team's store, a site's), in order: one call per object. */
export function groupBy<T, V>(items: readonly T[], keyOf: (item: T) => string, pick: (item: T) => V): Map<string, V[]> {
  const groups = new Map<string, V[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(pick(item));
    else groups.set(key, [pick(item)]);
  }
  return groups;
}
