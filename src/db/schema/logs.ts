// Logs tables: projects (with the hash of their ingest token), streams, entries, the per-day byte
// counter behind daily_limit_mb, threshold alerts and the record of alert notifications.
// Entries are the volume table: an integer rowid (`seq`) keeps inserts cheap and orders the cursor;
// times are integer milliseconds so range scans and the alert counts stay index-only.
import { sql } from "drizzle-orm";
import { check, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { teams } from "./platform";

/** The most distinct stream names a project may hold (spec: Limits). */
export const MAX_STREAMS_PER_PROJECT = 10_000;

export const LOG_LEVELS = ["debug", "info", "warn", "error", "fatal"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const logProjects = sqliteTable(
  "log_projects",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** SHA-256 of the ingest token; the plaintext is shown only on create and rotation. */
    tokenHash: text("token_hash").notNull(),
    tokenPrefix: text("token_prefix").notNull(),
    dailyLimitMb: integer("daily_limit_mb").notNull(),
    retentionDays: integer("retention_days").notNull(),
    /** Distinct stream names; the CHECK makes the cap hold even for concurrent batches. */
    streamCount: integer("stream_count").notNull().default(0),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("log_projects_token_idx").on(t.tokenHash),
    index("log_projects_team_idx").on(t.teamId, t.createdAt),
    check("log_stream_cap", sql`${t.streamCount} <= 10000`),
  ],
);

export const logStreams = sqliteTable(
  "log_streams",
  {
    projectId: text("project_id")
      .notNull()
      .references(() => logProjects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    teamId: text("team_id").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.name] })],
);

export const logEntries = sqliteTable(
  "log_entries",
  {
    seq: integer("seq").primaryKey(),
    id: text("id").notNull(),
    teamId: text("team_id").notNull(),
    projectId: text("project_id").notNull(),
    stream: text("stream"),
    level: text("level").$type<LogLevel>().notNull(),
    message: text("message").notNull(),
    service: text("service"),
    traceId: text("trace_id"),
    spanId: text("span_id"),
    /** JSON text of the entry's metadata object, or null. */
    metadata: text("metadata"),
    /** Receive time in ms since the epoch. */
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    // Newest-first listing, retention clean-up and the time filters.
    index("log_entries_project_time_idx").on(t.projectId, t.createdAt),
    // Alert counts and the level filter: a covering index for (project, level, window).
    index("log_entries_project_level_time_idx").on(t.projectId, t.level, t.createdAt),
  ],
);

export const logDailyUsage = sqliteTable(
  "log_daily_usage",
  {
    projectId: text("project_id")
      .notNull()
      .references(() => logProjects.id, { onDelete: "cascade" }),
    /** UTC day, `YYYY-MM-DD`. */
    day: text("day").notNull(),
    teamId: text("team_id").notNull(),
    bytes: integer("bytes").notNull(),
    /** The project's limit when last written; the CHECK refuses a write that passes it. */
    limitBytes: integer("limit_bytes").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.day] }), check("log_daily_limit", sql`${t.bytes} <= ${t.limitBytes}`)],
);

export const logAlerts = sqliteTable(
  "log_alerts",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => logProjects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    level: text("level").$type<LogLevel>().notNull(),
    threshold: integer("threshold").notNull(),
    windowMinutes: integer("window_minutes").notNull(),
    channels: text("channels", { mode: "json" }).$type<AlertChannel[]>().notNull(),
    notifyEmail: text("notify_email"),
    notifyWebhook: text("notify_webhook"),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    /** ms since the epoch of the last firing, or null. */
    lastTriggeredAt: integer("last_triggered_at"),
    insertedAt: text("inserted_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("log_alerts_project_idx").on(t.projectId, t.insertedAt), index("log_alerts_enabled_idx").on(t.enabled)],
);

export const ALERT_CHANNELS = ["email", "webhook"] as const;
export type AlertChannel = (typeof ALERT_CHANNELS)[number];

/** One row per (firing, channel): makes redelivered queue messages idempotent. */
export const logAlertDeliveries = sqliteTable(
  "log_alert_deliveries",
  {
    firingId: text("firing_id").notNull(),
    channel: text("channel").$type<AlertChannel>().notNull(),
    alertId: text("alert_id").notNull(),
    teamId: text("team_id").notNull(),
    /** `sending`, `sent` or `failed`. */
    status: text("status").notNull(),
    attempts: integer("attempts").notNull().default(0),
    lastError: text("last_error"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.firingId, t.channel] }), index("log_alert_deliveries_alert_idx").on(t.alertId)],
);

/**
 * The firing history of an alert: one row per firing, `resolved_at` set when its window fell back
 * under the threshold (a "resolved" notification went out), when a later firing of the same alert
 * took over, or when the alert was disabled. Times in ms since the epoch. Kept 90 days.
 */
export const logAlertFirings = sqliteTable(
  "log_alert_firings",
  {
    id: text("id").primaryKey(),
    alertId: text("alert_id")
      .notNull()
      .references(() => logAlerts.id, { onDelete: "cascade" }),
    teamId: text("team_id").notNull(),
    projectId: text("project_id").notNull(),
    firedAt: integer("fired_at").notNull(),
    /** Entries counted in the window when it fired. */
    count: integer("count").notNull(),
    resolvedAt: integer("resolved_at"),
  },
  (t) => [
    // One firing per alert and instant (a repeated check records nothing twice); the newest-first list.
    uniqueIndex("log_alert_firings_alert_time_idx").on(t.alertId, t.firedAt),
    // The alert check's "open firings" lookup.
    index("log_alert_firings_open_idx").on(t.alertId).where(sql`${t.resolvedAt} is null`),
    // Retention.
    index("log_alert_firings_fired_idx").on(t.firedAt),
  ],
);
