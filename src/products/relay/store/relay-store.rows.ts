// The rows a relay store takes and answers: an ingest and its answer, a claim, an attempt's record,
// the former D1 tables' rows of the migration (store/relay-store.ts's RPCs, relay.store.ts's calls).
import type * as schema from "./relay-store.schema";

/** An event as ingest stores it (headers as JSON text). */
export type StoredEvent = typeof schema.events.$inferInsert & { id: string; providerEventId: string | null };

/** What a claim answers: the delivery won with its event, or who holds it (null: gone or unknown). */
export type ClaimResult =
  | {
      won: true;
      delivery: { id: string; eventId: string; destinationId: string; attempts: number };
      event: { body: string; contentType: string | null; headers: string; eventType: string | null };
    }
  | { won: false; status: string; leaseUntil: number | null }
  | null;

/** An attempt's outcome, written only while the claim that made it still holds the delivery. */
export interface AttemptRecord {
  deliveryId: string;
  /** The delivery's attempt count at its claim: the attempt's number. */
  number: number;
  attempt: {
    id: string;
    attemptedAt: string;
    statusCode: number | null;
    durationMs: number;
    error: string | null;
    responseBody: string | null;
    retryInSeconds: number | null;
  };
  status: "delivered" | "failed" | "pending";
  nextAttemptAt: string | null;
  dueMs: number | null;
  deliveredAt: string | null;
  at: string;
}

/** One ingest (RelayStore.writeMany): the event, its deliveries and the claim they are born with. */
export interface IngestInput {
  sourceId: string;
  retentionDays: number;
  event: StoredEvent;
  deliveries: Array<{ id: string; destinationId: string }>;
  claim: { now: number; leaseMs: number };
  /** The source's forward cap: deliveries it may create per minute of `claim.now` (FORWARDS_PER_MINUTE by default). */
  forwardsPerMinute: number;
}

/** One write of RelayStore.writeMany: an event's ingest, or an attempt's record (answered true when its claim still held). */
export type StoreWrite = { ingest: IngestInput } | { record: AttemptRecord };

/**
 * An ingest's answer: the stored event a copy names (null when this one was stored), or, nothing
 * stored, the seconds until the source's forward cap has room again.
 */
export type IngestAnswer = { duplicate: { id: string; eventType: string | null } | null } | { capped: { retryAfter: number } };

/** Each item's answer, or the error it alone threw: one item failing leaves the others' answers standing. */
export function eachAlone<I, A>(items: I[], one: (item: I) => A): Array<A | { error: string }> {
  return items.map((item) => {
    try {
      return one(item);
    } catch (error) {
      return { error: String(error) };
    }
  });
}

/** Rows of the former D1 tables for one source, in the store's shape (the migration's import). */
export interface LegacyRows {
  events: Array<typeof schema.events.$inferInsert>;
  deliveries: Array<typeof schema.deliveries.$inferInsert>;
  attempts: Array<typeof schema.attempts.$inferInsert>;
}
