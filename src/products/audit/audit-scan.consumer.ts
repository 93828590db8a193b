// The audit-scans queue consumer: claims a queued scan (the platform's claim with a lease), fetches
// its target (audit-scan.fetch.ts), grades what came back (audit-scan.grade.ts) and, in one D1
// batch, finishes the scan and applies its tests to the project's findings
// (audit-scan-findings.service.ts). A timeout, a DNS failure, a forbidden hop or a redirect loop
// ends it `failed` with `error`. Safe on redelivery: a scan past `running` is acknowledged, a live
// claim is retried later, a claim whose lease ended is taken over; the finish is conditional on
// this claim and every finding statement on the finding's version as read, so a scan's changes
// land once. A finished scheduled scan then records its grade on the schedule (and mails on a drop).
import { and, eq } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { auditScans, type ScanTestResult } from "../../db/schema/audit";
import { backoffSeconds } from "../../platform/backoff";
import { nowIso } from "../../platform/clock";
import { claim, claimSpec } from "../../platform/jobs/claim";
import { defineConsumer } from "../../platform/jobs/consume";
import { log } from "../../platform/log";
import { prepared } from "./audit.queries";
import { findingsOfTarget, scanFindingStatements } from "./audit-scan-findings.service";
import { fetchTarget, SCAN_LIMITS, ScanFailure, type ScanLimits } from "./audit-scan.fetch";
import { gradeScan } from "./audit-scan.grade";
import { scanMessage, scansQueue, type ScanMessage } from "./audit-scan.messages";
import { recordScheduledGrade } from "./audit-scan-schedules.service";

/** A scan waits `queued` and runs `running` (both API-visible). */
const CLAIM = claimSpec(scansQueue, { from: ["queued"], inFlight: "running" });

export type ScanOutcome = "finished" | "failed" | "already_done" | "busy" | "missing";

interface ScanResultColumns {
  status: "finished" | "failed";
  score: number | null;
  grade: string | null;
  tests: ScanTestResult[] | null;
  error: string | null;
  finalUrl: string | null;
  statusCode: number | null;
}

/** Runs one scan message; the outcome says what happened (for the ack decision and tests). */
export async function processScan(env: Env, message: ScanMessage, limits: ScanLimits = SCAN_LIMITS): Promise<ScanOutcome> {
  const db = getDb(env.DB);
  const where = and(eq(auditScans.id, message.scan_id), eq(auditScans.teamId, message.team_id));
  const startedAt = nowIso();
  const [claimed] = await claim(db, auditScans, CLAIM, where, { updatedAt: startedAt, startedAt }).returning();
  if (!claimed) {
    const [row] = await db.select({ status: auditScans.status }).from(auditScans).where(where).limit(1);
    if (!row) return "missing";
    return row.status === "running" ? "busy" : "already_done";
  }

  let result: ScanResultColumns;
  try {
    const seen = await fetchTarget(env, claimed.targetUrl, limits);
    const graded = gradeScan(seen);
    result = { status: "finished", ...graded, error: null, finalUrl: seen.finalUrl, statusCode: seen.statusCode };
  } catch (error) {
    if (!(error instanceof ScanFailure)) throw error;
    result = { status: "failed", score: null, grade: null, tests: null, error: error.message, finalUrl: null, statusCode: null };
  }

  const at = nowIso();
  const scope = { teamId: claimed.teamId, projectId: claimed.projectId };
  const findings =
    result.status === "finished" && result.tests
      ? scanFindingStatements(env, scope, claimed, result.tests, await findingsOfTarget(env, scope, claimed.targetUrl), at)
      : [];
  // Only while this claim holds the scan (a delivery that took it over writes its own result).
  const finish = prepared(
    env.DB,
    db
      .update(auditScans)
      .set({ ...result, finishedAt: at, updatedAt: at, leaseUntil: null })
      .where(and(where, eq(auditScans.status, "running"), eq(auditScans.attempts, claimed.attempts))),
  );
  const results = await env.DB.batch([...findings, finish]);
  if ((results[results.length - 1].meta.changes ?? 0) === 0) return "already_done";

  if (result.status === "finished" && claimed.scheduleId && result.grade) {
    // After the scan is stored: a failure here is logged, never a retry of a finished scan.
    await recordScheduledGrade(env, { ...claimed, scheduleId: claimed.scheduleId }, result.grade).catch((error) =>
      log.error("audit scan: recording the schedule's grade failed", { scan_id: claimed.id, error: String(error) }),
    );
  }
  return result.status;
}

/** The consumer of the `audit-scans` queue; scans of a batch run side by side (each waits on its target). */
export const auditScansConsumer = defineConsumer({
  queue: scansQueue,
  schema: scanMessage,
  order: "parallel",
  handle: async (body, { env, attempts }) => {
    // A throw (the claim or the write failed) is retried with backoff.
    const outcome = await processScan(env, body);
    if (outcome === "busy") return backoffSeconds(attempts);
    if (outcome === "missing") log.error("audit scan message for a missing scan", { body });
    return null;
  },
});
