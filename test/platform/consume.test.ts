// The consumer declaration and its loop (src/platform/jobs/consume.ts), through the pool's real
// message batches: schema validation before the handler, ack / retry / backoff, the attempt cap
// from the queue table, state shared by a batch; and the product schemas against the bodies their
// producers put on the wire, so a message queued before a deploy still parses after it.
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { describe, expect, expectTypeOf, it, vi } from "vitest";
import { z } from "zod";
import { backoffSeconds } from "../../src/platform/backoff";
import { defineConsumer, type Delivery } from "../../src/platform/jobs/consume";
import { deadLetterConsumer } from "../../src/platform/jobs/dead-letters";
import { deadLetterQueue, declaredQueues, deliveriesOf } from "../../src/platform/jobs/queues";
import { mailSendsQueue } from "../../src/products/mail/mail.messages";
import { pushSendsQueue } from "../../src/products/push/push.messages";
import { surveyWebhooksQueue } from "../../src/products/surveys/surveys.messages";
import { exportMessage } from "../../src/products/audit/audit.messages";
import { scanMessage } from "../../src/products/audit/audit-scan.messages";
import { alertCheck, alertNotification } from "../../src/products/logs/logs.messages";
import { mailQueueMessage } from "../../src/products/mail/mail.messages";
import { pushQueueMessage, SEND_CHUNK, type PushQueueMessage } from "../../src/products/push/push.consumer";
import { deliveryMessage } from "../../src/products/relay/relay.consumer";
import { surveyWebhookMessage } from "../../src/products/surveys/surveys.consumer";

/** A real batch of the pool, with the delay of every retry recorded (the queue result names only the ids). */
function batchOf(queue: string, bodies: unknown[], attempts = 1) {
  const batch = createMessageBatch(
    queue,
    bodies.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts, body })),
  );
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

async function resultOf(batch: MessageBatch<unknown>) {
  const result = await getQueueResult(batch, createExecutionContext());
  return { acked: [...result.explicitAcks].sort(), retried: result.retryMessages.map((m: { msgId: string }) => m.msgId).sort() };
}

/** The JSON lines logged through console.error while `run` runs. */
async function errorsLoggedBy(run: () => Promise<void>): Promise<Array<Record<string, unknown>>> {
  const spy = vi.spyOn(console, "error").mockImplementation(() => {});
  try {
    await run();
    return spy.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>);
  } finally {
    spy.mockRestore();
  }
}

// The loop is driven through one real queue with a one-field message; its handlers are the tests'.
const QUEUE = surveyWebhooksQueue.name;
const schema = surveyWebhookMessage;
const bodies = (...ids: string[]) => ids.map((id) => ({ delivery_id: id }));

