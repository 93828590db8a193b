// Jobs of audit reports: every minute, re-queues exports whose queue message was lost; hourly,
// compacts the summary's daily risk series (compactRiskSeries, audit-summary.service.ts). A record stays
// `queued` when its message never arrived (or was dropped after the consumer's retries), and
// `exporting` with a dead claim when the consumer that claimed it died and no redelivery came.
// Safe to run twice and to race the original message: the consumer claims the record with a
// conditional UPDATE, so whichever message claims first renders and the other renders nothing.
import { log } from "../../platform/log";
import type { Env } from "../../env";
import { auditReports } from "../../db/schema/audit";
import { isoSeconds } from "../../platform/clock";
import { defineCron } from "../../platform/jobs/cron";
import { declareSweep, sweep } from "../../platform/jobs/sweep";
import { compactRiskSeries } from "./audit-summary.service";
import type { ExportMessage } from "./audit.messages";

/** A record `queued` this long has lost its message (a live one is consumed within seconds). */
export const QUEUED_STUCK_AFTER_MS = 15 * 60_000;
/**
 * A record never claimed this long lost its first message (the export's enqueue failed: the accept
 * step answers 202 and leaves it to this sweep). With the sweep every minute, such an export is
 * queued again at most about two minutes after it was accepted.
 */
export const UNATTEMPTED_STUCK_AFTER_MS = 60_000;
/** Upper bound of records re-queued per run (oldest first); the rest wait for the next hour. */
export const REQUEUE_LIMIT = 500;

/**
 * Export records `queued` for more than QUEUED_STUCK_AFTER_MS (UNATTEMPTED_STUCK_AFTER_MS when
 * never claimed), and those `exporting` under a lease
 * that has ended (the consumer takes such a claim over). Both states last changed `updated_at` (an
 * `exporting` record's is its claim), which orders the oldest first and lets the
 * (status, updated_at) index serve the query. A re-queued record is `queued` again with
 * updated_at = now and no lease, so the next runs leave it alone for another stale period (a dead
 * claim is given up: the swept message claims it afresh); a batch the queue refuses is logged,
 * and a run a stale period later sends it again.
 */
const lostExports = declareSweep({
  name: "audit export",
  table: auditReports,
  key: { id: auditReports.id, teamId: auditReports.teamId },
  waiting: ["queued"],
  due: auditReports.updatedAt,
  dueText: isoSeconds,
  staleMs: QUEUED_STUCK_AFTER_MS,
  unattemptedMs: UNATTEMPTED_STUCK_AFTER_MS,
  inFlight: { status: "exporting", afterMs: 0 },
  limit: REQUEUE_LIMIT,
  mark: (at) => ({ status: "queued" as const, updatedAt: isoSeconds(at), leaseUntil: null }),
  queue: (env) => env.EXPORT_QUEUE,
  messages: (rows) => rows.map((row): ExportMessage => ({ report_id: row.id, team_id: row.teamId })),
  sendOptions: { contentType: "json" },
  onSendError: "log",
});

/** Re-queues at most `limit` lost exports; returns how many messages were sent and how many were not. */
export async function requeueStuckExports(env: Env, limit = REQUEUE_LIMIT): Promise<{ requeued: number; failed: number }> {
  const { requeued, unsent } = await sweep(env, { ...lostExports, limit });
  return { requeued, failed: unsent };
}

/** Every minute: exports whose queue message was lost go back on the queue. */
export const auditExportSweepCron = defineCron({
  name: "audit export sweep",
  schedule: "everyMinute",
  run: async (env) => {
    const result = await requeueStuckExports(env);
    if (result.requeued > 0 || result.failed > 0) log.info("audit: re-queued exports whose message was lost", { ...result });
    return result;
  },
});

/** Hourly: the summary's daily risk series is compacted (its own job, so neither failure stops the other). */
export const auditRiskSeriesCron = defineCron({ name: "audit risk series compaction", schedule: "hourly", run: compactRiskSeries });
