// Shared set-up of the relay tests: sources and destinations through the API, signed ingest
// requests per provider, a scripted receiver behind a fetch spy, fake queue messages, a queue that
// records instead of delivering, requests whose background work (waitUntil) is awaited, and SQL
// run inside a source's store (where its events, deliveries and attempts are).
import { createExecutionContext, env, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { app } from "../../../src/app";
import type { Env } from "../../../src/env";
import { expect, vi, type MockInstance } from "vitest";
import { hmacSha256, toHex } from "../../../src/platform/crypto";
import { nowSeconds } from "../../../src/platform/clock";
import { standardWebhookHeaders } from "../../../src/platform/webhook-signature";
import { attemptDelivery, webhookDeliveriesConsumer, type DeliveryMessage } from "../../../src/products/relay/relay.consumer";
import { relayStore } from "../../../src/products/relay/relay.store";
import { anyIp, API, call, json, ORIGIN, type RequestOptions } from "../../helpers/api";

export { env };

export async function createSource(key: string, body: Record<string, unknown> = {}) {
  const res = await call("POST", "webhooks/sources", { key, body: { name: "src", provider: "generic", ...body } });
  expect(res.status).toBe(201);
  return (await json(res)).data as { id: string; slug: string; url: string; provider: string; enabled: boolean; destinations_count: number };
}

export async function createDestination(key: string, sourceId: string, body: Record<string, unknown> = {}) {
  const res = await call("POST", `webhooks/sources/${sourceId}/destinations`, {
    key,
    body: { url: `http://127.0.0.1:9/hook-${crypto.randomUUID().slice(0, 8)}`, ...body },
  });
  expect(res.status).toBe(201);
  return (await json(res)).data as { id: string; url: string; event_filter: string[]; enabled: boolean; secret: string };
}

/** POST to the public ingest address. */
export function ingest(slug: string, body: string, headers: Record<string, string> = {}, options: RequestOptions = {}) {
  return call("POST", `/in/${slug}`, { raw: body, headers: { "content-type": "application/json", ...headers }, ...options });
}

export async function stripeHeaders(secret: string, body: string, ts = nowSeconds()) {
  return { "stripe-signature": `t=${ts},v1=${toHex(await hmacSha256(secret, `${ts}.${body}`))}` };
}

export async function githubHeaders(secret: string, body: string, event = "push", delivery = crypto.randomUUID()) {
  return { "x-hub-signature-256": `sha256=${toHex(await hmacSha256(secret, body))}`, "x-github-event": event, "x-github-delivery": delivery };
}

export async function genericHeaders(secret: string, body: string, prefix = "") {
  return { "x-signature": prefix + toHex(await hmacSha256(secret, body)) };
}

export function standardHeaders(secret: string, body: string, id = `msg_${crypto.randomUUID()}`, ts = nowSeconds()) {
  return standardWebhookHeaders(secret, id, ts, body);
}

export interface Received {
  url: string;
  headers: Headers;
  body: string;
}

/**
 * Intercepts outbound fetch: calls to `urls` are answered by `respond` (status codes in turn, the
 * last repeating, or a thrown error); everything else passes through.
 */
export function receiver(urls: string[], responses: Array<number | Error> = [200]) {
  const received: Received[] = [];
  const original = globalThis.fetch;
  const spy: MockInstance = vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (!urls.includes(request.url)) return original(input, init);
    received.push({ url: request.url, headers: request.headers, body: await request.text() });
    const next = responses[Math.min(received.filter((r) => r.url === request.url).length - 1, responses.length - 1)];
    if (next instanceof Error) throw next;
    return new Response(`answer ${next}`, { status: next });
  });
  return { received, restore: () => spy.mockRestore() };
}

export function fakeMessage(sourceId: string, deliveryId: string, attempts = 1) {
  return { id: crypto.randomUUID(), timestamp: new Date(), body: { delivery_id: deliveryId, source_id: sourceId }, attempts, ack: vi.fn(), retry: vi.fn() };
}

