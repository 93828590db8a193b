// The raw SQL of audit scans. Raw because Drizzle cannot say it: an `INSERT ... SELECT ... WHERE
// NOT EXISTS` (a scan is stored only when no scan of the same target in the project is younger
// than 3 minutes: one statement, so parallel POSTs store one), `INSERT ... SELECT ... WHERE
// <guard>` (a scan finding's first history row and a closing verification, each written only
// while the finding is in the state the scan read), and the bounded `DELETE ... WHERE rowid IN
// (SELECT ... LIMIT)` of the retention job.
import type { AuditScan } from "../../db/schema/audit";

/** Stores `row` unless the project scanned the same target at or after `since`; true when stored. */
export async function insertScanUnlessRecent(d1: D1Database, row: AuditScan, since: string): Promise<boolean> {
  const result = await d1
    .prepare(
      `INSERT INTO audit_scans (id, team_id, project_id, target_url, status, attempts, created_at, updated_at)
       SELECT ?1, ?2, ?3, ?4, 'queued', 0, ?5, ?5
       WHERE NOT EXISTS (SELECT 1 FROM audit_scans WHERE team_id = ?2 AND project_id = ?3 AND target_url = ?4 AND created_at >= ?6)`,
    )
    .bind(row.id, row.teamId, row.projectId, row.targetUrl, row.createdAt, since)
    .run();
  return (result.meta.changes ?? 0) > 0;
}

/** The finding `id` of the project at `version` (parameters ?1 id, ?2 team, ?3 project, ?4 version). */
const FINDING_AT = "EXISTS (SELECT 1 FROM audit_findings WHERE id = ?1 AND team_id = ?2 AND project_id = ?3 AND version = ?4)";

export interface GuardedFinding {
  id: string;
  teamId: string;
  projectId: string;
  /** The version the scan read (0 for the finding it has just inserted). */
  version: number;
}

/** A history row of a scan's change to a finding, written only while the finding is at the version read. */
export function scanHistoryInsert(
  d1: D1Database,
  f: GuardedFinding,
  change: { from: string | null; to: string; priorityScore: number; at: string },
): D1PreparedStatement {
  return d1
    .prepare(
      `INSERT INTO audit_finding_history (team_id, project_id, finding_id, from_status, status, priority_score, at)
       SELECT ?2, ?3, ?1, ?5, ?6, ?7, ?8 WHERE ${FINDING_AT}`,
    )
    .bind(f.id, f.teamId, f.projectId, f.version, change.from, change.to, change.priorityScore, change.at);
}

/** The passed verification a scan records as it closes a finding, under the same guard. */
export function scanVerificationInsert(d1: D1Database, f: GuardedFinding, row: { id: string; note: string; at: string }): D1PreparedStatement {
  return d1
    .prepare(
      `INSERT INTO audit_verifications (id, team_id, project_id, finding_id, result, note, created_at)
       SELECT ?5, ?2, ?3, ?1, 'passed', ?6, ?7 WHERE ${FINDING_AT}`,
    )
    .bind(f.id, f.teamId, f.projectId, f.version, row.id, row.note, row.at);
}

/** One step of the scan retention, for deleteInSteps (?1 the ISO cutoff, ?2 the step size). */
export const DELETE_OLD_SCANS_STEP = "DELETE FROM audit_scans WHERE rowid IN (SELECT rowid FROM audit_scans WHERE created_at < ?1 LIMIT ?2)";
