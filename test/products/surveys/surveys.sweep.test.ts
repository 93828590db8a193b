// The sweep (every minute) of survey webhook deliveries whose queue message was lost, and the consumer's
// claim that keeps every delivery to exactly one POST: a completion whose queue send failed is
// re-queued once it is stale, a late original or a duplicate message sends nothing, a retry that
// is merely scheduled is left alone, and each run is bounded.
import { createScheduledController, env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../../src/index";
import { setClock } from "../../../src/platform/clock";
import { completeResponse } from "../../../src/products/surveys/survey-responses.service";
import {
  CLAIM_LEASE_MS,
  DELIVERY_TIMEOUT_MS,
  surveyWebhooksConsumer,
  MAX_DELIVERY_ATTEMPTS,
  type SurveyWebhookMessage,
} from "../../../src/products/surveys/surveys.consumer";
import { surveyWebhooksQueue } from "../../../src/products/surveys/surveys.messages";
import { deliveriesOf } from "../../../src/platform/jobs/queues";
import { SWEEP_BATCH_SIZE, SWEEP_MAX_BATCHES, SWEEP_STALE_MS, sweepSurveyDeliveries, UNATTEMPTED_STALE_MS } from "../../../src/products/surveys/surveys.cron";
import { getDb } from "../../../src/db/client";
import { loadSurvey } from "../../../src/products/surveys/surveys.queries";
import { surveyStore } from "../../../src/products/surveys/surveys.store";
import { call, json } from "../../helpers/api";
import { playedQueue } from "../../helpers/queues";
import { activeSurvey, answer, startOk } from "./helpers";

const MINUTE = 60_000;

/** Outbound POSTs, answered `status`; a `delayMs` keeps an attempt in flight for a while. */
function receiver(status = 200, delayMs = 0): string[] {
  const urls: string[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
    urls.push(typeof input === "string" ? input : input instanceof URL ? input.toString() : input.url);
    if (delayMs) await new Promise((done) => setTimeout(done, delayMs));
    return new Response("ok", { status });
  });
  return urls;
}

/** A SURVEY_QUEUE that records what is sent (or refuses everything), and an env using it. */
function queueEnv(fail = false) {
  const sent: SurveyWebhookMessage[] = [];
  const batches: number[] = [];
  const queue = {
    send: vi.fn(async () => {
      throw new Error("not used");
    }),
    sendBatch: vi.fn(async (messages: Array<{ body: SurveyWebhookMessage }>) => {
      if (fail) throw new Error("queue down");
      batches.push(messages.length);
      sent.push(...messages.map((m) => m.body));
    }),
  };
  return { env: { ...env, SURVEY_QUEUE: queue } as unknown as typeof env, queue, sent, batches };
}

function fakeBatch(body: SurveyWebhookMessage, attempts = 1) {
  const message = { id: crypto.randomUUID(), timestamp: new Date(), body, attempts, ack: vi.fn(), retry: vi.fn() };
  const batch = { queue: "survey-webhooks", messages: [message], ackAll: vi.fn(), retryAll: vi.fn() } as unknown as MessageBatch<unknown>;
  return { batch, message };
}

async function deliveryRow(id: string) {
  return env.DB.prepare("SELECT status, attempts, queue_token, lease_until, next_attempt_at, last_error FROM survey_webhook_deliveries WHERE id = ?")
    .bind(id)
    .first<{
      status: string;
      attempts: number;
      queue_token: string | null;
      lease_until: number | null;
      next_attempt_at: string | null;
      last_error: string | null;
    }>();
}

async function webhookSurvey(url: string) {
  const built = await activeSurvey([{ type: "yes_no", title: "Again?" }]);
  const hook = (await json(await call("POST", `surveys/${built.survey.id}/webhooks`, { key: built.team.key, body: { url } }))).data;
  return { ...built, hook };
}

