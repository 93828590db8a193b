// The push product's queue message (push-sends): a leaf file, so src/env.ts types the queue
// without importing the consumer.
import { z } from "zod";
import { rowId } from "../../platform/jobs/row-id";
import { defineQueue } from "../../platform/jobs/queues";

/** Subscribers per send message: 25 messages of a batch stay under the subrequest limit. */
export const SEND_CHUNK = 25;

/** Messages of the push-sends queue: a step of a notification's fan-out, or a chunk of its sends. */
export const pushQueueMessage = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("fanout"),
    notification_id: rowId,
    /** The last subscriber id of the previous step; null for the first. */
    after: rowId.nullable(),
    /** The notification's fanout_token when queued; absent only in messages queued before tokens existed. */
    token: rowId.optional(),
  }),
  // Producers chunk by SEND_CHUNK; the store's claim takes the ids as one JSON array.
  z.object({ kind: z.literal("send"), notification_id: rowId, subscriber_ids: z.array(rowId).max(SEND_CHUNK) }),
]);
export type PushQueueMessage = z.infer<typeof pushQueueMessage>;

/**
 * The queue of `PushQueueMessage` (wrangler.toml: max_retries = 5). Its claim: a chunk of 25 sends
 * with a 10 s timeout each, in parallel, under a 5-minute lease (a test holds it); 5 sends per subscriber.
 */
export const pushSendsQueue = defineQueue({ name: "push-sends", binding: "PUSH_QUEUE", maxRetries: 5, claim: { leaseMs: 5 * 60_000, maxAttempts: 5 } });

// The producer binding carries the message type, so a producer sending anything else fails the
// type-check (wrangler's generated types know only `Queue`).
declare module "../../env" {
  interface Env {
    PUSH_QUEUE: Queue<PushQueueMessage>;
  }
}
