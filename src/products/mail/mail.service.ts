// Emails over the store: sandbox caps, quota, storing a send (the bodies to R2, then the rows in one
// D1 batch) and queueing it for delivery, listing and reading messages with their status history
// (each with its body, read back from R2: mail.bodies.ts).
import { isCheckViolation } from "../../platform/db-errors";
import { and, asc, count, desc, eq, gte, lt, type SQL } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { emailEvents, emails, type MailKeyPolicy, type MailStatus } from "../../db/schema";
import type { Principal } from "../../platform/auth";
import { nowIso, nowMs } from "../../platform/clock";
import { pagination, type PageQuery } from "../../platform/pagination";
import { accept, type Background } from "../../platform/jobs/accept";
import { ownedBy, ownedRow, orNotFound } from "../../platform/tenancy";
import { ApiError } from "../../platform/errors";
import { settings } from "../../platform/config";
import { parseAddress } from "../../platform/mailbox";
import { policyError, type EmailInput } from "./mail.policy";
import { capUsed, hasRecipient, releaseCap, reserveCap, type CapWindow } from "./mail.queries";
import type { Stream } from "./mail.schemas";
import { bodyKey, deleteBodyKeys, putBodies, withBodies, type BodyRef, type EmailBody } from "./mail.bodies";
import { enqueue, FIRST_ATTEMPT_QUEUE_DELAY_SECONDS, type MailQueueMessage } from "./mail.queue";
import { sendFirstAttempts } from "./mail.consumer";
import { statementChunks } from "../../platform/d1-rows";

export type EmailRow = typeof emails.$inferSelect;
export type EventRow = typeof emailEvents.$inferSelect;

export const emailNotFound = () => ApiError.notFound("Email not found");

/** A row with its body as the API shows it (read from R2, or the row's own for rows stored before the move). */
export type EmailWithBody = EmailRow & EmailBody;

