// The team's meter (the quota counters in the team's rate-limit Durable Object) for tests: roll it
// up to D1 as its alarm would, read what D1 then holds, and set a month's usage the way a team
// that already used it would have it.
import { env, runInDurableObject } from "cloudflare:test";
import { onTestFinished, vi } from "vitest";
import { nowMs } from "../../src/platform/clock";
import { namedObject } from "../../src/platform/durable-objects";
import type { Service } from "../../src/platform/plans";
import { monthOf, unlimitedUnitsSettled } from "../../src/platform/quota";
import type { RateLimiter } from "../../src/platform/rate-limit/durable-object";
import { NETWORK_PREFIX, type BucketName } from "../../src/platform/rate-limit/buckets";
import { clientNetwork, counterAddress, teamObject } from "../../src/platform/rate-limit/middleware";
import { getMeter } from "../../src/platform/rate-limit/limiter";

export const meterOf = (teamId: string) => namedObject(env.RATE_LIMITER, teamObject(teamId));

/** Writes what the team's meter changed to D1 now (what its alarm does within ROLLUP_MS). */
export async function rollUpMeter(teamId: string): Promise<void> {
  await runInDurableObject(meterOf(teamId), (meter) => (meter as RateLimiter).rollUpNow());
}

/**
 * The units of a service in D1's `usage_counters` after a roll-up of the team's meter (and the
 * isolate's batch of unlimited plans' units added to it first); null when no row.
 */
export async function usedOf(teamId: string, service: Service | string, period: string = monthOf(nowMs()).period): Promise<number | null> {
  await unlimitedUnitsSettled(env);
  await rollUpMeter(teamId);
  const row = await env.DB.prepare("SELECT used FROM usage_counters WHERE team_id = ? AND service = ? AND period = ?")
    .bind(teamId, service, period)
    .first<{ used: number }>();
  return row ? row.used : null;
}

/**
 * Sets the units a team used of a service in the current month, through its meter as requests
 * would have taken them (the month seeded first, the difference taken or given back, the day with it).
 */
export async function setUsed(teamId: string, service: Service | string, used: number): Promise<void> {
  const at = nowMs();
  const meter = meterOf(teamId);
  const [read] = await meter.meter(at, teamId, [{ read: true }]);
  const current = read?.usage?.used[service] ?? 0;
  const [taken] = await meter.meter(at, teamId, [{ quota: { service, amount: used - current, limit: null } }]);
  if (taken?.quota?.used !== used) throw new Error(`setUsed: the meter holds ${taken?.quota?.used} ${service} units, not ${used}`);
}

/**
 * A per-IP bucket's count of one client address, where the limiter keeps it: the counter named
 * after the address's network in its routed block's object (`counterAddress`).
 */
export function ipCounter(bucket: BucketName, ip: string) {
  const where = counterAddress(bucket, `${NETWORK_PREFIX}${clientNetwork(ip)}`);
  const stub = namedObject(env.RATE_LIMITER, where.object);
  return {
    stub,
    hit: (windowStart: number, cost = 1) => stub.hit(windowStart, cost, where.counter),
    peek: (windowStart: number) => stub.peek(windowStart, where.counter),
  };
}

/**
 * Makes the isolate's meter fail every call item taking `service`'s units (with `givesBack`, giving
 * them back too), as an unreachable meter would, while everything else reaches it; console.error is
 * muted. Both are undone when the test finishes; `ask.mockRestore()` undoes the failure earlier.
 */
export function failMeterUnits(service: Service, { givesBack = false } = {}) {
  const meter = getMeter(env);
  const real = meter.ask.bind(meter);
  const errors = vi.spyOn(console, "error").mockImplementation(() => {});
  const ask = vi
    .spyOn(meter, "ask")
    .mockImplementation((object, teamId, item, keepAlive) =>
      item.quota?.service === service && (givesBack || item.quota.amount > 0)
        ? Promise.reject(new Error("meter unavailable"))
        : real(object, teamId, item, keepAlive),
    );
  onTestFinished(() => {
    ask.mockRestore();
    errors.mockRestore();
  });
  return { ask, errors };
}
