// The one-time move of relay events, deliveries and attempts from the former D1 tables
// (`webhook_events`, `webhook_deliveries`, `webhook_attempts`, where every source's rows lived
// before the per-source stores) into each source's store. The operator runs it in steps
// (POST /api/v1/admin/relay/migrate-events) until `more` is false. Each step reads the oldest
// events (bounded in count and bytes) with their deliveries and attempts, imports each source's
// share into its store, then deletes what was imported. A step that stops between import and
// delete repeats nothing: each store keeps the rows' ids and skips an id it holds.
import { log } from "../../platform/log";
import type { Env } from "../../env";
import { ApiError } from "../../platform/errors";
import {
  DELETE_LEGACY_ATTEMPTS,
  DELETE_LEGACY_DELIVERIES,
  DELETE_LEGACY_EVENTS,
  LEGACY_ATTEMPTS,
  LEGACY_DELIVERIES,
  LEGACY_EVENT_HEADS,
  LEGACY_EVENTS,
} from "./relay.queries";
import { relayStore } from "./relay.store";
import type { LegacyRows } from "./store/relay-store.rows";

/** Events per step, at most. */
export const MIGRATE_MAX_EVENTS = 500;
/** Bodies per step, at most (an event may hold 1 MB): one step stays well inside a Worker's memory and an RPC's size. */
export const MIGRATE_MAX_BYTES = 8 * 1024 * 1024;

interface LegacyEvent {
  id: string;
  source_id: string;
  event_type: string | null;
  provider_event_id: string | null;
  content_type: string | null;
  headers: string;
  body: string;
  size_bytes: number;
  received_at: string;
}

interface LegacyDelivery {
  id: string;
  event_id: string;
  destination_id: string;
  status: "pending" | "sending" | "delivered" | "failed";
  attempts: number;
  lease_until: number | null;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
  trigger: string;
  created_at: string;
  updated_at: string;
}

interface LegacyAttempt {
  id: string;
  delivery_id: string;
  number: number;
  attempted_at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_body: string | null;
  retry_in_seconds: number | null;
}

/** One step: moves up to `limit` of the oldest D1 events. `dropped` counts events of sources that no longer exist. */
export async function migrateLegacyEvents(env: Env, limit: number): Promise<{ moved: number; dropped: number; more: boolean }> {
  const { results: heads } = await env.DB.prepare(LEGACY_EVENT_HEADS)
    .bind(limit)
    .all<{ id: string; source_id: string; size_bytes: number; retention_days: number | null }>();
  // Within the step's bytes (at least one event).
  let bytes = 0;
  const taken = heads.filter((row, i) => (bytes += row.size_bytes) <= MIGRATE_MAX_BYTES || i === 0);
  const retention = new Map(taken.map((row) => [row.source_id, row.retention_days]));
  const ids = JSON.stringify(taken.map((row) => row.id));
  const [events, deliveries, attempts] = await env.DB.batch([
    env.DB.prepare(LEGACY_EVENTS).bind(ids),
    env.DB.prepare(LEGACY_DELIVERIES).bind(ids),
    env.DB.prepare(LEGACY_ATTEMPTS).bind(ids),
  ]);
  const bySource = new Map<string, LegacyRows>();
  const sourceOfEvent = new Map<string, string>();
  const sourceOfDelivery = new Map<string, string>();
  const orphans: string[] = [];
  const share = (sourceId: string) => bySource.get(sourceId) ?? bySource.set(sourceId, { events: [], deliveries: [], attempts: [] }).get(sourceId)!;
  for (const e of events!.results as unknown as LegacyEvent[]) {
    if (retention.get(e.source_id) == null) {
      orphans.push(e.id);
      continue;
    }
    sourceOfEvent.set(e.id, e.source_id);
    share(e.source_id).events.push({
      id: e.id,
      eventType: e.event_type,
      providerEventId: e.provider_event_id,
      contentType: e.content_type,
      headers: e.headers,
      body: e.body,
      sizeBytes: e.size_bytes,
      receivedAt: e.received_at,
    });
  }
  for (const d of deliveries!.results as unknown as LegacyDelivery[]) {
    const sourceId = sourceOfEvent.get(d.event_id);
    if (!sourceId) continue;
    sourceOfDelivery.set(d.id, sourceId);
    const waiting = d.status === "pending" || d.status === "sending";
    share(sourceId).deliveries.push({
      id: d.id,
      eventId: d.event_id,
      destinationId: d.destination_id,
      status: d.status,
      attempts: d.attempts,
      leaseUntil: d.lease_until,
      lastStatusCode: d.last_status_code,
      lastError: d.last_error,
      nextAttemptAt: d.next_attempt_at,
      // A waiting delivery's queue message (of the former format) is not read by this version: the
      // store's alarm queues it again once it is overdue.
      dueMs: waiting ? Date.parse(d.next_attempt_at ?? d.created_at) : null,
      deliveredAt: d.delivered_at,
      trigger: d.trigger,
      createdAt: d.created_at,
      updatedAt: d.updated_at,
    });
  }
  for (const a of attempts!.results as unknown as LegacyAttempt[]) {
    const sourceId = sourceOfDelivery.get(a.delivery_id);
    if (!sourceId) continue;
    share(sourceId).attempts.push({
      id: a.id,
      deliveryId: a.delivery_id,
      number: a.number,
      attemptedAt: a.attempted_at,
      statusCode: a.status_code,
      durationMs: a.duration_ms,
      error: a.error,
      responseBody: a.response_body,
      retryInSeconds: a.retry_in_seconds,
    });
  }
  const imported = await Promise.allSettled(
    [...bySource].map(async ([sourceId, rows]) => {
      await relayStore(env, sourceId).importLegacy(rows, { sourceId, retentionDays: retention.get(sourceId)! });
      return rows.events.map((e) => e.id);
    }),
  );
  const done = imported.flatMap((result) => (result.status === "fulfilled" ? result.value : []));
  const gone = JSON.stringify([...done, ...orphans]);
  if (done.length + orphans.length > 0) {
    await env.DB.batch([
      env.DB.prepare(DELETE_LEGACY_ATTEMPTS).bind(gone),
      env.DB.prepare(DELETE_LEGACY_DELIVERIES).bind(gone),
      env.DB.prepare(DELETE_LEGACY_EVENTS).bind(gone),
    ]);
  }
  const failed = imported.find((result) => result.status === "rejected");
  if (failed) {
    log.error("relay event migration: a store did not answer", { error: String((failed as PromiseRejectedResult).reason) });
    throw new ApiError("unavailable", "A relay store did not answer; what was moved is recorded, run the step again");
  }
  return { moved: done.length, dropped: orphans.length, more: heads.length === limit || taken.length < heads.length };
}
