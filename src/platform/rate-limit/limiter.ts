// The limiter behind an interface: the Durable Object one, and a no-op twin for RATE_LIMITS=off;
// and the meter client both the limiter and the quotas call through, which coalesces concurrent
// requests for one object into one call (coalesce.ts).
import { namedObject } from "../durable-objects";
import { log } from "../log";
import type { Env } from "../../env";
import { nowMs } from "../clock";
import { IsolateCache } from "../isolate-cache";
import { WINDOW_SECONDS } from "./buckets";
import { OWN_COUNTER, type CounterSpec } from "./buckets";
import { Coalescer, type KeepAlive } from "../coalesce";
import { teamObject } from "./buckets";
import type { MeterAnswer, MeterItem, UsageSnapshot } from "./durable-object";
import { settings } from "../config";

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds at which the window resets. */
  reset: number;
  /** Seconds to wait when refused: the time left in the window rounded up, never 0. */
  retryAfter: number;
}

export interface Limiter {
  /** Counts one request against `key` with `limit` per window. */
  hit(key: string, limit: number): Promise<RateLimitResult>;
  /**
   * Counts one request in several counters of the object `key` with one call, in order; the first
   * counter that refuses stops the others (they are not counted). One result per counter reached.
   */
  hitAll(key: string, counters: CounterSpec[], keepAlive?: KeepAlive): Promise<RateLimitResult[]>;
  /**
   * hitAll in a team's object, and the team's usage read in the same call (for GET /usage, which
   * then needs no call of its own). `usage` is null when nothing was read: refused from memory,
   * limits off, or the object unreachable (the counts then fail open).
   */
  hitAllReading(teamId: string, counters: CounterSpec[], keepAlive?: KeepAlive): Promise<{ results: RateLimitResult[]; usage: ReadUsageReply | null }>;
  /** The refusal of `counter` in `key` this isolate remembers for the current window, without a call; else null. */
  remembered(key: string, counter: CounterSpec): RateLimitResult | null;
}

/** A request to an object of the RATE_LIMITER namespace, with the team whose meter it is (null: a per-IP or token bucket). */
interface MeterRequest {
  teamId: string | null;
  item: MeterItem;
}

/** A team's usage as its meter answered it, and the platform instant of the answer. */
export interface ReadUsageReply {
  at: number;
  snapshot: UsageSnapshot;
}

/** An object's answer to one request, and the platform instant the call counted it at. */
export interface MeterReply {
  at: number;
  answer: MeterAnswer;
}

/**
 * Calls the objects of one RATE_LIMITER namespace, at most one call in flight per object and
 * isolate: concurrent requests ride the next call together (exact: the object answers each in
 * order). Both the rate limits and the quotas go through it, so a team's hits and reservations
 * share its calls. Errors reach the caller: limits fail open, quotas closed.
 */
export class MeterClient {
  readonly lines: Coalescer<MeterRequest, MeterReply>;

  constructor(namespace: Env["RATE_LIMITER"]) {
    this.lines = new Coalescer(async (key, requests) => {
      const at = nowMs();
      const teamId = requests.find((r) => r.teamId !== null)?.teamId ?? null;
      const stub = namedObject(namespace, key);
      const answers = await stub.meter(
        at,
        teamId,
        requests.map((r) => r.item),
      );
      return answers.map((answer) => ({ at, answer }));
    });
  }

  /** The answer of object `key` to `item`; `teamId` when the item meters a team's quota or reads its usage. */
  ask(key: string, teamId: string | null, item: MeterItem, keepAlive?: KeepAlive): Promise<MeterReply> {
    return this.lines.run(key, { teamId, item }, keepAlive);
  }
}

const meters = new WeakMap<object, MeterClient>();

/** The meter client of an environment's RATE_LIMITER namespace (whatever RATE_LIMITS says: quotas always count). */
export function getMeter(env: Env): MeterClient {
  return meterOf(env.RATE_LIMITER);
}

/** The meter client of a RATE_LIMITER namespace (one per isolate in production). */
export function meterOf(namespace: Env["RATE_LIMITER"]): MeterClient {
  let meter = meters.get(namespace);
  if (!meter) {
    meter = new MeterClient(namespace);
    meters.set(namespace, meter);
  }
  return meter;
}

/** The window of an instant: floor(now / 60) × 60, in Unix seconds (or windows of `seconds`). */
export function windowOf(ms: number, seconds: number = WINDOW_SECONDS): { start: number; reset: number; retryAfter: number } {
  const start = Math.floor(ms / 1000 / seconds) * seconds;
  const reset = start + seconds;
  const retryAfter = Math.max(1, Math.ceil((reset * 1000 - ms) / 1000));
  return { start, reset, retryAfter };
}

/** What a counter at `count` (0: nothing counted) means for a request under `limit` in `window`. */
export function resultOf(count: number, limit: number, window: ReturnType<typeof windowOf>): RateLimitResult {
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), reset: window.reset, retryAfter: window.retryAfter };
}

/** A first counter this isolate saw refuse: its window and the count the object answered. */
interface Refusal {
  windowStart: number;
  count: number;
}

