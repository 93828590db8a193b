// SQL of the relay's D1 side that Drizzle's builder does not express: a source's destination
// count as a column, and the operator's move of the former event tables (relay.migrate.ts: raw, the rows
// read whole in the former tables' own column names, ids as one bound JSON array). The events, deliveries and
// attempts are in each source's store (store/).
import { sql } from "drizzle-orm";

/** A source's destination count, as a column of a Drizzle select of webhook_sources. */
// Written out in full: drizzle renders a bare column name inside sql``, which the subquery would capture.
export const destinationsCountSql = sql<number>`(SELECT COUNT(*) FROM webhook_destinations d WHERE d.source_id = "webhook_sources"."id")`;

// The operator's one-time move of the former D1 tables into the source stores (relay.migrate.ts):
// one step reads the oldest events with their rows and deletes what was imported, ids as one bound
// JSON array (?1).

/** Up to ?1 of the oldest legacy events: id, source, size, and the source's retention (null: the source is gone). */
export const LEGACY_EVENT_HEADS = `SELECT e.id, e.source_id, e.size_bytes, s.retention_days FROM webhook_events e LEFT JOIN webhook_sources s ON s.id = e.source_id
     ORDER BY e.received_at, e.id LIMIT ?1`;

/** The listed legacy events, whole. */
export const LEGACY_EVENTS = "SELECT * FROM webhook_events WHERE id IN (SELECT value FROM json_each(?1))";

/** The legacy deliveries of the listed events. */
export const LEGACY_DELIVERIES = "SELECT * FROM webhook_deliveries WHERE event_id IN (SELECT value FROM json_each(?1))";

/** The legacy attempts of the listed events' deliveries. */
export const LEGACY_ATTEMPTS =
  "SELECT a.* FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.event_id IN (SELECT value FROM json_each(?1))";

/** Deletes what the listed events held: attempts, deliveries, then the events. */
export const DELETE_LEGACY_ATTEMPTS =
  "DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE event_id IN (SELECT value FROM json_each(?1)))";
export const DELETE_LEGACY_DELIVERIES = "DELETE FROM webhook_deliveries WHERE event_id IN (SELECT value FROM json_each(?1))";
export const DELETE_LEGACY_EVENTS = "DELETE FROM webhook_events WHERE id IN (SELECT value FROM json_each(?1))";
