// The Logs product's raw SQL, because Drizzle cannot say it: the alert check works on sets of ids
// and planned rows passed as one JSON parameter and expanded with json_each (one statement for any
// number of alerts, inside the 100-parameter limit), reads each alert's open firings as a
// json_group_array, and guards its claims with conditions on the row being written (UPDATE ...
// WHERE ... RETURNING, INSERT OR IGNORE ... SELECT); the retention deletes are the bounded
// `DELETE ... WHERE key IN (SELECT ... LIMIT n)` chunks of platform/retention.ts, the first joined
// to each project's own retention. Ingest's statements (section "ingest") take a batch's stream
// names as one JSON parameter (json_each), upsert the day's byte counter with an `excluded` sum and
// recount streams with a correlated subquery; the move of the former entries table (section
// "legacy entries") deletes the moved rows by a JSON list of seqs.

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** An enabled alert of a checked project that is due, or has an open firing. */
export interface DueAlert {
  id: string;
  team_id: string;
  project_id: string;
  level: string;
  threshold: number;
  channels: string;
  notify_email: string | null;
  notify_webhook: string | null;
  window_minutes: number;
  last_triggered_at: number | null;
}

/** Due alerts of the projects, and alerts with an open firing (served by the partial index on open firings), with those firings as `[[id, fired_at], ...]`. */
export async function selectAlertsToCheck(db: D1Database, at: number, projectIds: string[]) {
  const { results } = await db
    .prepare(
      `SELECT a.id, a.team_id, a.project_id, a.level, a.threshold, a.window_minutes, a.channels, a.notify_email, a.notify_webhook, a.last_triggered_at,
       (SELECT json_group_array(json_array(f.id, f.fired_at)) FROM log_alert_firings f WHERE f.alert_id = a.id AND f.resolved_at IS NULL) AS open_firings
     FROM log_alerts a WHERE a.project_id IN (SELECT value FROM json_each(?2)) AND a.enabled = 1
       AND ((a.last_triggered_at IS NULL OR a.last_triggered_at <= ?1 - a.window_minutes * ${MINUTE_MS})
         OR EXISTS (SELECT 1 FROM log_alert_firings f WHERE f.alert_id = a.id AND f.resolved_at IS NULL))`,
    )
    .bind(at, JSON.stringify(projectIds))
    .all<DueAlert & { open_firings: string }>();
  return results;
}

/**
 * The claim of firings, one transaction: sets last_triggered_at under the cool-down condition
 * (RETURNING the alerts claimed), closes the open firing of each alert claimed at `at`, and records
 * a firing row `[firingId, alertId, count]` for each (unique on (alert_id, fired_at)).
 */
export function claimFirings(
  db: D1Database,
  at: number,
  alertIds: string[],
  planned: Array<[firingId: string, alertId: string, count: number]>,
): D1PreparedStatement[] {
  const ids = JSON.stringify(alertIds);
  return [
    db
      .prepare(
        `UPDATE log_alerts SET last_triggered_at = ?1
       WHERE id IN (SELECT value FROM json_each(?2)) AND enabled = 1
         AND (last_triggered_at IS NULL OR last_triggered_at <= ?1 - window_minutes * ${MINUTE_MS})
       RETURNING id`,
      )
      .bind(at, ids),
    db
      .prepare(
        `UPDATE log_alert_firings SET resolved_at = ?1
       WHERE resolved_at IS NULL AND fired_at < ?1
         AND alert_id IN (SELECT id FROM log_alerts WHERE id IN (SELECT value FROM json_each(?2)) AND last_triggered_at = ?1)`,
      )
      .bind(at, ids),
    db
      .prepare(
        `INSERT OR IGNORE INTO log_alert_firings (id, alert_id, team_id, project_id, fired_at, count)
       SELECT value->>0, a.id, a.team_id, a.project_id, ?1, value->>2
       FROM json_each(?2) JOIN log_alerts a ON a.id = value->>1 WHERE a.last_triggered_at = ?1`,
      )
      .bind(at, JSON.stringify(planned)),
  ];
}