/** Runs the consumer on one fake message (a delivery of `sourceId`) and returns it (ack / retry spies). */
export async function deliverOnce(sourceId: string, deliveryId: string, attempts = 1) {
  const message = fakeMessage(sourceId, deliveryId, attempts);
  await webhookDeliveriesConsumer.consume(
    { queue: "webhook-deliveries", messages: [message], ackAll: vi.fn(), retryAll: vi.fn() } as unknown as MessageBatch<unknown>,
    env,
  );
  return message;
}

export { attemptDelivery };

/** Polls until `check` returns a value (not undefined/false) or the time runs out. */
export async function waitFor<T>(check: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (performance.now() > deadline) throw new Error("waitFor: timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function getEvent(key: string, sourceId: string, eventId: string) {
  const res = await call("GET", `webhooks/sources/${sourceId}/events/${eventId}`, { key });
  expect(res.status).toBe(200);
  return (await json(res)).data;
}

export async function eventCount(sourceId: string): Promise<number> {
  return (await relayStore(env, sourceId).stats()).events;
}

/** Rows of a SQL statement run inside a source's store (tables `events`, `deliveries`, `attempts`). */
export async function storeSql<T = Record<string, unknown>>(sourceId: string, sql: string, ...params: unknown[]): Promise<T[]> {
  return runInDurableObject(relayStore(env, sourceId), (_object, state) => state.storage.sql.exec(sql, ...params).toArray() as T[]);
}

/**
 * Like `call`, but waits for the request's background work (`executionCtx.waitUntil`: the first
 * delivery attempt) to finish before answering, so a test can look at its outcome.
 */
export async function callSettled(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
  const url = path.startsWith("/") ? `${ORIGIN}${path}` : `${API}/${path}`;
  const headers: Record<string, string> = { "cf-connecting-ip": options.ip ?? anyIp(), ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  const body = options.body !== undefined ? JSON.stringify(options.body) : options.raw;
  if (options.body !== undefined) headers["content-type"] ??= "application/json";
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(url, { method, headers, body }), options.env ?? env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

/** POST to the ingest address and wait for its background work. */
export function ingestSettled(slug: string, body: string, headers: Record<string, string> = {}, options: RequestOptions = {}) {
  return callSettled("POST", `/in/${slug}`, { raw: body, headers: { "content-type": "application/json", ...headers }, ...options });
}

export interface RecordedMessage {
  body: DeliveryMessage;
  delaySeconds: number | undefined;
}

/** An env whose WEBHOOK_QUEUE records messages instead of delivering them: the test plays the queue. */
export function recordingQueue(): { env: Env; sent: RecordedMessage[] } {
  const sent: RecordedMessage[] = [];
  const queue = {
    send: async (body: DeliveryMessage, options?: QueueSendOptions) => void sent.push({ body, delaySeconds: options?.delaySeconds }),
    sendBatch: async (messages: Array<{ body: DeliveryMessage; delaySeconds?: number }>, options?: QueueSendBatchOptions) =>
      void sent.push(...messages.map((m) => ({ body: m.body, delaySeconds: m.delaySeconds ?? options?.delaySeconds }))),
  } as unknown as Queue;
  return { env: { ...(env as Env), WEBHOOK_QUEUE: queue }, sent };
}

/** Runs the consumer on recorded messages, as the queue would deliver them (`attempts` = delivery count). */
export async function consumeRecorded(messages: RecordedMessage[], attempts = 1) {
  const fakes = messages.map((m) => ({ ...fakeMessage(m.body.source_id!, m.body.delivery_id, attempts) }));
  await webhookDeliveriesConsumer.consume(
    { queue: "webhook-deliveries", messages: fakes, ackAll: vi.fn(), retryAll: vi.fn() } as unknown as MessageBatch<unknown>,
    env,
  );
  return fakes;
}
