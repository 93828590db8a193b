// The SQL of a relay store's reads (store/relay-store.ts): the events page with each event's
// delivery roll-up (`none`, or from the latest delivery per destination: failed > pending >
// delivered), an event with its roll-up, and the shapes they answer. Filters on a computed
// roll-up run in an outer SELECT.

export type EventDeliveryStatus = "none" | "pending" | "delivered" | "failed";

/** `none` without deliveries; else from the latest delivery per destination: failed > pending > delivered. */
const deliveryStatusSql = `CASE
  WHEN NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id) THEN 'none'
  WHEN EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status = 'failed' AND ${latestPerDestination()}) THEN 'failed'
  WHEN EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status IN ('pending', 'sending') AND ${latestPerDestination()}) THEN 'pending'
  ELSE 'delivered' END`;

function latestPerDestination(): string {
  return `NOT EXISTS (SELECT 1 FROM deliveries n WHERE n.event_id = d.event_id AND n.destination_id = d.destination_id
    AND (n.created_at > d.created_at OR (n.created_at = d.created_at AND n.id > d.id)))`;
}

/** An event as the list answers it (source_id is added by the caller: the store is the source). */
export interface EventSummaryRow {
  id: string;
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

const SUMMARY_COLUMNS = "e.id, e.event_type, e.provider_event_id, e.content_type, e.size_bytes, e.received_at";

/** The statement and its parameters of up to `take` events, newest first, with their roll-up. */
export function eventPageSql(filter: EventPageFilter, take: number): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
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
  const clause = where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
  const inner = `SELECT ${SUMMARY_COLUMNS}, ${deliveryStatusSql} AS delivery_status FROM events e ${clause}`;
  const outer = filter.status ? `SELECT * FROM (${inner}) WHERE delivery_status = ?` : `SELECT * FROM (${inner})`;
  if (filter.status) params.push(filter.status);
  params.push(take);
  return { sql: `${outer} ORDER BY received_at DESC, id DESC LIMIT ?`, params };
}

/** One event with its stored headers (JSON text) and body and its roll-up. */
export const EVENT_DETAIL_SQL = `SELECT ${SUMMARY_COLUMNS}, e.headers, e.body, ${deliveryStatusSql} AS delivery_status FROM events e WHERE e.id = ?`;
