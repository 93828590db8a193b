// Retention in bounded steps (docs/OPERATIONS.md, "Retention"): every table that grows with traffic is
// trimmed by the hourly job, a chunk of rows per statement and a bounded number of statements per
// run, so one run stays far inside the per-invocation query budget however large the backlog;
// what is left waits for the next run. Each statement must delete at most `?1`-bound rows
// (`… WHERE id IN (SELECT id … LIMIT ?)`), taking the chunk size as its last parameter.

export { RETENTION_CHUNK, RETENTION_MAX_CHUNKS } from "./retention.queries";

/** Days kept of delivery logs and sent-mail records (emails, their history, platform mail, push and survey webhook deliveries). */
export const DELIVERY_LOG_RETENTION_DAYS = 30;

/** The runner of a chunked DELETE lives with the raw SQL (retention.queries.ts). */
export { deleteInSteps } from "./retention.queries";

/** The ISO cutoff `days` before `nowMs`. */
export function cutoffIso(nowMs: number, days: number): string {
  return new Date(nowMs - days * 86_400_000).toISOString();
}
