// The relay product's queue message (webhook-deliveries): a leaf file, so src/env.ts types the
// queue without importing the consumer.
import { rowId } from "../../platform/jobs/row-id";
import { z } from "zod";
import { defineQueue } from "../../platform/jobs/queues";

/**
 * The body of one webhook-deliveries message: the delivery to attempt and the source whose store
 * holds it. Payloads stay in the store (128 KB queue cap). A message queued before the stores
 * (no `source_id`) names a delivery still in D1: it is acknowledged, and once the operator's
 * migration (relay.migrate.ts) has moved that delivery, its store's alarm queues it again.
 */
export const deliveryMessage = z.object({ delivery_id: rowId, source_id: rowId.optional() });
export type DeliveryMessage = z.infer<typeof deliveryMessage>;

/**
 * The queue of `DeliveryMessage` (wrangler.toml: max_retries = 10). Its claim: the 15 s delivery
 * timeout + 15 s; 8 attempts, the length of relay.retry.ts's schedule (a test holds both).
 */
export const webhookDeliveriesQueue = defineQueue({
  name: "webhook-deliveries",
  binding: "WEBHOOK_QUEUE",
  maxRetries: 10,
  claim: { leaseMs: 30_000, maxAttempts: 8 },
});

// The producer binding carries the message type, so a producer sending anything else fails the
// type-check (wrangler's generated types know only `Queue`).
declare module "../../env" {
  interface Env {
    WEBHOOK_QUEUE: Queue<DeliveryMessage>;
  }
}
