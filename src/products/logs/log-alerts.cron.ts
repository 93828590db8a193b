// The every-minute alert check of the Logs product, fanned out. The cron run only pages through
// the log projects that have enabled alerts (by id, from a random start, wrapping round, bounded
// per run) and queues them in groups on `log-alert-checks`, with the run's instant. Each queue
// message (consumed in logs.consumer.ts) asks those projects' stores for their counts (one RPC per project, counting once per
// distinct (level, window) through the store's (level, ts) index), then claims the firings
// atomically in D1 (sets last_triggered_at and records a firing; overlapping or repeated checks
// cannot fire an alert twice), resolves open firings whose count fell back under the threshold
// (claimed the same way), and queues the notifications on `alert-notifications`, so a slow webhook
// never holds a check up. The statements are in logs.queries.ts.
import { and, asc, eq, gt, lte } from "drizzle-orm";
import { getDb } from "../../db/client";
import type { Env } from "../../env";
import { ALERT_CHANNELS, logAlerts, type AlertChannel } from "../../db/schema/logs";
import { nowMs } from "../../platform/clock";
import { defineCron } from "../../platform/jobs/cron";
import { sendAll } from "../../platform/jobs/queues";
import { PROJECTS_PER_CHECK, type AlertCheck, type AlertNotification } from "./logs.messages";
import { claimFirings, claimResolves, releaseFirings, releaseResolves, selectAlertsToCheck, type DueAlert } from "./logs.queries";
import { logStore } from "./logs.store";

const MINUTE_MS = 60_000;

/** Projects looked up per statement of the cron run. */
export const PROJECT_PAGE = 1_000;
/** Pages per run: at most 20,000 projects a minute; past that a run starts where chance puts it. */
export const PROJECT_MAX_PAGES = 20;

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
  const db = getDb(env.DB);
  const projects: string[] = [];
  // Two segments of the id order: (start, end], then [beginning, start].
  for (const [after, until] of [
    [start, null],
    ["", start],
  ] as const) {
    let cursor = after;
    while (pagesLeft > 0) {
      pagesLeft--;
      const results = await db
        .selectDistinct({ project_id: logAlerts.projectId })
        .from(logAlerts)
        .where(and(eq(logAlerts.enabled, true), gt(logAlerts.projectId, cursor), until === null ? undefined : lte(logAlerts.projectId, until)))
        .orderBy(asc(logAlerts.projectId))
        .limit(pageSize);
      projects.push(...results.map((row) => row.project_id));
      if (results.length < pageSize) break;
      cursor = results[results.length - 1].project_id;
    }
  }
  const checks: AlertCheck[] = [];
  for (let i = 0; i < projects.length; i += PROJECTS_PER_CHECK) checks.push({ at, project_ids: projects.slice(i, i + PROJECTS_PER_CHECK) });
  await sendAll(env.ALERT_CHECK_QUEUE, checks);
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
  const alerts = await selectAlertsToCheck(env.DB, at, projectIds);
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
  const [claim] = await env.DB.batch<{ id: string }>(
    claimFirings(
      env.DB,
      at,
      hits.map(({ alert }) => alert.id),
      planned.map(({ alert, n, firingId }) => [firingId, alert.id, n]),
    ),
  );
  const claimedIds = new Set(claim.results.map((row) => row.id));
  const fired = planned.filter(({ alert }) => claimedIds.has(alert.id));

  const messages = fired.flatMap(({ alert, n, firingId }) =>
    notifications(alert, at, { firing_id: firingId, count: n, triggered_at: new Date(at).toISOString() }),
  );
  try {
    await sendAll(env.ALERT_QUEUE, messages);
  } catch (error) {
    // Nothing was announced for these firings: give the claims back (and the firing rows, and the
    // firings they closed reopen) so the next run tries again.
    await env.DB.batch(
      releaseFirings(
        env.DB,
        at,
        fired.map(({ alert }) => [alert.id, alert.last_triggered_at]),
        fired.map(({ firingId }) => firingId),
        fired.map(({ alert }) => alert.id),
      ),
    );
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
  const claimedIds = new Set(
    await claimResolves(
      env.DB,
      at,
      calm.map(({ firingId }) => firingId),
    ),
  );
  const resolved = calm.filter(({ firingId }) => claimedIds.has(firingId));

  const messages = resolved.flatMap(({ alert, n, firingId, firedAt }) =>
    notifications(alert, at, {
      kind: "resolved",
      firing_id: firingId,
      count: n,
      triggered_at: new Date(firedAt).toISOString(),
      resolved_at: new Date(at).toISOString(),
    }),
  );
  try {
    await sendAll(env.ALERT_QUEUE, messages);
  } catch (error) {
    await releaseResolves(
      env.DB,
      at,
      resolved.map(({ firingId }) => firingId),
    );
    throw error;
  }
  return resolved.map(({ firingId }) => firingId);
}

/** One notification per channel of the alert that has an address, about the window ending at `at`. */
function notifications(
  alert: DueAlert,
  at: number,
  about: Pick<AlertNotification, "kind" | "firing_id" | "count" | "triggered_at" | "resolved_at">,
): AlertNotification[] {
  return channelsWithAddress(alert).map((channel) => ({
    ...about,
    alert_id: alert.id,
    team_id: alert.team_id,
    channel,
    window_start: new Date(at - alert.window_minutes * MINUTE_MS).toISOString(),
  }));
}

/** Every minute: every project with an enabled alert is queued for a check. */
export const alertChecksCron = defineCron({ name: "log alert checks", schedule: "everyMinute", run: (env) => scheduleAlertChecks(env) });

/** The alert's channels that have an address: a channel without one never fires (spec). */
function channelsWithAddress(alert: Pick<DueAlert, "channels" | "notify_email" | "notify_webhook">): AlertChannel[] {
  const channels = JSON.parse(alert.channels) as string[];
  return ALERT_CHANNELS.filter((channel) => channels.includes(channel) && (channel === "email" ? !!alert.notify_email : !!alert.notify_webhook));
}
