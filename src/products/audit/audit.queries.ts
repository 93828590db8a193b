// The audit product's data access, kept apart from the services: the Drizzle pieces every service
// shares (the team-and-project conditions, the paged list of a project's findings or reports, a
// Drizzle query as a D1 statement so it can share a batch with the raw statements), and the raw
// SQL. Raw because Drizzle cannot say it: an
// `INSERT ... SELECT ... WHERE <guard>` (the PATCH's history row and the summary counters, each
// conditional on the finding's version as read; the placeholder report, written only when the
// project has no report), upserts whose values are read from other rows in the same statement
// (the risk series), and a bounded `DELETE ... WHERE rowid IN (SELECT ... LIMIT)` (compaction).
// (Not named `*.sql.ts`: wrangler's bundler takes an import ending in `.sql` for a text module.)
import { and, count, desc, eq } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import type { auditFindings, auditReports, AuditReport } from "../../db/schema/audit";
import type { PageQuery } from "../../platform/pagination";
import type { Scope, SummaryDelta } from "./audit-summary.service";

// ---- shared Drizzle pieces ------------------------------------------------------------------

/** The tables whose rows belong to one project of one team. */
type ProjectTable = typeof auditFindings | typeof auditReports;

/** The row `id` of the project, never another team's or another project's. */
export function projectRow(table: ProjectTable, scope: Scope, id: string) {
  return and(eq(table.id, id), eq(table.teamId, scope.teamId), eq(table.projectId, scope.projectId));
}

/**
 * A page of a project's findings or reports, newest first (`created_at`, then id, both
 * descending), optionally of one status, with the total for that filter: one batch.
 */
export async function projectPage<T extends ProjectTable>(
  env: Env,
  table: T,
  scope: Scope,
  query: PageQuery & { status?: T["$inferSelect"]["status"] },
): Promise<{ rows: T["$inferSelect"][]; total: number }> {
  const db = getDb(env.DB);
  const where = and(eq(table.teamId, scope.teamId), eq(table.projectId, scope.projectId), query.status ? eq(table.status, query.status) : undefined);
  const [rows, [{ total }]] = await db.batch([
    db
      .select()
      .from(table)
      .where(where)
      .orderBy(desc(table.createdAt), desc(table.id))
      .limit(query.per_page)
      .offset((query.page - 1) * query.per_page),
    db.select({ total: count() }).from(table).where(where),
  ]);
  return { rows: rows as T["$inferSelect"][], total };
}

/** A Drizzle query as a D1 statement, to batch it with the raw counter statements. */
export function prepared(d1: D1Database, query: { toSQL(): { sql: string; params: unknown[] } }): D1PreparedStatement {
  const { sql: text, params } = query.toSQL();
  return d1.prepare(text).bind(...params);
}

// ---- finding PATCH --------------------------------------------------------------------------

/** A PATCH's write of a finding: the state it read (`version`) and the state it writes. */
export interface FindingWrite {
  id: string;
  scope: Scope;
  version: number;
  fromStatus: string;
  status: string;
  title: string;
  priorityScore: number;
  everTerminal: boolean;
  at: string;
}

// Parameters ?1 id, ?2 team, ?3 project, ?4 version as read.
const FINDING_UNCHANGED = "EXISTS (SELECT 1 FROM audit_findings WHERE id = ?1 AND team_id = ?2 AND project_id = ?3 AND version = ?4)";

/** The PATCH's history row, written only while the finding is still at the version read. */
export function guardedHistoryInsert(d1: D1Database, w: FindingWrite): D1PreparedStatement {
  return d1
    .prepare(
      `INSERT INTO audit_finding_history (team_id, project_id, finding_id, from_status, status, priority_score, at)
             SELECT ?2, ?3, ?1, ?5, ?6, ?7, ?8 WHERE ${FINDING_UNCHANGED}`,
    )
    .bind(w.id, w.scope.teamId, w.scope.projectId, w.version, w.fromStatus, w.status, w.priorityScore, w.at);
}

/** The PATCH's own UPDATE, conditional on the version read (no change: it lost a race). */
export function guardedFindingUpdate(d1: D1Database, w: FindingWrite): D1PreparedStatement {
  return d1
    .prepare(
      `UPDATE audit_findings SET title = ?5, priority_score = ?6, status = ?7, ever_terminal = ?8, version = version + 1, updated_at = ?9
       WHERE id = ?1 AND team_id = ?2 AND project_id = ?3 AND version = ?4`,
    )
    .bind(w.id, w.scope.teamId, w.scope.projectId, w.version, w.title, w.priorityScore, w.status, w.everTerminal ? 1 : 0, w.at);
}

// ---- summary counters and risk series -------------------------------------------------------

/**
 * A finding's row as read by a PATCH, which the statements below require to be unchanged: they
 * apply only while the finding still has this `version`, exactly like the PATCH's own UPDATE.
 */
