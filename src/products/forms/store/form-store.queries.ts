// The SQL of a form's store (store/form-store.ts), the one place it is written: raw statements on
// the object's SQLite (`ctx.storage.sql.exec`), because the hot path (a post's insert) and the
// alarm's deliveries and retention run many of them per call and a Drizzle query built per call
// costs more of the isolate than its SQL (docs/BENCHMARKS.md). Lists of ids are bound as `?` marks,
// never as text.

/** A submission's columns as the store answers them (`seq` is the paging key). */
const COLUMNS = "seq, id, status, fields, files, subject, reply_to, origin, created_at";

/** `?, ?, …` for `n` bound values. */
const marks = (n: number) => Array.from({ length: n }, () => "?").join(",");

export const UPSERT_OWNER =
  "INSERT INTO state (id, form_id, team_id, retention_days) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET retention_days = excluded.retention_days";
export const SELECT_OWNER = "SELECT form_id, team_id, retention_days FROM state WHERE id = 1";

export const INSERT_SUBMISSION = "INSERT INTO submissions (id, status, fields, files, subject, reply_to, origin, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
export const SUBMISSIONS_PAGE = `SELECT ${COLUMNS} FROM submissions WHERE status = ? AND seq < ? ORDER BY seq DESC LIMIT ?`;
export const SUBMISSION_BY_ID = `SELECT ${COLUMNS} FROM submissions WHERE id = ?`;
export const MOVE_SUBMISSION = `UPDATE submissions SET status = ? WHERE id = ? RETURNING ${COLUMNS}`;
export const COUNT_BY_STATUS = "SELECT status, count(*) AS n FROM submissions GROUP BY status";
export const SUBMISSION_STATUS = "SELECT status FROM submissions WHERE id = ?";
export const HOLDS_SUBMISSIONS = "SELECT count(*) AS n FROM (SELECT 1 FROM submissions LIMIT 1)";
export const SUBMISSIONS_BEFORE = "SELECT id, files FROM submissions WHERE created_at < ? ORDER BY seq LIMIT ?";

export const INSERT_DELIVERY =
  "INSERT INTO deliveries (id, submission_id, status, trigger, attempts, next_attempt_at, created_at) VALUES (?, ?, 'pending', ?, 0, ?, ?)";
export const DELIVERIES_OF_SUBMISSION = "SELECT * FROM deliveries WHERE submission_id = ? ORDER BY seq DESC LIMIT ?";
export const LATEST_DELIVERIES = "SELECT * FROM deliveries ORDER BY seq DESC LIMIT ?";
export const NEXT_DUE = "SELECT min(next_attempt_at) AS t FROM deliveries WHERE status = 'pending'";
export const DUE_DELIVERIES =
  "SELECT id, submission_id, attempts FROM deliveries WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?";
export const UPDATE_DELIVERY = "UPDATE deliveries SET status = ?, attempts = ?, next_attempt_at = ? WHERE id = ?";

export const RECORD_ATTEMPT =
  "INSERT OR REPLACE INTO attempts (delivery_id, number, attempted_at, status_code, duration_ms, error, response_body) VALUES (?, ?, ?, ?, ?, ?, ?)";
/** The attempts of `n` deliveries, oldest first. */
export const attemptsOf = (n: number) => `SELECT * FROM attempts WHERE delivery_id IN (${marks(n)}) ORDER BY number`;

/** Deleting `n` submissions with their deliveries and attempts, in this order (one transaction). */
export const deleteSubmissions = (n: number) => [
  `DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE submission_id IN (${marks(n)}))`,
  `DELETE FROM deliveries WHERE submission_id IN (${marks(n)})`,
  `DELETE FROM submissions WHERE id IN (${marks(n)})`,
];
