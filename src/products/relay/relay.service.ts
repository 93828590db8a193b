// Webhook relay logic over the database: sources, destinations, queuing deliveries, listing and
// reading events, replay (receiving an event at the edge is relay.ingest.ts). Every query filters on the team;
// no Hono context here.
import { and, asc, desc, eq, inArray, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Env } from "../../env";
import { sendAll } from "../../platform/jobs/queues";
import { getDb, type Db } from "../../db/client";
import { webhookAttempts, webhookDeliveries, webhookDestinations, webhookEvents, webhookSources } from "../../db/schema";
import { nowIso } from "../../platform/clock";
import { encryptSecret, fromBase64Url, randomToken, toBase64Url } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { consumeQuota, releaseQuota, type QuotaOwner } from "../../platform/quota";
import { checkUrl, ssrfOptions } from "../../platform/ssrf";
import { ownedBy, ownedRow, orNotFound } from "../../platform/tenancy";
import { newWebhookSecret } from "../../platform/webhook-signature";
import { attemptNow } from "./relay.consumer";
import { retryDelaySeconds } from "./relay.retry";
import { filterAdmits } from "./relay.inbound";
import {
  MAX_DESTINATIONS_PER_SOURCE,
  type CreateDestinationBody,
  type CreateSourceBody,
  type EVENT_DELIVERY_STATUSES,
  type PatchDestinationBody,
  type PatchSourceBody,
  type Provider,
} from "./relay.schemas";
import type { z } from "@hono/zod-openapi";

type SourceRow = typeof webhookSources.$inferSelect;
type DestinationRow = typeof webhookDestinations.$inferSelect;
type DeliveryInsert = typeof webhookDeliveries.$inferInsert;
type EventDeliveryStatus = (typeof EVENT_DELIVERY_STATUSES)[number];

/** The body of one queue message: the delivery to attempt. Payloads stay in D1 (128 KB queue cap). */
export interface DeliveryMessage {
  delivery_id: string;
}

export const RelayErrors = {
  source: () => ApiError.notFound("Source not found"),
  destination: () => ApiError.notFound("Destination not found"),
  event: () => ApiError.notFound("Event not found"),
};

// ---------------------------------------------------------------- sources

export function ingestUrl(appUrl: string, slug: string): string {
  return `${appUrl.replace(/\/+$/, "")}/in/${slug}`;
}