/**
 * Gives claimed firings back: each alert's last_triggered_at as it was (`[alertId, previous]`), the
 * firing rows deleted, and the firings they closed reopened.
 */
export function releaseFirings(
  db: D1Database,
  at: number,
  previous: Array<[alertId: string, lastTriggeredAt: number | null]>,
  firingIds: string[],
  alertIds: string[],
): D1PreparedStatement[] {
  return [
    db
      .prepare(
        `UPDATE log_alerts SET last_triggered_at = (SELECT value->>1 FROM json_each(?2) WHERE value->>0 = log_alerts.id)
         WHERE id IN (SELECT value->>0 FROM json_each(?2)) AND last_triggered_at = ?1`,
      )
      .bind(at, JSON.stringify(previous)),
    db.prepare("DELETE FROM log_alert_firings WHERE id IN (SELECT value FROM json_each(?1))").bind(JSON.stringify(firingIds)),
    db
      .prepare(
        `UPDATE log_alert_firings SET resolved_at = NULL
         WHERE alert_id IN (SELECT value FROM json_each(?2)) AND resolved_at = ?1 AND fired_at < ?1`,
      )
      .bind(at, JSON.stringify(alertIds)),
  ];
}

/** Resolves the open firings among `firingIds` (resolved_at set only where still null); RETURNING the ids claimed. */
export async function claimResolves(db: D1Database, at: number, firingIds: string[]): Promise<string[]> {
  const { results } = await db
    .prepare(
      `UPDATE log_alert_firings SET resolved_at = ?1
     WHERE id IN (SELECT value FROM json_each(?2)) AND resolved_at IS NULL
     RETURNING id`,
    )
    .bind(at, JSON.stringify(firingIds))
    .all<{ id: string }>();
  return results.map((row) => row.id);
}

/** Reopens firings this run resolved at `at`. */
export async function releaseResolves(db: D1Database, at: number, firingIds: string[]): Promise<void> {
  await db
    .prepare("UPDATE log_alert_firings SET resolved_at = NULL WHERE id IN (SELECT value FROM json_each(?2)) AND resolved_at = ?1")
    .bind(at, JSON.stringify(firingIds))
    .run();
}

/** One chunk of entries of the former D1 table past their project's retention. */
export function deleteExpiredEntries(db: D1Database, at: number, chunk: number): D1PreparedStatement {
  return db
    .prepare(
      `DELETE FROM log_entries WHERE seq IN (
         SELECT e.seq FROM log_projects p
         JOIN log_entries e ON e.project_id = p.id AND e.created_at < ?1 - p.retention_days * ${DAY_MS}
         LIMIT ${chunk})`,
    )
    .bind(at);
}

/** One chunk of alert firings older than `before` (ms), oldest first. */
export function deleteOldFirings(db: D1Database, before: number, chunk: number): D1PreparedStatement {
  return db
    .prepare("DELETE FROM log_alert_firings WHERE id IN (SELECT id FROM log_alert_firings WHERE fired_at < ?1 ORDER BY fired_at LIMIT ?2)")
    .bind(before, chunk);
}

// ---- ingest ---------------------------------------------------------------------------------

/** A project found by its ingest token's hash, with its team's plan and today's bytes (one read). */
export interface IngestProjectRow {
  id: string;
  team_id: string;
  daily_limit_mb: number;
  retention_days: number;
  stream_count: number;
  plan: string;
  owner_email: string | null;
  used: number;
}

/** The project of an ingest token hash, its team and the bytes of `day` so far; null when unknown. */
export function selectIngestProject(db: D1Database, tokenHash: string, day: string): Promise<IngestProjectRow | null> {
  return db
    .prepare(
      `SELECT p.id, p.team_id, p.daily_limit_mb, p.retention_days, p.stream_count, t.plan, t.owner_email, COALESCE(u.bytes, 0) AS used
       FROM log_projects p JOIN teams t ON t.id = p.team_id
       LEFT JOIN log_daily_usage u ON u.project_id = p.id AND u.day = ?2
       WHERE p.token_hash = ?1`,
    )
    .bind(tokenHash, day)
    .first<IngestProjectRow>();
}

