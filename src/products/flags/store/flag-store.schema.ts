// Tables of a team's flag store (a SQLite-backed Durable Object, `FlagStore`, one per team, named by
// the team id, which the Worker only ever takes from the caller's credential). Flags and segments
// are kept as their JSON documents (the API's shape) with the columns the store filters on; every
// change of a flag keeps its whole document in `flag_history` (revert reads it back). `state` holds
// the team's ruleset revision: one integer bumped by every change, the version the isolates cache
// rulesets by. Insights are counters per flag, environment, hour, variant and source. Times are
// ISO strings like the API's, except `at` of scheduled changes (ms, for the alarm).
import { index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const state = sqliteTable("state", {
  id: integer("id").primaryKey(),
  revision: integer("revision").notNull(),
});

export const environments = sqliteTable("environments", {
  key: text("key").primaryKey(),
  name: text("name").notNull(),
  createdAt: text("created_at").notNull(),
});

export const flags = sqliteTable(
  "flags",
  {
    key: text("key").primaryKey(),
    doc: text("doc").notNull(),
    version: integer("version").notNull(),
    /** UTF-8 bytes of `doc`, for the ruleset's size cap. */
    size: integer("size").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("flags_updated_idx").on(t.updatedAt)],
);

/** Which segments each flag's rules name: a segment in use cannot be deleted (409). */
export const flagSegments = sqliteTable(
  "flag_segments",
  {
    flagKey: text("flag_key").notNull(),
    segmentKey: text("segment_key").notNull(),
  },
  (t) => [primaryKey({ columns: [t.flagKey, t.segmentKey] }), index("flag_segments_segment_idx").on(t.segmentKey)],
);

export const flagHistory = sqliteTable(
  "flag_history",
  {
    flagKey: text("flag_key").notNull(),
    version: integer("version").notNull(),
    at: text("at").notNull(),
    actor: text("actor").notNull(),
    changes: text("changes").notNull(),
    /** The flag's whole document at this version (null: the flag was deleted). */
    doc: text("doc"),
  },
  (t) => [primaryKey({ columns: [t.flagKey, t.version] })],
);

export const segments = sqliteTable("segments", {
  key: text("key").primaryKey(),
  doc: text("doc").notNull(),
  version: integer("version").notNull(),
  size: integer("size").notNull(),
});

export const scheduledChanges = sqliteTable(
  "scheduled_changes",
  {
    id: text("id").primaryKey(),
    flagKey: text("flag_key").notNull(),
    environment: text("environment").notNull(),
    /** Due instant, ms since the epoch. */
    at: integer("at").notNull(),
    /** `{enabled?, fallthrough?}` as JSON. */
    change: text("change").notNull(),
    actor: text("actor").notNull(),
    status: text("status").$type<"pending" | "applied" | "failed">().notNull(),
    createdAt: text("created_at").notNull(),
    appliedAt: text("applied_at"),
    /** The flag version the change made, or why it failed. */
    appliedVersion: integer("applied_version"),
    error: text("error"),
  },
  (t) => [index("scheduled_pending_idx").on(t.status, t.at), index("scheduled_flag_idx").on(t.flagKey)],
);

export const insights = sqliteTable(
  "insights",
  {
    flagKey: text("flag_key").notNull(),
    environment: text("environment").notNull(),
    /** `YYYY-MM-DDTHH`, UTC. */
    hour: text("hour").notNull(),
    variant: text("variant").notNull(),
    /** `evaluation` (server-side evaluation), `exposure` (a client's track). */
    source: text("source").notNull(),
    count: integer("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.flagKey, t.environment, t.hour, t.variant, t.source] }), index("insights_hour_idx").on(t.hour)],
);

/** When each flag was last evaluated (or tracked by a team key) per environment: the stale list's source. */
export const lastEvaluated = sqliteTable(
  "last_evaluated",
  {
    flagKey: text("flag_key").notNull(),
    environment: text("environment").notNull(),
    at: text("at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.flagKey, t.environment] })],
);

/** Custom events of track calls, counted per name, environment and hour. */
export const customEvents = sqliteTable(
  "custom_events",
  {
    name: text("name").notNull(),
    environment: text("environment").notNull(),
    hour: text("hour").notNull(),
    count: integer("count").notNull(),
    valueSum: real("value_sum").notNull(),
  },
  (t) => [primaryKey({ columns: [t.name, t.environment, t.hour] })],
);
