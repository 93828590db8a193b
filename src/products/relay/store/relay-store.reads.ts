// A relay store's reads for the API and the console, as functions over its SQLite (relay-store.ts's
// methods call them): a page of events with their delivery roll-up, one event with its deliveries
// and attempts, the latest delivery's status per event and destination, and the rows held.
import { asc, eq, inArray } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { countRowsSql, DESTINATION_STATUSES, EVENT_DETAIL_SQL, eventPageSql, type EventPageFilter, type EventSummaryRow } from "./relay-store.queries";
import * as schema from "./relay-store.schema";

type DeliveryRow = typeof schema.deliveries.$inferSelect;
type AttemptRow = typeof schema.attempts.$inferSelect;

/** An event with its headers and body, roll-up, deliveries (oldest first) and their attempts. */
export interface EventDetail {
  event: EventSummaryRow & { headers: string; body: string };
  deliveries: DeliveryRow[];
  attempts: AttemptRow[];
}

/** Up to `take` events, newest first, with their delivery roll-up. */
export function eventPage(sql: SqlStorage, filter: EventPageFilter, take: number): EventSummaryRow[] {
  const { sql: text, params } = eventPageSql(filter, take);
  return sql.exec<EventSummaryRow & Record<string, SqlStorageValue>>(text, ...params).toArray();
}

/** One event with its deliveries and their attempts; null when unknown. */
export function eventDetail(sql: SqlStorage, db: DrizzleSqliteDODatabase<typeof schema>, eventId: string): EventDetail | null {
  const [event] = sql.exec<EventSummaryRow & { headers: string; body: string } & Record<string, SqlStorageValue>>(EVENT_DETAIL_SQL, eventId).toArray();
  if (!event) return null;
  const deliveries = db
    .select()
    .from(schema.deliveries)
    .where(eq(schema.deliveries.eventId, eventId))
    .orderBy(asc(schema.deliveries.createdAt), asc(schema.deliveries.id))
    .all();
  const attempts =
    deliveries.length === 0
      ? []
      : db
          .select()
          .from(schema.attempts)
          .where(
            inArray(
              schema.attempts.deliveryId,
              deliveries.map((d) => d.id),
            ),
          )
          .orderBy(asc(schema.attempts.number))
          .all();
  return { event, deliveries, attempts };
}

/** The latest delivery's status per (event, destination) of the listed events. */
export function destinationStatuses(sql: SqlStorage, eventIds: string[]): Array<{ eventId: string; destinationId: string; status: string }> {
  return sql.exec<{ eventId: string; destinationId: string; status: string }>(DESTINATION_STATUSES, JSON.stringify(eventIds)).toArray();
}

/** Rows held per table. */
export function rowCounts(sql: SqlStorage): { events: number; deliveries: number; attempts: number } {
  const n = (table: "events" | "deliveries" | "attempts") => sql.exec<{ n: number }>(countRowsSql(table)).one().n;
  return { events: n("events"), deliveries: n("deliveries"), attempts: n("attempts") };
}
