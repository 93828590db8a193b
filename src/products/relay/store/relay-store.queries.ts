// The SQL of a relay store (store/relay-store.ts and the functions beside it), the one place it is
// written: the hot path's statements, built once per instance with Drizzle (a query built on every
// call cost more of the isolate than its SQL did, docs/BENCHMARKS.md); the per-source forward cap,
// checked and counted in one raw statement (an upsert with a condition on both its insert and its
// update, which Drizzle cannot say); the events page with each event's delivery roll-up (`none`, or
// from the latest delivery per destination: failed > pending > delivered), an event with its
// roll-up, and the shapes they answer (filters on a computed roll-up run in an outer SELECT); and
// the alarm's retention deletes, byte estimate and look-up of lost deliveries, raw because they
// delete through subqueries with bounds and aggregate over several tables.
import { and, eq, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import * as schema from "./relay-store.schema";

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

/** The latest delivery's status per (event, destination) of the listed events (?: a JSON array of event ids), newest first. */
export const DESTINATION_STATUSES = `SELECT event_id AS eventId, destination_id AS destinationId, status FROM deliveries
         WHERE event_id IN (SELECT value FROM json_each(?)) ORDER BY created_at DESC, id DESC`;

/** A deleted destination's attempts, then its deliveries (?: the destination id). */
export const DROP_DESTINATION_ATTEMPTS = "DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE destination_id = ?)";
export const DROP_DESTINATION_DELIVERIES = "DELETE FROM deliveries WHERE destination_id = ?";

/** The rows of a table, counted (tests, the operator's size arithmetic). */
export function countRowsSql(table: "events" | "deliveries" | "attempts"): string {
  return `SELECT count(*) AS n FROM ${table}`;
}

/** Whether any event is left: one row looked at, not a count of the whole table. */
export const ANY_EVENT = "SELECT 1 FROM events LIMIT 1";

/** Whether a delivery is still in an attempt (watched by the alarm until its lease has ended). */
export const ANY_SENDING = "SELECT 1 FROM deliveries WHERE status = 'sending' LIMIT 1";

/**
 * The per-source forward cap (store/relay-store.ts): one row, the current minute's count. Counts
 * ?2 forwards in minute ?1 when they fit under the cap ?3 (a new minute starts from zero) and
 * answers the new count; no row, nothing written, when they do not fit. Checked and written in one
 * statement, inside the ingest's transaction of a single-threaded object: exact under any number of
 * parallel ingests.
 */
export const COUNT_FORWARDS = `INSERT INTO forwards (id, minute, n) SELECT 1, ?1, ?2 WHERE ?2 <= ?3
  ON CONFLICT (id) DO UPDATE SET minute = ?1, n = CASE WHEN minute = ?1 THEN n + ?2 ELSE ?2 END
  WHERE (CASE WHEN minute = ?1 THEN n + ?2 ELSE ?2 END) <= ?3
  RETURNING n`;

/**
 * The statements of the hot path (an ingest, an attempt recorded), built once per instance: a
 * Drizzle query built on every call cost more of the isolate than its SQL did (docs/BENCHMARKS.md).
 */
export function hotStatements(db: DrizzleSqliteDODatabase<typeof schema>) {
  const p = <N extends string>(name: N) => sql.placeholder(name);
  // An update's values take SQL, not a bare placeholder.
  const v = (name: string) => sql`${sql.placeholder(name)}`;
  return {
    providerEvent: db
      .select({ id: schema.events.id, eventType: schema.events.eventType })
      .from(schema.events)
      .where(eq(schema.events.providerEventId, p("providerEventId")))
      .prepare(),
    insertEvent: db
      .insert(schema.events)
      .values({
        id: p("id"),
        eventType: p("eventType"),
        providerEventId: p("providerEventId"),
        contentType: p("contentType"),
        headers: p("headers"),
        body: p("body"),
        sizeBytes: p("sizeBytes"),
        receivedAt: p("receivedAt"),
      })
      .prepare(),
    insertDelivery: db
      .insert(schema.deliveries)
      .values({
        id: p("id"),
        eventId: p("eventId"),
        destinationId: p("destinationId"),
        status: p("status"),
        attempts: p("attempts"),
        leaseUntil: p("leaseUntil"),
        dueMs: p("dueMs"),
        trigger: p("trigger"),
        createdAt: p("at"),
        updatedAt: p("at"),
      })
      .prepare(),
    /** The attempt's outcome on its delivery, when the claim it was made under still holds. */
    settleDelivery: db
      .update(schema.deliveries)
      .set({
        status: v("status"),
        leaseUntil: null,
        lastStatusCode: v("statusCode"),
        lastError: v("error"),
        nextAttemptAt: v("nextAttemptAt"),
        dueMs: v("dueMs"),
        deliveredAt: v("deliveredAt"),
        updatedAt: v("at"),
      })
      .where(and(eq(schema.deliveries.id, p("deliveryId")), eq(schema.deliveries.status, "sending"), eq(schema.deliveries.attempts, p("number"))))
      .returning({ id: schema.deliveries.id })
      .prepare(),
    insertAttempt: db
      .insert(schema.attempts)
      .values({
        id: p("id"),
        deliveryId: p("deliveryId"),
        number: p("number"),
        attemptedAt: p("attemptedAt"),
        statusCode: p("statusCode"),
        durationMs: p("durationMs"),
        error: p("error"),
        responseBody: p("responseBody"),
        retryInSeconds: p("retryInSeconds"),
      })
      .prepare(),
  };
}

// The alarm's work (relay-store.rows.ts): retention in bounded steps, by time and by the byte budget.

/** Rows changed by the statement before (SQLite's changes()). */
export const CHANGES = "SELECT changes() AS n";

/** The oldest expired events (?1 the cutoff, ?2 the step's bound). */
const EXPIRED = "SELECT id FROM events WHERE received_at < ?1 ORDER BY received_at LIMIT ?2";

/** One retention step: attempts, deliveries, then the events (the last statement's changes() is the events deleted). */
export const DELETE_EXPIRED = [
  `DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE event_id IN (${EXPIRED}))`,
  `DELETE FROM deliveries WHERE event_id IN (${EXPIRED})`,
  `DELETE FROM events WHERE id IN (${EXPIRED})`,
];

/** The oldest events (?1 the step's bound): the byte budget's step, the same three deletes. */
const OLDEST = "SELECT id FROM events ORDER BY received_at, id LIMIT ?1";
export const DELETE_OLDEST = [
  `DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE event_id IN (${OLDEST}))`,
  `DELETE FROM deliveries WHERE event_id IN (${OLDEST})`,
  `DELETE FROM events WHERE id IN (${OLDEST})`,
];

/**
 * Bytes per row beyond an event's body and headers, with its indexes, from the rows measured in
 * test/products/relay/relay.store.test.ts (an event of 1 KB body with one delivery and one attempt
 * took ~2.3 KB in all): ~450 for the event row, ~450 per delivery, ~350 per attempt.
 */
export const ROW_BYTES = { event: 450, delivery: 450, attempt: 350 };
/** An events aggregate of their estimated bytes (bodies, headers and the event row's overhead). */
export const ESTIMATE_SQL = `coalesce(sum(size_bytes + length(headers) + ${ROW_BYTES.event}), 0)`;

/** The events held and the rows' estimated bytes, from one count of the rows. */
export const ESTIMATE_BYTES = `SELECT count(*) AS events, ${ESTIMATE_SQL} + (SELECT count(*) FROM deliveries) * ${ROW_BYTES.delivery} + (SELECT count(*) FROM attempts) * ${ROW_BYTES.attempt} AS bytes FROM events`;

/**
 * Deliveries whose queue message was lost (?1 the due time before which a `pending` one is lost,
 * ?2 the lease end before which a `sending` one is, ?3 the bound).
 */
export const LOST_DELIVERIES = "SELECT id FROM deliveries WHERE (status = 'pending' AND due_ms < ?1) OR (status = 'sending' AND lease_until < ?2) LIMIT ?3";