/** A pending delivery row of `webhookId`, as a completion writes it, created at `createdAt`. */
async function insertPending(teamId: string, surveyId: string, webhookId: string, createdAt: string, attempts = 0) {
  const id = crypto.randomUUID();
  await env.DB.prepare(
    `INSERT INTO survey_webhook_deliveries (id, team_id, survey_id, webhook_id, event, payload, status, attempts, created_at, next_attempt_at)
     VALUES (?, ?, ?, ?, 'response.completed', '{}', 'pending', ?, ?, ?)`,
  )
    .bind(id, teamId, surveyId, webhookId, attempts, createdAt, createdAt)
    .run();
  return id;
}

const mine = (sent: SurveyWebhookMessage[], id: string) => sent.filter((m) => m.delivery_id === id);

afterEach(() => {
  vi.restoreAllMocks();
  setClock(null);
});

describe("survey delivery sweep", () => {
  it("caps a delivery at every delivery the queue makes (its claim, declared with it in surveys.messages.ts), under a lease that outlasts a request", () => {
    expect(MAX_DELIVERY_ATTEMPTS).toBe(surveyWebhooksQueue.claim.maxAttempts);
    expect(surveyWebhooksQueue.claim.maxAttempts).toBe(deliveriesOf(surveyWebhooksQueue));
    expect(CLAIM_LEASE_MS).toBe(surveyWebhooksQueue.claim.leaseMs);
    expect(CLAIM_LEASE_MS).toBeGreaterThan(DELIVERY_TIMEOUT_MS);
  });

  it("re-queues a completion whose queue send failed, through the minute cron, and delivers it exactly once", async () => {
    const urls = receiver();
    const url = `http://127.0.0.1:9/swept-${crypto.randomUUID()}`;
    const { team, survey, questions, hook } = await webhookSurvey(url);
    const start = Date.now();
    setClock(start);
    const r = await startOk(survey.slug);
    await answer(survey.slug, r.id, questions[0].id, true);

    // The completion commits, its queue send fails: the respondent still sees it completed. (The
    // send is the survey store's, after its D1 side: the store's object is given the failing queue.)
    const broken = queueEnv(true);
    const store = surveyStore(env, survey.id);
    await runInDurableObject(store, (instance) => void Object.assign(instance, { env: broken.env }));
    const state = await completeResponse(env, { ...(await loadSurvey(getDb(env.DB), team.teamId, survey.id)), plan: "pro", ownerEmail: null }, r.id);
    await runInDurableObject(store, (instance) => void Object.assign(instance, { env }));
    expect(state.status).toBe("completed");
    expect(broken.queue.sendBatch).toHaveBeenCalledTimes(1);
    const { id } = (await env.DB.prepare("SELECT id FROM survey_webhook_deliveries WHERE webhook_id = ?").bind(hook.id).first<{ id: string }>())!;
    expect(await deliveryRow(id)).toMatchObject({ status: "pending", attempts: 0, queue_token: null });

    // Not stale yet (never attempted: a minute): a message may still be on its way.
    const early = queueEnv();
    setClock(start + UNATTEMPTED_STALE_MS);
    await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: start + UNATTEMPTED_STALE_MS }), early.env);
    expect(mine(early.sent, id)).toEqual([]);

    // Stale: the minute cron sends it again, with a new token; a second run sends nothing more.
    const recorder = queueEnv();
    setClock(start + UNATTEMPTED_STALE_MS + 1000);
    const controller = createScheduledController({ cron: "* * * * *", scheduledTime: start + UNATTEMPTED_STALE_MS + 1000 });
    await worker.scheduled(controller, recorder.env);
    await worker.scheduled(controller, recorder.env);
    const requeued = mine(recorder.sent, id);
    expect(requeued).toEqual([{ delivery_id: id, token: expect.stringMatching(/^[0-9a-f]{32}$/) }]);
    expect(await deliveryRow(id)).toMatchObject({
      status: "pending",
      queue_token: requeued[0].token,
      next_attempt_at: new Date(start + UNATTEMPTED_STALE_MS + 1000).toISOString(),
    });

    // The original message was only late after all: it arrives now and sends nothing.
    const late = fakeBatch({ delivery_id: id });
    await surveyWebhooksConsumer.consume(late.batch, env);
    expect(late.message.ack).toHaveBeenCalled();
    expect(urls.filter((u) => u === url)).toHaveLength(0);

    // The re-queued message delivers; its redelivery does not.
    const swept = fakeBatch(requeued[0]);
    await surveyWebhooksConsumer.consume(swept.batch, env);
    expect(swept.message.ack).toHaveBeenCalled();
    const again = fakeBatch(requeued[0], 2);
    await surveyWebhooksConsumer.consume(again.batch, env);
    expect(again.message.ack).toHaveBeenCalled();
    expect(urls.filter((u) => u === url)).toHaveLength(1);
    expect(await deliveryRow(id)).toMatchObject({ status: "delivered", attempts: 1, lease_until: null });

    // Settled rows are never swept again.
    setClock(start + 3 * SWEEP_STALE_MS);
    await sweepSurveyDeliveries(recorder.env);
    expect(mine(recorder.sent, id)).toHaveLength(1);
  });

  // The queue is played (test/helpers/queues.ts): the swept message goes to the Worker's own queue
  // handler at once; surveys.webhooks.test.ts goes through the real queue end to end.
  it("delivers a swept message through the Worker's queue handler and consumer", async () => {
    const urls = receiver();
    const url = `http://127.0.0.1:9/real-queue-${crypto.randomUUID()}`;
    const { team, survey, hook } = await webhookSurvey(url);
    const start = Date.now();
    const id = await insertPending(team.teamId, survey.id, hook.id, new Date(start - 2 * SWEEP_STALE_MS).toISOString());
    setClock(start);
    const queue = playedQueue("survey-webhooks");
    await sweepSurveyDeliveries(queue.env);
    await queue.deliver();
    expect(await deliveryRow(id)).toMatchObject({ status: "delivered", attempts: 1 });
    expect(urls.filter((u) => u === url)).toHaveLength(1);
  });

  it("sends once when the same message is processed twice at the same time", async () => {
    const urls = receiver(200, 300);
    const url = `http://127.0.0.1:9/concurrent-${crypto.randomUUID()}`;
    const { team, survey, hook } = await webhookSurvey(url);
    const id = await insertPending(team.teamId, survey.id, hook.id, new Date().toISOString());
    const a = fakeBatch({ delivery_id: id });
    const b = fakeBatch({ delivery_id: id });
    await Promise.all([surveyWebhooksConsumer.consume(a.batch, env), surveyWebhooksConsumer.consume(b.batch, env)]);
    expect(urls.filter((u) => u === url)).toHaveLength(1);
    // One attempt delivered; the other found the row settled or claimed, and then sends nothing.
    const acked = [a, b].filter((m) => m.message.ack.mock.calls.length === 1);
    const retried = [a, b].filter((m) => m.message.retry.mock.calls.length === 1);
    expect(acked.length + retried.length).toBe(2);
    expect(acked.length).toBeGreaterThanOrEqual(1);
    for (const m of retried) {
      expect(m.message.retry.mock.calls[0][0].delaySeconds).toBeLessThanOrEqual(CLAIM_LEASE_MS / 1000);
      const later = fakeBatch({ delivery_id: id }, 2);
      await surveyWebhooksConsumer.consume(later.batch, env);
      expect(later.message.ack).toHaveBeenCalled();
    }
    expect(urls.filter((u) => u === url)).toHaveLength(1);
    expect(await deliveryRow(id)).toMatchObject({ status: "delivered", attempts: 1 });
  });

  it("retries later while an attempt holds the claim, and takes over once its lock has expired", async () => {
    const urls = receiver();
    const url = `http://127.0.0.1:9/crashed-${crypto.randomUUID()}`;
    const { team, survey, hook } = await webhookSurvey(url);
    const start = Date.now();
    setClock(start);
    const id = await insertPending(team.teamId, survey.id, hook.id, new Date(start - 2 * SWEEP_STALE_MS).toISOString());
    // An attempt claimed the row and its Worker died before recording the outcome.
    await env.DB.prepare("UPDATE survey_webhook_deliveries SET attempts = 1, lease_until = ? WHERE id = ?")
      .bind(start + CLAIM_LEASE_MS, id)
      .run();
    const blocked = fakeBatch({ delivery_id: id }, 2);
    await surveyWebhooksConsumer.consume(blocked.batch, env);
    expect(blocked.message.retry).toHaveBeenCalledWith({ delaySeconds: CLAIM_LEASE_MS / 1000 });
    expect(urls).toHaveLength(0);
    // Nor does the sweep touch a locked row, stale as it is.
    const recorder = queueEnv();
    setClock(start + CLAIM_LEASE_MS - 1000);
    await sweepSurveyDeliveries(recorder.env);
    expect(mine(recorder.sent, id)).toEqual([]);

    setClock(start + CLAIM_LEASE_MS + 1000);
    const retried = fakeBatch({ delivery_id: id }, 3);
    await surveyWebhooksConsumer.consume(retried.batch, env);
    expect(retried.message.ack).toHaveBeenCalled();
    expect(urls.filter((u) => u === url)).toHaveLength(1);
    expect(await deliveryRow(id)).toMatchObject({ status: "delivered", attempts: 2 });
  });

  it("leaves a scheduled retry alone until it is overdue", async () => {
    receiver(503);
    const url = `http://127.0.0.1:9/backoff-${crypto.randomUUID()}`;
    const { team, survey, hook } = await webhookSurvey(url);
    const start = Date.now();
    setClock(start);
    const id = await insertPending(team.teamId, survey.id, hook.id, new Date(start).toISOString(), 7);
    const eighth = fakeBatch({ delivery_id: id }, 8);
    await surveyWebhooksConsumer.consume(eighth.batch, env);
    const delaySeconds = eighth.message.retry.mock.calls[0][0].delaySeconds as number;
    expect(delaySeconds).toBe(1280);
    expect(await deliveryRow(id)).toMatchObject({
      status: "pending",
      attempts: 8,
      lease_until: null,
      next_attempt_at: new Date(start + delaySeconds * 1000).toISOString(),
    });

    const recorder = queueEnv();
    setClock(start + delaySeconds * 1000 + SWEEP_STALE_MS - MINUTE);
    await sweepSurveyDeliveries(recorder.env);
    expect(mine(recorder.sent, id)).toEqual([]);
    setClock(start + delaySeconds * 1000 + SWEEP_STALE_MS + MINUTE);
    await sweepSurveyDeliveries(recorder.env);
    expect(mine(recorder.sent, id)).toHaveLength(1);
    // The retry the queue still had scheduled arrives after all: superseded, it sends nothing.
    const stale = fakeBatch({ delivery_id: id }, 9);
    await surveyWebhooksConsumer.consume(stale.batch, env);
    expect(stale.message.ack).toHaveBeenCalled();
    expect(await deliveryRow(id)).toMatchObject({ status: "pending", attempts: 8 });
    // The re-queued message is the last attempt the row has left (9 in all), whatever its own count.
    const last = fakeBatch(mine(recorder.sent, id)[0], 1);
    await surveyWebhooksConsumer.consume(last.batch, env);
    expect(last.message.ack).toHaveBeenCalled();
    expect(await deliveryRow(id)).toMatchObject({ status: "failed", attempts: MAX_DELIVERY_ATTEMPTS });
  });

  it("keeps rows whose re-queue send failed for the next run, and marks exhausted ones failed", async () => {
    receiver();
    const { team, survey, hook } = await webhookSurvey(`http://127.0.0.1:9/flaky-${crypto.randomUUID()}`);
    const start = Date.now();
    const created = new Date(start - 2 * SWEEP_STALE_MS).toISOString();
    const id = await insertPending(team.teamId, survey.id, hook.id, created);
    const exhausted = await insertPending(team.teamId, survey.id, hook.id, created, MAX_DELIVERY_ATTEMPTS);
    setClock(start);

    const broken = queueEnv(true);
    await expect(sweepSurveyDeliveries(broken.env)).rejects.toThrow(/queue down/);
    const firstToken = (await deliveryRow(id))!.queue_token;
    expect(firstToken).toMatch(/^[0-9a-f]{32}$/);
    expect(await deliveryRow(exhausted)).toMatchObject({ status: "failed", last_error: expect.stringMatching(/no attempt left/) });

    const recorder = queueEnv();
    await sweepSurveyDeliveries(recorder.env); // right after: not stale again yet
    expect(mine(recorder.sent, id)).toEqual([]);
    setClock(start + SWEEP_STALE_MS + MINUTE);
    await sweepSurveyDeliveries(recorder.env);
    const [message] = mine(recorder.sent, id);
    expect(message.token).toMatch(/^[0-9a-f]{32}$/);
    expect(message.token).not.toBe(firstToken);
    expect(mine(recorder.sent, exhausted)).toEqual([]);
  });

  it("re-queues at most SWEEP_MAX_BATCHES batches of SWEEP_BATCH_SIZE per run, the oldest first", async () => {
    const { team, survey, hook } = await webhookSurvey(`http://127.0.0.1:9/many-${crypto.randomUUID()}`);
    const total = SWEEP_BATCH_SIZE * SWEEP_MAX_BATCHES + 30;
    // Older than any row another test left behind, so these are swept first.
    const rows = Array.from({ length: total }, (_, i) => ({ id: crypto.randomUUID(), created_at: new Date(Date.UTC(2020, 0, 1) + i * 1000).toISOString() }));
    await env.DB.prepare(
      `INSERT INTO survey_webhook_deliveries (id, team_id, survey_id, webhook_id, event, payload, status, attempts, created_at, next_attempt_at)
       SELECT value->>'id', ?1, ?2, ?3, 'response.completed', '{}', 'pending', 0, value->>'created_at', value->>'created_at' FROM json_each(?4)`,
    )
      .bind(team.teamId, survey.id, hook.id, JSON.stringify(rows))
      .run();
    const ids = new Set(rows.map((r) => r.id));
    const recorder = queueEnv();
    const first = await sweepSurveyDeliveries(recorder.env);
    expect(first.requeued).toBe(SWEEP_BATCH_SIZE * SWEEP_MAX_BATCHES);
    expect(Math.max(...recorder.batches)).toBeLessThanOrEqual(SWEEP_BATCH_SIZE);
    const firstRun = recorder.sent.filter((m) => ids.has(m.delivery_id)).map((m) => m.delivery_id);
    expect(firstRun).toHaveLength(SWEEP_BATCH_SIZE * SWEEP_MAX_BATCHES);
    expect(new Set(firstRun).size).toBe(firstRun.length);
    expect(firstRun.sort()).toEqual(
      rows
        .slice(0, SWEEP_BATCH_SIZE * SWEEP_MAX_BATCHES)
        .map((r) => r.id)
        .sort(),
    );

    const second = queueEnv();
    await sweepSurveyDeliveries(second.env);
    expect(
      second.sent
        .filter((m) => ids.has(m.delivery_id))
        .map((m) => m.delivery_id)
        .sort(),
    ).toEqual(
      rows
        .slice(-30)
        .map((r) => r.id)
        .sort(),
    );
  });
});
