// Audit tables: findings with their status history and verifications (the data behind the live
// summary), and report export records (the artefact lives in R2 under `object_key`).
import { index, integer, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { teams } from "./platform";

export const FINDING_STATUSES = ["new", "triaged", "in_progress", "ready_verify", "resolved", "dismissed"] as const;
export type FindingStatus = (typeof FINDING_STATUSES)[number];

export const REPORT_FORMATS = ["pdf", "csv", "json"] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export const REPORT_STATUSES = ["queued", "exporting", "exported", "shared", "failed"] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];

export const auditFindings = sqliteTable(
  "audit_findings",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id").notNull().references(() => teams.id, { onDelete: "cascade" }),
    projectId: text("project_id").notNull(),
    title: text("title").notNull(),
    priorityScore: real("priority_score").notNull(),
    status: text("status").$type<FindingStatus>().notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("audit_findings_project_idx").on(t.teamId, t.projectId, t.createdAt)],
);

/**
 * One row per change of a finding's status or priority (and one at creation): the state from `at`
 * on. The burn-down reads the last row of each finding at the end of each day. The integer id
 * orders rows written in the same millisecond.
 */
export const auditFindingHistory = sqliteTable(
  "audit_finding_history",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    teamId: text("team_id").notNull().references(() => teams.id, { onDelete: "cascade" }),
    projectId: text("project_id").notNull(),
    findingId: text("finding_id").notNull().references(() => auditFindings.id, { onDelete: "cascade" }),
    fromStatus: text("from_status").$type<FindingStatus>(),
    status: text("status").$type<FindingStatus>().notNull(),
    priorityScore: real("priority_score").notNull(),
    at: text("at").notNull(),
  },
  (t) => [
    index("audit_finding_history_project_idx").on(t.teamId, t.projectId, t.at),
    index("audit_finding_history_finding_idx").on(t.findingId, t.id),
  ],
);

export const auditVerifications = sqliteTable(
  "audit_verifications",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id").notNull().references(() => teams.id, { onDelete: "cascade" }),
    projectId: text("project_id").notNull(),
    findingId: text("finding_id").notNull().references(() => auditFindings.id, { onDelete: "cascade" }),
    result: text("result").$type<"passed" | "failed">().notNull(),
    note: text("note"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    index("audit_verifications_project_idx").on(t.teamId, t.projectId),
    index("audit_verifications_finding_idx").on(t.findingId, t.createdAt),
  ],
);

/** The report summary as the API returns it (also the export snapshot). */
export interface ReportSummary {
  risk_burn_down: Array<{ date: string; open_risk_score: number }>;
  verification_pass_rate: number;
  regression_rate: number;
  open_findings: number;
}

export const auditReports = sqliteTable(
  "audit_reports",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id").notNull().references(() => teams.id, { onDelete: "cascade" }),
    projectId: text("project_id").notNull(),
    periodStart: text("period_start").notNull(),
    periodEnd: text("period_end").notNull(),
    format: text("format").$type<ReportFormat>().notNull(),
    status: text("status").$type<ReportStatus>().notNull(),
    snapshot: text("snapshot", { mode: "json" }).$type<ReportSummary>().notNull(),
    /** True for the empty report share creates when a project has none. */
    placeholder: integer("placeholder", { mode: "boolean" }).notNull().default(false),
    /** R2 key of the artefact, set when it has been written. */
    objectKey: text("object_key"),
    /** When the export consumer claimed the record (a lease: a stale claim may be taken over). */
    claimedAt: text("claimed_at"),
    /** Incremented on revoke: share and download tokens carry it, so revoked links stay dead. */
    shareVersion: integer("share_version").notNull().default(0),
    exportedAt: text("exported_at"),
    sharedAt: text("shared_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("audit_reports_project_idx").on(t.teamId, t.projectId, t.createdAt, t.id),
    index("audit_reports_status_idx").on(t.teamId, t.projectId, t.status),
    // The hourly sweep of exports whose queue message was lost (audit.cron.ts).
    index("audit_reports_sweep_idx").on(t.status, t.updatedAt),
  ],
);

export type AuditReport = typeof auditReports.$inferSelect;
export type AuditFinding = typeof auditFindings.$inferSelect;
