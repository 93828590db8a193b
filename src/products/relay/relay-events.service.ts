// Webhook relay events, read from the source's store (store/relay-store.ts) once the source is
// found under the caller's team in D1: the cursor-paginated list of a source's events with their
// delivery roll-up, one event with its deliveries and their attempts, and the latest status per
// destination of a page of events. No Hono context here.
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { fromBase64Url, toBase64Url } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { orNotFound } from "../../platform/tenancy";
import type { EVENT_DELIVERY_STATUSES } from "./relay.schemas";
import { RelayErrors } from "./relay.service";
import { relayStore } from "./relay.store";
import { loadSource } from "./relay-sources.service";

type EventDeliveryStatus = (typeof EVENT_DELIVERY_STATUSES)[number];

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

export async function listEvents(
  env: Env,
  teamId: string,
  sourceId: string,
  query: { limit: number; cursor?: string; type?: string; status?: EventDeliveryStatus },
) {
  await loadSource(getDb(env.DB), teamId, sourceId);
  const before = query.cursor ? decodeCursor(query.cursor) : undefined;
  const results = await relayStore(env, sourceId).listEvents({ before, type: query.type, status: query.status }, query.limit + 1);
  const page = results.slice(0, query.limit).map(({ id, ...row }) => ({ id, source_id: sourceId, ...row }));
  const hasMore = results.length > query.limit;
  const last = page[page.length - 1];
  return {
    data: page,
    pagination: { next_cursor: hasMore && last ? encodeCursor({ receivedAt: last.received_at, id: last.id }) : null, has_more: hasMore, limit: query.limit },
  };
}

/** Events a page asks destination statuses for at once (one bound parameter each). */
export const MAX_STATUS_EVENTS = 90;

/**
 * Each destination's status for each of the listed events of a team's source: the status of the
 * latest delivery per (event, destination), as the events list's roll-up reads them. One store call
 * for the whole page; a source of another team answers the relay's 404.
 */
export async function eventDestinationStatuses(env: Env, teamId: string, sourceId: string, eventIds: string[]): Promise<Map<string, Map<string, string>>> {
  const byEvent = new Map<string, Map<string, string>>();
  if (eventIds.length === 0) return byEvent;
  if (eventIds.length > MAX_STATUS_EVENTS) throw new Error(`at most ${MAX_STATUS_EVENTS} events per call`);
  await loadSource(getDb(env.DB), teamId, sourceId);
  const rows = await relayStore(env, sourceId).destinationStatuses(eventIds);
  for (const row of rows) {
    const statuses = byEvent.get(row.eventId) ?? new Map<string, string>();
    // Newest first: the first row of a destination is its latest delivery.
    if (!statuses.has(row.destinationId)) statuses.set(row.destinationId, row.status);
    byEvent.set(row.eventId, statuses);
  }
  return byEvent;
}

export async function getEvent(env: Env, teamId: string, sourceId: string, eventId: string) {
  await loadSource(getDb(env.DB), teamId, sourceId);
  const found = orNotFound(await relayStore(env, sourceId).eventDetail(eventId), RelayErrors.event);
  const { event, deliveries, attempts } = found;
  const byDelivery = new Map<string, typeof attempts>();
  for (const attempt of attempts) {
    const list = byDelivery.get(attempt.deliveryId) ?? [];
    list.push(attempt);
    byDelivery.set(attempt.deliveryId, list);
  }
  const { id, ...rest } = event;
  return {
    id,
    source_id: sourceId,
    ...rest,
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
