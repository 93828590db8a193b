// Jobs of the mail pipeline: every minute, the sweep (platform/jobs/sweep.ts) queues again emails
// and platform mail whose queue message was lost (the enqueue failed after the row was stored, or a
// consumer died holding the lease; the consumer claims a message before sending it, so a message
// queued twice is sent once); hourly, retention deletes finished emails (each email's R2 body first, then its row), their status history
// and finished platform mail after DELIVERY_LOG_RETENTION_DAYS, in bounded steps.
import { log } from "../../platform/log";
import { sql } from "drizzle-orm";
import type { Env } from "../../env";
import { emails, platformOutbox } from "../../db/schema";
import { nowMs } from "../../platform/clock";
import { defineCron } from "../../platform/jobs/cron";
import { declareSweep, sweep } from "../../platform/jobs/sweep";
import { cutoffIso, deleteInSteps, DELIVERY_LOG_RETENTION_DAYS, RETENTION_CHUNK, RETENTION_MAX_CHUNKS } from "../../platform/retention";
import { bodyKey, deleteBodies } from "./mail.bodies";
import { DELETE_OLD_EMAIL_EVENTS, DELETE_OLD_PLATFORM_MAIL, deleteEmailsById, deleteOldCapWindowsSql, expiredEmails, SANDBOX_CAP_TABLES } from "./mail.queries";
import { MAX_ATTEMPTS, OUTBOX_CLAIM } from "./mail.consumer";

/** A message untouched for this long is considered lost by the queue. */
export const STALE_MS = 15 * 60_000;
/**
 * A message never attempted this long after it was stored lost its first queue message (the
 * accept step logged a refused enqueue and answered the send): with the sweep every minute, it is
 * queued again at most about two minutes after it was accepted.
 */
export const UNATTEMPTED_STALE_MS = 60_000;
const SWEEP_LIMIT = 100;

/**
 * Emails left `queued` and untouched (`updated_at`: stored, claimed, released or swept) for
 * STALE_MS (UNATTEMPTED_STALE_MS when never attempted) with a free lease. A re-queued email gets
 * updated_at = now, so the next run leaves it alone for another STALE_MS; a queue that refuses the
 * send is logged.
 */
const lostEmails = declareSweep({
  name: "mail",
  table: emails,
  key: { id: emails.id },
  waiting: ["queued"],
  due: emails.updatedAt,
  staleMs: STALE_MS,
  unattemptedMs: UNATTEMPTED_STALE_MS,
  limit: SWEEP_LIMIT,
  mark: (at) => ({ updatedAt: new Date(at).toISOString(), leaseUntil: null }),
  queue: (env) => env.MAIL_QUEUE,
  messages: (rows) => rows.map((row) => ({ type: "email" as const, id: row.id })),
  onSendError: "log",
});

/**
 * Platform mail left `pending` (or `sending` under a lease that ended: its consumer died) and
 * untouched for STALE_MS, UNATTEMPTED_STALE_MS when never attempted; `updated_at` (rows stored
 * before it have none: their creation). A re-queued message is made `pending` again with
 * updated_at = now; one with no attempt left is `failed`.
 */
const lostPlatformMail = declareSweep({
  name: "platform mail",
  table: platformOutbox,
  key: { id: platformOutbox.id },
  waiting: [...OUTBOX_CLAIM.from],
  due: sql`coalesce(${platformOutbox.updatedAt}, ${platformOutbox.createdAt})`,
  staleMs: STALE_MS,
  unattemptedMs: UNATTEMPTED_STALE_MS,
  inFlight: { status: OUTBOX_CLAIM.inFlight, afterMs: 0 },
  limit: SWEEP_LIMIT,
  mark: (at) => ({ status: "pending", updatedAt: new Date(at).toISOString(), leaseUntil: null }),
  exhausted: { maxAttempts: MAX_ATTEMPTS, set: { status: "failed" } },
  queue: (env) => env.MAIL_QUEUE,
  messages: (rows) => rows.map((row) => ({ type: "platform" as const, id: row.id })),
  onSendError: "log",
});

export async function sweepMail(env: Env): Promise<{ emails: number; platform: number }> {
  const [swept, platform] = await Promise.all([sweep(env, lostEmails), sweep(env, lostPlatformMail)]);
  return { emails: swept.requeued + swept.unsent, platform: platform.requeued + platform.unsent };
}

/** Every minute: mail whose queue message was lost is queued again. */
export const mailSweepCron = defineCron({ name: "mail sweep", schedule: "everyMinute", run: sweepMail });

/** Deletes finished emails, status history and platform mail older than the retention period. */
export async function mailRetention(env: Env): Promise<{ emails: number; events: number; platform: number }> {
  const cutoff = cutoffIso(nowMs(), DELIVERY_LOG_RETENTION_DAYS);
  const emailsDeleted = await deleteExpiredEmails(env, cutoff);
  // History rows of emails and platform mail alike; a message's history is never newer than its last status.
  const events = await deleteInSteps(env.DB, DELETE_OLD_EMAIL_EVENTS, [cutoff]);
  const platform = await deleteInSteps(env.DB, DELETE_OLD_PLATFORM_MAIL, [cutoff]);
  // Sandbox cap counters of windows that are over (the day window is the longest).
  for (const table of SANDBOX_CAP_TABLES) await deleteInSteps(env.DB, deleteOldCapWindowsSql(table), [cutoffIso(nowMs(), 2)]);
  return { emails: emailsDeleted, events, platform };
}

/**
 * Finished emails past the cutoff, in the bounds of deleteInSteps: per chunk, the bodies go from R2
 * first (one call for the chunk; rows stored before the move have no object, which R2 ignores),
 * then the rows. When R2 fails, the emails stop there for this run (logged) with their rows still
 * there, so the next run deletes both: no body outlives its row.
 */
async function deleteExpiredEmails(env: Env, cutoff: string): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < RETENTION_MAX_CHUNKS; i++) {
    const rows = await expiredEmails(env.DB, cutoff, RETENTION_CHUNK);
    if (rows.length === 0) break;
    try {
      await deleteBodies(
        env,
        rows.map((row) => bodyKey(row.team_id, row.id)),
      );
    } catch (error) {
      log.error("mail retention: R2 did not delete the bodies; their rows wait for the next run", { emails: rows.length, error: String(error) });
      break;
    }
    deleted += await deleteEmailsById(
      env.DB,
      rows.map((row) => row.id),
    );
    if (rows.length < RETENTION_CHUNK) break;
  }
  return deleted;
}

/** Hourly: the mail retention. */
export const mailRetentionCron = defineCron({ name: "mail retention", schedule: "hourly", run: mailRetention });
