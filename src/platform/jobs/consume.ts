// How a product declares the consumer of one of its queues, and the one loop that runs it: parse
// each message's body with the queue's zod schema, hand it to the product's handler, and acknowledge
// it or have the queue deliver it again after the handler's delay. A body the schema refuses is
// logged and acknowledged (it would never become readable, and must not reach a query); a handler
// that throws (its database or a binding failed) is retried with backoff. The attempt cap a handler
// sees comes from the queue table (queues.ts), which a test holds against wrangler.toml, so a
// changed max_retries cannot disagree with the consumer that counts on it.
import { log, withLogScope } from "../log";
import type { z } from "zod";
import type { Env } from "../../env";
import { backoffSeconds } from "../backoff";
import { deliveriesOf, type MessageOf, type QueueDeclaration } from "./queues";

/** What a handler decided for one message: `null` acknowledges it, a number retries it after that many seconds. */
export type RetryIn = number | null;

export { rowId } from "./row-id";

/** What a handler knows about the delivery of the message it handles. */
export interface Delivery<Shared = undefined> {
  env: Env;
  /** The message's id, for logs. */
  id: string;
  /** The queue's deliveries of this message so far, this one included (1 = first). */
  attempts: number;
  /** Every delivery the queue makes of one message: its max_retries (queues.ts) plus the first. */
  maxAttempts: number;
  /** No delivery follows this one: a retry asked now sends the message to the dead-letter queue. */
  isLastAttempt: boolean;
  /** What the messages of one batch share (`perBatch`). */
  shared: Shared;
}

export interface ConsumerSpec<Q extends QueueDeclaration, S extends z.ZodType<MessageOf<Q>>, Shared> {
  /** The queue consumed (`defineQueue`; the binding producing to it carries the schema's type in Env). */
  queue: Q;
  /** The message body; a body it refuses is acknowledged unhandled. */
  schema: S;
  /** Handles one message. */
  handle: (body: z.output<S>, delivery: Delivery<Shared>) => Promise<RetryIn>;
  /** The delay after `handle` threw (default: exponential backoff by attempt). */
  retryAfterError?: (attempts: number) => number;
  /** Messages one after another (default), or all at once. */
  order?: "sequential" | "parallel";
  /** State the messages of a batch share: made before the first, finished after the last (its failure is logged). */
  perBatch?: { start: () => Shared; finish: (env: Env, shared: Shared) => Promise<void> };
}

/** A declared consumer: what `src/index.ts` dispatches a batch of the queue named `queue` to. */
export interface Consumer {
  readonly queue: string;
  consume(batch: MessageBatch<unknown>, env: Env): Promise<void>;
}

/**
 * Declares the consumer of `spec.queue`. The schema must be exactly the type the queue's producer
 * binding carries (env.ts): what it parses to must be a body producers send (its constraint), and
 * every body producers may send must be one it accepts (the conditional part), so neither side can
 * change without the other failing the type-check.
 */
export function defineConsumer<Q extends QueueDeclaration, S extends z.ZodType<MessageOf<Q>>, Shared = undefined>(
  spec: ConsumerSpec<Q, S, Shared> & ([MessageOf<Q>] extends [z.input<S>] ? unknown : { schema: "refuses bodies the queue's producers may send" }),
): Consumer {
  const maxAttempts = deliveriesOf(spec.queue);
  const queue = spec.queue.name;
  return {
    queue,
    async consume(batch, env) {
      const shared = spec.perBatch ? spec.perBatch.start() : (undefined as Shared);
      const one = (message: Message<unknown>) => withLogScope({ queue, message_id: message.id, attempts: message.attempts }, () => handleOne(message));
      const handleOne = async (message: Message<unknown>) => {
        const parsed = spec.schema.safeParse(message.body);
        if (!parsed.success) {
          const issues = parsed.error.issues.slice(0, 5).map((issue) => `${issue.path.join(".") || "(body)"}: ${issue.message}`);
          log.error("unreadable message dropped", { issues });
          message.ack();
          return;
        }
        const attempts = message.attempts;
        let retryIn: RetryIn;
        try {
          retryIn = await spec.handle(parsed.data, { env, id: message.id, attempts, maxAttempts, isLastAttempt: attempts >= maxAttempts, shared });
        } catch (error) {
          log.error("message failed, retrying", { error: String(error) });
          retryIn = (spec.retryAfterError ?? backoffSeconds)(attempts);
        }
        if (retryIn === null) message.ack();
        else message.retry({ delaySeconds: retryIn });
      };
      if (spec.order === "parallel") await Promise.all(batch.messages.map(one));
      else for (const message of batch.messages) await one(message);
      if (spec.perBatch) {
        try {
          await spec.perBatch.finish(env, shared);
        } catch (error) {
          log.error("end of batch failed", { queue, error: String(error) });
        }
      }
    },
  };
}

/**
 * The dispatch table of `src/index.ts`: each declared consumer by its queue. Two declarations for
 * one queue throw (one of them would silently never run), so the Worker does not start.
 */
export function consumerTable(consumers: readonly Consumer[]): Partial<Record<string, Consumer>> {
  const table: Partial<Record<string, Consumer>> = {};
  for (const consumer of consumers) {
    if (table[consumer.queue]) throw new Error(`two consumers declared for queue ${consumer.queue}`);
    table[consumer.queue] = consumer;
  }
  return table;
}
