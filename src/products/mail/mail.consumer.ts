// The consumer of the "mail-sends" queue: delivers team emails and platform mail through the
// configured transport (an email's body read from R2 as it is sent), records each status in the message's history, suspends sandbox keys past
// the bounce or complaint threshold, and delivers mail webhook events. Also the first delivery
// attempt a send request starts itself (`sendFirstAttempts`, from its waitUntil), which goes
// through the same claim. Every step is safe to run twice: an email or a platform mail is claimed
// with a lease (platform/jobs/claim.ts) before it is sent and is only sent while `queued` (an email)
// or `pending` (a platform mail).
import { settings } from "../../platform/config";
import { log } from "../../platform/log";
import { defineConsumer, type Delivery } from "../../platform/jobs/consume";
import { claim, claimSpec } from "../../platform/jobs/claim";
import { and, eq, gte, inArray, isNull, sql } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { apiKeys, emailEvents, emails, platformOutbox, teams, type MailStatus } from "../../db/schema";
import { forgetKey, forgetTeam } from "../../platform/auth";
import { backoffSeconds } from "../../platform/backoff";
import { nowIso, nowMs } from "../../platform/clock";
import { deliver, type DeliveryOutcome, type OutgoingMail } from "./mail.transport";
import { fanOut, deliverEvent } from "./mail-webhooks.service";
import type { EmailRow, EventRow } from "./mail.service";
import { readEmailBody, type EmailBody } from "./mail.bodies";
import { mailQueueMessage, type MailQueueMessage, mailSendsQueue } from "./mail.messages";
export { mailQueueMessage, type MailQueueMessage } from "./mail.messages";

/** Delivery attempts of one message before it is marked `failed`. */
export const MAX_ATTEMPTS = mailSendsQueue.claim.maxAttempts;
/** A message stays `queued` (API-visible) while it is being sent: only the lease says it is held. */
const CLAIM = claimSpec(mailSendsQueue, { from: ["queued"], inFlight: "queued" });
/** Platform mail waits `pending` and is claimed `sending` (never shown by an API). */
export const OUTBOX_CLAIM = claimSpec(mailSendsQueue, { from: ["pending"], inFlight: "sending" });

/** Sandbox suspension: over the key's messages with an outcome in the last 7 days. */
export const SUSPENSION = { windowDays: 7, minMessages: 10, bounceRate: 0.1, complaintRate: 0.05 } as const;

type Step = { ack: true } | { ack: false; delaySeconds: number };

/** The consumer of the mail-sends queue; status events of a whole batch go to webhooks at its end, in one look-up. */
export const mailSendsConsumer = defineConsumer({
  queue: mailSendsQueue,
  schema: mailQueueMessage,
  perBatch: {
    start: (): EventRow[] => [],
    finish: fanOutEvents,
  },
  handle: async (body, delivery) => {
    const step = await handleMessage(body, delivery);
    return step.ack ? null : step.delaySeconds;
  },
});

/** Sends the status events recorded by a batch or a request to the team's mail webhooks, in one look-up; a failure is logged, never thrown. */
async function fanOutEvents(env: Env, events: EventRow[]): Promise<void> {
  try {
    await fanOut(env, events);
  } catch (error) {
    log.error("mail webhook fan-out failed", { events: events.length, error: String(error) });
  }
}

/** Parallel first attempts of one request: under the 6 simultaneous outbound connections of an invocation. */
const FIRST_ATTEMPT_CONCURRENCY = 5;

/**
 * The first delivery attempt of emails just stored, run by the send request from its waitUntil so
 * the send does not wait for the queue batch. It is the consumer's own claim and send: a second
 * sender (a duplicate queue delivery, the sweep) finds the email leased or no longer `queued` and
 * sends nothing. Nothing here retries: each email's queue message, delayed past the lease
 * (FIRST_ATTEMPT_QUEUE_DELAY_SECONDS), is the retry of a failed attempt and the safety net of one
 * that never ran or died. Never throws (a waitUntil rejection would only be logged anyway).
 */
