// The raw SQL of retention: the runner of the chunked deletes and the platform tables' own chunk
// statements. Raw because Drizzle cannot say it: a DELETE bounded by `WHERE key IN (SELECT ...
// LIMIT ?)` (SQLite's DELETE ... LIMIT is compiled out of D1), run again until a chunk comes back short.

/** Rows deleted per statement. */
export const RETENTION_CHUNK = 500;
/** Statements per table and run: at most 10,000 rows of a table an hour. */
export const RETENTION_MAX_CHUNKS = 20;

/**
 * Runs a chunked DELETE until it deletes less than a chunk or the run's bound is reached.
 * `sql` takes its own parameters first and the chunk size last. Returns the rows deleted.
 */
export async function deleteInSteps(d1: D1Database, sql: string, params: unknown[]): Promise<number> {
  const statement = d1.prepare(sql).bind(...params, RETENTION_CHUNK);
  let deleted = 0;
  for (let i = 0; i < RETENTION_MAX_CHUNKS; i++) {
    const result = await statement.run();
    deleted += result.meta.changes;
    if (result.meta.changes < RETENTION_CHUNK) break;
  }
  return deleted;
}

/** Daily usage counts of days before ?1 (`YYYY-MM-DD`), ?2 rows a step. */
export const DELETE_OLD_DAILY_USAGE = "DELETE FROM usage_daily WHERE rowid IN (SELECT rowid FROM usage_daily WHERE day < ?1 LIMIT ?2)";

/** Idempotency keys made before ?1, ?2 rows a step. */
export const DELETE_OLD_IDEMPOTENCY_KEYS = "DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE created_at < ?1 LIMIT ?2)";