export function emailView(row: EmailWithBody, history?: Array<Pick<EventRow, "status" | "createdAt" | "detail">>) {
  return {
    id: row.id,
    from: row.from,
    to: row.to,
    cc: row.cc,
    bcc: row.bcc,
    reply_to: row.replyTo,
    subject: row.subject,
    html: row.html,
    text: row.text,
    headers: row.headers,
    tags: row.tags,
    stream: row.stream as Stream,
    sandbox: row.sandbox,
    status: row.status,
    attempts: row.attempts,
    last_error: row.lastError,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    ...(history ? { history: history.map((e) => ({ status: e.status, at: e.createdAt, detail: e.detail })) } : {}),
  };
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The fixed UTC clock hour and UTC day the caps count in. */
export function capWindows(ms: number) {
  const hourStart = Math.floor(ms / HOUR_MS) * HOUR_MS;
  const dayStart = Math.floor(ms / DAY_MS) * DAY_MS;
  return { hourStart, dayStart, hourReset: hourStart + HOUR_MS, dayReset: dayStart + DAY_MS };
}

/**
 * Sandbox caps, reserved: the `newMessages` are added to the team's counters of the current UTC
 * hour and day (the team's sandbox caps, SANDBOX_HOURLY_CAP / SANDBOX_DAILY_CAP, shared by every
 * sandbox key of the team) and to the key's own when it has caps, in one D1 batch, which a counter
 * past its cap rolls back whole (CHECK used <= cap): the cap that binds is the smaller of the key's
 * and the team's, and concurrent sends never both take the last slot. Throws the cap error with the
 * 0-based index (among the new ones) of the first message that would pass a cap. Returns what gives
 * the reservation back, for a send refused after it (the monthly quota). Live keys have no caps.
 */
export async function checkCaps(env: Env, teamId: string, keyId: string, policy: MailKeyPolicy, newMessages: number): Promise<() => Promise<void>> {
  if (!policy.sandbox) return async () => {};
  const ms = nowMs();
  const w = capWindows(ms);
  const team = settings(env).sandboxCaps;
  const hour = new Date(w.hourStart).toISOString();
  const day = new Date(w.dayStart).toISOString();
  const windows: Array<CapWindow & { ownerId: string }> = [
    { owner: "key" as const, ownerId: keyId, window: "hour" as const, start: hour, cap: policy.hourly_cap },
    { owner: "key" as const, ownerId: keyId, window: "day" as const, start: day, cap: policy.daily_cap },
    { owner: "team" as const, ownerId: teamId, window: "hour" as const, start: hour, cap: team.hourly },
    { owner: "team" as const, ownerId: teamId, window: "day" as const, start: day, cap: team.daily },
  ].filter((x): x is CapWindow & { ownerId: string } => x.cap !== null);
  try {
    await env.DB.batch(windows.map((x) => reserveCap(env.DB, x.ownerId, x, newMessages)));
  } catch (error) {
    if (!isCheckViolation(error)) throw error;
    const retryAfter = (reset: number) => ({ "retry-after": String(Math.max(1, Math.ceil((reset - ms) / 1000))) });
    // The hour before the day, the key before the team: the first counter that cannot take them answers.
    const order = [...windows].sort((a, b) => (a.window === b.window ? 0 : a.window === "hour" ? -1 : 1));
    for (const x of order) {
      const used = await capUsed(env.DB, x.ownerId, x);
      if (used + newMessages <= x.cap) continue;
      const hourly = x.window === "hour";
      throw new CapError(
        policyError(
          hourly ? "hourly_cap_exceeded" : "daily_cap_exceeded",
          `Sandbox ${hourly ? "hourly" : "daily"} cap of ${x.cap} emails reached`,
          retryAfter(hourly ? w.hourReset : w.dayReset),
        ),
        Math.max(0, x.cap - used),
      );
    }
    throw error;
  }
  return async () => {
    await env.DB.batch(windows.map((x) => releaseCap(env.DB, x.ownerId, x, newMessages)));
  };
}

/** A cap refusal and the 0-based index among the new messages of the first one over the cap. */
export class CapError extends Error {
  constructor(
    readonly error: ApiError,
    readonly firstOver: number,
  ) {
    super(error.message);
  }
}

export interface AcceptedEmail {
  email: EmailInput;
  stream: Stream;
}

/**
 * Emails of one request whose first delivery attempt the request itself starts (from waitUntil,
 * `sendFirstAttempts`); the rest of a batch waits for the queue as before. Each attempt costs about
 * two D1 queries and one provider call, and an invocation has 50 D1 queries on the free plan and
 * 6 simultaneous outbound connections: ten keeps a full batch well inside both.
 */
export const INLINE_FIRST_ATTEMPTS = 10;

/**
 * Accepts the emails through the accept step (platform/jobs/accept.ts): `mail` quota for the
 * messages (nothing is stored when it refuses), their bodies to R2 (one object per email), the rows
 * with their `queued` history entry in one D1 batch, their queue messages, and the first attempt of
 * the first `inline` emails from `background` (their messages delayed past its lease by
 * FIRST_ATTEMPT_QUEUE_DELAY_SECONDS: they are its retry). When a body write or the rows' batch
 * fails, the objects written are deleted, the quota goes back and the error is the 500; a queue
 * that refuses is logged and the rows, stored `queued`, are queued again by the sweep (mail.cron.ts).
 * Returns the rows with their bodies.
 */
export async function createEmails(
  env: Env,
  principal: Principal,
  accepted: AcceptedEmail[],
  options: { inline?: number; background?: Background | null } = {},
): Promise<EmailWithBody[]> {
  if (accepted.length === 0) return [];
  const at = nowIso();
  const rows: EmailRow[] = accepted.map(({ email, stream }) => ({
    id: crypto.randomUUID(),
    teamId: principal.teamId,
    keyId: principal.keyId,
    sandbox: principal.mail.sandbox,
    stream,
    from: email.from,
    to: email.to,
    cc: email.cc,
    bcc: email.bcc,
    replyTo: email.replyTo,
    recipients: [...new Set([...email.to, ...email.cc, ...email.bcc].map((raw) => (parseAddress(raw) as string).toLowerCase()))],
    subject: email.subject,
    bodyInR2: true,
    html: null,
    text: null,
    headers: email.headers as Record<string, string>,
    tags: email.tags,
    status: "queued",
    attempts: 0,
    leaseUntil: null,
    providerId: null,
    lastError: null,
    createdAt: at,
    updatedAt: at,
  }));
  const bodies = accepted.map(({ email }, i) => ({ id: rows[i].id, teamId: principal.teamId, html: email.html, text: email.text }));
  const inline = options.background ? Math.min(options.inline ?? 0, rows.length) : 0;
  const messages = rows.map((row): MailQueueMessage => ({ type: "email", id: row.id }));
  const attemptedAtOnce = rows.slice(0, inline).map((row) => row.id);
  await accept({
    name: "mail send",
    env,
    quota: { owner: principal, service: "mail", units: rows.length },
    store: () => storeEmails(env, rows, bodies, at),
    enqueue: async () => {
      if (inline > 0) await enqueue(env, messages.slice(0, inline), FIRST_ATTEMPT_QUEUE_DELAY_SECONDS);
      await enqueue(env, messages.slice(inline));
    },
    attempt: inline > 0 ? () => sendFirstAttempts(env, attemptedAtOnce) : undefined,
    background: options.background,
  });
  return rows.map((row, i) => ({ ...row, html: bodies[i].html, text: bodies[i].text }));
}

/** The bodies to R2, then the rows and their `queued` entries in one D1 batch; a failed batch deletes the bodies again. */
async function storeEmails(env: Env, rows: EmailRow[], bodies: Array<Omit<BodyRef, "bodyInR2">>, at: string): Promise<void> {
  await putBodies(env, bodies);
  const db = getDb(env.DB);
  try {
    // Multi-row inserts sized to D1's 100 bound parameters per statement, all in one batch.
    const events = rows.map((row) => ({
      id: crypto.randomUUID(),
      emailId: row.id,
      teamId: row.teamId,
      status: "queued" as const,
      detail: null,
      createdAt: at,
    }));
    const [first, ...rest] = [
      ...statementChunks(rows).map((part) => db.insert(emails).values(part)),
      ...statementChunks(events).map((part) => db.insert(emailEvents).values(part)),
    ];
    await db.batch([first, ...rest]);
  } catch (error) {
    await deleteBodyKeys(
      env,
      rows.map((row) => bodyKey(row.teamId, row.id)),
    );
    throw error;
  }
}

export interface ListFilters extends PageQuery {
  status?: MailStatus;
  stream?: Stream;
  recipient?: string;
  since?: string;
  until?: string;
}

/** A page of a team's emails, newest first, with their bodies (at most 100 R2 reads, a few at a time) and the total for the filters. */
export async function listEmails(env: Env, teamId: string, filters: ListFilters) {
  const where: SQL[] = [ownedBy(emails, teamId)];
  if (filters.status) where.push(eq(emails.status, filters.status));
  if (filters.stream) where.push(eq(emails.stream, filters.stream));
  if (filters.recipient) {
    const address = (parseAddress(filters.recipient) ?? filters.recipient).toLowerCase();
    where.push(hasRecipient(address));
  }
  if (filters.since) where.push(gte(emails.createdAt, new Date(filters.since).toISOString()));
  if (filters.until) where.push(lt(emails.createdAt, new Date(filters.until).toISOString()));
  const db = getDb(env.DB);
  const condition = and(...where);
  const [rows, [{ total }]] = await db.batch([
    db
      .select()
      .from(emails)
      .where(condition)
      .orderBy(desc(emails.createdAt), desc(emails.id))
      .limit(filters.per_page)
      .offset((filters.page - 1) * filters.per_page),
    db.select({ total: count() }).from(emails).where(condition),
  ]);
  return { rows: await withBodies(env, rows), pagination: pagination(filters, total) };
}

const STATUS_RANK: Record<MailStatus, number> = { queued: 0, sent: 1, delivered: 2, bounced: 2, complained: 2, failed: 2 };

/** Oldest first; entries written in the same instant keep the lifecycle order (queued, sent, final). */
export function sortHistory(history: EventRow[]): EventRow[] {
  return [...history].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || STATUS_RANK[a.status] - STATUS_RANK[b.status]);
}

/** One email of the team with its body and status history; 404 when missing or another team's (whose body is never read). */
export async function getEmail(env: Env, teamId: string, id: string) {
  const db = getDb(env.DB);
  const [found, history] = await db.batch([
    db
      .select()
      .from(emails)
      .where(ownedRow(emails, teamId, id))
      .limit(1),
    db
      .select()
      .from(emailEvents)
      .where(and(eq(emailEvents.emailId, id), eq(emailEvents.teamId, teamId)))
      .orderBy(asc(emailEvents.createdAt), asc(emailEvents.id)),
  ]);
  const [row] = await withBodies(env, [orNotFound(found[0], emailNotFound)]);
  return { row, history: sortHistory(history) };
}
