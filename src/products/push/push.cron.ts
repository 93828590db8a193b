// Hourly sweep of push work whose queue message was lost. Accepting a notification, each fan-out
// step and each send end with a queue send; if that send fails for good (or a message is dropped
// after the queue's own retries), the notification would stay `queued`/`sending` forever.
//
// (a) Fan-outs: a notification whose fan-out is unfinished and did not progress for SWEEP_STUCK_MS
//     (`fanout_at`: its creation, the last step that queued the next one, or its last sweep) gets
//     a new fanout_token and fanout_at = now in one conditional UPDATE ... RETURNING, and a
//     `fanout` message carrying that token resumes after the last subscriber that has a delivery
//     row. A late original message carries the old token and does nothing, so there is never a
//     second chain; a step that had written rows without queuing their sends is covered by (b).
// (b) Deliveries (a declared sweep, platform/jobs/sweep.ts): a row still queued or retrying whose
//     `next_attempt_at` (its fan-out, its retry, or its last sweep) is more than SWEEP_STUCK_MS
//     ago, or sending under a lease (its end is the row's next_attempt_at) that ended that long
//     ago, gets next_attempt_at = now in one conditional UPDATE ... RETURNING, and is put in
//     ordinary `send` messages. No token is needed: the consumer claims a row (queued/retrying, or a claim older
//     than STALE_CLAIM_MS, -> sending) with one conditional UPDATE before sending, so whichever of
//     the swept message and a late original comes first sends, and the other finds the row claimed
//     or finished and sends nothing.
//
// Both UPDATEs move the rows they pick out of the stale set, so overlapping runs do not re-queue a
// row twice. If the queue send of a run fails, the rows become stale again SWEEP_STUCK_MS later and
// the next run sends them.
import { sendAll } from "../../platform/jobs/queues";
import { declareSweep, sweep } from "../../platform/jobs/sweep";
import type { Env } from "../../env";
import { pushDeliveries } from "../../db/schema";
import { nowMs } from "../../platform/clock";
import { defineCron } from "../../platform/jobs/cron";
import { cutoffIso, deleteInSteps, DELIVERY_LOG_RETENTION_DAYS } from "../../platform/retention";
import { SEND_CHUNK, type PushQueueMessage } from "./push.consumer";
import { restartStalledFanouts } from "./push.queries";

/** Work that should have moved this long ago and did not has lost its queue message. */
export const SWEEP_STUCK_MS = 15 * 60_000;
/** Fan-outs restarted per run (one statement, one sendBatch). */
export const SWEEP_MAX_FANOUTS = 100;
/** Delivery rows re-queued per statement. */
export const SWEEP_BATCH_ROWS = 200;
/** Statements per run: at most 1,000 delivery rows an hour; the rest wait for the next run. */
export const SWEEP_MAX_BATCHES = 5;

export interface PushSweepResult {
  fanouts: number;
  deliveries: number;
}


/** (a) Restarts stalled fan-outs, oldest first. Returns how many were re-queued. */
export async function sweepPushFanouts(env: Env): Promise<number> {
  const now = nowMs();
  const { results } = await restartStalledFanouts(env.DB, new Date(now).toISOString(), new Date(now - SWEEP_STUCK_MS).toISOString(), SWEEP_MAX_FANOUTS).all<{
    id: string;
    fanout_token: string;
    resume_after: string | null;
  }>();
  await sendAll(
    env.PUSH_QUEUE,
    results.map((r): PushQueueMessage => ({ kind: "fanout", notification_id: r.id, after: r.resume_after, token: r.fanout_token })),
  );
  return results.length;
}

/** (b) Delivery rows long past due, oldest first, put in `send` messages of one notification each. */
const lostDeliveries = declareSweep({
  name: "push",
  table: pushDeliveries,
  key: { notificationId: pushDeliveries.notificationId, subscriberId: pushDeliveries.subscriberId },
  waiting: ["queued", "retrying"],
  due: pushDeliveries.nextAttemptAt,
  staleMs: SWEEP_STUCK_MS,
  inFlight: { status: "sending", afterMs: SWEEP_STUCK_MS },
  limit: SWEEP_BATCH_ROWS * SWEEP_MAX_BATCHES,
  batch: SWEEP_BATCH_ROWS,
  mark: (at) => ({ nextAttemptAt: new Date(at).toISOString() }),
  queue: (env) => env.PUSH_QUEUE,
  messages: (rows) => {
    const byNotification = new Map<string, string[]>();
    for (const row of rows) {
      const ids = byNotification.get(row.notificationId) ?? [];
      ids.push(row.subscriberId);
      byNotification.set(row.notificationId, ids);
    }
    const messages: PushQueueMessage[] = [];
    for (const [notificationId, ids] of byNotification) {
      ids.sort();
      for (let i = 0; i < ids.length; i += SEND_CHUNK) messages.push({ kind: "send", notification_id: notificationId, subscriber_ids: ids.slice(i, i + SEND_CHUNK) });
    }
    return messages;
  },
});

/** (b) Re-queues pending delivery rows long past due, oldest first. Returns how many rows were re-queued. */
export async function sweepPushDeliveries(env: Env): Promise<number> {
  return (await sweep(env, lostDeliveries)).requeued;
}

/**
 * The hourly job: both sweeps, each run even if the other fails (the first error is thrown after
 * both, for the cron runner to log).
 */
export async function sweepPush(env: Env): Promise<PushSweepResult> {
  const [fanouts, deliveries] = await Promise.allSettled([sweepPushFanouts(env), sweepPushDeliveries(env)]);
  const result: PushSweepResult = {
    fanouts: fanouts.status === "fulfilled" ? fanouts.value : 0,
    deliveries: deliveries.status === "fulfilled" ? deliveries.value : 0,
  };
  if (result.fanouts || result.deliveries) console.log(JSON.stringify({ msg: "push: re-queued work whose queue message was lost", ...result }));
  for (const outcome of [fanouts, deliveries]) if (outcome.status === "rejected") throw outcome.reason;
  return result;
}

/** Hourly: push work whose queue message was lost is queued again. */
export const pushSweepCron = defineCron({ name: "push sweep", schedule: "hourly", run: sweepPush });

/**
 * Deletes notifications older than the retention period with their per-subscriber delivery rows
 * (foreign-key cascade), in bounded steps. A delivery still retrying after that long is long dead.
 */
export async function pushRetention(env: Env): Promise<number> {
  return deleteInSteps(
    env.DB,
    "DELETE FROM push_notifications WHERE id IN (SELECT id FROM push_notifications WHERE created_at < ?1 LIMIT ?2)",
    [cutoffIso(nowMs(), DELIVERY_LOG_RETENTION_DAYS)],
  );
}

/** Hourly: the push retention. */
export const pushRetentionCron = defineCron({ name: "push retention", schedule: "hourly", run: pushRetention });
