// Work an isolate gathers from many requests and writes in batches after they have answered (the
// request log, a key's "last used"). I/O started by one request dies with that request, so the
// batch is never written by a timer nobody owns: every request that adds an item calls drain()
// from its own waitUntil, and drain() writes what is pending from the caller's own request,
// leading the next write itself when none is in flight, or waiting (with a timer of its own
// pending, so the runtime does not cancel it as hung) for the write another request leads, then
// leading the next one if anything is still pending. Items added while a write is in flight go
// together in the next one, so the writes per request fall as the load grows. An item added by a
// request that ended before it was written stays pending for the next request's drain: it is not
// lost with the request that added it.
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
}

/** A write in flight longer than this is taken as lost with its request (cancelled): the next drain leads. */
export const BATCH_STALE_MS = 30_000;
/** How often a waiting drain looks at the write in flight. */
const WAIT_STEP_MS = 25;

export class IsolateBatch<T> {
  private pending: T[] = [];
  private inFlight: { done: Promise<void>; since: number } | null = null;
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
   * Resolves once nothing is pending and no write is in flight (or the write in flight is stale);
   * never rejects. Call it from the waitUntil of the request that added an item.
   */
  async drain(): Promise<void> {
    for (;;) {
      const flight = this.inFlight;
      if (flight && nowMs() - flight.since < BATCH_STALE_MS) {
        // A timer of this request is pending at every moment (see the header); the loop looks again.
        // The timer is cleared once the race is decided, so a long wait holds one timer, not many.
        let timer: ReturnType<typeof setTimeout> | undefined;
        const settled = await Promise.race([
          flight.done.then(() => true),
          new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), WAIT_STEP_MS))),
        ]);
        clearTimeout(timer);
        // The write is done but its leader never came back to say so (its request ended first, and
        // workerd drops the continuations of an ended request): the waiter clears the flight, or
        // every drain would spin on a settled promise until the flight went stale.
        if (settled && this.inFlight === flight) this.inFlight = null;
        continue;
      }
      if (this.pending.length === 0) return;
      const batch = this.pending.splice(0, this.options.batchMax);
      const done = this.write(batch);
      const mine = { done, since: nowMs() };
      this.inFlight = mine;
      await done;
      if (this.inFlight === mine) this.inFlight = null;
    }
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