describe("defineConsumer: the loop", () => {
  it("acknowledges what the handler finished, retries what it asks to, backs off after a throw", async () => {
    const batch = batchOf(QUEUE, bodies("1", "2", "3"), 3);
    const seen: Array<{ id: string; delivery: Omit<Delivery, "env"> }> = [];
    const consumer = defineConsumer({
      queue: surveyWebhooksQueue,
      schema,
      handle: async (body, { env: _env, ...delivery }) => {
        seen.push({ id: body.delivery_id, delivery });
        if (body.delivery_id === "2") return 30;
        if (body.delivery_id === "3") throw new Error("database down");
        return null;
      },
    });
    const logged = await errorsLoggedBy(() => consumer.consume(batch, env));
    expect(seen.map((s) => s.id)).toEqual(["1", "2", "3"]);
    expect(seen[0].delivery).toEqual({ id: "m0", attempts: 3, maxAttempts: deliveriesOf(QUEUE), isLastAttempt: false, shared: undefined });
    expect(await resultOf(batch)).toEqual({ acked: ["m0"], retried: ["m1", "m2"] });
    expect(Object.fromEntries(batch.delays)).toEqual({ m1: 30, m2: backoffSeconds(3) });
    // One JSON line, scoped to the message: the queue, its id and its deliveries come from the loop.
    expect(logged).toEqual([{ level: "error", msg: "message failed, retrying", queue: QUEUE, message_id: "m2", attempts: 3, error: "Error: database down" }]);
  });

  it("runs messages at once when asked, one after another otherwise, and takes the product's delay after a throw", async () => {
    const order: string[] = [];
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const handle = async (body: { delivery_id: string }) => {
      order.push(`start ${body.delivery_id}`);
      if (body.delivery_id === "1") await gate;
      order.push(`end ${body.delivery_id}`);
      return null;
    };
    const run = defineConsumer({ queue: surveyWebhooksQueue, schema, order: "parallel", handle }).consume(batchOf(QUEUE, bodies("1", "2")), env);
    await new Promise((r) => setTimeout(r, 0));
    expect(order).toEqual(["start 1", "start 2", "end 2"]);
    open();
    await run;

    order.length = 0;
    const sequential = defineConsumer({ queue: surveyWebhooksQueue, schema, handle });
    await sequential.consume(batchOf(QUEUE, bodies("1", "2", "3")), env);
    expect(order).toEqual(["start 1", "end 1", "start 2", "end 2", "start 3", "end 3"]);

    const failing = batchOf(QUEUE, bodies("1"));
    const throwing = defineConsumer({
      queue: surveyWebhooksQueue,
      schema,
      handle: async () => {
        throw new Error("boom");
      },
      retryAfterError: () => 10,
    });
    await errorsLoggedBy(() => throwing.consume(failing, env));
    expect(await resultOf(failing)).toEqual({ acked: [], retried: ["m0"] });
    expect(Object.fromEntries(failing.delays)).toEqual({ m0: 10 });
  });

  it("takes the attempt cap from the queue table: the last delivery is max_retries + 1", async () => {
    const seen: Array<[number, number, boolean]> = [];
    const consumer = defineConsumer({
      queue: surveyWebhooksQueue,
      schema: surveyWebhookMessage,
      handle: async (_body, { attempts, maxAttempts, isLastAttempt }) => {
        seen.push([attempts, maxAttempts, isLastAttempt]);
        return null;
      },
    });
    const cap = (surveyWebhooksQueue.maxRetries ?? 0) + 1;
    expect(deliveriesOf("survey-webhooks")).toBe(cap);
    for (const attempts of [1, cap - 1, cap]) await consumer.consume(batchOf("survey-webhooks", [{ delivery_id: "d" }], attempts), env);
    expect(seen).toEqual([
      [1, cap, false],
      [cap - 1, cap, false],
      [cap, cap, true],
    ]);
  });

  it("makes a batch's shared state before the first message and finishes it after the last, even when one failed", async () => {
    const steps: string[] = [];
    const consumer = defineConsumer({
      queue: surveyWebhooksQueue,
      schema,
      perBatch: {
        start: () => {
          steps.push("start");
          return [] as string[];
        },
        finish: async (_env, seen) => {
          steps.push(`finish ${seen.join(",")}`);
          throw new Error("fan-out down");
        },
      },
      handle: async (body, { shared }) => {
        shared.push(body.delivery_id);
        steps.push(`handle ${body.delivery_id}`);
        if (body.delivery_id === "2") throw new Error("boom");
        return null;
      },
    });
    const batch = batchOf(QUEUE, bodies("1", "2", "3"));
    const logged = await errorsLoggedBy(() => consumer.consume(batch, env));
    expect(steps).toEqual(["start", "handle 1", "handle 2", "handle 3", "finish 1,2,3"]);
    // The end of the batch failing changes nothing about the messages: logged, not thrown.
    expect(await resultOf(batch)).toEqual({ acked: ["m0", "m2"], retried: ["m1"] });
    expect(logged.map((l) => [l.msg, l.queue])).toEqual([
      ["message failed, retrying", QUEUE],
      ["end of batch failed", QUEUE],
    ]);
    // A second batch starts afresh.
    steps.length = 0;
    await errorsLoggedBy(() => consumer.consume(batchOf(QUEUE, bodies("7")), env));
    expect(steps).toEqual(["start", "handle 7", "finish 7"]);
  });
});

