// Scheduled work of the Logs product. Hourly, the retention: old per-day counters, notification
// records and alert firings (90 days) in D1, and entries left in the former D1 table (see
// logs.migrate.ts). Entries in the stores are purged by each store's own alarm. The every-minute
// alert check is log-alerts.cron.ts.
import { lt } from "drizzle-orm";
import { getDb } from "../../db/client";
import type { Env } from "../../env";
import { logAlertDeliveries, logDailyUsage } from "../../db/schema/logs";
import { nowMs } from "../../platform/clock";
import { defineCron } from "../../platform/jobs/cron";
import { deleteExpiredEntries, deleteOldFirings } from "./logs.queries";

const DAY_MS = 86_400_000;

/** Entries deleted per statement, and statements per run, so one run stays well inside its limits. */
const DELETE_CHUNK = 20_000;
const MAX_DELETE_ROUNDS = 50;

/** Days an alert firing is kept, and the bounded steps of its clean-up. */
export const FIRING_RETENTION_DAYS = 90;
const FIRING_CHUNK = 5_000;
const MAX_FIRING_ROUNDS = 20;

/**
 * Deletes old counters, notification records and alert firings, and entries of the former D1 table past their
 * project's retention (rows an operator has not migrated yet must not outlive their retention).
 */
export async function purgeExpiredLogs(env: Env): Promise<{ entries: number; firings: number }> {
  const at = nowMs();
  const entries = await deleteInRounds(deleteExpiredEntries(env.DB, at, DELETE_CHUNK), DELETE_CHUNK, MAX_DELETE_ROUNDS);
  const weekAgo = new Date(at - 7 * DAY_MS).toISOString();
  const db = getDb(env.DB);
  await db.batch([
    db.delete(logDailyUsage).where(lt(logDailyUsage.day, weekAgo.slice(0, 10))),
    db.delete(logAlertDeliveries).where(lt(logAlertDeliveries.updatedAt, new Date(at - 30 * DAY_MS).toISOString())),
  ]);
  // Firing history: 90 days, oldest first, in bounded steps (the next run continues).
  const firings = await deleteInRounds(deleteOldFirings(env.DB, at - FIRING_RETENTION_DAYS * DAY_MS, FIRING_CHUNK), FIRING_CHUNK, MAX_FIRING_ROUNDS);
  return { entries, firings };
}

/** Runs a chunked DELETE until it deletes less than a chunk or `maxRounds` ran; returns the rows deleted. */
async function deleteInRounds(statement: D1PreparedStatement, chunk: number, maxRounds: number): Promise<number> {
  let deleted = 0;
  for (let round = 0; round < maxRounds; round++) {
    const changes = (await statement.run()).meta.changes ?? 0;
    deleted += changes;
    if (changes < chunk) break;
  }
  return deleted;
}

/** Hourly: the Logs retention in D1. */
export const logsRetentionCron = defineCron({ name: "logs retention", schedule: "hourly", run: purgeExpiredLogs });
