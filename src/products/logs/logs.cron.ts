// Scheduled work of the Logs product.
// - Every minute: the alert check, fanned out. The cron run only pages through the log projects
//   that have enabled alerts (by id, from a random start, wrapping round, bounded per run) and
//   queues them in groups on `log-alert-checks`, with the run's instant. Each queue message asks
//   those projects' stores for their counts (one RPC per project, counting once per distinct
//   (level, window) through the store's (level, ts) index), then claims the firings atomically in
//   D1 (sets last_triggered_at and records a firing; overlapping or repeated checks cannot fire an
//   alert twice), resolves open firings whose count fell back under the threshold (claimed the
//   same way), and queues the notifications on `alert-notifications`, so a slow webhook never
//   holds a check up.
// - Hourly: old per-day counters, notification records and alert firings (90 days) in D1, and entries left in the former
//   D1 table (see logs.migrate.ts). Entries in the stores are purged by each store's own alarm.
import type { Env } from "../../env";
import { ALERT_CHANNELS, type AlertChannel } from "../../db/schema/logs";
import { nowMs } from "../../platform/clock";
import type { AlertNotification } from "./logs.consumer";
import { logStore } from "./logs.store";

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** Queue.sendBatch takes at most 100 messages. */
const SEND_BATCH = 100;

/** One message of the log-alert-checks queue: projects to check as of `at` (ms). */
export interface AlertCheck {
  at: number;
  project_ids: string[];
}