describe("defineConsumer: the message schema", () => {
  it("acks and logs a body the schema refuses, never retries it nor hands it to the handler; a valid one reaches the handler parsed and typed", async () => {
    const handled: PushQueueMessage[] = [];
    const consumer = defineConsumer({
      queue: pushSendsQueue,
      schema: pushQueueMessage,
      handle: async (body) => {
        expectTypeOf(body).toEqualTypeOf<PushQueueMessage>();
        handled.push(body);
        return null;
      },
    });
    const refused = [
      "not an object",
      null,
      { kind: "unknown", notification_id: "n1" },
      { kind: "fanout", notification_id: "n1" }, // `after` is always sent, null on the first step
      { kind: "send", notification_id: "n1", subscriber_ids: "s1" },
      { kind: "send", notification_id: "n1", subscriber_ids: Array.from({ length: SEND_CHUNK + 1 }, (_, i) => `s${i}`) },
      { kind: "send", notification_id: "", subscriber_ids: [] },
      { kind: "send", notification_id: "x".repeat(129), subscriber_ids: [] },
    ];
    const valid = { kind: "send", notification_id: "n1", subscriber_ids: ["s1", "s2"], extra: "dropped by the parse" };
    const batch = batchOf("push-sends", [...refused, valid], 5);
    const logged = await errorsLoggedBy(() => consumer.consume(batch, env));

    expect(handled).toEqual([{ kind: "send", notification_id: "n1", subscriber_ids: ["s1", "s2"] }]);
    const ids = refused.map((_, i) => `m${i}`);
    expect(await resultOf(batch)).toEqual({ acked: [...ids, `m${refused.length}`].sort(), retried: [] });
    expect(logged.map((l) => [l.msg, l.queue, l.message_id])).toEqual(ids.map((id) => ["unreadable message dropped", "push-sends", id]));
    // The log says what was wrong, field by field.
    expect(logged[3].issues).toEqual([expect.stringMatching(/^after: /)]);
    expect(logged[5].issues).toEqual([expect.stringMatching(/^subscriber_ids: /)]);
  });

  it("refuses, at type-check time, a schema that is not exactly the message type of the queue's producer binding", () => {
    const wider = mailQueueMessage.or(z.object({ type: z.literal("sms"), id: z.string() }));
    const narrower = z.object({ type: z.literal("email"), id: z.string() });
    const declarations = [
      // @ts-expect-error: parses to bodies PUSH_QUEUE's producers never send
      () => defineConsumer({ queue: pushSendsQueue, schema: surveyWebhookMessage, handle: async () => null }),
      // @ts-expect-error: parses to a kind MAIL_QUEUE's producers never send
      () => defineConsumer({ queue: mailSendsQueue, schema: wider, handle: async () => null }),
      // @ts-expect-error: refuses the platform and webhook messages MAIL_QUEUE's producers send
      () => defineConsumer({ queue: mailSendsQueue, schema: narrower, handle: async () => null }),
      // @ts-expect-error: the dead-letter queue receives any queue's body; a schema there would drop the others
      () => defineConsumer({ queue: deadLetterQueue, schema: narrower, handle: async () => null }),
      () => defineConsumer({ queue: mailSendsQueue, schema: mailQueueMessage, handle: async () => null }),
    ];
    expect(declarations).toHaveLength(5);
  });

  it("the dead-letter consumer acknowledges any body and logs it", async () => {
    const batch = batchOf("platform-dlq", ["text", { delivery_id: "d1" }], 6);
    const logged = await errorsLoggedBy(() => deadLetterConsumer.consume(batch, env));
    expect(await resultOf(batch)).toEqual({ acked: ["m0", "m1"], retried: [] });
    expect(logged).toEqual([
      { level: "error", msg: "dead letter", queue: "platform-dlq", message_id: "m0", attempts: 6, body: "text" },
      { level: "error", msg: "dead letter", queue: "platform-dlq", message_id: "m1", attempts: 6, body: { delivery_id: "d1" } },
    ]);
  });
});