export interface FindingGuard {
  findingId: string;
  version: number;
}

/**
 * The statements that apply `delta` to the project's counters and risk series, for the caller's
 * D1 batch (a transaction, so they land together with the finding write or not at all). Every
 * write is a relative upsert (`x = x + delta`), never a value computed in JS from a read, so
 * parallel writers add up exactly. The risk series holds, per day with a change, the open risk at
 * the end of that day: the change's day gets the delta (a new day row starts from the latest
 * earlier day's value), and any later day rows get it too, so the series stays right even when a
 * batch stamped just before midnight commits after one stamped just after.
 */
export function summaryStatements(d1: D1Database, scope: Scope, delta: SummaryDelta, guard?: FindingGuard): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  // Parameters ?1 team, ?2 project; the guard takes the two after the statement's own.
  const guarded = (first: number) =>
    guard
      ? {
          sql: `EXISTS (SELECT 1 FROM audit_findings WHERE id = ?${first} AND team_id = ?1 AND project_id = ?2 AND version = ?${first + 1})`,
          params: [guard.findingId, guard.version],
        }
      : { sql: "true", params: [] };

  if (delta.open || delta.terminal || delta.regressions || delta.verifications || delta.passed) {
    const g = guarded(8);
    statements.push(
      d1
        .prepare(
          `INSERT INTO audit_summary_counters
             (team_id, project_id, open_findings, terminal_findings, open_regressions, verifications_total, verifications_passed)
           SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE ${g.sql}
           ON CONFLICT (team_id, project_id) DO UPDATE SET
             open_findings = open_findings + excluded.open_findings,
             terminal_findings = terminal_findings + excluded.terminal_findings,
             open_regressions = open_regressions + excluded.open_regressions,
             verifications_total = verifications_total + excluded.verifications_total,
             verifications_passed = verifications_passed + excluded.verifications_passed`,
        )
        .bind(scope.teamId, scope.projectId, delta.open, delta.terminal, delta.regressions, delta.verifications, delta.passed, ...g.params),
    );
  }

  if (delta.riskMicros) {
    const day = delta.at.slice(0, 10);
    const g = guarded(5);
    statements.push(
      d1
        .prepare(
          `INSERT INTO audit_risk_days (team_id, project_id, day, open_risk_micros)
           SELECT ?1, ?2, ?3,
             coalesce((SELECT open_risk_micros FROM audit_risk_days WHERE team_id = ?1 AND project_id = ?2 AND day < ?3 ORDER BY day DESC LIMIT 1), 0) + ?4
           WHERE ${g.sql}
           ON CONFLICT (team_id, project_id, day) DO UPDATE SET open_risk_micros = open_risk_micros + ?4`,
        )
        .bind(scope.teamId, scope.projectId, day, delta.riskMicros, ...g.params),
      d1
        .prepare(
          `UPDATE audit_risk_days SET open_risk_micros = open_risk_micros + ?4
           WHERE team_id = ?1 AND project_id = ?2 AND day > ?3 AND ${g.sql}`,
        )
        .bind(scope.teamId, scope.projectId, day, delta.riskMicros, ...g.params),
    );
  }
  return statements;
}

/**
 * One step of the series compaction, for deleteInSteps (?1 the cutoff day, ?2 the step size):
 * rows older than the cutoff that have a later row also older than it.
 */
export const COMPACT_RISK_SERIES_STEP = `DELETE FROM audit_risk_days WHERE rowid IN (
       SELECT r.rowid FROM audit_risk_days r
       WHERE r.day < ?1 AND EXISTS (
         SELECT 1 FROM audit_risk_days n
         WHERE n.team_id = r.team_id AND n.project_id = r.project_id AND n.day > r.day AND n.day < ?1)
       LIMIT ?2)`;

// ---- placeholder report ---------------------------------------------------------------------

/**
 * Writes the placeholder report only when the project has no report at all: one statement, so
 * atomic in D1 however many shares race. True when this call wrote it.
 */
export async function insertPlaceholderIfNone(d1: D1Database, row: AuditReport): Promise<boolean> {
  const result = await d1
    .prepare(
      `INSERT INTO audit_reports (id, team_id, project_id, period_start, period_end, format, status, snapshot, placeholder,
         object_key, lease_until, share_version, exported_at, shared_at, created_at, updated_at)
       SELECT ?1, ?2, ?3, ?4, ?5, 'json', 'exported', ?6, 1, ?7, NULL, 0, ?8, NULL, ?8, ?8
       WHERE NOT EXISTS (SELECT 1 FROM audit_reports WHERE team_id = ?2 AND project_id = ?3)`,
    )
    .bind(row.id, row.teamId, row.projectId, row.periodStart, row.periodEnd, JSON.stringify(row.snapshot), row.objectKey, row.createdAt)
    .run();
  return (result.meta.changes ?? 0) > 0;
}