interface DueAlert {
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

/** Projects looked up per statement of the cron run. */
export const PROJECT_PAGE = 1_000;
/** Pages per run: at most 20,000 projects a minute; past that a run starts where chance puts it. */
export const PROJECT_MAX_PAGES = 20;
/** Projects per queue message: one message makes this many store RPCs, in parallel. */
export const PROJECTS_PER_CHECK = 50;

export interface AlertRunOptions {
  pageSize?: number;
  maxPages?: number;
  /** Where the run starts in the project id order (default: a random id, so that when there are more projects than one run reaches, each gets its turn). */
  start?: string;
}

/**
 * The every-minute run: queues every project with an enabled alert for a check as of now. Bounded:
 * projects are taken in pages by id, from `start` to the end and then from the beginning back to
 * `start`, at most `maxPages` pages. Returns the messages queued.
 */
export async function scheduleAlertChecks(env: Env, options: AlertRunOptions = {}): Promise<AlertCheck[]> {
  const at = nowMs();
  const pageSize = options.pageSize ?? PROJECT_PAGE;
  let pagesLeft = options.maxPages ?? PROJECT_MAX_PAGES;
  const start = options.start ?? crypto.randomUUID();
  const projects: string[] = [];
  // Two segments of the id order: (start, end], then [beginning, start].
  for (const [after, until] of [
    [start, null],
    ["", start],
  ] as const) {
    let cursor = after;
    while (pagesLeft > 0) {
      pagesLeft--;
      const { results } = await env.DB.prepare(
        "SELECT DISTINCT project_id FROM log_alerts WHERE enabled = 1 AND project_id > ?1 AND (?2 IS NULL OR project_id <= ?2) ORDER BY project_id LIMIT ?3",
      )
        .bind(cursor, until, pageSize)
        .all<{ project_id: string }>();
      projects.push(...results.map((row) => row.project_id));
      if (results.length < pageSize) break;
      cursor = results[results.length - 1].project_id;
    }
  }
  const checks: AlertCheck[] = [];
  for (let i = 0; i < projects.length; i += PROJECTS_PER_CHECK) checks.push({ at, project_ids: projects.slice(i, i + PROJECTS_PER_CHECK) });
  for (let i = 0; i < checks.length; i += SEND_BATCH) {
    await env.ALERT_CHECK_QUEUE.sendBatch(checks.slice(i, i + SEND_BATCH).map((body) => ({ body })));
  }
  return checks;
}

/**
 * Checks every enabled alert of the given projects as of `at`:
 * - fires an alert whose count of entries at its level in (at - window, at] reached its threshold,
 *   unless it fired less than window_minutes before `at` (a new firing row; an open firing of the
 *   same alert is closed by it, without a notification);
 * - resolves an alert's open firing when that count is back under the threshold (one "resolved"
 *   notification per channel).
 * Returns the ids fired. Throws (after doing what it could) when a project's store did not answer,
 * so the message is retried; the claims keep a retry from firing or resolving anything twice.
 */
export async function checkProjects(env: Env, at: number, projectIds: string[]): Promise<string[]> {
  return (await checkAlerts(env, at, projectIds)).fired;
}

/** checkProjects, with the firings it resolved too. */
export async function checkAlerts(env: Env, at: number, projectIds: string[]): Promise<{ fired: string[]; resolved: string[] }> {
  // Due alerts, and alerts with an open firing (served by the partial index on open firings).
  const { results: alerts } = await env.DB.prepare(
    `SELECT a.id, a.team_id, a.project_id, a.level, a.threshold, a.window_minutes, a.channels, a.notify_email, a.notify_webhook, a.last_triggered_at,
       (SELECT json_group_array(json_array(f.id, f.fired_at)) FROM log_alert_firings f WHERE f.alert_id = a.id AND f.resolved_at IS NULL) AS open_firings
     FROM log_alerts a WHERE a.project_id IN (SELECT value FROM json_each(?2)) AND a.enabled = 1
       AND ((a.last_triggered_at IS NULL OR a.last_triggered_at <= ?1 - a.window_minutes * ${MINUTE_MS})
         OR EXISTS (SELECT 1 FROM log_alert_firings f WHERE f.alert_id = a.id AND f.resolved_at IS NULL))`,
  )
    .bind(at, JSON.stringify(projectIds))
    .all<DueAlert & { open_firings: string }>();
  if (alerts.length === 0) return { fired: [], resolved: [] };

  const byProject = new Map<string, DueAlert[]>();
  for (const alert of alerts) byProject.set(alert.project_id, [...(byProject.get(alert.project_id) ?? []), alert]);
  const counted = await Promise.allSettled(
    [...byProject].map(async ([projectId, projectAlerts]) => {
      const windows = [...new Set(projectAlerts.map((a) => `${a.level}|${a.window_minutes}`))];
      const counts = await logStore(env, projectId).countLevels(
        windows.map((key) => {
          const [level, minutes] = key.split("|");
          return { level, from: at - Number(minutes) * MINUTE_MS, to: at };
        }),
      );
      const countOf = new Map(windows.map((key, i) => [key, counts[i]]));
      return projectAlerts.map((alert) => ({ alert, n: countOf.get(`${alert.level}|${alert.window_minutes}`) ?? 0 }));
    }),
  );
  const results = counted.flatMap((result) => (result.status === "fulfilled" ? result.value : []));
  const due = (alert: DueAlert) => alert.last_triggered_at === null || alert.last_triggered_at <= at - alert.window_minutes * MINUTE_MS;
  const hits = results.filter(({ alert, n }) => n >= alert.threshold && due(alert));
  const calm: { alert: DueAlert; n: number; firingId: string; firedAt: number }[] = [];
  for (const { alert, n } of results) {
    if (n >= alert.threshold) continue;
    for (const [firingId, firedAt] of JSON.parse((alert as DueAlert & { open_firings: string }).open_firings) as [string, number][]) {
      if (firedAt < at) calm.push({ alert, n, firingId, firedAt });
    }
  }
  const fired = hits.length > 0 ? await fire(env, at, hits) : [];
  const resolved = calm.length > 0 ? await resolve(env, at, calm) : [];
  const failed = counted.filter((result) => result.status === "rejected");
  if (failed.length > 0) throw new Error(`log alert check: ${failed.length} store(s) did not answer: ${String((failed[0] as PromiseRejectedResult).reason)}`);
  return { fired, resolved };
}

/**
 * Claims the firings of alerts over their threshold, records them, and queues their notifications.
 * One D1 batch (one transaction): the claim sets last_triggered_at under the cool-down condition (a
 * run that lost the race claims nothing), the alerts claimed at `at` close their open firing, and
 * get a firing row; (alert_id, fired_at) is unique, so a run that lost the race at the same instant
 * records nothing either.
 */
async function fire(env: Env, at: number, hits: { alert: DueAlert; n: number }[]): Promise<string[]> {
  const planned = hits.map(({ alert, n }) => ({ alert, n, firingId: crypto.randomUUID() }));
  const ids = JSON.stringify(hits.map(({ alert }) => alert.id));
  const [claim] = await env.DB.batch<{ id: string }>([
    env.DB.prepare(
      `UPDATE log_alerts SET last_triggered_at = ?1
       WHERE id IN (SELECT value FROM json_each(?2)) AND enabled = 1
         AND (last_triggered_at IS NULL OR last_triggered_at <= ?1 - window_minutes * ${MINUTE_MS})
       RETURNING id`,
    ).bind(at, ids),
    env.DB.prepare(
      `UPDATE log_alert_firings SET resolved_at = ?1
       WHERE resolved_at IS NULL AND fired_at < ?1
         AND alert_id IN (SELECT id FROM log_alerts WHERE id IN (SELECT value FROM json_each(?2)) AND last_triggered_at = ?1)`,
    ).bind(at, ids),
    env.DB.prepare(
      `INSERT OR IGNORE INTO log_alert_firings (id, alert_id, team_id, project_id, fired_at, count)
       SELECT value->>0, a.id, a.team_id, a.project_id, ?1, value->>2
       FROM json_each(?2) JOIN log_alerts a ON a.id = value->>1 WHERE a.last_triggered_at = ?1`,
    ).bind(at, JSON.stringify(planned.map(({ alert, n, firingId }) => [firingId, alert.id, n]))),
  ]);
  const claimedIds = new Set(claim.results.map((row) => row.id));
  const fired = planned.filter(({ alert }) => claimedIds.has(alert.id));

  const messages: { body: AlertNotification }[] = [];
  for (const { alert, n, firingId } of fired) {
    for (const channel of channelsWithAddress(alert)) {
      messages.push({
        body: {
          firing_id: firingId,
          alert_id: alert.id,
          team_id: alert.team_id,
          channel,
          count: n,
          window_start: new Date(at - alert.window_minutes * MINUTE_MS).toISOString(),
          triggered_at: new Date(at).toISOString(),
        },
      });
    }
  }
  try {
    for (let i = 0; i < messages.length; i += SEND_BATCH) await env.ALERT_QUEUE.sendBatch(messages.slice(i, i + SEND_BATCH));
  } catch (error) {
    // Nothing was announced for these firings: give the claims back (and the firing rows, and the
    // firings they closed reopen) so the next run tries again.
    const firingIds = JSON.stringify(fired.map(({ firingId }) => firingId));
    const alertIds = JSON.stringify(fired.map(({ alert }) => alert.id));
    await env.DB.batch([
      env.DB.prepare(
        `UPDATE log_alerts SET last_triggered_at = (SELECT value->>1 FROM json_each(?2) WHERE value->>0 = log_alerts.id)
         WHERE id IN (SELECT value->>0 FROM json_each(?2)) AND last_triggered_at = ?1`,
      ).bind(at, JSON.stringify(fired.map(({ alert }) => [alert.id, alert.last_triggered_at]))),
      env.DB.prepare("DELETE FROM log_alert_firings WHERE id IN (SELECT value FROM json_each(?1))").bind(firingIds),
      env.DB.prepare(
        `UPDATE log_alert_firings SET resolved_at = NULL
         WHERE alert_id IN (SELECT value FROM json_each(?2)) AND resolved_at = ?1 AND fired_at < ?1`,
      ).bind(at, alertIds),
    ]);
    throw error;
  }
  return fired.map(({ alert }) => alert.id);
}

/**
 * Resolves open firings whose alert's count is back under the threshold: the claim (resolved_at
 * set only where it is still null) lets one of two overlapping checks resolve, and the other
 * nothing. Queues one "resolved" notification per channel; if the queue refuses them, the claims
 * are given back so the next run tries again. Returns the firing ids resolved.
 */
async function resolve(env: Env, at: number, calm: { alert: DueAlert; n: number; firingId: string; firedAt: number }[]): Promise<string[]> {
  const { results: claimed } = await env.DB.prepare(
    `UPDATE log_alert_firings SET resolved_at = ?1
     WHERE id IN (SELECT value FROM json_each(?2)) AND resolved_at IS NULL
     RETURNING id`,
  )
    .bind(at, JSON.stringify(calm.map(({ firingId }) => firingId)))
    .all<{ id: string }>();
  const claimedIds = new Set(claimed.map((row) => row.id));
  const resolved = calm.filter(({ firingId }) => claimedIds.has(firingId));

  const messages: { body: AlertNotification }[] = [];
  for (const { alert, n, firingId, firedAt } of resolved) {
    for (const channel of channelsWithAddress(alert)) {
      messages.push({
        body: {
          kind: "resolved",
          firing_id: firingId,
          alert_id: alert.id,
          team_id: alert.team_id,
          channel,
          count: n,
          window_start: new Date(at - alert.window_minutes * MINUTE_MS).toISOString(),
          triggered_at: new Date(firedAt).toISOString(),
          resolved_at: new Date(at).toISOString(),
        },
      });
    }
  }
  try {
    for (let i = 0; i < messages.length; i += SEND_BATCH) await env.ALERT_QUEUE.sendBatch(messages.slice(i, i + SEND_BATCH));
  } catch (error) {
    await env.DB.prepare("UPDATE log_alert_firings SET resolved_at = NULL WHERE id IN (SELECT value FROM json_each(?2)) AND resolved_at = ?1")
      .bind(at, JSON.stringify(resolved.map(({ firingId }) => firingId)))
      .run();
    throw error;
  }
  return resolved.map(({ firingId }) => firingId);
}

/** Consumer of the log-alert-checks queue: each message checks its projects; a failed check is retried. */
export async function consumeAlertChecks(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      const check = message.body as AlertCheck;
      try {
        await checkProjects(env, check.at, check.project_ids);
        message.ack();
      } catch (error) {
        console.error(JSON.stringify({ msg: "log alert check failed", attempts: message.attempts, error: String(error) }));
        message.retry({ delaySeconds: 10 });
      }
    }),
  );
}

