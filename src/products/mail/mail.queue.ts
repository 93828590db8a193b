// The mail-sends queue's side of sending, a leaf of the mail product that the service, the consumer,
// the webhooks and the crons all import (none of them imports another for it, so no runtime import
// cycle runs through the queue): its messages, the delay of a message whose first attempt the
// request makes, and the enqueue (the message itself is in the leaf mail.messages.ts).
import type { Env } from "../../env";
import { sendAll } from "../../platform/jobs/queues";
import { mailQueueMessage, mailSendsQueue, type MailQueueMessage } from "./mail.messages";

export { mailQueueMessage, type MailQueueMessage };

/** How long a consumer holds a message it is sending. */
export const LEASE_MS = mailSendsQueue.claim.leaseMs;

/**
 * The delay of the queue message of an email whose first attempt the request makes: past the
 * consumer's lease, so the message reaches the consumer only once that attempt has finished
 * (delivered: the claim finds the email no longer `queued` and acks; failed: the claim takes it
 * and this is the retry) or has died (its lease has expired, so the claim takes it over). The
 * claim alone already guarantees one sender at a time; the delay makes sure the message is not
 * acked away while the first attempt still holds the lease and might yet fail.
 */
export const FIRST_ATTEMPT_QUEUE_DELAY_SECONDS = LEASE_MS / 1000 + 10;

/**
 * Sends queue messages, optionally delayed, in as few sendBatch calls as the runtime allows
 * (sendAll). Throws what the queue throws: the accept step (platform/jobs/accept.ts) logs it for a
 * send, whose rows wait `queued` for the sweep; the webhook fan-out logs it too.
 */
export function enqueue(env: Env, messages: MailQueueMessage[], delaySeconds?: number): Promise<void> {
  return sendAll(env.MAIL_QUEUE, messages, delaySeconds ? { delaySeconds } : undefined);
}
