// Mail event webhooks: a team's endpoints for message events (email.sent, email.delivered, ...),
// the synchronous test delivery, and the signed delivery of one event (Standard Webhooks headers),
// run by the mail consumer.
import { insertUnderCap } from "../../platform/caps";
import { desc, eq, inArray } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { emailEvents, emails, mailWebhooks, type MailWebhookEvent } from "../../db/schema";
import { nowIso, nowMs, nowSeconds } from "../../platform/clock";
import { decryptSecret } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { discardBody } from "../../platform/outbound";
import { assertPublicUrl, BlockedUrlError, safeFetch, ssrfOptions } from "../../platform/ssrf";
import { ownedBy, ownedRow, orNotFound } from "../../platform/tenancy";
import { newSealedWebhookSecret, standardWebhookHeaders } from "../../platform/webhook-signature";
import type { EventRow } from "./mail.service";
import { enqueue } from "./mail.queue";

export type WebhookRow = typeof mailWebhooks.$inferSelect;

/** Most mail webhooks per team. */
export const MAX_WEBHOOKS = 10;
/** Timeout of one delivery (events and tests). */
export const DELIVERY_TIMEOUT_MS = 10_000;

export const webhookNotFound = () => ApiError.notFound("Webhook not found");

export function webhookView(row: WebhookRow) {
  return { id: row.id, url: row.url, events: row.events, created_at: row.createdAt };
}

export async function createWebhook(env: Env, teamId: string, input: { url: string; events: MailWebhookEvent[] }) {
  assertPublicUrl(env, input.url);
  const { secret, sealed } = await newSealedWebhookSecret(env.ENCRYPTION_KEY);
  const row: WebhookRow = {
    id: crypto.randomUUID(),
    teamId,
    url: input.url,
    events: [...new Set(input.events)],
    secretEncrypted: sealed,
    createdAt: nowIso(),
  };
  if (!(await insertUnderCap(getDb(env.DB), mailWebhooks, row, { column: mailWebhooks.teamId, value: teamId }, MAX_WEBHOOKS))) {
    throw ApiError.validation({ url: [`a team can have at most ${MAX_WEBHOOKS} mail webhooks`] });
  }
  return { row, secret };
}

export async function listWebhooks(env: Env, teamId: string): Promise<WebhookRow[]> {
  return getDb(env.DB).select().from(mailWebhooks).where(ownedBy(mailWebhooks, teamId)).orderBy(desc(mailWebhooks.createdAt));
}

export async function deleteWebhook(env: Env, teamId: string, id: string): Promise<void> {
  const deleted = await getDb(env.DB)
    .delete(mailWebhooks)
    .where(ownedRow(mailWebhooks, teamId, id))
    .returning({ id: mailWebhooks.id });
  orNotFound(deleted[0], webhookNotFound);
}

async function post(env: Env, webhook: WebhookRow, messageId: string, payload: unknown): Promise<Response> {
  const body = JSON.stringify(payload);
  const secret = await decryptSecret(env.ENCRYPTION_KEY, webhook.secretEncrypted, env.ENCRYPTION_KEY_PREVIOUS);
  const headers = await standardWebhookHeaders(secret, messageId, nowSeconds(), body);
  return safeFetch(
    webhook.url,
    { method: "POST", headers: { "content-type": "application/json", "user-agent": "edge-platform-mail-webhooks/1", ...headers }, body },
    { ...ssrfOptions(env), timeoutMs: DELIVERY_TIMEOUT_MS },
  );
}

/**
 * Sends a signed `email.test` event now. Answers the delivery's result; when the endpoint cannot be
 * reached (network failure, timeout, refused URL) or answers non-2xx: 502 `{error: {message, detail}}`.
 */
export async function testWebhook(env: Env, teamId: string, id: string) {
  const [webhook] = await getDb(env.DB)
    .select()
    .from(mailWebhooks)
    .where(ownedRow(mailWebhooks, teamId, id))
    .limit(1);
  orNotFound(webhook, webhookNotFound);
  const messageId = `msg_test_${crypto.randomUUID()}`;
  const payload = {
    type: "email.test",
    created_at: nowIso(),
    data: { webhook_id: webhook.id, message: "This is a test delivery of a mail webhook." },
  };
  const started = nowMs();
  let response: Response;
  try {
    response = await post(env, webhook, messageId, payload);
  } catch (error) {
    // The network error itself is never echoed: "connection refused" against "timed out" would
    // tell a caller which ports are open behind an address (a port-scan oracle).
    const detail = error instanceof BlockedUrlError ? error.message : "The endpoint could not be reached (connection failed or timed out)";
    throw new ApiError("bad_gateway", "Test delivery could not reach the endpoint", { extra: { detail } });
  }
  await discardBody(response);
  if (!response.ok) {
    throw new ApiError("bad_gateway", "Test delivery was not accepted by the endpoint", {
      extra: { detail: `The endpoint answered HTTP ${response.status}` },
    });
  }
  return { success: true as const, webhook_id: webhook.id, message_id: messageId, status_code: response.status, duration_ms: Math.max(0, nowMs() - started) };
}

/** Queues one delivery per (webhook subscribed to the event's type, event) of these status events. */
export async function fanOut(env: Env, events: EventRow[]): Promise<void> {
  const relevant = events.filter((e) => e.teamId && e.status !== "queued");
  if (relevant.length === 0) return;
  const teamIds = [...new Set(relevant.map((e) => e.teamId as string))];
  const hooks = await getDb(env.DB)
    .select({ id: mailWebhooks.id, teamId: mailWebhooks.teamId, events: mailWebhooks.events })
    .from(mailWebhooks)
    .where(inArray(mailWebhooks.teamId, teamIds));
  const messages = relevant.flatMap((event) =>
    hooks
      .filter((hook) => hook.teamId === event.teamId && hook.events.includes(`email.${event.status}` as MailWebhookEvent))
      .map((hook) => ({ type: "webhook" as const, webhookId: hook.id, eventId: event.id })),
  );
  await enqueue(env, messages);
}

export type DeliveryResult = { done: true } | { done: false; error: string };

/** Delivers one status event to one webhook; `done` also when the webhook or event is gone. */
export async function deliverEvent(env: Env, webhookId: string, eventId: string): Promise<DeliveryResult> {
  const db = getDb(env.DB);
  const [hooks, events, messages] = await db.batch([
    db.select().from(mailWebhooks).where(eq(mailWebhooks.id, webhookId)).limit(1),
    db.select().from(emailEvents).where(eq(emailEvents.id, eventId)).limit(1),
    db
      .select()
      .from(emails)
      .where(inArray(emails.id, db.select({ id: emailEvents.emailId }).from(emailEvents).where(eq(emailEvents.id, eventId))))
      .limit(1),
  ]);
  const [webhook, event, email] = [hooks[0], events[0], messages[0]];
  if (!webhook || !event || !email || email.teamId !== webhook.teamId) return { done: true };
  const payload = {
    type: `email.${event.status}`,
    created_at: event.createdAt,
    data: {
      email_id: email.id,
      status: event.status,
      detail: event.detail,
      from: email.from,
      to: email.to,
      subject: email.subject,
      stream: email.stream,
      tags: email.tags,
    },
  };
  try {
    const response = await post(env, webhook, event.id, payload);
    await discardBody(response);
    return response.ok ? { done: true } : { done: false, error: `HTTP ${response.status}` };
  } catch (error) {
    return { done: false, error: String(error).slice(0, 200) };
  }
}
