// Shapes the push store and the Worker exchange (apart from the store itself, so the Worker's side
// imports no Durable Object class), and the `send` messages of rows the store's sweep re-queues
// (requeueStuck: the alarm's, and the tests', with a queue of their own).
import type { PushDeliveryStatus } from "../../../db/schema";
import { sendAll } from "../../../platform/jobs/queues";
import { SEND_CHUNK, type PushQueueMessage } from "../push.messages";

export { SEND_CHUNK };

/** A subscriber as stored: `tags` is JSON text of a string array. */
export interface SubscriberRecord {
  id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  expiration_time: number | null;
  tags: string;
  external_id: string | null;
  created_at: string;
  updated_at: string;
}

/** A delivery row as stored. */
export interface DeliveryRecord {
  notification_id: string;
  subscriber_id: string;
  status: PushDeliveryStatus;
  attempts: number;
  status_code: number | null;
  error: string | null;
  lease_until: number | null;
  next_attempt_at: string | null;
  updated_at: string;
}

/** The result of one send, as the consumer records it. */
export interface Outcome {
  subscriberId: string;
  status: "delivered" | "failed" | "removed" | "retrying";
  statusCode: number | null;
  error: string | null;
  /** Seconds the push service asked us to wait (Retry-After), if any. */
  retryAfter?: number;
}

/** Rows of the former D1 tables for one app (the operator's migration). */
export interface LegacyImport {
  subscribers: SubscriberRecord[];
  notifications: { id: string; created_at: string; fanout_done: number; completed_at: string | null }[];
  deliveries: DeliveryRecord[];
}

/** `send` messages for delivery rows, SEND_CHUNK subscribers of one notification each, in subscriber id order. */
export function sendMessages(rows: { notification_id: string; subscriber_id: string }[]): PushQueueMessage[] {
  const byNotification = new Map<string, string[]>();
  for (const row of rows) {
    const ids = byNotification.get(row.notification_id) ?? [];
    ids.push(row.subscriber_id);
    byNotification.set(row.notification_id, ids);
  }
  const messages: PushQueueMessage[] = [];
  for (const [notificationId, ids] of byNotification) {
    ids.sort();
    for (let i = 0; i < ids.length; i += SEND_CHUNK)
      messages.push({ kind: "send", notification_id: notificationId, subscriber_ids: ids.slice(i, i + SEND_CHUNK) });
  }
  return messages;
}

/**
 * The store's sweep of lost `send` messages (its alarm runs it with the Worker's queue): the rows
 * `takeStuck` marks go out again in ordinary `send` messages. No token is needed: the consumer's
 * claim decides which of a swept message and a late original sends. If the queue send fails, the
 * rows are due again SWEEP_STUCK_MS later. Returns the rows re-queued.
 */
export async function requeueStuck(
  queue: Queue<PushQueueMessage>,
  store: { takeStuck(now: number): Promise<{ notification_id: string; subscriber_id: string }[]> },
  now: number,
): Promise<number> {
  const rows = await store.takeStuck(now);
  if (rows.length) await sendAll(queue, sendMessages(rows));
  return rows.length;
}