export async function sendFirstAttempts(env: Env, ids: string[]): Promise<void> {
  const events: EventRow[] = [];
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++];
      try {
        await sendEmail(env, id, events);
      } catch (error) {
        log.error("mail first attempt failed; the queue retries", { id, error: String(error) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(FIRST_ATTEMPT_CONCURRENCY, ids.length) }, worker));
  await fanOutEvents(env, events);
}

/** Handles one queue message; status events it records are appended to the batch's `shared` list. */
async function handleMessage(body: MailQueueMessage, { env, attempts, isLastAttempt, shared: events }: Delivery<EventRow[]>): Promise<Step> {
  switch (body.type) {
    case "email":
      return sendEmail(env, body.id, events);
    case "platform":
      return sendPlatformMail(env, body.id);
    case "webhook": {
      const result = await deliverEvent(env, body.webhookId, body.eventId);
      if (result.done) return { ack: true };
      // A webhook event is tried on every delivery the queue makes of its message, then dropped.
      if (isLastAttempt) {
        log.error("mail webhook delivery abandoned", { ...body, error: result.error });
        return { ack: true };
      }
      return { ack: false, delaySeconds: backoffSeconds(attempts) };
    }
  }
}

function outgoing(row: EmailRow, body: EmailBody): OutgoingMail {
  return {
    id: row.id,
    from: row.from,
    to: row.to,
    cc: row.cc,
    bcc: row.bcc,
    replyTo: row.replyTo,
    subject: row.subject,
    html: body.html,
    text: body.text,
    headers: row.headers,
    tags: row.tags,
    stream: row.stream,
  };
}

/** Delivers a claimed email; a body R2 cannot give back is a failed attempt, retried like a provider's 5xx. */
async function deliverEmail(env: Env, row: EmailRow): Promise<DeliveryOutcome> {
  let body: EmailBody;
  try {
    body = await readEmailBody(env, row);
  } catch (error) {
    return { ok: false, retry: true, error: `the body could not be read from storage: ${String(error).slice(0, 200)}` };
  }
  return deliver(env, outgoing(row, body));
}

/** The history entries an outcome adds: `sent`, then the provider's final status if it gave one. */
function statusesOf(outcome: DeliveryOutcome & { ok: true }): MailStatus[] {
  return outcome.status === "sent" ? ["sent"] : ["sent", outcome.status];
}

async function sendEmail(env: Env, id: string, recorded: EventRow[]): Promise<Step> {
  const db = getDb(env.DB);
  // Claim: only a queued message whose lease is free; a redelivered copy finds nothing to do.
  const [row] = await claim(db, emails, CLAIM, eq(emails.id, id), { updatedAt: nowIso() }).returning();
  if (!row) return { ack: true };

  const outcome = await deliverEmail(env, row);
  if (!outcome.ok && outcome.retry && row.attempts < MAX_ATTEMPTS) {
    await db.update(emails).set({ leaseUntil: null, lastError: outcome.error, updatedAt: nowIso() }).where(eq(emails.id, id));
    return { ack: false, delaySeconds: backoffSeconds(row.attempts) };
  }

  const done = nowIso();
  const statuses: MailStatus[] = outcome.ok ? statusesOf(outcome) : ["failed"];
  const events: EventRow[] = statuses.map((status, i) => ({
    id: crypto.randomUUID(),
    emailId: id,
    teamId: row.teamId,
    status,
    detail: outcome.ok ? (i === statuses.length - 1 ? outcome.detail : null) : `${outcome.error} (after ${row.attempts} attempts)`,
    createdAt: done,
  }));
  await db.batch([
    db
      .update(emails)
      .set({
        status: statuses[statuses.length - 1],
        leaseUntil: null,
        providerId: outcome.ok ? outcome.providerId : null,
        lastError: outcome.ok ? null : outcome.error,
        updatedAt: done,
      })
      .where(eq(emails.id, id)),
    db.insert(emailEvents).values(events),
  ]);
  recorded.push(...events);
  if (outcome.ok && (outcome.status === "bounced" || outcome.status === "complained") && row.sandbox && row.keyId) {
    await suspendIfOverThreshold(env, row.keyId);
  }
  return { ack: true };
}

