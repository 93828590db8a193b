// The platform's queues in one place: the name wrangler.toml declares each with, the binding that
// produces to it, and how many times the runtime delivers one message (max_retries + 1). Consumers
// take their attempt caps from here, and a test holds this table against wrangler.toml, so a
// changed max_retries cannot silently disagree with the consumer that counts on it.
import type { Env } from "../../env";
import { Coalescer } from "../coalesce";

type QueueBinding = { [K in keyof Env]: Env[K] extends Queue ? K : never }[keyof Env];

export const QUEUES = {
  "report-export": { binding: "EXPORT_QUEUE", maxRetries: 5 },
  "audit-scans": { binding: "SCAN_QUEUE", maxRetries: 5 },
  "webhook-deliveries": { binding: "WEBHOOK_QUEUE", maxRetries: 10 },
  "push-sends": { binding: "PUSH_QUEUE", maxRetries: 5 },
  "mail-sends": { binding: "MAIL_QUEUE", maxRetries: 5 },
  "alert-notifications": { binding: "ALERT_QUEUE", maxRetries: 5 },
  "log-alert-checks": { binding: "ALERT_CHECK_QUEUE", maxRetries: 2 },
  "survey-webhooks": { binding: "SURVEY_QUEUE", maxRetries: 8 },
  /** Where every other queue's messages go after their last delivery; consumed only to log them. */
  "platform-dlq": { binding: null, maxRetries: null },
} as const satisfies Record<string, { binding: QueueBinding | null; maxRetries: number | null }>;

export type QueueName = keyof typeof QUEUES;

/**
 * The message body of `queue`: the type its producer binding carries in `Env` (each inferred from
 * the queue's zod schema beside its consumer), `unknown` for a queue no binding produces to.
 */
export type MessageOf<Q extends QueueName> = (typeof QUEUES)[Q]["binding"] extends infer B extends keyof Env
  ? Env[B] extends Queue<infer Body>
    ? Body
    : never
  : unknown;

/** Cloudflare's max_retries when a consumer in wrangler.toml does not set it. */
const DEFAULT_MAX_RETRIES = 3;

/** How many times the runtime delivers one message of `queue`: the first delivery plus its retries. */
export function deliveriesOf(queue: QueueName): number {
  return (QUEUES[queue].maxRetries ?? DEFAULT_MAX_RETRIES) + 1;
}

/** Queue.sendBatch takes at most 100 messages and 256 KB in all. */
const BATCH_MESSAGES = 100;
const BATCH_BYTES = 240_000;

/**
 * Sends every body, in as few `sendBatch` calls as the runtime's limits allow (100 messages, 256 KB
 * a call). Bodies are small records of ids; a body over the batch byte budget goes alone.
 */
export async function sendAll<Body>(queue: Queue<Body>, bodies: Body[], options?: QueueSendOptions): Promise<void> {
  let batch: MessageSendRequest<Body>[] = [];
  let bytes = 0;
  for (const body of bodies) {
    const size = JSON.stringify(body)?.length ?? 0;
    if (batch.length > 0 && (batch.length === BATCH_MESSAGES || bytes + size > BATCH_BYTES)) {
      await queue.sendBatch(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(options ? { body, ...options } : { body });
    bytes += size;
  }
  if (batch.length > 0) await queue.sendBatch(batch);
}

/** The queue-send lines of this isolate, per queue binding and send options. */
const sendLines = new WeakMap<object, Coalescer<{ bodies: unknown[]; options?: QueueSendOptions }, null>>();

/**
 * sendAll, with the sends of concurrent requests of this isolate to the same queue carried by
 * shared `sendBatch` calls (at most one in flight per queue; those arriving meanwhile go together
 * in the next). Resolves once this request's bodies are sent; a failed call fails every request it
 * carried (each then undoes its own work, as after its own failed send).
 */
export function sendTogether<Body>(queue: Queue<Body>, bodies: Body[], options?: QueueSendOptions): Promise<void> {
  if (bodies.length === 0) return Promise.resolve();
  let lines = sendLines.get(queue);
  if (!lines) {
    lines = new Coalescer(async (_key, requests) => {
      await sendAll(
        queue as Queue<unknown>,
        requests.flatMap((r) => r.bodies),
        requests[0]!.options,
      );
      return requests.map(() => null);
    });
    sendLines.set(queue, lines);
  }
  return lines.run(JSON.stringify(options ?? {}), { bodies, options }).then(() => undefined);
}
