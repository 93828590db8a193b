// src/index.ts dispatches queue batches by queue name and cron runs by expression, from the lists
// of consumer and cron declarations. Nothing at deploy time checks those names against
// wrangler.toml, so this test does: a queue or cron declared there without a handler (it would
// retry forever, or run nothing), a handler for a queue or cron that wrangler.toml no longer
// declares, or two declarations for one queue, fail here; a cron expression that reaches the
// Worker without jobs is logged.
import { createExecutionContext, createMessageBatch, createScheduledController, env, getQueueResult } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import worker, { consumerDeclarations, consumers, cronDeclarations, cronJobs } from "../../src/index";
import { consumerTable } from "../../src/platform/jobs/consume";
import { cronTable, defineCron, runScheduled, SCHEDULES } from "../../src/platform/jobs/cron";
import { declaredQueues, sendAll } from "../../src/platform/jobs/queues";

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
    expect(Object.values(SCHEDULES).sort()).toEqual([...jobs.crons].sort());
  });

  it("has one declaration per queue: a second consumer for a queue fails, as does a second cron job of one name", () => {
    const queues = consumerDeclarations.map((c) => c.queue);
    expect(new Set(queues).size).toBe(queues.length);
    expect(Object.keys(consumers).sort()).toEqual([...queues].sort());
    for (const queue of queues) expect(consumers[queue]).toBe(consumerDeclarations.find((c) => c.queue === queue));
    const [first, second] = consumerDeclarations;
    expect(() => consumerTable([first, second, { ...first }])).toThrow(`two consumers declared for queue ${first.queue}`);

    const names = cronDeclarations.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    expect(Object.values(cronJobs).flat().length).toBe(cronDeclarations.length);
    const run = async () => null;
    expect(() => cronTable([defineCron({ name: "a", schedule: "hourly", run }), defineCron({ name: "a", schedule: "everyMinute", run })])).toThrow(
      "two cron jobs named a",
    );
  });

  it("retries and logs a batch of a queue without a consumer (never acks it away), and dispatches a known one to its declaration", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const unknown = createMessageBatch("not-a-queue", [{ id: "u1", timestamp: new Date(), attempts: 1, body: { delivery_id: "d" } }]);
      const ctx = createExecutionContext();
      await worker.queue(unknown, env, ctx);
      const result = await getQueueResult(unknown, ctx);
      expect(result.retryBatch.retry).toBe(true);
      expect(result.explicitAcks).toEqual([]);
      expect(errors.mock.calls.map(([line]) => JSON.parse(String(line)))).toEqual([{ level: "error", msg: "no consumer for queue", queue: "not-a-queue" }]);

      errors.mockClear();
      const dead = createMessageBatch("platform-dlq", [{ id: "d1", timestamp: new Date(), attempts: 1, body: "anything" }]);
      await worker.queue(dead, env, ctx);
      expect((await getQueueResult(dead, ctx)).explicitAcks).toEqual(["d1"]);
      expect(errors.mock.calls.map(([line]) => JSON.parse(String(line)).msg)).toEqual(["dead letter"]);
    } finally {
      errors.mockRestore();
    }
  });

  it("logs a cron expression that has no jobs, and the name of a job that failed, running the others", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      await worker.scheduled(createScheduledController({ cron: "5 4 * * *", scheduledTime: Date.now() }), env);
      await worker.scheduled(createScheduledController({ cron: "constructor", scheduledTime: Date.now() }), env);
      expect(errors.mock.calls.map(([line]) => JSON.parse(String(line)))).toEqual([
        { level: "error", msg: "no cron jobs for this expression", cron: "5 4 * * *" },
        { level: "error", msg: "no cron jobs for this expression", cron: "constructor" },
      ]);

      errors.mockClear();
      const ran: string[] = [];
      const job = (name: string, fail = false) =>
        defineCron({
          name,
          schedule: "hourly",
          run: async () => {
            ran.push(name);
            if (fail) throw new Error(`${name} broke`);
          },
        });
      await runScheduled(cronTable([job("first"), job("second", true), job("third")]), SCHEDULES.hourly, env);
      expect(ran).toEqual(["first", "second", "third"]);
      expect(errors.mock.calls.map(([line]) => JSON.parse(String(line)))).toEqual([
        { level: "error", msg: "cron job failed", cron: SCHEDULES.hourly, job: "second", error: "Error: second broke" },
      ]);
    } finally {
      errors.mockRestore();
    }
  });
});

describe("the declared queues (the products' and the dead-letter queue) against wrangler.toml", () => {
  it("names every consumed queue with its max_retries, and every producer binding", () => {
    const table = [...declaredQueues().values()].map((q) => ({ queue: q.name, max_retries: q.maxRetries })).sort((a, b) => a.queue.localeCompare(b.queue));
    const declared = jobs.consumers.map((c) => ({ queue: c.queue, max_retries: c.max_retries })).sort((a, b) => a.queue.localeCompare(b.queue));
    expect(table).toEqual(declared);
    const producers = [...declaredQueues().values()]
      .filter((q) => q.binding !== null)
      .map((q) => ({ binding: q.binding, queue: q.name }))
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
    await sendAll(
      queue,
      Array.from({ length: 250 }, (_, i) => ({ id: i })),
    );
    expect(calls.map((c) => c.length)).toEqual([100, 100, 50]);
    expect(calls.flat().map((m) => (m as { body: { id: number } }).body.id)).toEqual(Array.from({ length: 250 }, (_, i) => i));
  });

  it("keeps a batch under the 256 KB limit, passes options on, and sends nothing for no bodies", async () => {
    const { calls, queue } = recording();
    await sendAll(
      queue,
      Array.from({ length: 5 }, () => ({ pad: "x".repeat(100_000) })),
      { delaySeconds: 5 },
    );
    expect(calls.map((c) => c.length)).toEqual([2, 2, 1]);
    expect((calls[0][0] as { delaySeconds: number }).delaySeconds).toBe(5);
    const empty = recording();
    await sendAll(empty.queue, []);
    expect(empty.calls).toEqual([]);
  });
});
