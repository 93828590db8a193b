// The sweep (every minute) of survey webhook deliveries whose queue message was lost: the
// completion commits the delivery rows, then sends their messages (the accept step,
// surveys.publish.ts); if that send fails (or a message is dropped after the queue's own retries),
// the row would stay `pending` forever.
//
// A row is stale when it is pending, unlocked, and no message was due for it in the last
// SWEEP_STALE_MS (`next_attempt_at`: its creation, its next retry, or its last sweep), or
// UNATTEMPTED_STALE_MS when it was never attempted. The sweep
// (declared below, run by platform/jobs/sweep.ts) gives each stale row a new queue token and
// sends a message carrying it, in one conditional UPDATE ... RETURNING per batch, so overlapping
// sweeps never re-queue a row twice. If the old message was only late, it now carries a
// superseded token and the consumer acknowledges it without sending: the receiver still gets the
// delivery exactly once. A stale row that already used every attempt (its last attempt died
// mid-way) is settled as failed, not retried.
import { sql } from "drizzle-orm";
import type { Env } from "../../env";
import { surveyWebhookDeliveries } from "../../db/schema/surveys";
import { nowMs } from "../../platform/clock";
import { defineCron } from "../../platform/jobs/cron";
import { declareSweep, sweep } from "../../platform/jobs/sweep";
import { cutoffIso, deleteInSteps, DELIVERY_LOG_RETENTION_DAYS } from "../../platform/retention";
import { DELETE_OLD_COMPLETION_KEYS, DELETE_OLD_DELIVERIES } from "./surveys.queries";
import { MAX_DELIVERY_ATTEMPTS, type SurveyWebhookMessage } from "./surveys.consumer";
import { COMPLETION_KEY_DAYS } from "./surveys.publish";

/** A pending delivery without an attempt due for this long is re-queued. */
export const SWEEP_STALE_MS = 5 * 60_000;
/**
 * Sooner for a delivery never attempted: its message was never sent (the accept step logged a
 * refused send). With the sweep every minute, it is queued again about two minutes after at most.
 */
export const UNATTEMPTED_STALE_MS = 60_000;
/** Rows re-queued per statement and per sendBatch (the queue's batch limit). */
export const SWEEP_BATCH_SIZE = 100;
/** Batches per run: at most 1,000 re-queued deliveries a run; the rest wait for the next run. */
export const SWEEP_MAX_BATCHES = 10;

export interface SweepResult {
  requeued: number;
  failed: number;
}

const lostDeliveries = declareSweep({
  name: "survey deliveries",
  table: surveyWebhookDeliveries,
  key: { id: surveyWebhookDeliveries.id, queueToken: surveyWebhookDeliveries.queueToken },
  waiting: ["pending"],
  due: sql`coalesce(${surveyWebhookDeliveries.nextAttemptAt}, ${surveyWebhookDeliveries.createdAt})`,
  staleMs: SWEEP_STALE_MS,
  unattemptedMs: UNATTEMPTED_STALE_MS,
  limit: SWEEP_BATCH_SIZE * SWEEP_MAX_BATCHES,
  batch: SWEEP_BATCH_SIZE,
  // If the send fails, the rows keep their new token and become stale again after SWEEP_STALE_MS:
  // the next run sends them (the error is thrown for the cron runner to log).
  mark: (at) => ({ queueToken: sql`lower(hex(randomblob(16)))`, nextAttemptAt: new Date(at).toISOString() }),
  exhausted: { maxAttempts: MAX_DELIVERY_ATTEMPTS, set: { status: "failed", lastError: "no attempt left after the queue message was lost" } },
  queue: (env) => env.SURVEY_QUEUE,
  messages: (rows) => rows.map((row): SurveyWebhookMessage => ({ delivery_id: row.id, token: row.queueToken ?? undefined })),
});

export async function sweepSurveyDeliveries(env: Env): Promise<SweepResult> {
  const { requeued, exhausted } = await sweep(env, lostDeliveries);
  return { requeued, failed: exhausted };
}

/** Every minute: survey webhook deliveries whose queue message was lost are queued again. */
export const surveyDeliveriesSweepCron = defineCron({ name: "survey deliveries sweep", schedule: "everyMinute", run: sweepSurveyDeliveries });

/**
 * Deletes finished survey webhook deliveries older than the retention period, and completion keys
 * older than COMPLETION_KEY_DAYS (surveys.publish.ts), in bounded steps.
 */
export async function surveyDeliveryRetention(env: Env): Promise<number> {
  const deliveries = await deleteInSteps(env.DB, DELETE_OLD_DELIVERIES, [cutoffIso(nowMs(), DELIVERY_LOG_RETENTION_DAYS)]);
  const keys = await deleteInSteps(env.DB, DELETE_OLD_COMPLETION_KEYS, [cutoffIso(nowMs(), COMPLETION_KEY_DAYS)]);
  return deliveries + keys;
}

/** Hourly: the survey webhook delivery retention. */
export const surveyDeliveriesRetentionCron = defineCron({ name: "survey deliveries retention", schedule: "hourly", run: surveyDeliveryRetention });
