// A queue played by the test instead of the runtime: what the app sends to one queue binding is
// recorded, and `deliver()` hands it to the Worker's own queue handler (src/index.ts, so the real
// dispatch and consumer) in batches built with the pool's createMessageBatch, of the queue's
// max_batch_size in wrangler.toml, reading each message's outcome with getQueueResult. What the
// consumer sends in turn is delivered too, until nothing is left. A test then waits for no real
// batch timeout (a second per hop); one test per product still goes through the real queue.
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import type { Env } from "../../src/env";
import worker from "../../src/index";
import { queueNamed } from "../../src/platform/jobs/queues";

export interface PlayedMessage {
  id: string;
  body: unknown;
  /** The delay the sender asked for; `deliver()` does not wait for it. */
  delaySeconds?: number;
}

export interface Delivery {
  id: string;
  body: unknown;
  attempts: number;
  /** What the consumer decided: acknowledged, or to be delivered again after `delaySeconds`. */
  outcome: "acked" | "retried";
  delaySeconds?: number;
}

export interface PlayedQueue {
  /** The pool's bindings with this queue's binding replaced by the recorder: pass it to `call()`. */
  env: Env;
  /** Sent and not delivered yet, oldest first. */
  pending: PlayedMessage[];
  /**
   * Delivers every pending message, first attempt, and what the consumer sends meanwhile, until
   * none is left. Retried messages are reported, not delivered again: a test that cares about a
   * later attempt delivers it itself.
   */
  deliver(): Promise<Delivery[]>;
}

/** getQueueResult's answer (FetcherQueueResult, declared only in the experimental workers types). */
interface QueueResult {
  outcome: string;
  ackAll: boolean;
  retryBatch: { retry: boolean; delaySeconds?: number };
  explicitAcks: string[];
  retryMessages: Array<{ msgId: string; delaySeconds?: number }>;
}

/** Plays the queue named `queue` (one a binding produces to). */
export function playedQueue(queue: string): PlayedQueue {
  const binding = queueNamed(queue).binding;
  if (binding === null) throw new Error(`no binding produces to ${queue}`);
  const batchSize = env.TEST_WRANGLER_JOBS.consumers.find((c) => c.queue === queue)?.max_batch_size ?? 10;
  const pending: PlayedMessage[] = [];
  let next = 0;
  const record = (body: unknown, delaySeconds?: number) => {
    pending.push({ id: `played-${queue}-${++next}`, body, ...(delaySeconds !== undefined ? { delaySeconds } : {}) });
  };
  const recorder = {
    send: async (body: unknown, options?: QueueSendOptions) => record(body, options?.delaySeconds),
    sendBatch: async (messages: Iterable<MessageSendRequest<unknown>>, options?: QueueSendBatchOptions) => {
      for (const m of messages) record(m.body, m.delaySeconds ?? options?.delaySeconds);
    },
  } as unknown as Queue;
  const playedEnv = { ...(env as Env), [binding as string]: recorder } as Env;

  async function deliverBatch(messages: PlayedMessage[]): Promise<Delivery[]> {
    const batch = createMessageBatch(
      queue,
      messages.map((m) => ({ id: m.id, timestamp: new Date(), attempts: 1, body: m.body })),
    );
    const ctx = createExecutionContext();
    await worker.queue!(batch, playedEnv, ctx);
    const result = (await getQueueResult(batch, ctx)) as QueueResult;
    return messages.map((m) => {
      const retried = result.retryMessages.find((r) => r.msgId === m.id);
      const acked = result.outcome === "ok" && (result.ackAll || result.explicitAcks.includes(m.id) || (!retried && !result.retryBatch.retry));
      if (acked && !retried) return { id: m.id, body: m.body, attempts: 1, outcome: "acked" };
      const delaySeconds = retried?.delaySeconds ?? result.retryBatch.delaySeconds;
      return { id: m.id, body: m.body, attempts: 1, outcome: "retried", ...(delaySeconds !== undefined ? { delaySeconds } : {}) };
    });
  }

  return {
    env: playedEnv,
    pending,
    async deliver() {
      const deliveries: Delivery[] = [];
      while (pending.length > 0) deliveries.push(...(await deliverBatch(pending.splice(0, batchSize))));
      return deliveries;
    },
  };
}
