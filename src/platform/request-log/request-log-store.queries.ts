// The request log store's SQL (request-log-store.ts), raw where Drizzle cannot say it: the append
// expands one JSON array with json_each (one bound value carries a whole batch; a statement takes at
// most 100 bound parameters), and the bound deletes by an OFFSET over the (at) index.
export const APPEND = `INSERT INTO requests (at, method, path, status, latency_ms, key_id, key_prefix, request_id, error_body)
  SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, value->>7, value->>8 FROM json_each(?)`;
const COLUMNS = "seq, at, method, path, status, latency_ms, key_id, key_prefix, request_id, error_body";
// The oldest rows past the bound, by count: a walk of the index from its old end over as many rows as
// go (a team at its bound drops a batch's worth per write), never over the 10,000 that stay.
export const DROP_OLDEST = `DELETE FROM requests WHERE seq IN (SELECT seq FROM requests ORDER BY at ASC, seq ASC LIMIT ?)`;
export const DROP_EXPIRED = "DELETE FROM requests WHERE at < ?";
/** Whether any row is left: one row looked at, not a count of the whole table. */
export const ANY_ROW = "SELECT 1 FROM requests LIMIT 1";
/** Rows changed by the statement before (SQLite's changes()). */
export const CHANGES = "SELECT changes() AS n";

/** The newest rows matching `where` (conditions with their own bound parameters, joined by AND), then the LIMIT's. */
export function selectNewest(where: readonly string[]): string {
  return `SELECT ${COLUMNS} FROM requests WHERE ${where.join(" AND ")} ORDER BY at DESC, seq DESC LIMIT ?`;
}
