// How a queue is declared: the name wrangler.toml declares it with, the binding that produces to
// it, how many times the runtime delivers one message (max_retries + 1), and, for a queue whose
// consumer claims rows (jobs/claim.ts), its lease and attempt cap. Each product declares its queues
// with `defineQueue` in its leaf `*.messages.ts` and lists them in its definition; consumers take
// their leases and attempt caps from the declaration, and a test holds every declared queue
// against wrangler.toml, so a changed max_retries cannot silently disagree with the consumer that
// counts on it.
import type { Env } from "../../env";
import { Coalescer } from "../coalesce";
import { catalog } from "../products";

/** A binding of Env that produces to a queue (products add theirs to Env by module augmentation). */
export type QueueBinding = { [K in keyof Env]: Env[K] extends Queue ? K : never }[keyof Env];

/**
 * How a claiming queue's rows are claimed (jobs/claim.ts): the lease (how long a claimed row belongs
 * to its consumer: longer than one attempt's outbound timeout, so a live consumer never loses its
 * row) and the attempt cap (attempts of one row before it is `failed`; null: no cap).
 */
export interface QueueClaim {
  readonly leaseMs: number;
  readonly maxAttempts: number | null;
}

/** A queue: wrangler.toml's name, the producer binding (null when nothing produces to it), its max_retries (null: Cloudflare's default) and, when its consumer claims rows, its claim. */
export interface QueueDeclaration<B extends QueueBinding | null = QueueBinding | null> {
  readonly name: string;
  readonly binding: B;
  readonly maxRetries: number | null;
  readonly claim?: QueueClaim;
}

/** Declares a queue (in a product's `*.messages.ts`, beside its message schema). */
export function defineQueue<const Q extends QueueDeclaration>(queue: Q): Q {
  return queue;
}

/**
 * The message body of a queue: the type its producer binding carries in `Env` (each inferred from
 * the queue's zod schema beside its consumer), `unknown` for a queue no binding produces to.
 */
export type MessageOf<Q extends QueueDeclaration> = Q["binding"] extends infer B extends keyof Env
  ? Env[B] extends Queue<infer Body>
    ? Body
    : never
  : unknown;

/** Where every other queue's messages go after their last delivery; consumed only to log them. */
export const deadLetterQueue = defineQueue({ name: "platform-dlq", binding: null, maxRetries: null });

/** Every declared queue: the platform's dead-letter queue and the products', by name. */
export function declaredQueues(): ReadonlyMap<string, QueueDeclaration> {
  return new Map([[deadLetterQueue.name, deadLetterQueue], ...catalog().queues]);
}

/** The declaration of the queue named `name`; throws for a queue nothing declares. */
export function queueNamed(name: string): QueueDeclaration {
  const queue = declaredQueues().get(name);
  if (!queue) throw new Error(`no queue named ${name} is declared`);
  return queue;
}

/** Cloudflare's max_retries when a consumer in wrangler.toml does not set it. */
const DEFAULT_MAX_RETRIES = 3;

/** How many times the runtime delivers one message of `queue`: the first delivery plus its retries. */
export function deliveriesOf(queue: QueueDeclaration | string): number {
  const declared = typeof queue === "string" ? queueNamed(queue) : queue;
  return (declared.maxRetries ?? DEFAULT_MAX_RETRIES) + 1;
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
