// The durable record of each team's meter in D1: `usage_counters` (a row per team, service and
// month) and `usage_daily` (a row per team, service and day), written by the meter's roll-up alarm
// with absolute values (a repeated write is harmless) and read when a meter meets a month for the
// first time or cannot be reached. Nothing here runs per request.
import { and, eq, gte, lt, sql } from "drizzle-orm";
import { getDb } from "../../db/client";
import { usageCounters, usageDaily } from "../../db/schema";
import { nowMs } from "../clock";
import { defineCron } from "../jobs/cron";
import { DELETE_OLD_DAILY_USAGE, deleteInSteps } from "../retention.queries";
import { statementChunks } from "../d1-rows";

/** Units of one service on one UTC day. */
export interface DailyUsage {
  /** `YYYY-MM-DD`. */
  day: string;
  service: string;
  used: number;
}

/** Months of daily counts kept in D1 (the console charts the current one). */
export const DAILY_RETENTION_DAYS = 400;

/** A team's month as last rolled up: units per service and per day. */
export async function readRolledUp(d1: D1Database, teamId: string, period: string): Promise<{ used: Record<string, number>; daily: DailyUsage[] }> {
  const db = getDb(d1);
  const [months, days] = await db.batch([
    db
      .select({ service: usageCounters.service, used: usageCounters.used })
      .from(usageCounters)
      .where(and(eq(usageCounters.teamId, teamId), eq(usageCounters.period, period))),
    db
      .select({ day: usageDaily.day, service: usageDaily.service, used: usageDaily.used })
      .from(usageDaily)
      .where(and(eq(usageDaily.teamId, teamId), gte(usageDaily.day, `${period}-01`), lt(usageDaily.day, `${period}-32`)))
      .orderBy(usageDaily.day, usageDaily.service),
  ]);
  const used: Record<string, number> = {};
  for (const row of months) used[row.service] = row.used;
  return { used, daily: days };
}

/** Writes a meter's changed rows in one batch: each row's value replaces what D1 held. */
export async function rollUp(
  d1: D1Database,
  teamId: string,
  months: Array<{ service: string; period: string; used: number }>,
  days: DailyUsage[],
): Promise<void> {
  const db = getDb(d1);
  const statements = [
    ...statementChunks(months, 4).map((rows) =>
      db
        .insert(usageCounters)
        .values(rows.map((m) => ({ teamId, service: m.service, period: m.period, used: m.used })))
        .onConflictDoUpdate({ target: [usageCounters.teamId, usageCounters.service, usageCounters.period], set: { used: sql`excluded.used` } }),
    ),
    ...statementChunks(days, 4).map((rows) =>
      db
        .insert(usageDaily)
        .values(rows.map((d) => ({ teamId, service: d.service, day: d.day, used: d.used })))
        .onConflictDoUpdate({ target: [usageDaily.teamId, usageDaily.service, usageDaily.day], set: { used: sql`excluded.used` } }),
    ),
  ];
  if (statements.length === 0) return;
  await db.batch(statements as [(typeof statements)[number], ...(typeof statements)[number][]]);
}

/** Retention of the daily counts (hourly job): days older than DAILY_RETENTION_DAYS, in bounded steps. */
export function deleteOldDailyUsage(d1: D1Database, at: number = nowMs()): Promise<number> {
  const cutoff = new Date(at - DAILY_RETENTION_DAYS * 86_400_000).toISOString().slice(0, 10);
  return deleteInSteps(d1, DELETE_OLD_DAILY_USAGE, [cutoff]);
}

export const usageDailyRetentionCron = defineCron({ name: "usage daily retention", schedule: "hourly", run: (env) => deleteOldDailyUsage(env.DB) });
