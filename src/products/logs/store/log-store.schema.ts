// Tables of one log project's store (a SQLite-backed Durable Object, `LogStore`, one per project).
// Entries are the volume table: an integer rowid (`seq`) keeps appends cheap and breaks ties in the
// newest-first order; times are integer milliseconds. The full-text index over `message`
// (`entries_fts`, FTS5 trigram: substring search served by an index) is a virtual table Drizzle
// cannot declare: it and its triggers are in the custom migration 0001. `entry_counts` rolls the
// entries up per minute and level for the histogram (filled from the entries held by migration 0004).
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const entries = sqliteTable(
  "entries",
  {
    seq: integer("seq").primaryKey(),
    id: text("id").notNull(),
    stream: text("stream"),
    level: text("level").notNull(),
    message: text("message").notNull(),
    service: text("service"),
    traceId: text("trace_id"),
    spanId: text("span_id"),
    /** JSON text of the entry's metadata object, or null. */
    metadata: text("metadata"),
    /** The entry's time in ms since the epoch: orders the query, serves since/until, alert windows and retention. */
    ts: integer("ts").notNull(),
    /** Receive time in ms since the epoch. */
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    // Newest-first listing, the time filters and retention (rowid = seq breaks ties inside the index).
    index("entries_ts_idx").on(t.ts),
    // Alert counts and the level filter: covering for (level, window).
    index("entries_level_ts_idx").on(t.level, t.ts),
  ],
);

/**
 * Entries per minute and level (the histogram's roll-up): kept in step with `entries` by every
 * append, import and retention step, in the same transaction, so a histogram reads at most one row
 * per minute and level of its range instead of every entry. `minute` is ts / 60,000.
 */
export const entryCounts = sqliteTable(
  "entry_counts",
  {
    minute: integer("minute").notNull(),
    level: text("level").notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ columns: [t.minute, t.level] })],
);

/** Settings the Worker hands over with each append, and the import watermark of the D1 migration. */
export const meta = sqliteTable("meta", {
  key: text("key").primaryKey(),
  value: integer("value").notNull(),
});

/** Ids of entries imported from the former D1 table: a repeated import step skips them (ids are UUIDs, never reused as D1 rowids are). */
export const legacyIds = sqliteTable("legacy_ids", {
  id: text("id").primaryKey(),
});
