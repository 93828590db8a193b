// The schema of one site's analytics store (AnalyticsStore). Three tables: the raw events (kept
// RAW_RETENTION_DAYS, for realtime and for a later look at props), the hourly rollup (kept
// ROLLUP_RETENTION_DAYS; every query reads it), and the open sessions (the source a visit started
// with, as Plausible attributes a visit's events to its first referrer; gone 30 minutes after their
// last event). No IP address and no user agent is held anywhere: a visitor is the daily-salted hash
// computed in the isolate. Empty strings stand for "none" in the rollup's key (SQLite primary keys
// treat NULLs as distinct).
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const events = sqliteTable(
  "events",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    /** Unix ms, platform clock of the ingest. */
    ts: integer("ts").notNull(),
    name: text("name").notNull(),
    page: text("page").notNull(),
    /** hash(daily salt, site id, ip, user agent), 16 hex characters. */
    visitor: text("visitor").notNull(),
    source: text("source").notNull(),
    country: text("country").notNull(),
    /** JSON object of string values, or null. */
    props: text("props"),
  },
  (t) => [index("events_ts_idx").on(t.ts)],
);

/**
 * The hourly rollup: one row per hour, visitor and (name, page, source, country) with its event
 * count. Keeping the visitor in the key is what keeps `visitors` exact across hours and under any
 * filter (a visitor seen in three hours counts once in the day); its size grows with distinct
 * visitors and pages per hour, not with events.
 */
export const hourly = sqliteTable(
  "hourly",
  {
    /** Unix hours (ms / 3,600,000). */
    hour: integer("hour").notNull(),
    visitor: text("visitor").notNull(),
    name: text("name").notNull(),
    page: text("page").notNull(),
    source: text("source").notNull(),
    country: text("country").notNull(),
    events: integer("events").notNull(),
  },
  (t) => [primaryKey({ columns: [t.hour, t.name, t.page, t.source, t.country, t.visitor] })],
);

/** Open visits: a visitor's source for as long as its events come less than 30 minutes apart. */
export const sessions = sqliteTable(
  "sessions",
  {
    visitor: text("visitor").primaryKey(),
    source: text("source").notNull(),
    lastSeen: integer("last_seen").notNull(),
  },
  (t) => [index("sessions_last_seen_idx").on(t.lastSeen)],
);

/**
 * Tallies: the counts the common queries read without looking at visitors. One row per `dim`,
 * bucket and value: `all` (value ""), `page`, `name`, `source` and `country` per UTC day (bucket:
 * the day's first Unix hour), and `hour` (value "") per hour. `visitors` is exact: a visitor is
 * added to a row the first time it is seen there (tally_visitors); a visitor's hash changes every
 * UTC day, so a range's visitors are the sum of its days'. A month's totals read 30 rows, a
 * month's pages 30 rows per page, whatever the number of events.
 */
export const tallies = sqliteTable(
  "tallies",
  {
    dim: text("dim").notNull(),
    bucket: integer("bucket").notNull(),
    value: text("value").notNull(),
    visitors: integer("visitors").notNull(),
    pageviews: integer("pageviews").notNull(),
    events: integer("events").notNull(),
  },
  (t) => [primaryKey({ columns: [t.dim, t.bucket, t.value] })],
);

/**
 * The visitors already counted in each tally row, so a visitor adds to `visitors` once. Only
 * needed while its bucket still receives events (today's), so kept TALLY_VISITORS_DAYS.
 */
export const tallyVisitors = sqliteTable(
  "tally_visitors",
  {
    dim: text("dim").notNull(),
    bucket: integer("bucket").notNull(),
    value: text("value").notNull(),
    visitor: text("visitor").notNull(),
  },
  (t) => [primaryKey({ columns: [t.dim, t.bucket, t.value, t.visitor] })],
);
