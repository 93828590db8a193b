// The sweep (every minute) of push fan-outs whose queue message was lost. Accepting a notification
// (platform/jobs/accept.ts) and each fan-out step end with a queue send; if that send fails (the
// accept then logs it and answers 202) or a message is dropped after the queue's own retries, the
// notification would stay `queued` forever.
//
// A notification whose fan-out is unfinished and did not progress for SWEEP_STUCK_MS (`fanout_at`:
// its creation, the last step that queued the next one, or its last sweep), or that never started
// for UNSTARTED_STUCK_MS (`fanout_at` still its creation: its first message was never sent), gets a new fanout_token
// and fanout_at = now in one conditional UPDATE ... RETURNING, and a `fanout` message carrying that
// token resumes after the last subscriber that has a delivery row (the app's store says which: one
// call per app). A late original message carries the old token and does nothing, so there is never
// a second chain. The UPDATE moves the rows it picks out of the stale set, so overlapping runs do
// not re-queue one twice; if the run's queue send fails, they are stale again SWEEP_STUCK_MS later.
//
// Deliveries whose `send` message was lost are swept by each app's store on its alarm
// (store/push-store.ts takeStuck, requeueStuck), with the same 15 minutes; delivery retention is
// the store's too. The hourly retention here deletes D1's notification rows past the same period.
import { log } from "../../platform/log";
import { sendAll } from "../../platform/jobs/queues";
import type { Env } from "../../env";
import { nowMs } from "../../platform/clock";
import { defineCron } from "../../platform/jobs/cron";
import { cutoffIso, deleteInSteps, DELIVERY_LOG_RETENTION_DAYS } from "../../platform/retention";
import type { PushQueueMessage } from "./push.consumer";
import { DELETE_OLD_NOTIFICATIONS, restartStalledFanouts } from "./push.queries";
import { pushStore } from "./push.store";
import { SWEEP_STUCK_MS } from "./store/push-store.upkeep";

export { SWEEP_STUCK_MS };

/**
 * A fan-out whose first message never came this long after its accept: restarted then, so with
 * the sweep every minute a notification whose enqueue failed starts at most about two minutes late.
 */
export const UNSTARTED_STUCK_MS = 60_000;

/** Fan-outs restarted per run (one statement, one sendBatch). */
export const SWEEP_MAX_FANOUTS = 100;

/** Restarts stalled fan-outs, oldest first. Returns how many were re-queued. */
export async function sweepPushFanouts(env: Env): Promise<number> {
  const now = nowMs();
  const { results } = await restartStalledFanouts(
    env.DB,
    new Date(now).toISOString(),
    new Date(now - SWEEP_STUCK_MS).toISOString(),
    SWEEP_MAX_FANOUTS,
    new Date(now - UNSTARTED_STUCK_MS).toISOString(),
  ).all<{
    id: string;
    app_id: string;
    fanout_token: string;
  }>();
  const byApp = new Map<string, string[]>();
  for (const r of results) {
    const ids = byApp.get(r.app_id) ?? [];
    ids.push(r.id);
    byApp.set(r.app_id, ids);
  }
  const resume: Record<string, string | null> = {};
  for (const progress of await Promise.all([...byApp].map(([appId, ids]) => pushStore(env, appId).progress(ids)))) Object.assign(resume, progress);
  await sendAll(
    env.PUSH_QUEUE,
    results.map((r): PushQueueMessage => ({ kind: "fanout", notification_id: r.id, after: resume[r.id] ?? null, token: r.fanout_token })),
  );
  if (results.length) log.info("push: re-queued fan-outs whose queue message was lost", { fanouts: results.length });
  return results.length;
}

/** Every minute: push fan-outs whose queue message was lost are queued again. */
export const pushSweepCron = defineCron({ name: "push sweep", schedule: "everyMinute", run: sweepPushFanouts });

/**
 * Deletes notification rows older than the retention period, in bounded steps (their delivery rows
 * go on the app store's alarm, by the same period). A delivery still retrying after that long is
 * long dead.
 */
export async function pushRetention(env: Env): Promise<number> {
  return deleteInSteps(env.DB, DELETE_OLD_NOTIFICATIONS, [cutoffIso(nowMs(), DELIVERY_LOG_RETENTION_DAYS)]);
}

/** Hourly: the push retention. */
export const pushRetentionCron = defineCron({ name: "push retention", schedule: "hourly", run: pushRetention });
