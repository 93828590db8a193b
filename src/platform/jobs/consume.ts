// The one loop of every queue consumer: read each message's body, hand it to the product's
// handler, and acknowledge it or have the queue deliver it again after the handler's delay. A body
// the product cannot read is logged and acknowledged (it would never become readable); a handler
// that throws (its database or a binding failed) is retried with backoff. Products declare only
// what differs: how to read a body, what to do with it, and in which order.
import { backoffSeconds } from "../backoff";
import { isPlainObject } from "../sizes";

/** What a handler decided for one message: `null` acknowledges it, a number retries it after that many seconds. */
export type RetryIn = number | null;

export interface ConsumerSpec<Body> {
  /** Names the consumer in logs. */
  name: string;
  /** The message body as the handler takes it, or null when it is not one. */
  read: (body: unknown) => Body | null;
  /** Handles one message; `attempts` counts the queue's deliveries of it (1 = first). */
  handle: (body: Body, attempts: number) => Promise<RetryIn>;
  /** The delay after `handle` threw (default: exponential backoff by attempt). */
  retryAfterError?: (attempts: number) => number;
  /** Messages one after another (default), or all at once. */
  order?: "sequential" | "parallel";
}

/** Runs `spec` over every message of `batch`. */
export async function consumeEach<Body>(batch: MessageBatch<unknown>, spec: ConsumerSpec<Body>): Promise<void> {
  const one = async (message: Message<unknown>) => {
    const body = spec.read(message.body);
    if (body === null) {
      console.error(JSON.stringify({ msg: `${spec.name}: unreadable message dropped`, id: message.id }));
      message.ack();
      return;
    }
    let retryIn: RetryIn;
    try {
      retryIn = await spec.handle(body, message.attempts);
    } catch (error) {
      console.error(JSON.stringify({ msg: `${spec.name}: message failed, retrying`, id: message.id, attempts: message.attempts, error: String(error) }));
      retryIn = (spec.retryAfterError ?? backoffSeconds)(message.attempts);
    }
    if (retryIn === null) message.ack();
    else message.retry({ delaySeconds: retryIn });
  };
  if (spec.order === "parallel") await Promise.all(batch.messages.map(one));
  else for (const message of batch.messages) await one(message);
}

/** A plain object body (the shape every queue message has), or null. */
export function objectBody<T>(body: unknown): T | null {
  return isPlainObject(body) ? (body as T) : null;
}
