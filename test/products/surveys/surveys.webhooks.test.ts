// Survey webhooks: registration, the response.completed delivery through the survey-webhooks
// queue with Standard Webhooks signatures, retries with backoff, final failure, and redelivery
// that never sends twice.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { nowSeconds } from "../../../src/platform/clock";
import { verifyStandardWebhook } from "../../../src/platform/webhook-signature";
import { surveyWebhooksConsumer, MAX_DELIVERY_ATTEMPTS } from "../../../src/products/surveys/surveys.consumer";
import { call, expectError, json } from "../../helpers/api";
import { activeSurvey, answer, complete, startOk } from "./helpers";

interface Sent {
  url: string;
  headers: Headers;
  body: string;
}

/** Intercepts outbound fetch: receivers answer `status(url)`; every call is recorded. */
function receiver(status: (url: string) => number = () => 200): Sent[] {
  const sent: Sent[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.toString() : input.url;
    sent.push({ url, headers: new Headers(init?.headers), body: String(init?.body ?? "") });
    return new Response("ok", { status: status(url) });
  });
  return sent;
}

function fakeBatch(deliveryId: string, attempts = 1) {
  const message = { id: crypto.randomUUID(), timestamp: new Date(), body: { delivery_id: deliveryId }, attempts, ack: vi.fn(), retry: vi.fn() };
  const batch = { queue: "survey-webhooks", messages: [message], ackAll: vi.fn(), retryAll: vi.fn() } as unknown as MessageBatch<unknown>;
  return { batch, message };
}

async function deliveryRow(id: string) {
  return env.DB.prepare("SELECT status, attempts, last_status, last_error FROM survey_webhook_deliveries WHERE id = ?").bind(id).first<{
    status: string;
    attempts: number;
    last_status: number | null;
    last_error: string | null;
  }>();
}

/** A survey with one webhook and a pending delivery row that no queue message refers to. */
async function pendingDelivery(url: string) {
  const { team, survey } = await activeSurvey([{ type: "yes_no", title: "A" }]);
  const hook = (await json(await call("POST", `surveys/${survey.id}/webhooks`, { key: team.key, body: { url } }))).data;
  const id = crypto.randomUUID();
  await env.DB.prepare(
    "INSERT INTO survey_webhook_deliveries (id, team_id, survey_id, webhook_id, event, payload, status, attempts, created_at) VALUES (?, ?, ?, ?, 'response.completed', ?, 'pending', 0, ?)",
  )
    .bind(id, team.teamId, survey.id, hook.id, JSON.stringify({ type: "response.completed" }), new Date().toISOString())
    .run();
  return { id, hook, team, survey };
}

afterEach(() => vi.restoreAllMocks());