export function sourceView(row: SourceRow, destinationsCount: number, appUrl: string) {
  return {
    id: row.id,
    name: row.name,
    provider: row.provider as Provider,
    slug: row.slug,
    url: ingestUrl(appUrl, row.slug),
    destinations_count: destinationsCount,
    enabled: row.enabled,
    retention_days: row.retentionDays,
    signature_verification: row.signingSecret !== null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export async function createSource(env: Env, teamId: string, input: z.infer<typeof CreateSourceBody>) {
  const at = nowIso();
  const row: SourceRow = {
    id: crypto.randomUUID(),
    teamId,
    name: input.name,
    provider: input.provider,
    // 18 random bytes: 24 URL-safe characters, 144 bits; the slug is the only thing guarding an
    // unsigned source, so it must not be guessable.
    slug: randomToken(18),
    signingSecret: input.signing_secret ? await encryptSecret(env.ENCRYPTION_KEY, input.signing_secret) : null,
    retentionDays: input.retention_days,
    enabled: input.enabled,
    createdAt: at,
    updatedAt: at,
  };
  await getDb(env.DB).insert(webhookSources).values(row);
  return sourceView(row, 0, env.APP_URL);
}

// Written out in full: drizzle renders a bare column name inside sql``, which the subquery would capture.
const destinationsCount = sql<number>`(SELECT COUNT(*) FROM webhook_destinations d WHERE d.source_id = "webhook_sources"."id")`;

export async function listSources(env: Env, teamId: string) {
  const rows = await getDb(env.DB)
    .select({ source: webhookSources, count: destinationsCount })
    .from(webhookSources)
    .where(ownedBy(webhookSources, teamId))
    .orderBy(desc(webhookSources.createdAt), desc(webhookSources.id));
  return rows.map((r) => sourceView(r.source, Number(r.count), env.APP_URL));
}

async function loadSource(db: Db, teamId: string, sourceId: string): Promise<SourceRow> {
  const [row] = await db.select().from(webhookSources).where(ownedRow(webhookSources, teamId, sourceId)).limit(1);
  return orNotFound(row, RelayErrors.source());
}

export async function getSource(env: Env, teamId: string, sourceId: string) {
  const [row] = await getDb(env.DB)
    .select({ source: webhookSources, count: destinationsCount })
    .from(webhookSources)
    .where(ownedRow(webhookSources, teamId, sourceId))
    .limit(1);
  const found = orNotFound(row, RelayErrors.source());
  return sourceView(found.source, Number(found.count), env.APP_URL);
}

export async function patchSource(env: Env, teamId: string, sourceId: string, input: z.infer<typeof PatchSourceBody>) {
  const db = getDb(env.DB);
  const changes: Partial<SourceRow> = { updatedAt: nowIso() };
  if (input.name !== undefined) changes.name = input.name;
  if (input.enabled !== undefined) changes.enabled = input.enabled;
  if (input.retention_days !== undefined) changes.retentionDays = input.retention_days;
  if (input.signing_secret !== undefined) {
    changes.signingSecret = input.signing_secret === null ? null : await encryptSecret(env.ENCRYPTION_KEY, input.signing_secret);
  }
  const [row] = await db.update(webhookSources).set(changes).where(ownedRow(webhookSources, teamId, sourceId)).returning({ id: webhookSources.id });
  orNotFound(row, RelayErrors.source());
  return getSource(env, teamId, sourceId);
}

export async function deleteSource(env: Env, teamId: string, sourceId: string): Promise<void> {
  const [row] = await getDb(env.DB).delete(webhookSources).where(ownedRow(webhookSources, teamId, sourceId)).returning({ id: webhookSources.id });
  orNotFound(row, RelayErrors.source());
}

// ---------------------------------------------------------------- destinations

export function destinationView(row: DestinationRow) {
  return {
    id: row.id,
    source_id: row.sourceId,
    url: row.url,
    event_filter: row.eventFilter,
    enabled: row.enabled,
    disabled_reason: row.disabledReason,
    failing_since: row.failingSince,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

function assertDestinationUrl(env: Env, url: string): void {
  const reason = checkUrl(url, ssrfOptions(env));
  if (reason) throw ApiError.validation({ url: [reason] });
}

export async function createDestination(env: Env, teamId: string, sourceId: string, input: z.infer<typeof CreateDestinationBody>) {
  const db = getDb(env.DB);
  await loadSource(db, teamId, sourceId);
  assertDestinationUrl(env, input.url);
  const secret = newWebhookSecret();
  const at = nowIso();
  const row: DestinationRow = {
    id: crypto.randomUUID(),
    teamId,
    sourceId,
    url: input.url,
    eventFilter: input.event_filter ?? [],
    secret: await encryptSecret(env.ENCRYPTION_KEY, secret),
    enabled: input.enabled,
    failingSince: null,
    disabledReason: null,
    createdAt: at,
    updatedAt: at,
  };
  // The cap is part of the insert, so two concurrent creates cannot pass it together.
  const inserted = await env.DB.prepare(
    `INSERT INTO webhook_destinations (id, team_id, source_id, url, event_filter, secret, enabled, created_at, updated_at)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8
     WHERE (SELECT COUNT(*) FROM webhook_destinations WHERE source_id = ?3) < ?9 RETURNING id`,
  )
    .bind(row.id, teamId, sourceId, row.url, JSON.stringify(row.eventFilter), row.secret, row.enabled ? 1 : 0, at, MAX_DESTINATIONS_PER_SOURCE)
    .first();
  if (!inserted) throw ApiError.validation({ source_id: [`has reached the limit of ${MAX_DESTINATIONS_PER_SOURCE} destinations`] });
  return { ...destinationView(row), secret };
}

export async function listDestinations(env: Env, teamId: string, sourceId: string) {
  const db = getDb(env.DB);
  await loadSource(db, teamId, sourceId);
  const rows = await db
    .select()
    .from(webhookDestinations)
    .where(and(ownedBy(webhookDestinations, teamId), eq(webhookDestinations.sourceId, sourceId)))
    .orderBy(asc(webhookDestinations.createdAt), asc(webhookDestinations.id));
  return rows.map(destinationView);
}

function destinationWhere(teamId: string, sourceId: string, destinationId: string) {
  return and(ownedRow(webhookDestinations, teamId, destinationId), eq(webhookDestinations.sourceId, sourceId));
}

export async function patchDestination(env: Env, teamId: string, sourceId: string, destinationId: string, input: z.infer<typeof PatchDestinationBody>) {
  const db = getDb(env.DB);
  await loadSource(db, teamId, sourceId);
  const changes: Partial<DestinationRow> = { updatedAt: nowIso() };
  if (input.url !== undefined) {
    assertDestinationUrl(env, input.url);
    changes.url = input.url;
  }
  if (input.event_filter !== undefined) changes.eventFilter = input.event_filter ?? [];
  if (input.enabled !== undefined) {
    // Enabled (or disabled) by its owner: a fresh start, not the tail of the old run of failures.
    changes.enabled = input.enabled;
    changes.failingSince = null;
    changes.disabledReason = null;
  }
  const [row] = await db.update(webhookDestinations).set(changes).where(destinationWhere(teamId, sourceId, destinationId)).returning();
  return destinationView(orNotFound(row, RelayErrors.destination()));
}

export async function deleteDestination(env: Env, teamId: string, sourceId: string, destinationId: string): Promise<void> {
  const db = getDb(env.DB);
  await loadSource(db, teamId, sourceId);
  const [row] = await db.delete(webhookDestinations).where(destinationWhere(teamId, sourceId, destinationId)).returning({ id: webhookDestinations.id });
  orNotFound(row, RelayErrors.destination());
}

// ---------------------------------------------------------------- deliveries (ingest and replay)

/** Where work that must outlive the answer goes: the request's `executionCtx.waitUntil`. */
export interface Background {
  waitUntil(promise: Promise<unknown>): void;
}

export type Trigger = "ingest" | "replay";

export function newDelivery(teamId: string, eventId: string, destinationId: string, trigger: Trigger, at: string): DeliveryInsert & { id: string } {
  return { id: crypto.randomUUID(), teamId, eventId, destinationId, status: "pending", attempts: 0, trigger, createdAt: at, updatedAt: at };
}

/** Multi-row inserts of delivery rows, chunked under D1's 100 bound parameters per statement. */
function deliveryInserts(db: Db, rows: DeliveryInsert[]): BatchItem<"sqlite">[] {
  const perStatement = 7; // 14 columns × 7 rows = 98 parameters
  const out: BatchItem<"sqlite">[] = [];
  for (let i = 0; i < rows.length; i += perStatement) out.push(db.insert(webhookDeliveries).values(rows.slice(i, i + perStatement)));
  return out;
}

/**
 * Queues one message per delivery, in batches of at most 100 (the Queues limit). The messages are
 * the safety net of the first attempt, which starts at once in the background: they are delayed
 * until the first retry is due, so they retry a failed first attempt on schedule, and attempt a
 * delivery whose background attempt never ran (the isolate was evicted) at that time.
 */
export async function enqueueDeliveries(env: Env, deliveryIds: string[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  await sendAll(
    env.WEBHOOK_QUEUE,
    deliveryIds.map((id): DeliveryMessage => ({ delivery_id: id })),
    { delaySeconds: retryDelaySeconds(1) ?? 0, contentType: "json" },
  );
}

// ---------------------------------------------------------------- events

interface Cursor {
  receivedAt: string;
  id: string;
}

function encodeCursor(cursor: Cursor): string {
  return toBase64Url(new TextEncoder().encode(JSON.stringify([cursor.receivedAt, cursor.id])));
}

function decodeCursor(text: string): Cursor {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(fromBase64Url(text)));
    if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === "string")) return { receivedAt: value[0], id: value[1] };
  } catch {
    // fall through
  }
  throw ApiError.validation({ cursor: ["is invalid"] });
}

/** `none` without deliveries; else from the latest delivery per destination: failed > pending > delivered. */
const deliveryStatusSql = `CASE
  WHEN NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id) THEN 'none'
  WHEN EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'failed' AND ${latestPerDestination()}) THEN 'failed'
  WHEN EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status IN ('pending', 'sending') AND ${latestPerDestination()}) THEN 'pending'
  ELSE 'delivered' END`;

function latestPerDestination(): string {
  return `NOT EXISTS (SELECT 1 FROM webhook_deliveries n WHERE n.event_id = d.event_id AND n.destination_id = d.destination_id
    AND (n.created_at > d.created_at OR (n.created_at = d.created_at AND n.id > d.id)))`;
}

interface EventSummaryRow {
  id: string;
  source_id: string;
  event_type: string | null;
  provider_event_id: string | null;
  content_type: string | null;
  size_bytes: number;
  received_at: string;
  delivery_status: EventDeliveryStatus;
}

export async function listEvents(
  env: Env,
  teamId: string,
  sourceId: string,
  query: { limit: number; cursor?: string; type?: string; status?: EventDeliveryStatus },
) {
  await loadSource(getDb(env.DB), teamId, sourceId);
  const where = ["e.team_id = ?", "e.source_id = ?"];
  const params: unknown[] = [teamId, sourceId];
  if (query.cursor) {
    const cursor = decodeCursor(query.cursor);
    where.push("(e.received_at < ? OR (e.received_at = ? AND e.id < ?))");
    params.push(cursor.receivedAt, cursor.receivedAt, cursor.id);
  }
  if (query.type) {
    if (query.type.endsWith("*")) {
      // substr, not LIKE: LIKE is case-insensitive, destination filters are not.
      const prefix = query.type.slice(0, -1);
      where.push("substr(e.event_type, 1, ?) = ?");
      params.push(prefix.length, prefix);
    } else {
      where.push("e.event_type = ?");
      params.push(query.type);
    }
  }
  const inner = `SELECT e.id, e.source_id, e.event_type, e.provider_event_id, e.content_type, e.size_bytes, e.received_at,
    ${deliveryStatusSql} AS delivery_status FROM webhook_events e WHERE ${where.join(" AND ")}`;
  const outer = query.status ? `SELECT * FROM (${inner}) WHERE delivery_status = ?` : `SELECT * FROM (${inner})`;
  if (query.status) params.push(query.status);
  params.push(query.limit + 1);
  const { results } = await env.DB.prepare(`${outer} ORDER BY received_at DESC, id DESC LIMIT ?`)
    .bind(...params)
    .all<EventSummaryRow>();
  const page = results.slice(0, query.limit);
  const hasMore = results.length > query.limit;
  const last = page[page.length - 1];
  return {
    data: page,
    pagination: { next_cursor: hasMore && last ? encodeCursor({ receivedAt: last.received_at, id: last.id }) : null, has_more: hasMore, limit: query.limit },
  };
}

export async function getEvent(env: Env, teamId: string, sourceId: string, eventId: string) {
  const db = getDb(env.DB);
  await loadSource(db, teamId, sourceId);
  const summary = await env.DB.prepare(
    `SELECT e.id, e.source_id, e.event_type, e.provider_event_id, e.content_type, e.size_bytes, e.received_at, e.headers, e.body,
      ${deliveryStatusSql} AS delivery_status FROM webhook_events e WHERE e.id = ? AND e.team_id = ? AND e.source_id = ?`,
  )
    .bind(eventId, teamId, sourceId)
    .first<EventSummaryRow & { headers: string; body: string }>();
  const event = orNotFound(summary, RelayErrors.event());
  const [deliveries, attempts] = await db.batch([
    db.select().from(webhookDeliveries).where(and(eq(webhookDeliveries.eventId, eventId), eq(webhookDeliveries.teamId, teamId))).orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id)),
    db
      .select()
      .from(webhookAttempts)
      .where(
        and(
          eq(webhookAttempts.teamId, teamId),
          inArray(webhookAttempts.deliveryId, db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.eventId, eventId))),
        ),
      )
      .orderBy(asc(webhookAttempts.number)),
  ]);
  const byDelivery = new Map<string, typeof attempts>();
  for (const attempt of attempts) {
    const list = byDelivery.get(attempt.deliveryId) ?? [];
    list.push(attempt);
    byDelivery.set(attempt.deliveryId, list);
  }
  return {
    ...event,
    headers: JSON.parse(event.headers) as Record<string, string>,
    deliveries: deliveries.map((d) => ({
      id: d.id,
      destination_id: d.destinationId,
      status: d.status,
      attempts_count: d.attempts,
      last_status_code: d.lastStatusCode,
      last_error: d.lastError,
      next_attempt_at: d.nextAttemptAt,
      delivered_at: d.deliveredAt,
      trigger: d.trigger as "ingest" | "replay",
      created_at: d.createdAt,
      attempts: (byDelivery.get(d.id) ?? []).map((a) => ({
        id: a.id,
        number: a.number,
        attempted_at: a.attemptedAt,
        status_code: a.statusCode,
        duration_ms: a.durationMs,
        error: a.error,
        response_body: a.responseBody,
        retry_in_seconds: a.retryInSeconds,
      })),
    })),
  };
}

