// Hourly jobs of the webhook relay: retention clean-up (deletes events older than their source's
// retention_days; their deliveries and attempts go with them, foreign-key cascade) and the re-queue
// of deliveries whose queue message was lost. Both are safe to run twice.
import { sql } from "drizzle-orm";
import type { Env } from "../../env";
import { webhookDeliveries } from "../../db/schema";
import { declareSweep, sweep } from "../../platform/jobs/sweep";
import { nowIso } from "../../platform/clock";
import { defineCron } from "../../platform/jobs/cron";
import { deleteInSteps } from "../../platform/retention";
import type { DeliveryMessage } from "./relay.consumer";

/** A delivery still pending this long after it was due (or claimed by a consumer this long dead) lost its message. */
export const STUCK_AFTER_MS = 15 * 60_000;

/**
 * Deliveries whose queue message was lost: `pending` and due for more than STUCK_AFTER_MS, or
 * `sending` with a lease that ended that long ago. The rows are not changed (their
 * next_attempt_at is API-visible): the claim decides who sends. No cap is settled here: the
 * consumer fails a delivery after its last attempt.
 */
const lostDeliveries = declareSweep({
  name: "relay",
  table: webhookDeliveries,
  key: { id: webhookDeliveries.id },
  waiting: ["pending"],
  due: sql`coalesce(${webhookDeliveries.nextAttemptAt}, ${webhookDeliveries.createdAt})`,
  staleMs: STUCK_AFTER_MS,
  inFlight: { status: "sending", afterMs: STUCK_AFTER_MS },
  limit: 1000,
  queue: (env) => env.WEBHOOK_QUEUE,
  messages: (rows) => rows.map((row): DeliveryMessage => ({ delivery_id: row.id })),
  sendOptions: { contentType: "json" },
});

/** Re-queues deliveries whose queue message was lost; returns how many. */
export async function requeueStuckDeliveries(env: Env): Promise<number> {
  return (await sweep(env, lostDeliveries)).requeued;
}

/** Deletes expired events (their deliveries and attempts cascade); returns how many were deleted. */
export async function purgeExpiredWebhookEvents(env: Env): Promise<number> {
  return deleteInSteps(
    env.DB,
    `DELETE FROM webhook_events WHERE id IN (
       SELECT e.id FROM webhook_events e JOIN webhook_sources s ON s.id = e.source_id
       WHERE e.received_at < strftime('%Y-%m-%dT%H:%M:%fZ', ?1, '-' || s.retention_days || ' days')
       LIMIT ?2)`,
    [nowIso()],
  );
}

/** Hourly: deliveries whose queue message was lost are queued again. */
export const relaySweepCron = defineCron({
  name: "relay sweep",
  schedule: "hourly",
  run: async (env) => {
    const requeued = await requeueStuckDeliveries(env);
    if (requeued > 0) console.log(JSON.stringify({ msg: "relay: re-queued deliveries whose message was lost", requeued }));
    return requeued;
  },
});

/** Hourly: the relay retention. */
export const relayRetentionCron = defineCron({
  name: "relay retention",
  schedule: "hourly",
  run: async (env) => {
    const deleted = await purgeExpiredWebhookEvents(env);
    if (deleted > 0) console.log(JSON.stringify({ msg: "relay retention", deleted }));
    return deleted;
  },
});
