// The statements of the relay's ingest write, in raw SQL because Drizzle cannot say them: an
// INSERT ... SELECT guarded by the team's quota, delivery rows expanded from one JSON parameter with
// json_each, and the quota upsert guarded by the event's existence. Together, in one D1 batch (one
// transaction), they store the event, its deliveries and its quota units all or nothing, in one
// round trip: the quota is checked and taken in the same transaction as the event is written, so
// parallel requests cannot pass the limit together.
import type { Trigger } from "./relay.service";

export interface IngestRow {
  eventId: string;
  teamId: string;
  sourceId: string;
  eventType: string | null;
  providerEventId: string | null;
  contentType: string | null;
  headers: Record<string, string>;
  body: string;
  sizeBytes: number;
  receivedAt: string;
}

export interface QuotaGuard {
  /** `YYYY-MM` of the current month (platform/quota.ts monthOf). */
  period: string;
  units: number;
  /** The plan's monthly `webhooks` limit; null when the plan has none. */
  limit: number | null;
}

/**
 * The event, stored only when `units` more still fit under the month's limit. RETURNING id: no row
 * means the quota is short (a duplicate provider id fails the unique index instead, rolling the
 * whole batch back).
 */
export function insertEventWithinQuota(db: D1Database, row: IngestRow, quota: QuotaGuard): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO webhook_events (id, team_id, source_id, event_type, provider_event_id, content_type, headers, body, size_bytes, received_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10
       WHERE ?13 IS NULL OR COALESCE((SELECT used FROM usage_counters WHERE team_id = ?2 AND service = 'webhooks' AND period = ?11), 0) + ?12 <= ?13
       RETURNING id`,
    )
    .bind(
      row.eventId,
      row.teamId,
      row.sourceId,
      row.eventType,
      row.providerEventId,
      row.contentType,
      JSON.stringify(row.headers),
      row.body,
      row.sizeBytes,
      row.receivedAt,
      quota.period,
      quota.units,
      quota.limit,
    );
}

/** One delivery row per `{id, destination_id}`, written only if the event was (one statement for up to 20 destinations). */
export function insertDeliveriesForEvent(
  db: D1Database,
  eventId: string,
  deliveries: Array<{ id: string; destinationId: string }>,
  trigger: Trigger,
  at: string,
): D1PreparedStatement {
  const rows = JSON.stringify(deliveries.map((d) => ({ id: d.id, destination_id: d.destinationId })));
  return db
    .prepare(
      `INSERT INTO webhook_deliveries (id, team_id, event_id, destination_id, status, attempts, trigger, created_at, updated_at)
       SELECT j.value ->> 'id', e.team_id, e.id, j.value ->> 'destination_id', 'pending', 0, ?3, ?4, ?4
       FROM webhook_events e, json_each(?2) j WHERE e.id = ?1`,
    )
    .bind(eventId, rows, trigger, at);
}

/**
 * Counts the event's units in the team's `webhooks` counter, only if the event was written (the
 * same upsert as platform/quota.ts consumeQuota). RETURNING used: the new total, for the warnings.
 */
export function countEventUnits(db: D1Database, teamId: string, eventId: string, quota: QuotaGuard): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO usage_counters (team_id, service, period, used)
       SELECT ?1, 'webhooks', ?2, ?3 WHERE EXISTS (SELECT 1 FROM webhook_events WHERE id = ?4)
       ON CONFLICT (team_id, service, period) DO UPDATE SET used = used + excluded.used RETURNING used`,
    )
    .bind(teamId, quota.period, quota.units, eventId);
}
