// src/index.ts dispatches queue batches by queue name and cron runs by expression. Nothing at run
// time checks those names against wrangler.toml, so this test does: a queue or cron declared there
// without a handler (it would retry forever, or run nothing, silently), or a handler for a queue or
// cron that wrangler.toml no longer declares, fails here.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { consumers, cronJobs } from "../../src/index";

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
