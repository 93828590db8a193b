// Scheduled work of the Logs product.
// - Every minute: the alert check. One statement finds every enabled alert out of its cool-down
//   whose count reached the threshold, counting once per distinct (project, level, window) through
//   the covering index (project_id, level, created_at); a second statement claims the firing
//   atomically (sets last_triggered_at), so overlapping runs cannot fire an alert twice. The
//   notifications themselves go to the alert-notifications queue, so a slow webhook never holds
//   the run up.
// - Hourly: retention clean-up of entries older than their project's retention_days, in bounded
//   chunks, plus old per-day counters and notification records.
import type { Env } from "../../env";
import { ALERT_CHANNELS, type AlertChannel } from "../../db/schema/logs";
import { nowMs } from "../../platform/clock";
import type { AlertNotification } from "./logs.consumer";

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** Queue.sendBatch takes at most 100 messages. */
const SEND_BATCH = 100;

interface DueAlert {
  id: string;
  team_id: string;
  channels: string;
  notify_email: string | null;
  notify_webhook: string | null;
  window_minutes: number;
  last_triggered_at: number | null;
  n: number;
}

/** Alerts looked at per statement. */
export const ALERT_PAGE = 200;
/** Pages per run: at most 5,000 alerts a minute are checked; past that a run starts where chance puts it. */
export const ALERT_MAX_PAGES = 25;

export interface AlertRunOptions {
  pageSize?: number;
  maxPages?: number;
  /** Where the run starts in the id order (default: a random id, so that when there are more alerts than one run checks, every alert gets its turn). */
  start?: string;
}

/**
 * Fires every enabled alert whose count of entries at its level in (now - window, now] reached
 * its threshold, unless it fired less than window_minutes ago. Bounded per run: alerts are taken in
 * pages by id, from `start` to the end and then from the beginning back to `start`, at most
 * `maxPages` pages. Returns the ids fired.
 */
export async function fireDueAlerts(env: Env, options: AlertRunOptions = {}): Promise<string[]> {
  const at = nowMs();
  const pageSize = options.pageSize ?? ALERT_PAGE;
  let pagesLeft = options.maxPages ?? ALERT_MAX_PAGES;
  const start = options.start ?? crypto.randomUUID();
  const fired: string[] = [];
  // Two segments of the id order: (start, end], then [beginning, start].
  for (const [after, until] of [
    [start, null],
    ["", start],
  ] as const) {
    let cursor = after;
    while (pagesLeft > 0) {
      pagesLeft--;
      const page = await firePage(env, at, cursor, until, pageSize);
      fired.push(...page.fired);
      if (page.lastId === null || page.seen < pageSize) break;
      cursor = page.lastId;
    }
  }
  return fired;
}