/** The every-minute cron job. */
export async function checkLogAlerts(env: Env): Promise<void> {
  await scheduleAlertChecks(env);
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

/** Days an alert firing is kept, and the bounded steps of its clean-up. */
export const FIRING_RETENTION_DAYS = 90;
const FIRING_CHUNK = 5_000;
const MAX_FIRING_ROUNDS = 20;

/**
 * Deletes old counters, notification records and alert firings, and entries of the former D1 table past their
 * project's retention (rows an operator has not migrated yet must not outlive their retention).
 */
export async function purgeExpiredLogs(env: Env): Promise<{ entries: number; firings: number }> {
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
  // Firing history: 90 days, oldest first, in bounded steps (the next run continues).
  let firings = 0;
  for (let round = 0; round < MAX_FIRING_ROUNDS; round++) {
    const result = await env.DB.prepare(
      "DELETE FROM log_alert_firings WHERE id IN (SELECT id FROM log_alert_firings WHERE fired_at < ?1 ORDER BY fired_at LIMIT ?2)",
    )
      .bind(at - FIRING_RETENTION_DAYS * DAY_MS, FIRING_CHUNK)
      .run();
    const deleted = result.meta.changes ?? 0;
    firings += deleted;
    if (deleted < FIRING_CHUNK) break;
  }
  return { entries, firings };
}

/** The hourly cron job. */
export async function cleanUpLogs(env: Env): Promise<void> {
  await purgeExpiredLogs(env);
}
