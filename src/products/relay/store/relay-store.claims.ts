// The claim of a relay delivery for one attempt, and the end of a claimed delivery whose
// destination is disabled, as functions over a relay store's Drizzle database (relay-store.ts's
// RPCs call them; the object serves one call at a time, so of two consumers claiming at once
// exactly one wins). The rule and lease are platform/jobs/claim.ts's.
import { and, eq, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { claimableAt, claimSet } from "../../../platform/jobs/claim";
import type { ClaimResult } from "./relay-store.rows";
import * as schema from "./relay-store.schema";

/**
 * Claims a delivery (`pending` with no live lease, or `sending` under a lease that ended): `sending`,
 * one more attempt, leased until now + leaseMs; answers it with its event, or who holds it (null:
 * gone or unknown).
 */
export function claimDelivery(db: DrizzleSqliteDODatabase<typeof schema>, deliveryId: string, now: number, leaseMs: number, at: string): ClaimResult {
  const spec = { from: ["pending"], inFlight: "sending", leaseMs };
  const [won] = db
    .update(schema.deliveries)
    .set(claimSet(schema.deliveries, spec, now, { updatedAt: at }))
    .where(and(eq(schema.deliveries.id, deliveryId), claimableAt(schema.deliveries, spec, now)))
    .returning({
      id: schema.deliveries.id,
      eventId: schema.deliveries.eventId,
      destinationId: schema.deliveries.destinationId,
      attempts: schema.deliveries.attempts,
    })
    .all();
  if (!won) {
    const [held] = db
      .select({ status: schema.deliveries.status, leaseUntil: schema.deliveries.leaseUntil })
      .from(schema.deliveries)
      .where(eq(schema.deliveries.id, deliveryId))
      .all();
    return held ? { won: false, ...held } : null;
  }
  const [event] = db
    .select({ body: schema.events.body, contentType: schema.events.contentType, headers: schema.events.headers, eventType: schema.events.eventType })
    .from(schema.events)
    .where(eq(schema.events.id, won.eventId))
    .all();
  if (!event) return null;
  return { won: true, delivery: { id: won.id, eventId: won.eventId, destinationId: won.destinationId, attempts: won.attempts }, event };
}

/** A claimed delivery whose destination is disabled: `failed` without an attempt (the claim's count is taken back). */
export function failDisabledDelivery(db: DrizzleSqliteDODatabase<typeof schema>, deliveryId: string, at: string): void {
  db.update(schema.deliveries)
    .set({
      status: "failed",
      attempts: sql`${schema.deliveries.attempts} - 1`,
      leaseUntil: null,
      lastError: "destination disabled",
      nextAttemptAt: null,
      dueMs: null,
      updatedAt: at,
    })
    .where(and(eq(schema.deliveries.id, deliveryId), eq(schema.deliveries.status, "sending")))
    .run();
}
