// Audit tables: findings with their status history and verifications, the per-project summary
// counters and daily risk series kept in step with them (what the summary reads), and report
// export records (the artefact lives in R2 under `object_key`).
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { teams } from "./platform";

export const FINDING_STATUSES = ["new", "triaged", "in_progress", "ready_verify", "resolved", "dismissed"] as const;
export type FindingStatus = (typeof FINDING_STATUSES)[number];

export const REPORT_FORMATS = ["pdf", "csv", "json"] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** Who opened a finding: a person (the API or the console), or a scan run (audit-scan*.ts). */
export const FINDING_SOURCES = ["manual", "scan"] as const;
export type FindingSource = (typeof FINDING_SOURCES)[number];

export const REPORT_STATUSES = ["queued", "exporting", "exported", "shared", "failed"] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];

export const auditFindings = sqliteTable(
  "audit_findings",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    projectId: text("project_id").notNull(),
    title: text("title").notNull(),
    priorityScore: real("priority_score").notNull(),
    status: text("status").$type<FindingStatus>().notNull(),
    /** True once the finding has been in a terminal status (an open one is then a regression). */
    everTerminal: integer("ever_terminal", { mode: "boolean" }).notNull().default(false),
    /** Incremented by every update: PATCH is conditional on it (optimistic concurrency). */
    version: integer("version").notNull().default(0),
    source: text("source").$type<FindingSource>().notNull().default("manual"),
    /** The scanned target and the scan test this finding is about (both set or both null). */
    targetUrl: text("target_url"),
    test: text("test"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("audit_findings_project_idx").on(t.teamId, t.projectId, t.createdAt),
    // One finding per project, target and scan test, whoever opened it: a scan never duplicates it.
    uniqueIndex("audit_findings_target_test_idx").on(t.teamId, t.projectId, t.targetUrl, t.test).where(sql`target_url IS NOT NULL AND test IS NOT NULL`),
  ],
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
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    projectId: text("project_id").notNull(),
    findingId: text("finding_id")
      .notNull()
      .references(() => auditFindings.id, { onDelete: "cascade" }),
    fromStatus: text("from_status").$type<FindingStatus>(),
    status: text("status").$type<FindingStatus>().notNull(),
    priorityScore: real("priority_score").notNull(),
    at: text("at").notNull(),
  },
  (t) => [index("audit_finding_history_project_idx").on(t.teamId, t.projectId, t.at), index("audit_finding_history_finding_idx").on(t.findingId, t.id)],
);

export const auditVerifications = sqliteTable(
  "audit_verifications",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    projectId: text("project_id").notNull(),
    findingId: text("finding_id")
      .notNull()
      .references(() => auditFindings.id, { onDelete: "cascade" }),
    result: text("result").$type<"passed" | "failed">().notNull(),
    note: text("note"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("audit_verifications_project_idx").on(t.teamId, t.projectId), index("audit_verifications_finding_idx").on(t.findingId, t.createdAt)],
);

/**
 * One row per project: the counts the summary shows, adjusted by `x = x + delta` upserts in the
 * same D1 batch as each finding or verification write, so a summary read never scans findings.
 */
export const auditSummaryCounters = sqliteTable(
  "audit_summary_counters",
  {
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    projectId: text("project_id").notNull(),
    openFindings: integer("open_findings").notNull().default(0),
    terminalFindings: integer("terminal_findings").notNull().default(0),
    /** Findings non-terminal now that have been terminal before. */
    openRegressions: integer("open_regressions").notNull().default(0),
    verificationsTotal: integer("verifications_total").notNull().default(0),
    verificationsPassed: integer("verifications_passed").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.projectId] })],
);

/**
 * The burn-down series: for each UTC day on which a finding change moved the project's open risk,
 * the open risk score at the end of that day, in millionths (integers add exactly, in any order).
 * A day without a row carries the previous row's value forward.
 */
