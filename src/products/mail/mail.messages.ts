// The mail product's queue message (mail-sends): a leaf file, so src/env.ts types the queue
// without importing the consumer.
import { z } from "zod";
import { rowId } from "../../platform/jobs/row-id";
import { defineQueue } from "../../platform/jobs/queues";

/** Messages of the mail-sends queue: a team email, a platform mail, or a mail webhook event to deliver. */
export const mailQueueMessage = z.discriminatedUnion("type", [
  z.object({ type: z.literal("email"), id: rowId }),
  z.object({ type: z.literal("platform"), id: rowId }),
  z.object({ type: z.literal("webhook"), webhookId: rowId, eventId: rowId }),
]);
export type MailQueueMessage = z.infer<typeof mailQueueMessage>;

/**
 * The queue of `MailQueueMessage` (wrangler.toml: max_retries = 5). Its claim: 2 minutes, the
 * provider call's timeout and more (a test holds it); 5 sends of one message.
 */
export const mailSendsQueue = defineQueue({ name: "mail-sends", binding: "MAIL_QUEUE", maxRetries: 5, claim: { leaseMs: 120_000, maxAttempts: 5 } });

// The producer binding carries the message type, so a producer sending anything else fails the
// type-check (wrangler's generated types know only `Queue`).
declare module "../../env" {
  interface Env {
    MAIL_QUEUE: Queue<MailQueueMessage>;
  }
}
