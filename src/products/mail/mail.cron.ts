// Hourly jobs of the mail pipeline: the sweep queues again messages whose queue message was lost
// (the enqueue failed after the row was stored, or a consumer died holding the lease; the consumer
// sends only `queued` messages whose lease is free, so a message queued twice is sent once), and
// retention deletes finished emails, their status history and finished platform mail after
// DELIVERY_LOG_RETENTION_DAYS, in bounded steps.
import { and, eq, inArray, lt, or, isNull } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { emails, platformOutbox } from "../../db/schema";
import { nowIso, nowMs } from "../../platform/clock";
import { defineCron } from "../../platform/jobs/cron";
import { cutoffIso, deleteInSteps, DELIVERY_LOG_RETENTION_DAYS } from "../../platform/retention";
import { enqueue } from "./mail.service";

/** A message untouched for this long is considered lost by the queue. */
export const STALE_MS = 15 * 60_000;
const SWEEP_LIMIT = 100;

export async function sweepMail(env: Env): Promise<{ emails: number; platform: number }> {
  const db = getDb(env.DB);
  const at = nowIso();
  const stale = new Date(nowMs() - STALE_MS).toISOString();
  const lostEmails = await db
    .select({ id: emails.id })
    .from(emails)
    .where(and(eq(emails.status, "queued"), lt(emails.updatedAt, stale), or(isNull(emails.leaseUntil), lt(emails.leaseUntil, at))))
    .limit(SWEEP_LIMIT);
  const lostPlatform = await db
    .select({ id: platformOutbox.id })
    .from(platformOutbox)
    .where(and(inArray(platformOutbox.status, ["pending", "sending"]), lt(platformOutbox.createdAt, stale)))
    .limit(SWEEP_LIMIT);
  const emailIds = lostEmails.map((row) => row.id);
  const platformIds = lostPlatform.map((row) => row.id);
  if (emailIds.length) await db.update(emails).set({ updatedAt: at, leaseUntil: null }).where(inArray(emails.id, emailIds));
  // A platform mail left `sending` by a consumer that died is made sendable again.
  if (platformIds.length) await db.update(platformOutbox).set({ status: "pending" }).where(inArray(platformOutbox.id, platformIds));
  await enqueue(env, [
    ...emailIds.map((id) => ({ type: "email" as const, id })),
    ...platformIds.map((id) => ({ type: "platform" as const, id })),
  ]);
  return { emails: emailIds.length, platform: platformIds.length };
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
