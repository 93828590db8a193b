// The limiter behind an interface: the Durable Object one, and a no-op twin for RATE_LIMITS=off.
import type { Env } from "../../env";
import { nowMs } from "../clock";
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
  hitAll(key: string, counters: CounterSpec[]): Promise<RateLimitResult[]>;
}

/** The window of an instant: floor(now / 60) × 60, in Unix seconds. */
export function windowOf(ms: number): { start: number; reset: number; retryAfter: number } {
  const start = Math.floor(ms / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS;
  const reset = start + WINDOW_SECONDS;
  const retryAfter = Math.max(1, Math.ceil((reset * 1000 - ms) / 1000));
  return { start, reset, retryAfter };
}

/**
 * The Durable Object limiter. When the object cannot be reached the request is let through
 * (fail open): a limiter outage must not take every product down with it; the failure is logged.
 */
export class DurableObjectLimiter implements Limiter {
  constructor(private readonly namespace: Env["RATE_LIMITER"]) {}

  async hit(key: string, limit: number): Promise<RateLimitResult> {
    const [result] = await this.hitAll(key, [{ name: OWN_COUNTER, limit }]);
    return result;
  }

  async hitAll(key: string, counters: CounterSpec[]): Promise<RateLimitResult[]> {
    const window = windowOf(nowMs());
    let counts: number[];
    try {
      const stub = this.namespace.get(this.namespace.idFromName(key));
      counts = await stub.hitAll(window.start, counters);
    } catch (error) {
      console.error(JSON.stringify({ msg: "rate limiter unavailable, failing open", key, error: String(error) }));
      return counters.map(({ limit }) => ({ allowed: true, limit, remaining: limit, reset: window.reset, retryAfter: window.retryAfter }));
    }
    return counts.map((count, i) => {
      const { limit } = counters[i];
      return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), reset: window.reset, retryAfter: window.retryAfter };
    });
  }
}

/** RATE_LIMITS=off: nothing is counted and nothing is refused. */
export class NoopLimiter implements Limiter {
  async hit(_key: string, limit: number): Promise<RateLimitResult> {
    const window = windowOf(nowMs());
    return { allowed: true, limit, remaining: limit, reset: window.reset, retryAfter: window.retryAfter };
  }

  async hitAll(_key: string, counters: CounterSpec[]): Promise<RateLimitResult[]> {
    const window = windowOf(nowMs());
    return counters.map(({ limit }) => ({ allowed: true, limit, remaining: limit, reset: window.reset, retryAfter: window.retryAfter }));
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
