// Retention in bounded steps (DESIGN.md "Retention"): every table that grows with traffic is
// trimmed by the hourly job, a chunk of rows per statement and a bounded number of statements per
// run, so one run stays far inside the per-invocation query budget however large the backlog;
// what is left waits for the next run. Each statement must delete at most `?1`-bound rows
// (`… WHERE id IN (SELECT id … LIMIT ?)`), taking the chunk size as its last parameter.

/** Rows deleted per statement. */
export const RETENTION_CHUNK = 500;
/** Statements per table and run: at most 10,000 rows of a table an hour. */
export const RETENTION_MAX_CHUNKS = 20;

/** Days kept of delivery logs and sent-mail records (emails, their history, platform mail, push and survey webhook deliveries). */
export const DELIVERY_LOG_RETENTION_DAYS = 30;

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

/** The ISO cutoff `days` before `nowMs`. */
export function cutoffIso(nowMs: number, days: number): string {
  return new Date(nowMs - days * 86_400_000).toISOString();
}
