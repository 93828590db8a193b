// Jobs of audit scans: every minute, re-queues scans whose queue message was lost (the platform's
// sweep: `queued` a minute without an attempt, or 5 minutes after one; `running` under a lease that
// ended), and settles as failed those that used every attempt; hourly, queues the due scheduled
// scans and deletes scans older than SCAN_RETENTION_DAYS in bounded steps. Each is safe to run
// twice: the consumer claims a scan before running it, schedules store one scan per slot, and a
// delete deletes what is old.
import type { Env } from "../../env";
import { auditScans } from "../../db/schema/audit";
import { nowIso, nowMs } from "../../platform/clock";
import { defineCron } from "../../platform/jobs/cron";
import { declareSweep, sweep } from "../../platform/jobs/sweep";
import { cutoffIso, deleteInSteps } from "../../platform/retention";
import { scansQueue, type ScanMessage } from "./audit-scan.messages";
import { DELETE_OLD_SCANS_STEP } from "./audit-scan.queries";
import { runDueSchedules } from "./audit-scan-schedules.service";

/** Days a scan is kept (its findings stay: they are the audit's record). */
export const SCAN_RETENTION_DAYS = 90;
/** A scan `queued` this long after an attempt has lost its message (a live one runs within seconds). */
export const SCAN_STUCK_AFTER_MS = 5 * 60_000;
/** A scan never claimed this long lost its first message (the accept step's enqueue failed). */
export const SCAN_UNATTEMPTED_AFTER_MS = 60_000;
export const SCAN_REQUEUE_LIMIT = 500;

const lostScans = declareSweep({
  name: "audit scan",
  table: auditScans,
  key: { id: auditScans.id, teamId: auditScans.teamId },
  waiting: ["queued"],
  due: auditScans.updatedAt,
  staleMs: SCAN_STUCK_AFTER_MS,
  unattemptedMs: SCAN_UNATTEMPTED_AFTER_MS,
  inFlight: { status: "running", afterMs: 0 },
  limit: SCAN_REQUEUE_LIMIT,
  batch: 100,
  mark: (at) => ({ status: "queued" as const, updatedAt: new Date(at).toISOString(), leaseUntil: null }),
  queue: (env) => env.SCAN_QUEUE,
  messages: (rows) => rows.map((row): ScanMessage => ({ scan_id: row.id, team_id: row.teamId })),
  onSendError: "log",
});

/** Re-queues lost scans; those that used every claim are failed with a reason. */
export function requeueLostScans(env: Env) {
  const at = nowIso();
  return sweep(env, {
    ...lostScans,
    exhausted: {
      maxAttempts: scansQueue.claim.maxAttempts,
      set: { status: "failed", error: "the scan could not be run: every attempt ended without a result", finishedAt: at, updatedAt: at },
    },
  });
}

export const auditScanSweepCron = defineCron({ name: "audit scan sweep", schedule: "everyMinute", run: requeueLostScans });

/** Hourly: the due scheduled scans are queued. */
export const auditScanSchedulesCron = defineCron({ name: "audit scan schedules", schedule: "hourly", run: (env) => runDueSchedules(env) });

/** Hourly: scans older than SCAN_RETENTION_DAYS are deleted. */
export const auditScanRetentionCron = defineCron({
  name: "audit scan retention",
  schedule: "hourly",
  run: (env) => deleteInSteps(env.DB, DELETE_OLD_SCANS_STEP, [cutoffIso(nowMs(), SCAN_RETENTION_DAYS)]),
});
