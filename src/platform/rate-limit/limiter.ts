// The limiter behind an interface: the Durable Object one, and a no-op twin for RATE_LIMITS=off.
import type { Env } from "../../env";
import { nowMs } from "../clock";
import { IsolateCache } from "../isolate-cache";
import { WINDOW_SECONDS } from "./buckets";
import { OWN_COUNTER, type CounterSpec } from "./buckets";

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
  hitAll(key: string, counters: CounterSpec[], windowSeconds?: number): Promise<RateLimitResult[]>;
  /** The refusal of `counter` in `key` this isolate remembers for the current window, without a call; else null. */
  remembered(key: string, counter: CounterSpec): RateLimitResult | null;
}

/** The window of an instant: floor(now / 60) × 60, in Unix seconds (or windows of `seconds`). */
export function windowOf(ms: number, seconds: number = WINDOW_SECONDS): { start: number; reset: number; retryAfter: number } {
  const start = Math.floor(ms / 1000 / seconds) * seconds;
  const reset = start + seconds;
  const retryAfter = Math.max(1, Math.ceil((reset * 1000 - ms) / 1000));
  return { start, reset, retryAfter };
}

/** What a counter at `count` (0: nothing counted) means for a request under `limit` in `window`. */
function resultOf(count: number, limit: number, window: ReturnType<typeof windowOf>): RateLimitResult {
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

  constructor(private readonly namespace: Env["RATE_LIMITER"]) {}

  async hit(key: string, limit: number): Promise<RateLimitResult> {
    const [result] = await this.hitAll(key, [{ name: OWN_COUNTER, limit }]);
    return result;
  }

  remembered(key: string, counter: CounterSpec): RateLimitResult | null {
    return this.rememberedIn(windowOf(nowMs()), key, counter);
  }

  private rememberedIn(window: ReturnType<typeof windowOf>, key: string, counter: CounterSpec): RateLimitResult | null {
    const refused = this.refusals.get(refusalKey(key, counter));
    if (!refused || refused.windowStart !== window.start || refused.count <= counter.limit) return null;
    return resultOf(refused.count, counter.limit, window);
  }

  async hitAll(key: string, counters: CounterSpec[], windowSeconds: number = WINDOW_SECONDS): Promise<RateLimitResult[]> {
    const window = windowOf(nowMs(), windowSeconds);
    const first = counters[0]!;
    const remembered = this.rememberedIn(window, key, first);
    if (remembered) return [remembered];
    let counts: number[];
    try {
      const stub = this.namespace.get(this.namespace.idFromName(key));
      counts = await stub.hitAll(window.start, counters, windowSeconds);
    } catch (error) {
      console.error(JSON.stringify({ msg: "rate limiter unavailable, failing open", key, error: String(error) }));
      return counters.map(({ limit }) => resultOf(0, limit, window));
    }
    if (counts[0]! > first.limit) this.refusals.set(refusalKey(key, first), { windowStart: window.start, count: counts[0]! }, this.refusals.mark());
    return counts.map((count, i) => resultOf(count, counters[i]!.limit, window));
  }
}

/** RATE_LIMITS=off: nothing is counted and nothing is refused. */
export class NoopLimiter implements Limiter {
  async hit(_key: string, limit: number): Promise<RateLimitResult> {
    return resultOf(0, limit, windowOf(nowMs()));
  }

  async hitAll(_key: string, counters: CounterSpec[], windowSeconds: number = WINDOW_SECONDS): Promise<RateLimitResult[]> {
    const window = windowOf(nowMs(), windowSeconds);
    return counters.map(({ limit }) => resultOf(0, limit, window));
  }

  remembered(): RateLimitResult | null {
    return null;
  }
}

const noop = new NoopLimiter();
const limiters = new WeakMap<object, Limiter>();

/** The limiter for an environment: the no-op one when RATE_LIMITS=off, else one DO limiter per namespace. */
export function getLimiter(env: Env): Limiter {
  if (env.RATE_LIMITS === "off") return noop;
  let limiter = limiters.get(env.RATE_LIMITER);
  if (!limiter) {
    limiter = new DurableObjectLimiter(env.RATE_LIMITER);
    limiters.set(env.RATE_LIMITER, limiter);
  }
  return limiter;
}