describe("survey webhooks", () => {
  it("regression: a completed response is stored once, however many webhooks announce it", async () => {
    const { team, survey, questions } = await activeSurvey([{ type: "text", title: "Q" }]);
    for (let i = 0; i < 10; i++) {
      expect(
        (
          await call("POST", `surveys/${survey.id}/webhooks`, {
            key: team.key,
            body: { url: `https://hooks.example.com/one-copy/${i}`, events: ["response.completed"] },
          })
        ).status,
      ).toBe(201);
    }
    const send = vi.spyOn(env.SURVEY_QUEUE, "sendBatch").mockResolvedValue(undefined as never);
    const response = await startOk(survey.slug);
    await answer(survey.slug, response.id, questions[0].id, "x".repeat(5000));
    expect((await complete(survey.slug, response.id)).status).toBe(200);
    const rows = (await env.DB.prepare("SELECT payload, response_id FROM survey_webhook_deliveries WHERE survey_id = ?").bind(survey.id).all()).results;
    expect(rows).toHaveLength(10);
    expect(rows.every((r) => r.payload === null && r.response_id === response.id)).toBe(true);
    expect(send).toHaveBeenCalled();
  });

  it("regression: 25 parallel creates store exactly 10 webhooks on a survey (one statement checks and writes)", async () => {
    const { team, survey } = await activeSurvey([{ type: "text", title: "Q" }]);
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        call("POST", `surveys/${survey.id}/webhooks`, { key: team.key, body: { url: `https://hooks.example.com/s${i}`, events: ["response.completed"] } }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    const refused = results.find((r) => r.status !== 201)!;
    await expectError(refused, 422, { error: "Validation failed", errors: { url: ["a survey can have at most 10 webhooks"] } });
    expect(results.filter((r) => r.status === 422)).toHaveLength(15);
  });

  it("creates, lists (without secret) and deletes webhooks", async () => {
    const { team, survey } = await activeSurvey([{ type: "text", title: "Q" }]);
    const res = await call("POST", `surveys/${survey.id}/webhooks`, { key: team.key, body: { url: "https://hooks.example.com/surveys" } });
    expect(res.status).toBe(201);
    const hook = (await json(res)).data;
    expect(hook).toEqual({
      id: expect.any(String),
      survey_id: survey.id,
      url: "https://hooks.example.com/surveys",
      events: ["response.completed"],
      secret: expect.stringMatching(/^whsec_/),
      created_at: expect.any(String),
    });
    const list = (await json(await call("GET", `surveys/${survey.id}/webhooks`, { key: team.key }))).data;
    expect(list).toEqual([{ id: hook.id, survey_id: survey.id, url: hook.url, events: ["response.completed"], created_at: hook.created_at }]);
    const stored = await env.DB.prepare("SELECT secret_encrypted FROM survey_webhooks WHERE id = ?").bind(hook.id).first<{ secret_encrypted: string }>();
    expect(stored?.secret_encrypted).not.toContain(hook.secret.slice(6));
    expect((await call("DELETE", `surveys/${survey.id}/webhooks/${hook.id}`, { key: team.key })).status).toBe(204);
    await expectError(await call("DELETE", `surveys/${survey.id}/webhooks/${hook.id}`, { key: team.key }), 404, { error: "Webhook not found" });
  });

  it("delivers response.completed through the queue, signed, exactly once per completion", async () => {
    const sent = receiver();
    const { team, survey, questions } = await activeSurvey([{ type: "yes_no", title: "A" }]);
    const url = `http://127.0.0.1:9/hook-${crypto.randomUUID()}`;
    const hook = (await json(await call("POST", `surveys/${survey.id}/webhooks`, { key: team.key, body: { url } }))).data;
    const r = await startOk(survey.slug);
    await answer(survey.slug, r.id, questions[0].id, true);
    await Promise.all([complete(survey.slug, r.id), complete(survey.slug, r.id), complete(survey.slug, r.id)]);
    const rows = await env.DB.prepare("SELECT id FROM survey_webhook_deliveries WHERE webhook_id = ?").bind(hook.id).all<{ id: string }>();
    expect(rows.results).toHaveLength(1);
    const deliveryId = rows.results[0].id;

    // The Worker's own queue consumer picks the message up.
    for (let i = 0; i < 50 && (await deliveryRow(deliveryId))?.status !== "delivered"; i++) await new Promise((done) => setTimeout(done, 100));
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: "delivered", attempts: 1, last_status: 200 });
    const mine = sent.filter((s) => s.url === url);
    expect(mine).toHaveLength(1);
    const { headers, body } = mine[0];
    expect(headers.get("webhook-id")).toBe(deliveryId);
    expect(headers.get("content-type")).toBe("application/json");
    const verified = await verifyStandardWebhook(
      hook.secret,
      { id: headers.get("webhook-id"), timestamp: headers.get("webhook-timestamp"), signature: headers.get("webhook-signature") },
      body,
      nowSeconds(),
    );
    expect(verified).toBe(true);
    const payload = JSON.parse(body);
    expect(payload).toMatchObject({
      type: "response.completed",
      timestamp: expect.any(String),
      data: {
        survey: { id: survey.id, slug: survey.slug, name: survey.name },
        response: { id: r.id, status: "completed", answers: { [questions[0].id]: { value: true, version: 1 } }, completed_at: expect.any(String) },
      },
    });
  });

  it("retries a failing receiver with backoff, then marks the delivery failed", async () => {
    const sent = receiver(() => 503);
    const { id } = await pendingDelivery("http://127.0.0.1:9/failing");
    const first = fakeBatch(id, 1);
    await surveyWebhooksConsumer.consume(first.batch, env);
    expect(first.message.retry).toHaveBeenCalledWith({ delaySeconds: 10 });
    expect(first.message.ack).not.toHaveBeenCalled();
    expect(await deliveryRow(id)).toMatchObject({ status: "pending", attempts: 1, last_status: 503, last_error: "receiver answered 503" });

    const third = fakeBatch(id, 3);
    await surveyWebhooksConsumer.consume(third.batch, env);
    expect(third.message.retry).toHaveBeenCalledWith({ delaySeconds: 40 });

    const last = fakeBatch(id, MAX_DELIVERY_ATTEMPTS);
    await surveyWebhooksConsumer.consume(last.batch, env);
    expect(last.message.ack).toHaveBeenCalled();
    expect(last.message.retry).not.toHaveBeenCalled();
    expect(await deliveryRow(id)).toMatchObject({ status: "failed", attempts: 3 });
    expect(sent).toHaveLength(3);

    // A failed delivery is never sent again.
    const again = fakeBatch(id, 1);
    await surveyWebhooksConsumer.consume(again.batch, env);
    expect(again.message.ack).toHaveBeenCalled();
    expect(sent).toHaveLength(3);
  });

  it("does not send twice when a delivered message is redelivered", async () => {
    const sent = receiver();
    const { id } = await pendingDelivery("http://127.0.0.1:9/ok");
    const first = fakeBatch(id);
    await surveyWebhooksConsumer.consume(first.batch, env);
    expect(first.message.ack).toHaveBeenCalled();
    const redelivered = fakeBatch(id, 2);
    await surveyWebhooksConsumer.consume(redelivered.batch, env);
    expect(redelivered.message.ack).toHaveBeenCalled();
    expect(sent).toHaveLength(1);
    expect(await deliveryRow(id)).toMatchObject({ status: "delivered", attempts: 1 });
  });

  it("retries on a network error and acknowledges messages for unknown deliveries", async () => {
    vi.spyOn(globalThis, "fetch").mockRejectedValue(new TypeError("connection refused"));
    const { id } = await pendingDelivery("http://127.0.0.1:9/down");
    const msg = fakeBatch(id, 2);
    await surveyWebhooksConsumer.consume(msg.batch, env);
    expect(msg.message.retry).toHaveBeenCalledWith({ delaySeconds: 20 });
    expect((await deliveryRow(id))?.last_error).toMatch(/connection refused/);
    const unknown = fakeBatch(crypto.randomUUID());
    await surveyWebhooksConsumer.consume(unknown.batch, env);
    expect(unknown.message.ack).toHaveBeenCalled();
  });

  it("stops deliveries of a deleted webhook", async () => {
    const sent = receiver();
    const { id, hook, team, survey } = await pendingDelivery("http://127.0.0.1:9/deleted");
    await call("DELETE", `surveys/${survey.id}/webhooks/${hook.id}`, { key: team.key });
    const msg = fakeBatch(id);
    await surveyWebhooksConsumer.consume(msg.batch, env);
    expect(msg.message.ack).toHaveBeenCalled();
    expect(sent).toHaveLength(0);
  });
});
