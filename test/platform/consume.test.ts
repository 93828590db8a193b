// The one consumer loop (src/platform/jobs/consume.ts), through the pool's real message batches.
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { backoffSeconds } from "../../src/platform/backoff";
import { consumeEach } from "../../src/platform/jobs/consume";

/** A real batch of the pool, with the delay of every retry recorded (the queue result names only the ids). */
function batchOf(bodies: unknown[], attempts = 1) {
  const batch = createMessageBatch("test-queue", bodies.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts, body })));
  const delays = new Map<string, number | undefined>();
  for (const message of batch.messages) {
    const retry = message.retry.bind(message);
    message.retry = (options?: QueueRetryOptions) => {
      delays.set(message.id, options?.delaySeconds);
      retry(options);
    };
  }
  return Object.assign(batch, { delays });
}

describe("consumeEach", () => {
  it("acknowledges what the handler finished, retries what it asks to, drops what it cannot read, backs off after a throw", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const batch = batchOf([{ n: 1 }, { n: 2 }, "not an object", { n: 3 }], 3);
    const seen: number[] = [];
    await consumeEach<{ n: number }>(batch, {
      name: "test",
      read: (body) => (typeof body === "object" && body !== null ? (body as { n: number }) : null),
      handle: async (body, attempts) => {
        expect(attempts).toBe(3);
        seen.push(body.n);
        if (body.n === 2) return 30;
        if (body.n === 3) throw new Error("database down");
        return null;
      },
    });
    const result = await getQueueResult(batch, createExecutionContext());
    expect(seen).toEqual([1, 2, 3]);
    expect(result.explicitAcks.sort()).toEqual(["m0", "m2"]);
    expect(result.retryMessages.map((m: { msgId: string }) => m.msgId).sort()).toEqual(["m1", "m3"]);
    expect(Object.fromEntries(batch.delays)).toEqual({ m1: 30, m3: backoffSeconds(3) });
    vi.restoreAllMocks();
  });

  it("runs messages at once when asked, one after another otherwise, and takes the product's delay after a throw", async () => {
    const order: string[] = [];
    let open!: () => void;
    const gate = { promise: new Promise<void>((resolve) => (open = resolve)), resolve: () => open() };
    const parallel = batchOf([{ id: "a" }, { id: "b" }]);
    const run = consumeEach<{ id: string }>(parallel, {
      name: "test",
      order: "parallel",
      read: (body) => body as { id: string },
      handle: async (body) => {
        order.push(`start ${body.id}`);
        if (body.id === "a") await gate.promise;
        order.push(`end ${body.id}`);
        return null;
      },
    });
    await new Promise((r) => setTimeout(r, 0));
    expect(order).toEqual(["start a", "start b", "end b"]);
    gate.resolve();
    await run;

    vi.spyOn(console, "error").mockImplementation(() => {});
    const sequential = batchOf([{ id: "x" }]);
    await consumeEach<{ id: string }>(sequential, {
      name: "test",
      read: (body) => body as { id: string },
      handle: async () => {
        throw new Error("boom");
      },
      retryAfterError: () => 10,
    });
    const result = await getQueueResult(sequential, createExecutionContext());
    expect(result.retryMessages.map((m: { msgId: string }) => m.msgId)).toEqual(["m0"]);
    expect(Object.fromEntries(sequential.delays)).toEqual({ m0: 10 });
    vi.restoreAllMocks();
  });
});
