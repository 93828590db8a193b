// The report-export queue consumer: claims a queued record (conditional UPDATE), renders its
// artefact from the snapshot taken at export time, writes it to R2 and marks it exported.
// Safe on redelivery: a record already past `exporting` is acknowledged without rendering, and a
// claim held by another live delivery is retried later; a claim older than the lease may be taken
// over (the consumer that held it died). A render or R2 failure marks the record `failed`.
import { log } from "../../platform/log";
import { defineConsumer } from "../../platform/jobs/consume";
import { claim, claimSpec } from "../../platform/jobs/claim";
import { and, eq } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { auditReports } from "../../db/schema/audit";
import { backoffSeconds } from "../../platform/backoff";
import { isoSeconds } from "../../platform/clock";
import { renderArtefact } from "./audit.render";
import { exportMessage, type ExportMessage, exportQueue } from "./audit.messages";
import { objectKeyOf, reportView } from "./audit.service";

/** How long a claim protects a record from being taken over by another delivery. */
export const CLAIM_LEASE_MS = exportQueue.claim.leaseMs;
/** A record waits `queued` and is claimed `exporting` (both API-visible). */
const CLAIM = claimSpec(exportQueue, { from: ["queued"], inFlight: "exporting" });

export type ExportOutcome = "exported" | "already_done" | "busy" | "missing" | "failed";

/** Processes one export message (read by the consumer's schema); the return value says what happened (for the ack decision and tests). */
export async function processExport(env: Env, message: ExportMessage): Promise<ExportOutcome> {
  const db = getDb(env.DB);
  const where = and(eq(auditReports.id, message.report_id), eq(auditReports.teamId, message.team_id));

  const [claimed] = await claim(db, auditReports, CLAIM, where, { updatedAt: isoSeconds() }).returning();
  if (!claimed) {
    const [row] = await db.select({ status: auditReports.status }).from(auditReports).where(where).limit(1);
    if (!row) return "missing";
    return row.status === "exporting" ? "busy" : "already_done";
  }

  try {
    const exportedAt = isoSeconds();
    const artefact = renderArtefact({ ...reportView(claimed), status: "exported", exported_at: exportedAt, updated_at: exportedAt });
    const objectKey = objectKeyOf(claimed, artefact.extension);
    await env.REPORTS.put(objectKey, artefact.body, {
      httpMetadata: { contentType: artefact.contentType },
      customMetadata: { report_id: claimed.id, team_id: claimed.teamId },
    });
    await db
      .update(auditReports)
      .set({ status: "exported", objectKey, exportedAt, updatedAt: exportedAt, leaseUntil: null })
      // Only while this claim holds the record: a consumer that took it over writes its own result.
      .where(and(where, eq(auditReports.status, "exporting"), eq(auditReports.leaseUntil, claimed.leaseUntil!)));
    return "exported";
  } catch (error) {
    log.error("audit export failed", { report_id: claimed.id, team_id: claimed.teamId, error: String(error) });
    const at = isoSeconds();
    await db
      .update(auditReports)
      .set({ status: "failed", updatedAt: at, leaseUntil: null })
      .where(and(where, eq(auditReports.status, "exporting")));
    return "failed";
  }
}

/** The consumer of the `report-export` queue. */
export const reportExportConsumer = defineConsumer({
  queue: exportQueue,
  schema: exportMessage,
  handle: async (body, { env, attempts }) => {
    // A throw (the claim or the status write failed) is retried with backoff.
    const outcome: ExportOutcome = await processExport(env, body);
    if (outcome === "busy") return backoffSeconds(attempts);
    if (outcome === "missing") log.error(`audit export message ${outcome}`, { body });
    return null;
  },
});
