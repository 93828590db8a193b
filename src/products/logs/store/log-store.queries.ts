// The raw SQL of the log store, the one place it is written (not named *.sql.ts: wrangler bundles
// an import ending in .sql as text), raw where Drizzle cannot say it: appends expand JSON arrays with
// json_each (one bound value carries thousands of rows; a Durable Object statement takes at most 100
// bound parameters), the per-minute roll-up is kept with grouped upserts, and the entry query walks a cursor to a byte budget and searches the FTS5
// trigram index (`entries_fts MATCH`), which Drizzle has no builder for.

/**
 * One stored row as the Worker sends it, a JSON array:
 * [id, stream, level, message, service, trace_id, span_id, metadata JSON text, ts ms, created_at ms?].
 * A missing created_at takes the append's receive time.
 */
export const APPEND_ROWS = `INSERT INTO entries (id, stream, level, message, service, trace_id, span_id, metadata, ts, created_at)
  SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, value->>7, value->>8, coalesce(value->>9, ?2)
  FROM json_each(?1)`;

/** Milliseconds of one minute of the histogram's roll-up (`entry_counts.minute` is ts / MINUTE_MS). */
export const MINUTE_MS = 60_000;

/**
 * Adds the entries with seq > ?1 (the rows an append or import just wrote) to the per-minute
 * roll-up. INSERT … SELECT … ON CONFLICT needs the SELECT's WHERE to parse as an upsert.
 */
export const COUNT_APPENDED = `INSERT INTO entry_counts (minute, level, n)
  SELECT ts / ${MINUTE_MS}, level, count(*) FROM entries WHERE seq > ?1 GROUP BY 1, 2
  ON CONFLICT (minute, level) DO UPDATE SET n = n + excluded.n`;

/** The oldest entries before ?1, at most ?2 of them, in one order: what one retention step deletes. */
const EXPIRED = "SELECT seq, ts, level FROM entries WHERE ts < ?1 ORDER BY ts, seq LIMIT ?2";

/** Takes the entries the retention step is about to delete out of the roll-up (then rows at zero go). */
export const UNCOUNT_EXPIRED = `INSERT INTO entry_counts (minute, level, n)
  SELECT ts / ${MINUTE_MS}, level, -count(*) FROM (${EXPIRED}) WHERE true GROUP BY 1, 2
  ON CONFLICT (minute, level) DO UPDATE SET n = n + excluded.n`;

/** One retention step: the same rows UNCOUNT_EXPIRED took out of the roll-up. */
export const DELETE_EXPIRED = `DELETE FROM entries WHERE seq IN (SELECT seq FROM (${EXPIRED}))`;

export const ENTRY_COLUMNS = "seq, id, stream, level, message, service, trace_id, span_id, metadata, ts, created_at";

/** Filters of the entry query, times in ms since the epoch. */
export interface EntryFilter {
  level?: string;
  stream?: string;
  service?: string;
  trace_id?: string;
  /** Inclusive. */
  since?: number;
  /** Exclusive. */
  until?: number;
  /** Substring of the message, case-insensitive. */
  q?: string;
  /** Continue after this (ts, seq), newest first. */
  after?: { ts: number; seq: number };
}

/** The trigram tokenizer indexes sequences of three characters: shorter queries cannot use it. */
export const MIN_INDEXED_QUERY = 3;

/** FTS5 string literal of a query: a phrase of the query's trigrams, i.e. the substring itself. */
function ftsPhrase(q: string): string {
  return `"${q.replace(/"/g, '""')}"`;
}

/** The WHERE clause and parameters of a filter (without ORDER/LIMIT). */
export function entryWhere(filter: EntryFilter): { where: string; params: (string | number)[] } {
  const where: string[] = [];
  const params: (string | number)[] = [];
  for (const [column, value] of [
    ["level", filter.level],
    ["stream", filter.stream],
    ["service", filter.service],
    ["trace_id", filter.trace_id],
  ] as const) {
    if (value !== undefined) {
      where.push(`${column} = ?`);
      params.push(value);
    }
  }
  if (filter.since !== undefined) {
    where.push("ts >= ?");
    params.push(filter.since);
  }
  if (filter.until !== undefined) {
    where.push("ts < ?");
    params.push(filter.until);
  }
  if (filter.q !== undefined) {
    if ([...filter.q].length >= MIN_INDEXED_QUERY) {
      where.push("seq IN (SELECT rowid FROM entries_fts WHERE entries_fts MATCH ?)");
      params.push(ftsPhrase(filter.q));
    } else {
      // One or two characters: a LIKE over the rows walked (the pattern stays far below the
      // 50-byte limit Durable Object SQLite puts on LIKE patterns).
      where.push("message LIKE ? ESCAPE '\\'");
      params.push(`%${filter.q.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`);
    }
  }
  if (filter.after) {
    where.push("(ts < ? OR (ts = ? AND seq < ?))");
    params.push(filter.after.ts, filter.after.ts, filter.after.seq);
  }
  return { where: where.length ? `WHERE ${where.join(" AND ")}` : "", params };
}

/** The entries an append just wrote (?1 first seq, ?2 last), for the open tails. */
export const ENTRIES_BETWEEN = `SELECT ${ENTRY_COLUMNS} FROM entries WHERE seq BETWEEN ? AND ? ORDER BY seq`;

/** A page of entries under `where` (entryWhere's clause and parameters), newest first, then the LIMIT's parameter. */
export function entryPageSql(where: string): string {
  return `SELECT ${ENTRY_COLUMNS} FROM entries ${where} ORDER BY ts DESC, seq DESC LIMIT ?`;
}

/**
 * The histogram's whole minutes from the per-minute roll-up: parameters plan start, bucket width,
 * first minute, last minute (exclusive), the level when `byLevel`, then the bucket count.
 */
export function rolledUpHistogramSql(byLevel: boolean): string {
  return `SELECT CAST((minute * ${MINUTE_MS} - ?) / ? AS INTEGER) AS bucket, level, sum(n) AS n FROM entry_counts
         WHERE minute >= ? AND minute < ? ${byLevel ? "AND level = ?" : ""} GROUP BY bucket, level HAVING bucket >= 0 AND bucket < ?`;
}

/** The histogram counted from the entries under `where`: parameters plan start, bucket width, the clause's, then the bucket count. */
export function entriesHistogramSql(where: string): string {
  return `SELECT CAST((ts - ?) / ? AS INTEGER) AS bucket, level, count(*) AS n FROM entries ${where} GROUP BY bucket, level HAVING bucket >= 0 AND bucket < ?`;
}

/** After UNCOUNT_EXPIRED: roll-up rows at zero go. */
export const DROP_EMPTY_COUNTS = "DELETE FROM entry_counts WHERE n <= 0";

/** Rows changed by the statement before (SQLite's changes(): a DELETE's own rows, not those its trigger removed). */
export const CHANGES = "SELECT changes() AS n";

/** Records the ids of imported legacy rows (?: a JSON array of ids). */
export const INSERT_LEGACY_IDS = "INSERT INTO legacy_ids (id) SELECT value FROM json_each(?)";

/** Whether any entry is left: one row looked at, not a count of the whole table. */
export const ANY_ENTRY = "SELECT 1 FROM entries LIMIT 1";

/** Adds the entries after seq ? to the trigram index. */
export const INDEX_AFTER = "INSERT INTO entries_fts (rowid, message) SELECT seq, message FROM entries WHERE seq > ?";

/** The highest seq held (null when empty). */
export const MAX_SEQ = "SELECT max(seq) AS m FROM entries";
