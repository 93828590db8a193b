// The relay's raw SQL, because Drizzle cannot say it. The ingest write: the event, and its delivery
// rows expanded from one JSON parameter with json_each, together in one D1 batch (one transaction),
// all or nothing, in one round trip (the quota units are taken before, in the team's meter). The
// event reads: the delivery roll-up of an event is correlated
// EXISTS subqueries over the latest delivery per destination, filtered on in an outer SELECT.
import { sql } from "drizzle-orm";
import type { EVENT_DELIVERY_STATUSES } from "./relay.schemas";
import type { Trigger } from "./relay.service";

type EventDeliveryStatus = (typeof EVENT_DELIVERY_STATUSES)[number];

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

/** The event row (a duplicate provider id fails the unique index, rolling the whole batch back). */
export function insertEvent(db: D1Database, row: IngestRow): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO webhook_events (id, team_id, source_id, event_type, provider_event_id, content_type, headers, body, size_bytes, received_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)`,
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

/** A source's destination count, as a column of a Drizzle select of webhook_sources. */
// Written out in full: drizzle renders a bare column name inside sql``, which the subquery would capture.
export const destinationsCountSql = sql<number>`(SELECT COUNT(*) FROM webhook_destinations d WHERE d.source_id = "webhook_sources"."id")`;

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

export interface EventSummaryRow {
  id: string;
  source_id: string;
  event_type: string | null;
  provider_event_id: string | null;
  content_type: string | null;
  size_bytes: number;
  received_at: string;
  delivery_status: EventDeliveryStatus;
}

export interface EventPageFilter {
  /** Keyset position: events strictly before this (received_at, id). */
  before?: { receivedAt: string; id: string };
  /** Exact event type, or a prefix ending in `*`. */
  type?: string;
  status?: EventDeliveryStatus;
}

/** Up to `take` event summaries of a source, newest first, with their delivery roll-up. */
export async function selectEventPage(db: D1Database, teamId: string, sourceId: string, filter: EventPageFilter, take: number): Promise<EventSummaryRow[]> {
  const where = ["e.team_id = ?", "e.source_id = ?"];
  const params: unknown[] = [teamId, sourceId];
  if (filter.before) {
    where.push("(e.received_at < ? OR (e.received_at = ? AND e.id < ?))");
    params.push(filter.before.receivedAt, filter.before.receivedAt, filter.before.id);
  }
  if (filter.type) {
    if (filter.type.endsWith("*")) {
      // substr, not LIKE: LIKE is case-insensitive, destination filters are not.
      const prefix = filter.type.slice(0, -1);
      where.push("substr(e.event_type, 1, ?) = ?");
      params.push(prefix.length, prefix);
    } else {
      where.push("e.event_type = ?");
      params.push(filter.type);
    }
  }
  const inner = `SELECT e.id, e.source_id, e.event_type, e.provider_event_id, e.content_type, e.size_bytes, e.received_at,
    ${deliveryStatusSql} AS delivery_status FROM webhook_events e WHERE ${where.join(" AND ")}`;
  const outer = filter.status ? `SELECT * FROM (${inner}) WHERE delivery_status = ?` : `SELECT * FROM (${inner})`;
  if (filter.status) params.push(filter.status);
  params.push(take);
  const { results } = await db
    .prepare(`${outer} ORDER BY received_at DESC, id DESC LIMIT ?`)
    .bind(...params)
    .all<EventSummaryRow>();
  return results;
}

/** One event of a source with its stored headers and body and its delivery roll-up; null when not the team's. */
export async function selectEventDetail(db: D1Database, teamId: string, sourceId: string, eventId: string) {
  return db
    .prepare(
      `SELECT e.id, e.source_id, e.event_type, e.provider_event_id, e.content_type, e.size_bytes, e.received_at, e.headers, e.body,
      ${deliveryStatusSql} AS delivery_status FROM webhook_events e WHERE e.id = ? AND e.team_id = ? AND e.source_id = ?`,
    )
    .bind(eventId, teamId, sourceId)
    .first<EventSummaryRow & { headers: string; body: string }>();
}
