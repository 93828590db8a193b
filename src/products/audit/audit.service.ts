// Audit reports over the database, R2 and the export queue: the team's projects, the export
// records (list, read, start an export with its quota unit and queue message) and their
// artefacts in R2. Findings are
// audit-findings.service.ts', sharing and the signed links audit-share.service.ts', the summary
// audit-summary.service.ts'. The export consumer and the hourly sweep import from here.
// Never sees Hono's context: routes pass the env, the scope and parsed inputs.
import { asc, eq } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { auditReports, auditScans, auditSummaryCounters, type AuditReport, type ReportFormat, type ReportStatus } from "../../db/schema/audit";
import { isoSeconds } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { accept } from "../../platform/jobs/accept";
import type { QuotaOwner } from "../../platform/quota";
import { orNotFound } from "../../platform/tenancy";
import type { ReportView } from "./audit.render";
import { computeSummary, lastSevenDays, type Scope } from "./audit-summary.service";
import { projectPage, projectRow } from "./audit.queries";
import type { ExportMessage } from "./audit.messages";

export function reportView(row: AuditReport): ReportView {
  return {
    id: row.id,
    org_id: row.teamId,
    project_id: row.projectId,
    period_start: row.periodStart,
    period_end: row.periodEnd,
    format: row.format,
    status: row.status,
    snapshot: row.snapshot,
    exported_at: row.exportedAt,
    shared_at: row.sharedAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** Projects listed at most (the console's project list). */
export const MAX_LISTED_PROJECTS = 200;

/**
 * The team's audit projects: every project id with findings (its summary counters row),
 * reports or scans, in name order. A project exists once something is written under its id.
 */
export async function listProjects(env: Env, teamId: string): Promise<string[]> {
  const db = getDb(env.DB);
  const withFindings = db.select({ projectId: auditSummaryCounters.projectId }).from(auditSummaryCounters).where(eq(auditSummaryCounters.teamId, teamId));
  const withReports = db.selectDistinct({ projectId: auditReports.projectId }).from(auditReports).where(eq(auditReports.teamId, teamId));
  const withScans = db.selectDistinct({ projectId: auditScans.projectId }).from(auditScans).where(eq(auditScans.teamId, teamId));
  const rows = await withFindings.union(withReports).union(withScans).orderBy(asc(auditSummaryCounters.projectId)).limit(MAX_LISTED_PROJECTS);
  return rows.map((r) => r.projectId);
}

export async function getReport(env: Env, scope: Scope, id: string): Promise<AuditReport> {
  const [row] = await getDb(env.DB)
    .select()
    .from(auditReports)
    .where(projectRow(auditReports, scope, id))
    .limit(1);
  return orNotFound(row);
}

export async function listReports(env: Env, scope: Scope, query: { status?: ReportStatus; page: number; per_page: number }) {
  const { rows, total } = await projectPage(env, auditReports, scope, query);
  return { items: rows.map(reportView), total };
}

/**
 * Creates an export through the accept step (platform/jobs/accept.ts): one AI quota unit, a
 * `queued` record holding the live summary as its snapshot, and a queue message. A record that
 * cannot be written gives the unit back (503); a refused message is logged and the record, stored
 * `queued`, is queued again by the sweep.
 */
export async function startExport(
  env: Env,
  owner: QuotaOwner,
  scope: Scope,
  input: { format: ReportFormat; period_start?: string; period_end?: string },
): Promise<ReportView> {
  const days = lastSevenDays();
  const periodStart = input.period_start ?? days[0];
  const periodEnd = input.period_end ?? days[6];
  if (periodStart > periodEnd) throw ApiError.validation({ period_start: ["must not be after period_end"] });

  // The snapshot is read before the unit is taken, so a failed read costs the team nothing.
  const snapshot = await computeSummary(env, scope);
  const db = getDb(env.DB);
  const at = isoSeconds();
  const row: AuditReport = {
    id: crypto.randomUUID(),
    teamId: scope.teamId,
    projectId: scope.projectId,
    periodStart,
    periodEnd,
    format: input.format,
    status: "queued",
    snapshot,
    placeholder: false,
    objectKey: null,
    attempts: 0,
    leaseUntil: null,
    shareVersion: 0,
    exportedAt: null,
    sharedAt: null,
    createdAt: at,
    updatedAt: at,
  };
  await accept({
    name: "audit export",
    env,
    quota: { owner, service: "ai", units: 1 },
    store: () => db.insert(auditReports).values(row),
    unavailable: () => new ApiError("unavailable", "The export could not be stored; retry later"),
    // A refused message leaves the record `queued`: the minute sweep (audit.cron.ts) queues it.
    enqueue: () => env.EXPORT_QUEUE.send({ report_id: row.id, team_id: row.teamId } satisfies ExportMessage),
  });
  return reportView(row);
}

/** R2 key of a report's artefact. */
export function objectKeyOf(row: Pick<AuditReport, "teamId" | "projectId" | "id">, extension: string): string {
  return `audit/${row.teamId}/${row.projectId}/${row.id}.${extension}`;
}

/** The artefact of an exported report from R2, or null when there is none yet. */
export async function readArtefact(env: Env, row: AuditReport): Promise<R2ObjectBody | null> {
  if (!row.objectKey) return null;
  return env.REPORTS.get(row.objectKey);
}

/** A download file name for an artefact. */
function fileNameOf(row: AuditReport): string {
  const extension = row.objectKey?.split(".").pop() ?? "bin";
  return `audit-report-${row.projectId}-${row.id}.${extension}`;
}

/** The headers of an artefact served as a download (the API's and the public viewer's). */
export function artefactHeaders(row: AuditReport, object: R2ObjectBody): Record<string, string> {
  return {
    "content-type": object.httpMetadata?.contentType ?? "application/octet-stream",
    "content-length": String(object.size),
    "content-disposition": `attachment; filename="${fileNameOf(row)}"`,
  };
}
