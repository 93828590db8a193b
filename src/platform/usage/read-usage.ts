// What a team has used: the month per metered service, its days, and the current rate-limit
// window, in one read of the team's meter (no D1 read). GET /usage and the console's usage page
// both read it here. When the meter cannot be reached the month and its days come from D1, the
// meter's last roll-up (at most ROLLUP_MS old), and the window is reported unknown as full
// capacity (rate limits fail open): a read never fails because the meter is down.
import { log } from "../log";
import type { Env } from "../../env";
import { nowMs } from "../clock";
import { planLimits, serviceMetric, services as serviceNames, type Service } from "../plans";
import { monthOf } from "../quota";
import { bucketLimit, teamObject } from "../rate-limit/buckets";
import type { UsageSnapshot } from "../rate-limit/durable-object";
import { getMeter, windowOf } from "../rate-limit/limiter";
import { readRolledUp } from "./rollup";

/** One metered service this month, as GET /usage reports it. */
export interface ServiceUsage {
  /** What the service counts: `emails_sent`, `ai_units`, `responses`, `notifications_sent`, `events_received`, `ingested_mb`. */
  metric: string;
  used: number;
  /** The plan's monthly limit; null when unlimited. */
  limit: number | null;
  /** `limit - used`, never below 0; null when unlimited. */
  remaining: number | null;
  unlimited: boolean;
}

/** A team's usage as its meter holds it. */
export interface TeamUsage {
  /** The UTC calendar month: `period` is `YYYY-MM`, `start` and `end` ISO instants (end: the month's last millisecond). */
  month: { period: string; start: string; end: string; services: Record<Service, ServiceUsage> };
  /**
   * Units per UTC day and service this month, oldest day first, then by service; days and
   * services without use are absent (a chart fills them with 0). `used` may be fractional for
   * `logs` (megabytes).
   */
  daily: Array<{ day: string; service: Service; used: number }>;
  /**
   * The team's `default` rate-limit bucket in the current 60-second window, not counting this
   * read: `limit` and `remaining` are null on a plan without a rate limit (enterprise); `reset` is
   * the Unix second the window ends. `remaining` equals `limit` when the meter could not be read.
   */
  window: { limit: number | null; remaining: number | null; reset: number };
  /** False when the meter could not be reached and the figures are D1's last roll-up. */
  live: boolean;
}

/**
 * Reads a team's usage: the month per service (every service of the platform, with the limits of
 * `plan`), the month's daily counts, and the current rate-limit window. One meter call, coalesced
 * with the team's other requests; no D1 read unless the meter is down.
 */
export async function readUsage(env: Env, teamId: string, plan: string): Promise<TeamUsage> {
  let snapshot: UsageSnapshot;
  let at: number;
  let live = true;
  try {
    const reply = await getMeter(env).ask(teamObject(teamId), teamId, { read: true });
    snapshot = reply.answer.usage!;
    at = reply.at;
  } catch (error) {
    log.error("usage meter unavailable, reading the last roll-up", { team_id: teamId, error: String(error) });
    at = nowMs();
    const month = monthOf(at);
    const rolled = await readRolledUp(env.DB, teamId, month.period);
    snapshot = { period: month.period, used: rolled.used, daily: rolled.daily, windowCount: 0 };
    live = false;
  }
  return usageFrom(snapshot, at, plan, live);
}

/** The typed usage of a meter snapshot taken at `at` for a team on `plan`. */
export function usageFrom(snapshot: UsageSnapshot, at: number, plan: string, live = true): TeamUsage {
  const { period, start, end } = monthOf(at);
  const limits = planLimits(plan).monthly;
  const services = {} as Record<Service, ServiceUsage>;
  for (const service of serviceNames()) {
    const used = snapshot.used[service] ?? 0;
    const limit = limits[service];
    services[service] = {
      metric: serviceMetric(service),
      used,
      limit,
      remaining: limit === null ? null : Math.max(0, limit - used),
      unlimited: limit === null,
    };
  }
  const known = new Set<string>(serviceNames());
  const daily = snapshot.daily.filter((d) => known.has(d.service)).map((d) => ({ day: d.day, service: d.service as Service, used: d.used }));
  const limit = bucketLimit("default", plan);
  const window = {
    limit,
    remaining: limit === null ? null : Math.max(0, limit - snapshot.windowCount),
    reset: windowOf(at).reset,
  };
  return { month: { period, start, end, services }, daily, window, live };
}
