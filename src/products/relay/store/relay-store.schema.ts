// Tables of one webhook source's store (a SQLite-backed Durable Object, `RelayStore`, one per
// source): the events received at the source, one delivery per event and destination, and every
// attempt of a delivery. The source, its destinations and its team stay in D1 (the control plane);
// an object holds one source's rows only, so no row carries a team or source id. Column names
// and formats are the former D1 tables' (ISO text times as the API answers them; `lease_until` in
// ms, as platform/jobs/claim.ts keeps leases), plus `due_ms`: when a pending delivery is next
// due, in ms, which the store's alarm reads to find deliveries whose queue message was lost.
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { DeliveryStatus } from "../../../db/schema/relay";

export const events = sqliteTable(
  "events",
  {
    id: text("id").primaryKey(),
    eventType: text("event_type"),
    /** The provider's own id of the event: a second event with it is a duplicate. */
    providerEventId: text("provider_event_id"),
    contentType: text("content_type"),
    /** JSON text of the stored headers. */
    headers: text("headers").notNull(),
    body: text("body").notNull(),
    sizeBytes: integer("size_bytes").notNull(),
    receivedAt: text("received_at").notNull(),
  },
  (t) => [uniqueIndex("events_dedupe_idx").on(t.providerEventId), index("events_received_idx").on(t.receivedAt, t.id)],
);

export const deliveries = sqliteTable(
  "deliveries",
  {
    id: text("id").primaryKey(),
    eventId: text("event_id").notNull(),
    destinationId: text("destination_id").notNull(),
    status: text("status").$type<DeliveryStatus>().notNull(),
    attempts: integer("attempts").notNull().default(0),
    /** While `sending`: until when the consumer that claimed it owns it (ms since epoch). */
    leaseUntil: integer("lease_until"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    nextAttemptAt: text("next_attempt_at"),
    /** While `pending`: when it is due (ms since epoch); null once final. */
    dueMs: integer("due_ms"),
    deliveredAt: text("delivered_at"),
    /** `ingest` or `replay`. */
    trigger: text("trigger").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("deliveries_event_idx").on(t.eventId, t.destinationId),
    index("deliveries_destination_idx").on(t.destinationId),
    index("deliveries_due_idx").on(t.status, t.dueMs),
  ],
);

export const attempts = sqliteTable(
  "attempts",
  {
    id: text("id").primaryKey(),
    deliveryId: text("delivery_id").notNull(),
    number: integer("number").notNull(),
    attemptedAt: text("attempted_at").notNull(),
    statusCode: integer("status_code"),
    durationMs: integer("duration_ms").notNull(),
    error: text("error"),
    /** First bytes of the receiver's answer, for debugging. */
    responseBody: text("response_body"),
    /** Delay before the next attempt; null when this attempt was the last. */
    retryInSeconds: integer("retry_in_seconds"),
  },
  (t) => [index("attempts_delivery_idx").on(t.deliveryId, t.number)],
);

/** Settings the Worker hands over with each ingest (the source id, its retention_days). */
export const meta = sqliteTable("meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

/**
 * The source's forward cap (relay-store.queries.ts COUNT_FORWARDS): one row (id 1), the deliveries
 * created at ingest in `minute` (ms since the epoch / 60,000, from the caller's clock).
 */
export const forwards = sqliteTable("forwards", {
  id: integer("id").primaryKey(),
  minute: integer("minute").notNull(),
  n: integer("n").notNull(),
});
