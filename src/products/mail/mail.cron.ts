// Hourly jobs of the mail pipeline: the sweep queues again messages whose queue message was lost
// (the enqueue failed after the row was stored, or a consumer died holding the lease; the consumer
// sends only `queued` messages whose lease is free, so a message queued twice is sent once), and
// retention deletes finished emails, their status history and finished platform mail after
// DELIVERY_LOG_RETENTION_DAYS, in bounded steps.
import { and, inArray, lt } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { emails, platformOutbox } from "../../db/schema";
import { nowMs } from "../../platform/clock";
import { defineCron } from "../../platform/jobs/cron";
import { declareSweep, sweep } from "../../platform/jobs/sweep";
import { cutoffIso, deleteInSteps, DELIVERY_LOG_RETENTION_DAYS } from "../../platform/retention";
import { enqueue } from "./mail.service";

/** A message untouched for this long is considered lost by the queue. */
export const STALE_MS = 15 * 60_000;
const SWEEP_LIMIT = 100;

/**
 * Emails left `queued` and untouched (`updated_at`: stored, claimed, released or swept) for
 * STALE_MS with a free lease. A re-queued email gets updated_at = now, so the next run leaves it
 * alone for another STALE_MS; a queue that refuses the send is logged, as enqueue does.
 */
const lostEmails = declareSweep({
  name: "mail",
  table: emails,
  key: { id: emails.id },
  waiting: ["queued"],
  due: emails.updatedAt,
  staleMs: STALE_MS,
  limit: SWEEP_LIMIT,
  mark: (at) => ({ updatedAt: new Date(at).toISOString(), leaseUntil: null }),
  queue: (env) => env.MAIL_QUEUE,
  messages: (rows) => rows.map((row) => ({ type: "email" as const, id: row.id })),
  onSendError: "log",
});

export async function sweepMail(env: Env): Promise<{ emails: number; platform: number }> {
  const db = getDb(env.DB);
  const stale = new Date(nowMs() - STALE_MS).toISOString();
  const swept = await sweep(env, lostEmails);
  const lostPlatform = await db
    .select({ id: platformOutbox.id })
    .from(platformOutbox)
    .where(and(inArray(platformOutbox.status, ["pending", "sending"]), lt(platformOutbox.createdAt, stale)))
    .limit(SWEEP_LIMIT);
  const platformIds = lostPlatform.map((row) => row.id);
  // A platform mail left `sending` by a consumer that died is made sendable again.
  if (platformIds.length) await db.update(platformOutbox).set({ status: "pending" }).where(inArray(platformOutbox.id, platformIds));
  await enqueue(env, platformIds.map((id) => ({ type: "platform" as const, id })));
  return { emails: swept.requeued + swept.unsent, platform: platformIds.length };
}

/** Hourly: mail whose queue message was lost is queued again. */
export const mailSweepCron = defineCron({ name: "mail sweep", schedule: "hourly", run: sweepMail });

/** Deletes finished emails, status history and platform mail older than the retention period. */
export async function mailRetention(env: Env): Promise<{ emails: number; events: number; platform: number }> {
  const cutoff = cutoffIso(nowMs(), DELIVERY_LOG_RETENTION_DAYS);
  const emailsDeleted = await deleteInSteps(
    env.DB,
    "DELETE FROM emails WHERE id IN (SELECT id FROM emails WHERE created_at < ?1 AND status <> 'queued' LIMIT ?2)",
    [cutoff],
  );
  // History rows of emails and platform mail alike; a message's history is never newer than its last status.
  const events = await deleteInSteps(env.DB, "DELETE FROM email_events WHERE id IN (SELECT id FROM email_events WHERE created_at < ?1 LIMIT ?2)", [cutoff]);
  const platform = await deleteInSteps(
    env.DB,
    "DELETE FROM platform_outbox WHERE id IN (SELECT id FROM platform_outbox WHERE created_at < ?1 AND status NOT IN ('pending', 'sending') LIMIT ?2)",
    [cutoff],
  );
  // Sandbox cap counters of windows that are over (the day window is the longest).
  await deleteInSteps(
    env.DB,
    "DELETE FROM sandbox_cap_usage WHERE rowid IN (SELECT rowid FROM sandbox_cap_usage WHERE start < ?1 LIMIT ?2)",
    [cutoffIso(nowMs(), 2)],
  );
  return { emails: emailsDeleted, events, platform };
}

/** Hourly: the mail retention. */
export const mailRetentionCron = defineCron({ name: "mail retention", schedule: "hourly", run: mailRetention });
