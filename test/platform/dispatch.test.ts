// src/index.ts dispatches queue batches by queue name and cron runs by expression. Nothing at run
// time checks those names against wrangler.toml, so this test does: a queue or cron declared there
// without a handler (it would retry forever, or run nothing, silently), or a handler for a queue or
// cron that wrangler.toml no longer declares, fails here.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { consumers, cronJobs } from "../../src/index";
import { QUEUES, sendAll } from "../../src/platform/jobs/queues";

const jobs = env.TEST_WRANGLER_JOBS;

describe("dispatch tables against wrangler.toml", () => {
  it("has a consumer for every queue wrangler.toml consumes, and none for a queue it does not", () => {
    expect(Object.keys(consumers).sort()).toEqual(jobs.consumers.map((c) => c.queue).sort());
  });

  it("consumes every queue a binding produces to, with a dead-letter queue that is consumed too", () => {
    const consumed = new Set(jobs.consumers.map((c) => c.queue));
    for (const producer of jobs.producers) expect(consumed, `${producer.binding} → ${producer.queue}`).toContain(producer.queue);
    for (const consumer of jobs.consumers) {
      if (consumer.dead_letter_queue) expect(consumed, `dead letters of ${consumer.queue}`).toContain(consumer.dead_letter_queue);
    }
    const binding = env as unknown as Record<string, unknown>;
    for (const producer of jobs.producers) expect(binding[producer.binding], producer.binding).toBeDefined();
  });

  it("has jobs for every cron wrangler.toml schedules, and none for a schedule it does not", () => {
    expect(Object.keys(cronJobs).sort()).toEqual([...jobs.crons].sort());
    for (const [cron, list] of Object.entries(cronJobs)) expect(list.length, cron).toBeGreaterThan(0);
  });
});

describe("the queue table (src/platform/jobs/queues.ts) against wrangler.toml", () => {
  it("names every consumed queue with its max_retries, and every producer binding", () => {
    const table = Object.entries(QUEUES).map(([queue, q]) => ({ queue, max_retries: q.maxRetries })).sort((a, b) => a.queue.localeCompare(b.queue));
    const declared = jobs.consumers.map((c) => ({ queue: c.queue, max_retries: c.max_retries })).sort((a, b) => a.queue.localeCompare(b.queue));
    expect(table).toEqual(declared);
    const producers = Object.entries(QUEUES)
      .filter(([, q]) => q.binding !== null)
      .map(([queue, q]) => ({ binding: q.binding, queue }))
      .sort((a, b) => a.queue.localeCompare(b.queue));
    expect(producers).toEqual([...jobs.producers].sort((a, b) => a.queue.localeCompare(b.queue)));
  });
});

describe("sendAll", () => {
  function recording() {
    const calls: unknown[][] = [];
    const queue = { sendBatch: async (messages: Iterable<MessageSendRequest<unknown>>) => void calls.push([...messages]) } as unknown as Queue<unknown>;
    return { calls, queue };
  }

  it("sends in batches of at most 100 messages, in order", async () => {
    const { calls, queue } = recording();
    await sendAll(queue, Array.from({ length: 250 }, (_, i) => ({ id: i })));
    expect(calls.map((c) => c.length)).toEqual([100, 100, 50]);
    expect(calls.flat().map((m) => (m as { body: { id: number } }).body.id)).toEqual(Array.from({ length: 250 }, (_, i) => i));
  });

  it("keeps a batch under the 256 KB limit, passes options on, and sends nothing for no bodies", async () => {
    const { calls, queue } = recording();
    await sendAll(queue, Array.from({ length: 5 }, () => ({ pad: "x".repeat(100_000) })), { delaySeconds: 5 });
    expect(calls.map((c) => c.length)).toEqual([2, 2, 1]);
    expect((calls[0][0] as { delaySeconds: number }).delaySeconds).toBe(5);
    const empty = recording();
    await sendAll(empty.queue, []);
    expect(empty.calls).toEqual([]);
  });
});
