// Scheduled work of the Logs product.
// - Every minute: the alert check, fanned out. The cron run only pages through the log projects
//   that have enabled alerts (by id, from a random start, wrapping round, bounded per run) and
//   queues them in groups on `log-alert-checks`, with the run's instant. Each queue message asks
//   those projects' stores for their counts (one RPC per project, counting once per distinct
//   (level, window) through the store's (level, ts) index), then claims the firings atomically in
//   D1 (sets last_triggered_at; overlapping or repeated checks cannot fire an alert twice) and
//   queues the notifications on `alert-notifications`, so a slow webhook never holds a check up.
// - Hourly: old per-day counters and notification records in D1, and entries left in the former
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
 * Fires every enabled alert of the given projects whose count of entries at its level in
 * (at - window, at] reached its threshold, unless it fired less than window_minutes before `at`.
 * Returns the ids fired. Throws (after firing what it could) when a project's store did not answer,
 * so the message is retried; the claims keep a retry from firing anything twice.
 */
export async function checkProjects(env: Env, at: number, projectIds: string[]): Promise<string[]> {
  const { results: alerts } = await env.DB.prepare(
    `SELECT id, team_id, project_id, level, threshold, window_minutes, channels, notify_email, notify_webhook, last_triggered_at
     FROM log_alerts WHERE project_id IN (SELECT value FROM json_each(?2)) AND enabled = 1
       AND (last_triggered_at IS NULL OR last_triggered_at <= ?1 - window_minutes * ${MINUTE_MS})`,
  )
    .bind(at, JSON.stringify(projectIds))
    .all<DueAlert>();
  if (alerts.length === 0) return [];

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
  const hits = counted.flatMap((result) => (result.status === "fulfilled" ? result.value.filter(({ alert, n }) => n >= alert.threshold) : []));
  const fired = hits.length > 0 ? await fire(env, at, hits) : [];
  const failed = counted.filter((result) => result.status === "rejected");
  if (failed.length > 0) throw new Error(`log alert check: ${failed.length} store(s) did not answer: ${String((failed[0] as PromiseRejectedResult).reason)}`);
  return fired;
}

/** Claims the firings of alerts over their threshold and queues their notifications. */
async function fire(env: Env, at: number, hits: { alert: DueAlert; n: number }[]): Promise<string[]> {
  // The claim repeats the cool-down condition: a run that lost the race claims nothing.
  const { results: claimed } = await env.DB.prepare(
    `UPDATE log_alerts SET last_triggered_at = ?1
     WHERE id IN (SELECT value FROM json_each(?2)) AND enabled = 1
       AND (last_triggered_at IS NULL OR last_triggered_at <= ?1 - window_minutes * ${MINUTE_MS})
     RETURNING id`,
  )
    .bind(at, JSON.stringify(hits.map(({ alert }) => alert.id)))
    .all<{ id: string }>();
  const claimedIds = new Set(claimed.map((row) => row.id));
  const fired = hits.filter(({ alert }) => claimedIds.has(alert.id));

  const messages: { body: AlertNotification }[] = [];
  for (const { alert, n } of fired) {
    const firingId = crypto.randomUUID();
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
    // Nothing was announced for these firings: give the claims back so the next run tries again.
    await env.DB.prepare(
      `UPDATE log_alerts SET last_triggered_at = (SELECT value->>1 FROM json_each(?2) WHERE value->>0 = log_alerts.id)
       WHERE id IN (SELECT value->>0 FROM json_each(?2)) AND last_triggered_at = ?1`,
    )
      .bind(at, JSON.stringify(fired.map(({ alert }) => [alert.id, alert.last_triggered_at])))
      .run();
    throw error;
  }
  return fired.map(({ alert }) => alert.id);
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

/**
 * Deletes old counters and notification records, and entries of the former D1 table past their
 * project's retention (rows an operator has not migrated yet must not outlive their retention).
 */
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
