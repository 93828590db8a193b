// What the relay's services share: the product's 404s, and queuing the messages of a replay's
// deliveries (stored in the source's store; relay-replay.service.ts). Ingest queues none: the
// store is its outbox (relay.ingest.ts).
// Sources, destinations, events and replay each have their own relay-*.service.ts. No Hono
// context here.
import type { Env } from "../../env";
import { ApiError } from "../../platform/errors";
import { sendTogether } from "../../platform/jobs/queues";
import type { DeliveryMessage } from "./relay.consumer";
import { retryDelaySeconds } from "./relay.retry";

export const RelayErrors = {
  source: () => ApiError.notFound("Source not found"),
  destination: () => ApiError.notFound("Destination not found"),
  event: () => ApiError.notFound("Event not found"),
};

export type Trigger = "ingest" | "replay";

/**
 * Queues one message per delivery of a replay, in batches of at most 100 (the Queues limit), shared
 * with the concurrent replays of this isolate (sendTogether). The messages are the safety net of
 * the first attempt, which starts at once in the background: they are delayed
 * until the first retry is due, so they retry a failed first attempt on schedule, and attempt a
 * delivery whose background attempt never ran (the isolate was evicted) at that time.
 */
export async function enqueueDeliveries(env: Env, sourceId: string, deliveryIds: string[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  await sendTogether(
    env.WEBHOOK_QUEUE,
    deliveryIds.map((id): DeliveryMessage => ({ delivery_id: id, source_id: sourceId })),
    { delaySeconds: retryDelaySeconds(1) ?? 0, contentType: "json" },
  );
}
