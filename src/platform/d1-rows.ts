// Multi-row inserts into D1: a statement takes at most 100 bound parameters, so rows go in chunks
// of as many as fit (one statement each), and the statements in one batch (one transaction).

/** Bound parameters one D1 statement takes at most. */
export const D1_MAX_PARAMS = 100;

/** `rows` in chunks of as many as one multi-row statement takes, by their number of columns (the first row's keys when not given). */
export function statementChunks<T extends object>(rows: T[], columns: number = rows[0] ? Object.keys(rows[0]).length : 1): T[][] {
  const size = Math.max(1, Math.floor(D1_MAX_PARAMS / Math.max(1, columns)));
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}
