// Hourly sweep of the mail pipeline: messages whose queue message was lost (the enqueue failed
// after the row was stored, or a consumer died holding the lease) are queued again. The consumer
// sends only `queued` messages whose lease is free, so a message queued twice is sent once.
import { and, eq, inArray, lt, or, isNull } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { emails, platformOutbox } from "../../db/schema";
import { nowIso, nowMs } from "../../platform/clock";
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
