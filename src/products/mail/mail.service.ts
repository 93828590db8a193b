// Emails over the store: sandbox caps, quota, storing a send (one D1 batch) and queueing it for
// delivery, listing and reading messages with their status history.
import { and, asc, count, desc, eq, gte, inArray, lt, sql, type SQL } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { emailEvents, emails, type MailKeyPolicy, type MailStatus } from "../../db/schema";
import type { Principal } from "../../platform/auth";
import { nowIso, nowMs } from "../../platform/clock";
import { consumeQuota, releaseQuota } from "../../platform/quota";
import { ownedBy, ownedRow, orNotFound } from "../../platform/tenancy";
import { ApiError } from "../../platform/errors";
import { parseAddress, policyError, type EmailInput } from "./mail.policy";
import type { Stream } from "./mail.schemas";

export type EmailRow = typeof emails.$inferSelect;
export type EventRow = typeof emailEvents.$inferSelect;

/** Messages on the MAIL_QUEUE ("mail-sends"). */
export type MailQueueMessage =
  | { type: "email"; id: string }
  | { type: "platform"; id: string }
  | { type: "webhook"; webhookId: string; eventId: string };

export const emailNotFound = () => ApiError.notFound("Email not found");

export function emailView(row: EmailRow, history?: Array<Pick<EventRow, "status" | "createdAt" | "detail">>) {
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
 * Sandbox caps: messages of this key in the current UTC hour and day, plus `count` new ones, must
 * stay within the key's caps. Throws the cap error with the 0-based index (among the new ones) of
 * the first message that would pass a cap.
 */
export async function checkCaps(env: Env, keyId: string, policy: MailKeyPolicy, newMessages: number): Promise<void> {
  if (!policy.sandbox || (policy.hourly_cap === null && policy.daily_cap === null)) return;
  const ms = nowMs();
  const w = capWindows(ms);
  const hourStart = new Date(w.hourStart).toISOString();
  const [row] = await getDb(env.DB)
    .select({ day: count(), hour: sql<number>`coalesce(sum(${emails.createdAt} >= ${hourStart}), 0)` })
    .from(emails)
    .where(and(eq(emails.keyId, keyId), gte(emails.createdAt, new Date(w.dayStart).toISOString())));
  const retryAfter = (reset: number) => ({ "retry-after": String(Math.max(1, Math.ceil((reset - ms) / 1000))) });
  if (policy.hourly_cap !== null && row.hour + newMessages > policy.hourly_cap) {
    throw new CapError(
      policyError("hourly_cap_exceeded", `Sandbox hourly cap of ${policy.hourly_cap} emails reached`, retryAfter(w.hourReset)),
      Math.max(0, policy.hourly_cap - row.hour),
    );
  }
  if (policy.daily_cap !== null && row.day + newMessages > policy.daily_cap) {
    throw new CapError(
      policyError("daily_cap_exceeded", `Sandbox daily cap of ${policy.daily_cap} emails reached`, retryAfter(w.dayReset)),
      Math.max(0, policy.daily_cap - row.day),
    );
  }
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
 * Consumes `mail` quota for the messages, stores them with their `queued` history entry in one D1
 * batch and queues them for delivery. Nothing is stored when the quota refuses; the quota is given
 * back when the store fails.
 */
export async function createEmails(env: Env, principal: Principal, accepted: AcceptedEmail[]): Promise<EmailRow[]> {
  if (accepted.length === 0) return [];
  await consumeQuota(env, principal, "mail", accepted.length);
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
    html: email.html,
    text: email.text,
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
  const db = getDb(env.DB);
  try {
    // Multi-row inserts sized to D1's 100 bound parameters per statement, all in one batch.
    const events = rows.map((row) => ({ id: crypto.randomUUID(), emailId: row.id, teamId: row.teamId, status: "queued" as const, detail: null, createdAt: at }));
    const [first, ...rest] = [
      ...chunk(rows, rowsPerStatement(rows[0])).map((part) => db.insert(emails).values(part)),
      ...chunk(events, rowsPerStatement(events[0])).map((part) => db.insert(emailEvents).values(part)),
    ];
    await db.batch([first, ...rest]);
  } catch (error) {
    await releaseQuota(env, principal.teamId, "mail", rows.length);
    throw error;
  }
  await enqueue(env, rows.map((row) => ({ type: "email", id: row.id })));
  return rows;
}

const D1_MAX_PARAMS = 100;

function rowsPerStatement(row: object): number {
  return Math.max(1, Math.floor(D1_MAX_PARAMS / Object.keys(row).length));
}

function chunk<T>(items: T[], size: number): T[][] {
  const parts: T[][] = [];
  for (let i = 0; i < items.length; i += size) parts.push(items.slice(i, i + size));
  return parts;
}

/**
 * Sends queue messages; a failure is logged, not thrown: the rows are stored as `queued` and the
 * sweep job queues them again.
 */
export async function enqueue(env: Env, messages: MailQueueMessage[]): Promise<void> {
  for (let i = 0; i < messages.length; i += 100) {
    try {
      await env.MAIL_QUEUE.sendBatch(messages.slice(i, i + 100).map((body) => ({ body })));
    } catch (error) {
      console.error(JSON.stringify({ msg: "mail enqueue failed; the sweep will retry", count: messages.length, error: String(error) }));
    }
  }
}

export interface ListFilters {
  status?: MailStatus;
  stream?: Stream;
  recipient?: string;
  since?: string;
  until?: string;
  page: number;
  per_page: number;
}

/** A page of a team's emails, newest first, with the total for the filters. */
export async function listEmails(env: Env, teamId: string, filters: ListFilters) {
  const where: SQL[] = [ownedBy(emails, teamId)];
  if (filters.status) where.push(eq(emails.status, filters.status));
  if (filters.stream) where.push(eq(emails.stream, filters.stream));
  if (filters.recipient) {
    const address = (parseAddress(filters.recipient) ?? filters.recipient).toLowerCase();
    where.push(sql`exists (select 1 from json_each(${emails.recipients}) where value = ${address})`);
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
  return {
    rows,
    pagination: { page: filters.page, per_page: filters.per_page, total, total_pages: Math.ceil(total / filters.per_page) },
  };
}

const STATUS_RANK: Record<MailStatus, number> = { queued: 0, sent: 1, delivered: 2, bounced: 2, complained: 2, failed: 2 };

/** Oldest first; entries written in the same instant keep the lifecycle order (queued, sent, final). */
export function sortHistory(history: EventRow[]): EventRow[] {
  return [...history].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || STATUS_RANK[a.status] - STATUS_RANK[b.status]);
}

/** One email of the team with its status history; 404 when missing or another team's. */
export async function getEmail(env: Env, teamId: string, id: string) {
  const db = getDb(env.DB);
  const [found, history] = await db.batch([
    db.select().from(emails).where(ownedRow(emails, teamId, id)).limit(1),
    db.select().from(emailEvents).where(and(eq(emailEvents.emailId, id), eq(emailEvents.teamId, teamId))).orderBy(asc(emailEvents.createdAt), asc(emailEvents.id)),
  ]);
  return { row: orNotFound(found[0], emailNotFound()), history: sortHistory(history) };
}

/** Histories of several emails at once (one query). */
export async function historiesOf(env: Env, ids: string[]): Promise<Map<string, EventRow[]>> {
  const map = new Map<string, EventRow[]>();
  if (ids.length === 0) return map;
  const rows = await getDb(env.DB).select().from(emailEvents).where(inArray(emailEvents.emailId, ids)).orderBy(asc(emailEvents.createdAt));
  for (const row of rows) map.set(row.emailId, [...(map.get(row.emailId) ?? []), row]);
  for (const [id, history] of map) map.set(id, sortHistory(history));
  return map;
}