describe("queue message schemas against the bodies on the wire", () => {
  // Bodies exactly as the producers send them (and sent them before the schemas existed): each
  // parses to itself, so a message queued before a deploy is still read after it.
  const uuid = "3f2b8c1e-6a4d-4e2f-9b1a-0c5d7e8f9a0b";
  const wire: Array<[string, z.ZodType, unknown[]]> = [
    ["report-export", exportMessage, [{ report_id: uuid, team_id: uuid }]],
    ["audit-scans", scanMessage, [{ scan_id: uuid, team_id: uuid }]],
    ["webhook-deliveries", deliveryMessage, [{ delivery_id: uuid }, { delivery_id: uuid, source_id: uuid }]],
    [
      "push-sends",
      pushQueueMessage,
      [
        { kind: "fanout", notification_id: uuid, after: null, token: uuid },
        { kind: "fanout", notification_id: uuid, after: uuid },
        { kind: "send", notification_id: uuid, subscriber_ids: [uuid, uuid] },
      ],
    ],
    [
      "mail-sends",
      mailQueueMessage,
      [
        { type: "email", id: uuid },
        { type: "platform", id: uuid },
        { type: "webhook", webhookId: uuid, eventId: uuid },
      ],
    ],
    [
      "alert-notifications",
      alertNotification,
      [
        {
          firing_id: uuid,
          alert_id: uuid,
          team_id: uuid,
          channel: "email",
          count: 12,
          window_start: "2026-11-25T10:00:00.000Z",
          triggered_at: "2026-11-25T10:05:00.000Z",
        },
        {
          kind: "resolved",
          firing_id: uuid,
          alert_id: uuid,
          team_id: uuid,
          channel: "webhook",
          count: 0,
          window_start: "2026-11-25T10:00:00.000Z",
          triggered_at: "2026-11-25T10:05:00.000Z",
          resolved_at: "2026-11-25T10:09:00.000Z",
        },
      ],
    ],
    [
      "log-alert-checks",
      alertCheck,
      [
        { at: 1_795_000_000_000, project_ids: [uuid] },
        { at: 1_795_000_000_000, project_ids: [] },
      ],
    ],
    ["survey-webhooks", surveyWebhookMessage, [{ delivery_id: uuid }, { delivery_id: uuid, token: uuid }]],
  ];

  it("has a schema for every queue a binding produces to", () => {
    const produced = [...declaredQueues().values()].filter((q) => q.binding !== null).map((q) => q.name);
    expect(wire.map(([queue]) => queue).sort()).toEqual(produced.sort());
  });

  for (const [queue, schema, bodies] of wire) {
    it(`${queue}: the bodies its producers send parse unchanged`, () => {
      for (const body of bodies) expect(schema.parse(JSON.parse(JSON.stringify(body)))).toEqual(body);
    });
  }

  it("refuses what no producer sends", () => {
    expect(exportMessage.safeParse({ report_id: uuid }).success).toBe(false);
    expect(mailQueueMessage.safeParse({ type: "webhook", id: uuid }).success).toBe(false);
    expect(
      alertNotification.safeParse({ firing_id: uuid, alert_id: uuid, team_id: uuid, channel: "sms", count: 1, window_start: "x", triggered_at: "y" }).success,
    ).toBe(false);
    expect(alertCheck.safeParse({ at: "now", project_ids: [uuid] }).success).toBe(false);
    expect(surveyWebhookMessage.safeParse({ delivery_id: uuid, token: null }).success).toBe(false);
    expect(deliveryMessage.safeParse({ delivery_id: 42 }).success).toBe(false);
  });
});
