// Hourly sweep of survey webhook deliveries whose queue message was lost: the completion commits
// the delivery rows, then sends their messages; if that send fails (or a message is dropped after
// the queue's own retries), the row would stay `pending` forever.
//
// A row is stale when it is pending, unlocked, and no message was due for it in the last
// SWEEP_STALE_MS (`next_attempt_at`: its creation, its next retry, or its last sweep). The sweep
// gives each stale row a new queue token and sends a message carrying it, in one conditional
// UPDATE ... RETURNING per batch, so overlapping sweeps never re-queue a row twice. If the old
// message was only late, it now carries a superseded token and the consumer acknowledges it
// without sending: the receiver still gets the delivery exactly once.
import { sendAll } from "../../platform/jobs/queues";
import type { Env } from "../../env";
import { nowMs } from "../../platform/clock";
import { defineCron } from "../../platform/jobs/cron";
import { cutoffIso, deleteInSteps, DELIVERY_LOG_RETENTION_DAYS } from "../../platform/retention";
import { failExhaustedDeliveries, requeueStaleDeliveries } from "./survey-deliveries.queries";
import { MAX_DELIVERY_ATTEMPTS, type SurveyWebhookMessage } from "./surveys.consumer";

/** A pending delivery without an attempt due for this long is re-queued. */
export const SWEEP_STALE_MS = 5 * 60_000;
/** Rows re-queued per statement and per sendBatch (the queue's batch limit). */
export const SWEEP_BATCH_SIZE = 100;
/** Batches per run: at most 1,000 re-queued deliveries an hour; the rest wait for the next run. */
export const SWEEP_MAX_BATCHES = 10;

export interface SweepResult {
  requeued: number;
  failed: number;
}

export async function sweepSurveyDeliveries(env: Env): Promise<SweepResult> {
  const now = nowMs();
  const cutoff = new Date(now - SWEEP_STALE_MS).toISOString();
  const at = new Date(now).toISOString();
  // A stale row that already used every attempt (its last attempt died mid-way) is settled, not retried.
  const exhausted = await failExhaustedDeliveries(env.DB, cutoff, at, MAX_DELIVERY_ATTEMPTS).run();
  const result: SweepResult = { requeued: 0, failed: exhausted.meta.changes ?? 0 };

  for (let batch = 0; batch < SWEEP_MAX_BATCHES; batch++) {
    const { results } = await requeueStaleDeliveries(env.DB, cutoff, at, MAX_DELIVERY_ATTEMPTS, SWEEP_BATCH_SIZE).all<{ id: string; queue_token: string }>();
    if (results.length === 0) break;
    // If this send fails too, the rows keep their new token and become stale again after
    // SWEEP_STALE_MS: the next run sends them.
    await sendAll(env.SURVEY_QUEUE, results.map((r): SurveyWebhookMessage => ({ delivery_id: r.id, token: r.queue_token })));
    result.requeued += results.length;
    if (results.length < SWEEP_BATCH_SIZE) break;
  }
  if (result.requeued || result.failed) console.log(JSON.stringify({ msg: "survey deliveries swept", ...result }));
  return result;
}

/** Hourly: survey webhook deliveries whose queue message was lost are queued again. */
export const surveyDeliveriesSweepCron = defineCron({ name: "survey deliveries sweep", schedule: "hourly", run: sweepSurveyDeliveries });

/** Deletes finished survey webhook deliveries older than the retention period, in bounded steps. */
export async function surveyDeliveryRetention(env: Env): Promise<number> {
  return deleteInSteps(
    env.DB,
    "DELETE FROM survey_webhook_deliveries WHERE id IN (SELECT id FROM survey_webhook_deliveries WHERE created_at < ?1 AND status <> 'pending' LIMIT ?2)",
    [cutoffIso(nowMs(), DELIVERY_LOG_RETENTION_DAYS)],
  );
}

/** Hourly: the survey webhook delivery retention. */
export const surveyDeliveriesRetentionCron = defineCron({ name: "survey deliveries retention", schedule: "hourly", run: surveyDeliveryRetention });
