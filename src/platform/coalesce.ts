// Fewer binding calls than requests, every count still exact: per isolate and key (a Durable
// Object, a queue), at most one call is in flight; requests arriving meanwhile wait in line, and the
// next call carries all of them, answered in order, each as if it had come alone. The meter
// (rate-limit/limiter.ts), the relay's per-source store calls (products/relay/relay.store.ts) and
// the queue sends of replays (jobs/queues.ts sendTogether) use it.
//
// Two rules of the runtime shape it (PLATFORM-NOTES, "I/O started by one request dies with it"):
// - A call belongs to the request that started it. So the request whose call returns never starts
//   the next one (it answers and ends, and its call would be cancelled): it hands the lead to the
//   first request waiting, which makes the next call from its own request.
// - A request waiting on another request's promise with nothing of its own pending is cancelled
//   as hung, and code resuming from a promise another request *resolves* can run in that
//   request's context (seen here: "Cannot perform I/O on behalf of a different request" when a
//   waiter then read its own body). Following a promise another request *made* is different: the
//   runtime gives the follower a promise of its own request that settles with it, so the follower
//   resumes in its own request. So a waiter keeps a timer of its own pending and follows the
//   promise of the call in flight (made by that call's leader); when the call is done, the waiter
//   wakes in its own request and reads what the leader wrote down: its answer, or its turn to lead.
//   The timer is also the way out: a waiter still in line after COALESCE_WAIT_MS leads a call
//   itself (the request that should have led is gone); a waiter whose call is out keeps waiting (a
//   slow call still answers, and giving up would leave its effects, a reservation or a sent
//   message, without anyone to undo them) until COALESCE_GIVE_UP_MS, then gets an error (its
//   caller fails open or closed, as for any failed call).

import { boundedPage } from "./pagination";

/** How long a request waits in line for another request to make the call before it makes it itself. */
export const COALESCE_WAIT_MS = 5_000;
/** How long a request waits for the answer of a call another request made before it gives up. */
export const COALESCE_GIVE_UP_MS = 30_000;
/** Requests carried by one call at most; the rest wait for the next. */
export const COALESCE_MAX_BATCH = 200;
/**
 * Bytes one call carries at most, by its items' `weigh`: a Durable Object RPC refuses arguments over
 * 32 MiB, and a call that large would fail every request riding it (40 webhooks of 1 MB at once).
 * An item heavier than this alone still goes, alone. A string's `length` counts UTF-16 units, which
 * serialize to at most 2 bytes each: a call stays under 16 MiB.
 */
export const COALESCE_MAX_BYTES = 8 * 1024 * 1024;

export interface CoalescerOptions<I> {
  /** How long a request waits in line for another to make the call (default COALESCE_WAIT_MS). */
  waitMs?: number;
  /** How long a request waits for the answer of a call another made (default COALESCE_GIVE_UP_MS). */
  giveUpMs?: number;
  /** An item's bytes in the call (its large strings); calls are bounded by COALESCE_MAX_BYTES. Default: not weighed. */
  weigh?: (item: I) => number;
}

type Outcome<A> = { answer: A } | { error: unknown };

/** Keeps a promise's I/O alive past its request's answer or cancellation (ExecutionContext.waitUntil). */
export type KeepAlive = (promise: Promise<unknown>) => void;

interface Waiter<I, A> {
  item: I;
  keepAlive?: KeepAlive;
  /** waiting: in line; leading: makes the call; sent: in another request's call; done: settled or given up. */
  state: "waiting" | "leading" | "sent" | "done";
  /** Written by the request whose call carried this one. */
  outcome: Outcome<A> | null;
}

interface Line<I, A> {
  /** A request is leading a call for this object. */
  busy: boolean;
  /** The call in flight for the object (made by its leader's request); null once its answers and the hand-over are written. */
  call: Promise<unknown> | null;
  waiting: Waiter<I, A>[];
}

/** Calls carried and requests answered by one Coalescer, for tests and the bench. */
export interface CoalesceStats {
  calls: number;
  items: number;
}

export class Coalescer<I, A> {
  private readonly lines = new Map<string, Line<I, A>>();
  readonly stats: CoalesceStats = { calls: 0, items: 0 };

  private readonly waitMs: number;
  private readonly giveUpMs: number;
  private readonly weigh: ((item: I) => number) | null;

  /** `send(key, items)` makes one call for the object `key` and answers each item, in order. */
  constructor(
    private readonly send: (key: string, items: I[]) => Promise<A[]>,
    options: CoalescerOptions<I> = {},
  ) {
    this.waitMs = options.waitMs ?? COALESCE_WAIT_MS;
    this.giveUpMs = options.giveUpMs ?? COALESCE_GIVE_UP_MS;
    this.weigh = options.weigh ?? null;
  }

