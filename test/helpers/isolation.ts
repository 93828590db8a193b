// What keeps one test file from seeing another's work now that the files share one runner
// (vitest.config.ts: isolate false; test/setup.ts calls these around every file). A runner per
// file used to end a file's background work with the runtime; in a shared runtime two kinds of
// work could outlive their file:
// - the waitUntil work of requests sent through `call()` (first delivery attempts of relay and
//   mail): `settleRequests()` waits for it when the file ends;
// - queue messages still pending in the runtime's queue broker (reset() does not touch it: it is
//   an object that cannot be evicted), and retries scheduled for later: the guard below
//   acknowledges, without handing them to the consumer, the messages sent before the current
//   file began. Messages of the current file, and batches a test builds itself
//   (createMessageBatch with `timestamp: new Date()`), reach the consumer unchanged.
import { waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";

type QueueHandler = (batch: MessageBatch<unknown>, env: Cloudflare.Env, ctx: ExecutionContext) => Promise<void>;

const requests = new Set<ExecutionContext>();

/** Remembers a request's ExecutionContext so that the end of the file waits for its waitUntil work. */
export function trackRequest(ctx: ExecutionContext): ExecutionContext {
  requests.add(ctx);
  return ctx;
}

/** Waits for the waitUntil work of every request sent through `call()` since the last call. */
export async function settleRequests(): Promise<void> {
  const pending = [...requests];
  requests.clear();
  await Promise.all(pending.map((ctx) => waitOnExecutionContext(ctx)));
}

let fileStartedAt = 0;
const guarded = Symbol.for("test.isolation.queueGuard");

/**
 * Marks the start of a test file: from now on, queue messages sent before this instant are
 * another file's and are acknowledged without running the consumer. Installs the guard on the
 * Worker's queue handler once (the runtime looks the handler up on the default export per batch).
 */
export function startFile(): void {
  fileStartedAt = Date.now();
  const entry = worker as unknown as { queue: QueueHandler; [guarded]?: true };
  if (entry[guarded]) return;
  const deliver = entry.queue.bind(worker);
  entry.queue = async (batch, env, ctx) => {
    const current = batch.messages.filter((m) => m.timestamp.getTime() >= fileStartedAt);
    if (current.length === batch.messages.length) return deliver(batch, env, ctx);
    for (const message of batch.messages) if (!current.includes(message)) message.ack();
    if (current.length === 0) return;
    const view = {
      queue: batch.queue,
      messages: current,
      ackAll: () => current.forEach((m) => m.ack()),
      retryAll: (options?: QueueRetryOptions) => current.forEach((m) => m.retry(options)),
    } as unknown as MessageBatch<unknown>;
    return deliver(view, env, ctx);
  };
  entry[guarded] = true;
}
