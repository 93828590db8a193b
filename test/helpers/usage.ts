// The team's meter (the quota counters in the team's rate-limit Durable Object) for tests: roll it
// up to D1 as its alarm would, read what D1 then holds, and set a month's usage the way a team
// that already used it would have it.
import { env, runInDurableObject } from "cloudflare:test";
import { nowMs } from "../../src/platform/clock";
import type { Service } from "../../src/platform/plans";
import { monthOf } from "../../src/platform/quota";
import type { RateLimiter } from "../../src/platform/rate-limit/durable-object";
import { teamObject } from "../../src/platform/rate-limit/middleware";

export const meterOf = (teamId: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(teamObject(teamId)));

/** Writes what the team's meter changed to D1 now (what its alarm does within ROLLUP_MS). */
export async function rollUpMeter(teamId: string): Promise<void> {
  await runInDurableObject(meterOf(teamId), (meter) => (meter as RateLimiter).rollUpNow());
}

/** The units of a service in D1's `usage_counters` after a roll-up of the team's meter; null when no row. */
export async function usedOf(teamId: string, service: Service | string, period: string = monthOf(nowMs()).period): Promise<number | null> {
  await rollUpMeter(teamId);
  const row = await env.DB.prepare("SELECT used FROM usage_counters WHERE team_id = ? AND service = ? AND period = ?")
    .bind(teamId, service, period)
    .first<{ used: number }>();
  return row ? row.used : null;
}

/** Sets the units a team used of a service in the current month, in its meter (seeding the month first). */
export async function setUsed(teamId: string, service: Service | string, used: number): Promise<void> {
  const at = nowMs();
  await runInDurableObject(meterOf(teamId), async (meter, state) => {
    await (meter as RateLimiter).meter(at, teamId, [{ read: true }]);
    state.storage.sql.exec(
      "INSERT INTO usage (service, period, used, dirty) VALUES (?, ?, ?, 1) ON CONFLICT DO UPDATE SET used = excluded.used, dirty = 1",
      service,
      monthOf(at).period,
      used,
    );
  });
}