  /**
   * The answer to `item` from the object `key`, carried by the next call made for that object.
   * `keepAlive` (the request's waitUntil) keeps a call this request leads, and the hand-over and
   * answers that follow it, alive if the request is cancelled meanwhile (its client went away):
   * the requests riding that call and waiting behind it then do not wait for their timers.
   */
  async run(key: string, item: I, keepAlive?: KeepAlive): Promise<A> {
    let line = this.lines.get(key);
    if (!line) {
      line = { busy: false, call: null, waiting: [] };
      this.lines.set(key, line);
    }
    const me: Waiter<I, A> = { item, keepAlive, state: "waiting", outcome: null };
    line.waiting.push(me);
    if (!line.busy) {
      line.busy = true;
      me.state = "leading";
      return this.lead(key, line, me);
    }
    // Waiting is following the promise of the call in flight (made by another request, settled
    // here in this request: see the head of this file) beside this request's own timer, which also
    // keeps the request from being taken for hung: one timer for the wait in line, one more once
    // the call is out (`scheduler.wait`, the runtime's own: a timer of the Node-style
    // `setTimeout`, with its object per call, costs several times more). With no call in flight
    // (the next leader has not made its call yet), 1 ms, and look again: a settled call is never
    // followed, nor one whose leader's request may have ended since.
    const since = Date.now();
    let boundOf: Waiter<I, A>["state"] | null = null;
    let bound: Promise<void> | null = null;
    for (;;) {
      if (boundOf !== me.state || bound === null) {
        // The timer of this state (never one already fired: a settled bound would spin the loop).
        const ms = Math.max(1, (me.state === "sent" ? this.giveUpMs : this.waitMs) - (Date.now() - since));
        const armed: Promise<void> = scheduler.wait(ms).then(() => {
          if (bound === armed) bound = null;
        });
        bound = armed;
        boundOf = me.state;
      }
      await (line.call ? Promise.race([line.call, bound]) : scheduler.wait(1));
      if (me.outcome) break;
      if (me.state === "leading") return this.lead(key, line, me);
      const waited = Date.now() - since;
      if (waited >= this.waitMs && me.state === "waiting") {
        // Still in line: the request that should have led is gone; lead from here.
        me.state = "leading";
        return this.lead(key, line, me);
      }
      if (waited >= this.giveUpMs && me.state === "sent") {
        me.state = "done";
        me.outcome = { error: new Error(`no answer from ${key} within ${waited} ms`) };
      }
    }
    const outcome: Outcome<A> = me.outcome;
    if ("answer" in outcome) return outcome.answer;
    throw outcome.error;
  }

  /** Makes one call with everything in line (up to the cap), answers the others, hands over. */
  private async lead(key: string, line: Line<I, A>, me: Waiter<I, A>): Promise<A> {
    const mine = line.waiting.indexOf(me);
    if (mine > 0) line.waiting.unshift(...line.waiting.splice(mine, 1));
    const batch = line.waiting.splice(0, this.batchSize(line.waiting));
    for (const waiter of batch) if (waiter !== me) waiter.state = "sent";
    this.stats.calls++;
    this.stats.items += batch.length;
    // The call, the hand-over and the others' answers in one promise, kept alive with the request.
    const done = this.send(
      key,
      batch.map((w) => w.item),
    ).then(
      (answers) => this.finish(key, line, me, batch, answers, null),
      (error: unknown) => this.finish(key, line, me, batch, null, error),
    );
    line.call = done;
    me.keepAlive?.(done);
    const outcome = await done;
    if (!outcome.answers) throw outcome.failure;
    return outcome.answers[0]!;
  }

  /** How many of the first waiters one call carries: up to COALESCE_MAX_BATCH, and COALESCE_MAX_BYTES when weighed (the first always). */
  private batchSize(waiting: Waiter<I, A>[]): number {
    const weigh = this.weigh;
    if (!weigh) return Math.min(waiting.length, COALESCE_MAX_BATCH);
    return boundedPage(waiting, { limit: COALESCE_MAX_BATCH, maxBytes: COALESCE_MAX_BYTES }, (waiter) => weigh(waiter.item)).rows.length;
  }

  /** After a call: hand over the line, answer the riders; the leader's own outcome is returned. */
  private finish(
    key: string,
    line: Line<I, A>,
    me: Waiter<I, A>,
    batch: Waiter<I, A>[],
    answers: A[] | null,
    failure: unknown,
  ): { answers: A[] | null; failure: unknown } {
    me.state = "done";
    line.call = null;
    this.handOver(key, line);
    batch.forEach((waiter, i) => {
      if (waiter === me || waiter.state !== "sent") return;
      waiter.state = "done";
      waiter.outcome = answers ? { answer: answers[i]! } : { error: failure };
    });
    return { answers, failure };
  }

  /** The first request in line leads the next call from its own request; an empty line is dropped. */
  private handOver(key: string, line: Line<I, A>): void {
    const next = line.waiting[0];
    if (!next) {
      line.busy = false;
      if (this.lines.get(key) === line) this.lines.delete(key);
      return;
    }
    next.state = "leading";
  }
}
