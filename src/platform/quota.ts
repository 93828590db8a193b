// Monthly plan quotas: one counter per team, service and UTC calendar month, consumed atomically
// in a single conditional upsert, so two concurrent requests can never both take the last unit.
// Crossing 80 % or 95 % of a limit queues one warning email to the team owner per threshold,
// service and month; warnings consume no quota.
import type { Env } from "../env";
import { nowMs } from "./clock";
import { ApiError } from "./errors";
import { planLimits, SERVICE_METRIC, type Service } from "./plans";
import { queuePlatformMail } from "./platform-mail";

export interface QuotaOwner {
  teamId: string;
  plan: string;
  ownerEmail: string | null;
}

export const WARNING_THRESHOLDS = [80, 95] as const;

/** The UTC calendar month of an instant: key `YYYY-MM` and its bounds. */
export function monthOf(ms: number): { period: string; start: string; end: string } {
  const d = new Date(ms);
  const start = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
  const next = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
  return {
    period: start.toISOString().slice(0, 7),
    start: start.toISOString(),
    end: new Date(next.getTime() - 1).toISOString(),
  };
}

/**
 * Consumes `amount` units of a service for the current month; throws the 429 monthly-quota error
 * (nothing consumed) when that would pass the plan's limit. Returns the new total.
 */
export async function consumeQuota(env: Env, owner: QuotaOwner, service: Service, amount = 1): Promise<number> {
  const { period } = monthOf(nowMs());
  const limit = planLimits(owner.plan).monthly[service];
  const row =
    limit === null
      ? await env.DB.prepare(
          `INSERT INTO usage_counters (team_id, service, period, used) VALUES (?1, ?2, ?3, ?4)
           ON CONFLICT (team_id, service, period) DO UPDATE SET used = used + excluded.used RETURNING used`,
        )
          .bind(owner.teamId, service, period, amount)
          .first<{ used: number }>()
      : await env.DB.prepare(
          `INSERT INTO usage_counters (team_id, service, period, used) SELECT ?1, ?2, ?3, ?4 WHERE ?4 <= ?5
           ON CONFLICT (team_id, service, period) DO UPDATE SET used = used + excluded.used
           WHERE used + excluded.used <= ?5 RETURNING used`,
        )
          .bind(owner.teamId, service, period, amount, limit)
          .first<{ used: number }>();
  if (!row) throw ApiError.monthlyQuota();
  if (limit !== null) await warnOnThresholds(env, owner, service, period, row.used - amount, row.used, limit);
  return row.used;
}

/**
 * Throws the 429 monthly-quota error when the team has no unit of `service` left this month;
 * consumes nothing. For work whose unit is spent later (a survey response, when it completes).
 */
export async function requireQuotaLeft(env: Env, owner: { teamId: string; plan: string }, service: Service): Promise<void> {
  const limit = planLimits(owner.plan).monthly[service];
  if (limit === null) return;
  const row = await env.DB.prepare("SELECT used FROM usage_counters WHERE team_id = ? AND service = ? AND period = ?")
    .bind(owner.teamId, service, monthOf(nowMs()).period)
    .first<{ used: number }>();
  if ((row?.used ?? 0) >= limit) throw ApiError.monthlyQuota();
}

/** Gives back units consumed for work that was then refused (e.g. a batch item that failed). */
export async function releaseQuota(env: Env, teamId: string, service: Service, amount: number): Promise<void> {
  if (amount <= 0) return;
  const { period } = monthOf(nowMs());
  await env.DB.prepare(
    "UPDATE usage_counters SET used = MAX(0, used - ?4) WHERE team_id = ?1 AND service = ?2 AND period = ?3",
  )
    .bind(teamId, service, period, amount)
    .run();
}

/**
 * Queues the owner's warning email for each threshold (80 %, 95 %) the usage crossed going from
 * `before` to `after` units, once per threshold, service and month. For callers that take their
 * units in their own D1 batch instead of through consumeQuota.
 */
export async function warnOnThresholds(
  env: Env,
  owner: QuotaOwner,
  service: Service,
  period: string,
  before: number,
  after: number,
  limit: number,
): Promise<void> {
  for (const threshold of WARNING_THRESHOLDS) {
    const mark = (limit * threshold) / 100;
    if (before >= mark || after < mark) continue;
    // The primary key (team, service, period, threshold) makes the warning once-only even when
    // two requests cross the mark at the same time.
    const inserted = await env.DB.prepare(
      `INSERT INTO usage_warnings (team_id, service, period, threshold, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING RETURNING threshold`,
    )
      .bind(owner.teamId, service, period, threshold, new Date(nowMs()).toISOString())
      .first();
    if (!inserted || !owner.ownerEmail) continue;
    await queuePlatformMail(env, {
      teamId: owner.teamId,
      kind: "usage_warning",
      to: owner.ownerEmail,
      subject: `You have used ${threshold}% of your monthly ${service} quota`,
      text:
        `Your team has used ${after} of ${limit} ${SERVICE_METRIC[service]} this month (${period}), ` +
        `passing ${threshold}% of the limit of your plan. When the limit is reached, further requests ` +
        `answer 429 until the 1st of next month. Upgrade your plan to raise the limit.`,
    });
  }
}

/** Current usage of each service for a team this month (a missing counter is 0). */
export async function usageThisMonth(env: Env, teamId: string): Promise<{ period: string; start: string; end: string; used: Record<string, number> }> {
  const month = monthOf(nowMs());
  const { results } = await env.DB.prepare("SELECT service, used FROM usage_counters WHERE team_id = ? AND period = ?")
    .bind(teamId, month.period)
    .all<{ service: string; used: number }>();
  const used: Record<string, number> = {};
  for (const row of results) used[row.service] = row.used;
  return { ...month, used };
}