export const auditRiskDays = sqliteTable(
  "audit_risk_days",
  {
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    projectId: text("project_id").notNull(),
    day: text("day").notNull(),
    openRiskMicros: integer("open_risk_micros").notNull(),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.projectId, t.day] })],
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
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
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
    /** Claims by the export consumer (platform/jobs/claim.ts). */
    attempts: integer("attempts").notNull().default(0),
    /** While `exporting`: until when the consumer that claimed it owns it, ms since the epoch; a claim past it may be taken over. */
    leaseUntil: integer("lease_until"),
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

export const SCAN_STATUSES = ["queued", "running", "finished", "failed"] as const;
export type ScanStatus = (typeof SCAN_STATUSES)[number];

/** One graded test of a scan, as the API returns it (audit-scan.grade.ts). */
export interface ScanTestResult {
  name: string;
  pass: boolean;
  result: string;
  score_modifier: number;
  description: string;
  /** What the test read: a header's value (cut), cookie names and flags (never values), the redirect seen. */
  data?: unknown;
}

/**
 * Scan runs of a target (audit-scan*.ts): queued by POST /scans or a schedule, claimed by the
 * `audit-scans` consumer (the standard claim columns), finished with the score, the grade and the
 * tests, or failed with `error`. Kept SCAN_RETENTION_DAYS (the hourly retention job).
 */
export const auditScans = sqliteTable(
  "audit_scans",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    projectId: text("project_id").notNull(),
    targetUrl: text("target_url").notNull(),
    status: text("status").$type<ScanStatus>().notNull(),
    score: integer("score"),
    grade: text("grade"),
    tests: text("tests", { mode: "json" }).$type<ScanTestResult[]>(),
    error: text("error"),
    /** The address the graded answer came from (after redirects) and its HTTP status. */
    finalUrl: text("final_url"),
    statusCode: integer("status_code"),
    /** The schedule that queued it and the run it stands for (one scan per schedule and slot). */
    scheduleId: text("schedule_id"),
    scheduleSlot: text("schedule_slot"),
    attempts: integer("attempts").notNull().default(0),
    leaseUntil: integer("lease_until"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    startedAt: text("started_at"),
    finishedAt: text("finished_at"),
  },
  (t) => [
    index("audit_scans_project_idx").on(t.teamId, t.projectId, t.createdAt, t.id),
    index("audit_scans_target_idx").on(t.teamId, t.projectId, t.targetUrl, t.createdAt),
    index("audit_scans_sweep_idx").on(t.status, t.updatedAt),
    index("audit_scans_created_idx").on(t.createdAt),
    uniqueIndex("audit_scans_schedule_slot_idx").on(t.scheduleId, t.scheduleSlot),
  ],
);

export type AuditScan = typeof auditScans.$inferSelect;

export const SCAN_EVERY = ["day", "week"] as const;
export type ScanEvery = (typeof SCAN_EVERY)[number];

/** Scheduled scans of a target (at most 20 per project), run by the hourly cron when due. */
export const auditScanSchedules = sqliteTable(
  "audit_scan_schedules",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    projectId: text("project_id").notNull(),
    targetUrl: text("target_url").notNull(),
    every: text("every").$type<ScanEvery>().notNull(),
    /** When the next scan is due (ISO); the cron moves it on by `every` as it queues one. */
    nextRunAt: text("next_run_at").notNull(),
    /** The grade of the last finished scan it queued, and that scan: a lower grade mails the members. */
    lastGrade: text("last_grade"),
    lastScanId: text("last_scan_id"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    index("audit_scan_schedules_project_idx").on(t.teamId, t.projectId, t.createdAt),
    uniqueIndex("audit_scan_schedules_target_idx").on(t.teamId, t.projectId, t.targetUrl),
    index("audit_scan_schedules_due_idx").on(t.nextRunAt),
  ],
);

export type AuditScanSchedule = typeof auditScanSchedules.$inferSelect;
export type AuditFinding = typeof auditFindings.$inferSelect;