/**
 * Re-queues a stored event to every enabled destination whose filter admits it now, or to the
 * listed `destinationIds` only (so a destination that missed it gets it without the healthy ones
 * getting it twice). A listed id must be a destination of this source (any other, of this team or
 * another, answers the same 422, never confirming it exists), enabled, and admit the event's type.
 */
export async function replayEvent(env: Env, owner: QuotaOwner, sourceId: string, eventId: string, background: Background, destinationIds?: string[]) {
  const teamId = owner.teamId;
  const db = getDb(env.DB);
  await loadSource(db, teamId, sourceId);
  const [[event], sourceDestinations] = await db.batch([
    db
      .select({ id: webhookEvents.id, eventType: webhookEvents.eventType })
      .from(webhookEvents)
      .where(and(ownedRow(webhookEvents, teamId, eventId), eq(webhookEvents.sourceId, sourceId)))
      .limit(1),
    db
      .select({ id: webhookDestinations.id, eventFilter: webhookDestinations.eventFilter, enabled: webhookDestinations.enabled })
      .from(webhookDestinations)
      .where(and(ownedBy(webhookDestinations, teamId), eq(webhookDestinations.sourceId, sourceId)))
      .orderBy(asc(webhookDestinations.createdAt), asc(webhookDestinations.id)),
  ]);
  const found = orNotFound(event, RelayErrors.event());
  let destinations: typeof sourceDestinations;
  if (destinationIds === undefined) {
    destinations = sourceDestinations.filter((d) => d.enabled && filterAdmits(d.eventFilter, found.eventType));
  } else {
    const wanted = new Set(destinationIds);
    const byId = new Map(sourceDestinations.map((d) => [d.id, d]));
    const problems: string[] = [];
    for (const id of wanted) {
      const d = byId.get(id);
      if (!d) problems.push(`${id} is not a destination of this source`);
      else if (!d.enabled) problems.push(`${id} is disabled; enable it first`);
      else if (!filterAdmits(d.eventFilter, found.eventType)) problems.push(`${id} does not admit event type ${found.eventType ?? "(none)"}`);
    }
    if (problems.length > 0) throw ApiError.validation({ destination_ids: problems });
    destinations = sourceDestinations.filter((d) => wanted.has(d.id));
  }
  const at = nowIso();
  const deliveries = destinations.map((d) => newDelivery(teamId, eventId, d.id, "replay", at));
  const inserts = deliveryInserts(db, deliveries);
  if (inserts.length > 0) {
    // Each delivery a replay creates is outbound work the team asked for: one `webhooks` unit each
    // (429, nothing created, when the quota is short; given back when nothing could be queued).
    await consumeQuota(env, owner, "webhooks", deliveries.length);
    try {
      await db.batch(inserts as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
    } catch (error) {
      await releaseQuota(env, teamId, "webhooks", deliveries.length);
      throw error;
    }
    try {
      await enqueueDeliveries(env, deliveries.map((d) => d.id));
    } catch (error) {
      await releaseQuota(env, teamId, "webhooks", deliveries.length);
      await db.delete(webhookDeliveries).where(inArray(webhookDeliveries.id, deliveries.map((d) => d.id)));
      console.error(JSON.stringify({ msg: "relay replay enqueue failed", eventId, error: String(error) }));
      throw new ApiError("unavailable", "Replay could not be queued; retry later", { status: 503 });
    }
    // As on ingest: the first attempt at once, the queued messages as its safety net and retries.
    background.waitUntil(attemptNow(env, deliveries.map((d) => d.id)));
  }
  return { count: deliveries.length, destination_ids: deliveries.map((d) => d.destinationId) };
}