/** One page of alerts after `after` (and up to `until`): count, claim, announce. */
async function firePage(env: Env, at: number, after: string, until: string | null, pageSize: number): Promise<{ fired: string[]; lastId: string | null; seen: number }> {
  const { results: rows } = await env.DB.prepare(
    `WITH page AS (
       SELECT id, team_id, project_id, level, threshold, window_minutes, channels, notify_email, notify_webhook, last_triggered_at, enabled
       FROM log_alerts WHERE id > ?2 AND (?3 IS NULL OR id <= ?3) ORDER BY id LIMIT ?4
     ),
     due AS (
       SELECT * FROM page WHERE enabled = 1 AND (last_triggered_at IS NULL OR last_triggered_at <= ?1 - window_minutes * ${MINUTE_MS})
     ),
     counts AS (
       SELECT k.project_id, k.level, k.window_minutes,
         (SELECT count(*) FROM log_entries e
          WHERE e.project_id = k.project_id AND e.level = k.level
            AND e.created_at > ?1 - k.window_minutes * ${MINUTE_MS} AND e.created_at <= ?1) AS n
       FROM (SELECT DISTINCT project_id, level, window_minutes FROM due) k
     ),
     hits AS (
       SELECT due.id, due.team_id, due.channels, due.notify_email, due.notify_webhook, due.window_minutes, due.last_triggered_at, counts.n
       FROM due JOIN counts ON counts.project_id = due.project_id AND counts.level = due.level AND counts.window_minutes = due.window_minutes
       WHERE counts.n >= due.threshold
     )
     SELECT (SELECT MAX(id) FROM page) AS last_id, (SELECT COUNT(*) FROM page) AS seen, hits.*
     FROM (SELECT 1) LEFT JOIN hits ON 1`,
  )
    .bind(at, after, until, pageSize)
    .all<DueAlert & { last_id: string | null; seen: number }>();
  const lastId = rows[0]?.last_id ?? null;
  const seen = rows[0]?.seen ?? 0;
  const due = rows.filter((row) => row.id !== null);
  if (due.length === 0) return { fired: [], lastId, seen };

  // The claim repeats the cool-down condition: a run that lost the race claims nothing.
  const { results: claimed } = await env.DB.prepare(
    `UPDATE log_alerts SET last_triggered_at = ?1
     WHERE id IN (SELECT value FROM json_each(?2)) AND enabled = 1
       AND (last_triggered_at IS NULL OR last_triggered_at <= ?1 - window_minutes * ${MINUTE_MS})
     RETURNING id`,
  )
    .bind(at, JSON.stringify(due.map((alert) => alert.id)))
    .all<{ id: string }>();
  const claimedIds = new Set(claimed.map((row) => row.id));
  const fired = due.filter((alert) => claimedIds.has(alert.id));

  const messages: { body: AlertNotification }[] = [];
  for (const alert of fired) {
    const firingId = crypto.randomUUID();
    for (const channel of channelsWithAddress(alert)) {
      messages.push({
        body: {
          firing_id: firingId,
          alert_id: alert.id,
          team_id: alert.team_id,
          channel,
          count: alert.n,
          window_start: new Date(at - alert.window_minutes * MINUTE_MS).toISOString(),
          triggered_at: new Date(at).toISOString(),
        },
      });
    }
  }
  try {
    for (let i = 0; i < messages.length; i += SEND_BATCH) await env.ALERT_QUEUE.sendBatch(messages.slice(i, i + SEND_BATCH));
  } catch (error) {
    // Nothing was announced for these firings: give the claims back so the next run tries again.
    await env.DB.prepare(
      `UPDATE log_alerts SET last_triggered_at = (SELECT value->>1 FROM json_each(?2) WHERE value->>0 = log_alerts.id)
       WHERE id IN (SELECT value->>0 FROM json_each(?2)) AND last_triggered_at = ?1`,
    )
      .bind(at, JSON.stringify(fired.map((alert) => [alert.id, alert.last_triggered_at])))
      .run();
    throw error;
  }
  return { fired: fired.map((alert) => alert.id), lastId, seen };
}

/** The every-minute cron job. */
export async function checkLogAlerts(env: Env): Promise<void> {
  await fireDueAlerts(env);
}

/** The alert's channels that have an address: a channel without one never fires (spec). */
function channelsWithAddress(alert: Pick<DueAlert, "channels" | "notify_email" | "notify_webhook">): AlertChannel[] {
  const channels = JSON.parse(alert.channels) as string[];
  return ALERT_CHANNELS.filter(
    (channel) => channels.includes(channel) && (channel === "email" ? !!alert.notify_email : !!alert.notify_webhook),
  );
}

/** Entries deleted per statement, and statements per run, so one run stays well inside its limits. */
const DELETE_CHUNK = 20_000;
const MAX_DELETE_ROUNDS = 50;

/** Deletes entries past their project's retention, and old counters and notification records. */
export async function purgeExpiredLogs(env: Env): Promise<{ entries: number }> {
  const at = nowMs();
  let entries = 0;
  for (let round = 0; round < MAX_DELETE_ROUNDS; round++) {
    const result = await env.DB.prepare(
      `DELETE FROM log_entries WHERE seq IN (
         SELECT e.seq FROM log_projects p
         JOIN log_entries e ON e.project_id = p.id AND e.created_at < ?1 - p.retention_days * ${DAY_MS}
         LIMIT ${DELETE_CHUNK})`,
    )
      .bind(at)
      .run();
    const deleted = result.meta.changes ?? 0;
    entries += deleted;
    if (deleted < DELETE_CHUNK) break;
  }
  const weekAgo = new Date(at - 7 * DAY_MS).toISOString();
  await env.DB.batch([
    env.DB.prepare("DELETE FROM log_daily_usage WHERE day < ?").bind(weekAgo.slice(0, 10)),
    env.DB.prepare("DELETE FROM log_alert_deliveries WHERE updated_at < ?").bind(new Date(at - 30 * DAY_MS).toISOString()),
  ]);
  return { entries };
}

/** The hourly cron job. */
export async function cleanUpLogs(env: Env): Promise<void> {
  await purgeExpiredLogs(env);
}