/** Suspends a sandbox key whose bounce or complaint rate reached the threshold (README). */
export async function suspendIfOverThreshold(env: Env, keyId: string): Promise<boolean> {
  const db = getDb(env.DB);
  const since = new Date(nowMs() - SUSPENSION.windowDays * 86_400_000).toISOString();
  const [stats] = await db
    .select({
      total: sql<number>`count(*)`,
      bounced: sql<number>`coalesce(sum(${emails.status} = 'bounced'), 0)`,
      complained: sql<number>`coalesce(sum(${emails.status} = 'complained'), 0)`,
    })
    .from(emails)
    .where(and(eq(emails.keyId, keyId), gte(emails.createdAt, since), inArray(emails.status, ["sent", "delivered", "bounced", "complained"])));
  if (stats.total < SUSPENSION.minMessages) return false;
  if (stats.bounced / stats.total < SUSPENSION.bounceRate && stats.complained / stats.total < SUSPENSION.complaintRate) return false;
  const [key] = await db
    .update(apiKeys)
    .set({ mail: sql`json_set(${apiKeys.mail}, '$.suspended', json('true'))` })
    .where(eq(apiKeys.id, keyId))
    .returning({ teamId: apiKeys.teamId });
  // The suspension is the team's: every sandbox key of the team, and any minted later, is held by it
  // until the operator lifts it (revoking the key and minting another sheds nothing).
  if (key)
    await db
      .update(teams)
      .set({ sandboxSuspendedAt: nowIso() })
      .where(and(eq(teams.id, key.teamId), isNull(teams.sandboxSuspendedAt)));
  // The keys' mail policies are cached with their principals: this isolate stops sending on them now.
  forgetKey(keyId);
  if (key) forgetTeam(key.teamId);
  log.warn("sandbox key suspended", { key_id: keyId, ...stats });
  return true;
}

/**
 * Platform mail (usage warnings, report shares, alerts): the same transport, no quota, the same
 * claim (a message waits `pending` and is claimed `sending`), so a redelivered message sends nothing.
 */
async function sendPlatformMail(env: Env, id: string): Promise<Step> {
  const db = getDb(env.DB);
  const [row] = await claim(db, platformOutbox, OUTBOX_CLAIM, eq(platformOutbox.id, id), { updatedAt: nowIso() }).returning();
  if (!row) return { ack: true };
  const outcome = await deliver(env, {
    id: row.id,
    from: settings(env).mailFrom,
    to: [row.to],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: row.subject,
    html: row.html,
    text: row.text,
    headers: { "X-Edp-Kind": row.kind },
    tags: [row.kind.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64)],
    stream: "transactional",
  });
  if (!outcome.ok && outcome.retry && row.attempts < MAX_ATTEMPTS) {
    await db.update(platformOutbox).set({ status: "pending", leaseUntil: null, updatedAt: nowIso() }).where(eq(platformOutbox.id, id));
    return { ack: false, delaySeconds: backoffSeconds(row.attempts) };
  }
  const done = nowIso();
  const statuses: MailStatus[] = outcome.ok ? statusesOf(outcome) : ["failed"];
  await db.batch([
    db
      .update(platformOutbox)
      .set({ status: statuses[statuses.length - 1], leaseUntil: null, updatedAt: done, sentAt: outcome.ok ? done : null })
      .where(eq(platformOutbox.id, id)),
    db.insert(emailEvents).values(
      statuses.map((status) => ({
        id: crypto.randomUUID(),
        emailId: id,
        teamId: null,
        status,
        detail: outcome.ok ? outcome.detail : outcome.error,
        createdAt: done,
      })),
    ),
  ]);
  return { ack: true };
}
