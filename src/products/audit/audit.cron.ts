// Hourly job of audit reports: re-queues exports whose queue message was lost, and compacts the
// summary's daily risk series (compactRiskSeries, audit-summary.service.ts). A record stays
// `queued` when its message never arrived (or was dropped after the consumer's retries), and
// `exporting` with a dead claim when the consumer that claimed it died and no redelivery came.
// Safe to run twice and to race the original message: the consumer claims the record with a
// conditional UPDATE, so whichever message claims first renders and the other renders nothing.
import { and, asc, eq, lt, or } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { auditReports } from "../../db/schema/audit";
import { isoSeconds, nowMs } from "../../platform/clock";
import { defineCron } from "../../platform/jobs/cron";
import { CLAIM_LEASE_MS } from "./audit.consumer";
import { compactRiskSeries } from "./audit-summary.service";
import type { ExportMessage } from "./audit.consumer";

/** A record `queued` this long has lost its message (a live one is consumed within seconds). */
export const QUEUED_STUCK_AFTER_MS = 15 * 60_000;
/** Upper bound of records re-queued per run (oldest first); the rest wait for the next hour. */
export const REQUEUE_LIMIT = 500;
/** Queues.sendBatch takes at most 100 messages. */
const SEND_BATCH = 100;

/**
 * Re-queues, oldest first and at most `limit` per run, the export records `queued` for more than
 * QUEUED_STUCK_AFTER_MS, and those `exporting` under a claim older than the consumer's lease
 * (CLAIM_LEASE_MS, after which the consumer takes the claim over). A batch the queue refuses is
 * logged and left for the next run. Returns how many messages were sent and how many were not.
 */
export async function requeueStuckExports(env: Env, limit = REQUEUE_LIMIT): Promise<{ requeued: number; failed: number }> {
  const now = nowMs();
  // Both states last changed `updated_at` (an `exporting` record's updated_at is its claimed_at),
  // which orders the oldest first and lets the (status, updated_at) index serve the query.
  const results = await getDb(env.DB)
    .select({ id: auditReports.id, teamId: auditReports.teamId })
    .from(auditReports)
    .where(
      or(
        and(eq(auditReports.status, "queued"), lt(auditReports.updatedAt, isoSeconds(now - QUEUED_STUCK_AFTER_MS))),
        and(eq(auditReports.status, "exporting"), lt(auditReports.claimedAt, isoSeconds(now - CLAIM_LEASE_MS))),
      ),
    )
    .orderBy(asc(auditReports.updatedAt), asc(auditReports.id))
    .limit(limit);

  let requeued = 0;
  let failed = 0;
  for (let i = 0; i < results.length; i += SEND_BATCH) {
    const chunk = results.slice(i, i + SEND_BATCH);
    try {
      await env.EXPORT_QUEUE.sendBatch(
        chunk.map((row) => ({ body: { report_id: row.id, team_id: row.teamId } satisfies ExportMessage, contentType: "json" as const })),
      );
      requeued += chunk.length;
    } catch (error) {
      failed += chunk.length;
      console.error(JSON.stringify({ msg: "audit export re-queue failed", count: chunk.length, error: String(error) }));
    }
  }
  return { requeued, failed };
}

/** Hourly: exports whose queue message was lost go back on the queue. */
export const auditExportSweepCron = defineCron({
  name: "audit export sweep",
  schedule: "hourly",
  run: async (env) => {
    const result = await requeueStuckExports(env);
    if (result.requeued > 0 || result.failed > 0) console.log(JSON.stringify({ msg: "audit: re-queued exports whose message was lost", ...result }));
    return result;
  },
});

/** Hourly: the summary's daily risk series is compacted (its own job, so neither failure stops the other). */
export const auditRiskSeriesCron = defineCron({ name: "audit risk series compaction", schedule: "hourly", run: compactRiskSeries });