/** How many of `names` the project already has. */
export async function countKnownStreams(db: D1Database, projectId: string, names: string[]): Promise<number> {
  const known = await db
    .prepare("SELECT count(*) AS n FROM log_streams WHERE project_id = ?1 AND name IN (SELECT value FROM json_each(?2))")
    .bind(projectId, JSON.stringify(names))
    .first<{ n: number }>();
  return known?.n ?? 0;
}

/** Creates the streams of `names` the project lacks; returns (RETURNING) the names it created. */
export function insertStreams(db: D1Database, projectId: string, teamId: string, createdIso: string, names: string[]): D1PreparedStatement {
  return db
    .prepare("INSERT OR IGNORE INTO log_streams (project_id, name, team_id, created_at) SELECT ?1, value, ?2, ?3 FROM json_each(?4) RETURNING name")
    .bind(projectId, teamId, createdIso, JSON.stringify(names));
}

/** Deletes the project's streams of `names` (the undo of insertStreams). */
export function deleteStreams(db: D1Database, projectId: string, names: string[]): D1PreparedStatement {
  return db.prepare("DELETE FROM log_streams WHERE project_id = ?1 AND name IN (SELECT value FROM json_each(?2))").bind(projectId, JSON.stringify(names));
}

/** Sets the project's stream_count to the streams it has (its CHECK holds the cap). */
export function recountStreams(db: D1Database, projectId: string): D1PreparedStatement {
  return db.prepare("UPDATE log_projects SET stream_count = (SELECT count(*) FROM log_streams WHERE project_id = ?1) WHERE id = ?1").bind(projectId);
}

/** Adds `bytes` to the project's counter of `day` (its CHECK holds the daily limit). */
export function addDailyBytes(db: D1Database, projectId: string, day: string, teamId: string, bytes: number, limitBytes: number): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO log_daily_usage (project_id, day, team_id, bytes, limit_bytes) VALUES (?1, ?2, ?3, ?4, ?5)
       ON CONFLICT (project_id, day) DO UPDATE SET bytes = bytes + excluded.bytes, limit_bytes = excluded.limit_bytes`,
    )
    .bind(projectId, day, teamId, bytes, limitBytes);
}

/** Takes `bytes` back from the project's counter of `day` (the undo of addDailyBytes), never below 0. */
export function subtractDailyBytes(db: D1Database, projectId: string, day: string, bytes: number): D1PreparedStatement {
  return db.prepare("UPDATE log_daily_usage SET bytes = max(bytes - ?3, 0) WHERE project_id = ?1 AND day = ?2").bind(projectId, day, bytes);
}

// ---- legacy entries (the former D1 table, moved into the stores) ----------------------------

/** The `limit` oldest rows of the former table, each with its project's retention_days (null: the project is gone). */
export async function selectLegacyEntries<Row>(db: D1Database, limit: number): Promise<Row[]> {
  const { results } = await db
    .prepare(
      `SELECT e.seq, e.id, e.project_id, e.stream, e.level, e.message, e.service, e.trace_id, e.span_id, e.metadata, e.created_at, p.retention_days
       FROM log_entries e LEFT JOIN log_projects p ON p.id = e.project_id ORDER BY e.seq LIMIT ?1`,
    )
    .bind(limit)
    .all<Row>();
  return results;
}

/** Deletes the moved rows of the former table. */
export async function deleteLegacyEntries(db: D1Database, seqs: number[]): Promise<void> {
  await db.prepare("DELETE FROM log_entries WHERE seq IN (SELECT value FROM json_each(?1))").bind(JSON.stringify(seqs)).run();
}