const refusalKey = (key: string, counter: CounterSpec) => `${key}\u0000${counter.name}`;

/** Refusals remembered per isolate (one per bucket key; the oldest goes first). */
export const REFUSALS_MAX = 10_000;

/**
 * The Durable Object limiter. When the object cannot be reached the request is let through
 * (fail open): a limiter outage must not take every product down with it; the failure is logged.
 *
 * A refusal is remembered until its window ends: a count only grows within a window, so while the
 * count the object last answered for a key's first counter is over the limit asked now, the object
 * would refuse again, and the request is refused here without a call. This can only refuse what
 * the object would refuse (a raised limit, a new window or another counter goes to the object), so
 * counting stays exact; a flood past a limit (an anonymous caller's 401s, a team's 429s) then costs
 * no Durable Object call per request.
 */
export class DurableObjectLimiter implements Limiter {
  private readonly refusals = new IsolateCache<Refusal>({ ttlMs: WINDOW_SECONDS * 1000, max: REFUSALS_MAX });

  constructor(private readonly meter: MeterClient) {}

  async hit(key: string, limit: number): Promise<RateLimitResult> {
    const [result] = await this.hitAll(key, [{ name: OWN_COUNTER, limit }]);
    return result;
  }

  remembered(key: string, counter: CounterSpec): RateLimitResult | null {
    return this.rememberedIn(windowOf(nowMs(), counter.windowSeconds), key, counter);
  }

  private rememberedIn(window: ReturnType<typeof windowOf>, key: string, counter: CounterSpec): RateLimitResult | null {
    const refused = this.refusals.get(refusalKey(key, counter));
    if (!refused || refused.windowStart !== window.start || refused.count <= counter.limit) return null;
    return resultOf(refused.count, counter.limit, window);
  }

  async hitAll(key: string, counters: CounterSpec[], keepAlive?: KeepAlive): Promise<RateLimitResult[]> {
    return (await this.count(key, null, counters, keepAlive)).results;
  }

  hitAllReading(teamId: string, counters: CounterSpec[], keepAlive?: KeepAlive): Promise<{ results: RateLimitResult[]; usage: ReadUsageReply | null }> {
    return this.count(teamObject(teamId), teamId, counters, keepAlive);
  }

  /** Counts in `key`'s counters (and reads the team's usage when `readFor` names it) with one call. */
  private async count(
    key: string,
    readFor: string | null,
    counters: CounterSpec[],
    keepAlive?: KeepAlive,
  ): Promise<{ results: RateLimitResult[]; usage: ReadUsageReply | null }> {
    const first = counters[0]!;
    const asked = windowOf(nowMs(), first.windowSeconds);
    const remembered = this.rememberedIn(asked, key, first);
    if (remembered) return { results: [remembered], usage: null };
    let reply: MeterReply;
    try {
      reply = await this.meter.ask(key, readFor, readFor ? { counters, read: true } : { counters }, keepAlive);
    } catch (error) {
      log.error("rate limiter unavailable, failing open", { key, error: String(error) });
      return { results: counters.map(({ limit, windowSeconds }) => resultOf(0, limit, windowOf(nowMs(), windowSeconds))), usage: null };
    }
    // The windows the call counted in (a request that waited in line across a rollover is counted,
    // and answered, in the new window).
    const windows = counters.map((counter) => windowOf(reply.at, counter.windowSeconds));
    const counts = reply.answer.counts ?? [];
    if (counts[0]! > first.limit) this.refusals.set(refusalKey(key, first), { windowStart: windows[0]!.start, count: counts[0]! }, this.refusals.mark());
    const usage = reply.answer.usage ? { at: reply.at, snapshot: reply.answer.usage } : null;
    return { results: counts.map((count, i) => resultOf(count, counters[i]!.limit, windows[i]!)), usage };
  }
}

/** RATE_LIMITS=off: nothing is counted and nothing is refused. */
export class NoopLimiter implements Limiter {
  async hit(_key: string, limit: number): Promise<RateLimitResult> {
    return resultOf(0, limit, windowOf(nowMs()));
  }

  async hitAll(_key: string, counters: CounterSpec[]): Promise<RateLimitResult[]> {
    return counters.map(({ limit, windowSeconds }) => resultOf(0, limit, windowOf(nowMs(), windowSeconds)));
  }

  async hitAllReading(teamId: string, counters: CounterSpec[]): Promise<{ results: RateLimitResult[]; usage: ReadUsageReply | null }> {
    return { results: await this.hitAll(teamId, counters), usage: null };
  }

  remembered(): RateLimitResult | null {
    return null;
  }
}

const noop = new NoopLimiter();
const limiters = new WeakMap<object, Limiter>();

/** The limiter for an environment: the no-op one when RATE_LIMITS=off, else one DO limiter per namespace. */
export function getLimiter(env: Env): Limiter {
  if (!settings(env).rateLimits) return noop;
  let limiter = limiters.get(env.RATE_LIMITER);
  if (!limiter) {
    limiter = new DurableObjectLimiter(getMeter(env));
    limiters.set(env.RATE_LIMITER, limiter);
  }
  return limiter;
}
