// What the usage page shows, in the shape of the usage meter's readUsage (src/platform/usage/, on
// the meter branch: the month per service, its days, the rate-limit window). Until the meter is
// merged the month comes from D1's monthly counters (what GET /api/v1/usage answers), the window
// from the team's rate-limit object (a read that counts nothing), and there are no daily counters
// yet: the chart shows the month's days at 0. Once the meter is in, loadUsage is its readUsage.
import type { Env } from "../env";
import { nowMs } from "../platform/clock";
import { planLimits, SERVICE_METRIC, SERVICES, type Service } from "../platform/plans";
import { usageThisMonth } from "../platform/quota";
import { bucketLimit } from "../platform/rate-limit/buckets";
import { windowOf } from "../platform/rate-limit/limiter";
import { teamObject } from "../platform/rate-limit/middleware";

export interface ServiceUsage {
  metric: string;
  used: number;
  limit: number | null;
  remaining: number | null;
  unlimited: boolean;
}

export interface TeamUsage {
  month: { period: string; start: string; end: string; services: Record<Service, ServiceUsage> };
  /** Units per UTC day (`YYYY-MM-DD`) and service this month; days without use are absent. */
  daily: Array<{ day: string; service: Service; used: number }>;
  /** The team's default bucket in the current window; null limit: no rate limit. `reset` in Unix seconds. */
  window: { limit: number | null; remaining: number | null; reset: number };
}

/** A team's usage this month on `plan`. */
export async function loadUsage(env: Env, teamId: string, plan: string): Promise<TeamUsage> {
  const at = nowMs();
  const window = windowOf(at);
  const limit = bucketLimit("default", plan);
  const [month, count] = await Promise.all([
    usageThisMonth(env, teamId),
    limit === null ? Promise.resolve(0) : env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(teamObject(teamId))).peek(window.start),
  ]);
  const limits = planLimits(plan).monthly;
  const services = {} as Record<Service, ServiceUsage>;
  for (const service of SERVICES) {
    const used = month.used[service] ?? 0;
    const max = limits[service];
    services[service] = { metric: SERVICE_METRIC[service], used, limit: max, remaining: max === null ? null : Math.max(0, max - used), unlimited: max === null };
  }
  return {
    month: { period: month.period, start: month.start, end: month.end, services },
    daily: [],
    window: { limit, remaining: limit === null ? null : Math.max(0, limit - count), reset: window.reset },
  };
}
