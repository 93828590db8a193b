// The raw SQL of the log store (not named *.sql.ts: wrangler bundles an import ending in .sql as
// text), each where Drizzle cannot say it: appends expand JSON arrays with
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
