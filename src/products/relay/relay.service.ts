// What the relay's services share: the product's 404s, and
// queuing deliveries (the rows and the messages) for ingest (relay.ingest.ts) and replay
// (relay-replay.service.ts). Sources, destinations, events and replay each have their own
// relay-*.service.ts. No Hono context here.
import type { BatchItem } from "drizzle-orm/batch";
import type { Env } from "../../env";
import type { Db } from "../../db/client";
import { webhookDeliveries } from "../../db/schema";
import { ApiError } from "../../platform/errors";
import { sendTogether } from "../../platform/jobs/queues";
import type { DeliveryMessage } from "./relay.consumer";
import { retryDelaySeconds } from "./relay.retry";

type DeliveryInsert = typeof webhookDeliveries.$inferInsert;

export const RelayErrors = {
  source: () => ApiError.notFound("Source not found"),
  destination: () => ApiError.notFound("Destination not found"),
  event: () => ApiError.notFound("Event not found"),
};

/** Where work that must outlive the answer goes: the request's `executionCtx.waitUntil`. */
export interface Background {
  waitUntil(promise: Promise<unknown>): void;
}

export type Trigger = "ingest" | "replay";

export function newDelivery(teamId: string, eventId: string, destinationId: string, trigger: Trigger, at: string): DeliveryInsert & { id: string } {
  return { id: crypto.randomUUID(), teamId, eventId, destinationId, status: "pending", attempts: 0, trigger, createdAt: at, updatedAt: at };
}

/** Multi-row inserts of delivery rows, chunked under D1's 100 bound parameters per statement. */
export function deliveryInserts(db: Db, rows: DeliveryInsert[]): BatchItem<"sqlite">[] {
  const perStatement = 7; // 14 columns × 7 rows = 98 parameters
  const out: BatchItem<"sqlite">[] = [];
  for (let i = 0; i < rows.length; i += perStatement) out.push(db.insert(webhookDeliveries).values(rows.slice(i, i + perStatement)));
  return out;
}

/**
 * Queues one message per delivery, in batches of at most 100 (the Queues limit), shared with the
 * concurrent ingests of this isolate (sendTogether: one sendBatch carries many events). The messages are
 * the safety net of the first attempt, which starts at once in the background: they are delayed
 * until the first retry is due, so they retry a failed first attempt on schedule, and attempt a
 * delivery whose background attempt never ran (the isolate was evicted) at that time.
 */
export async function enqueueDeliveries(env: Env, deliveryIds: string[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  await sendTogether(
    env.WEBHOOK_QUEUE,
    deliveryIds.map((id): DeliveryMessage => ({ delivery_id: id })),
    { delaySeconds: retryDelaySeconds(1) ?? 0, contentType: "json" },
  );
}
