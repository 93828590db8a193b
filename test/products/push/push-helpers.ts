// Test helpers of the push product: a browser-side subscriber (a real P-256 key pair and auth
// secret), RFC 8291 decryption and RFC 8292 VAPID verification written independently of the
// library under test, a local push service on an intercepted fetch, a fake queue batch, and a
// reader of an app's store (its tables, read inside the object).
import { env, runInDurableObject } from "cloudflare:test";
import { expect, vi } from "vitest";
import { pushStore } from "../../../src/products/push/push.store";
import { call, json } from "../../helpers/api";
import { fromBase64Url, toBase64Url } from "../../../src/platform/crypto";

const encoder = new TextEncoder();

export interface TestSubscriber {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  privateKey: CryptoKey;
  publicBytes: Uint8Array;
  authBytes: Uint8Array;
}

/** What a browser holds after `pushManager.subscribe()`. */
export async function browserSubscription(endpoint = `https://push.example.com/send/${crypto.randomUUID()}`): Promise<TestSubscriber> {
  const pair = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])) as CryptoKeyPair;
  const publicBytes = new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer);
  const authBytes = crypto.getRandomValues(new Uint8Array(16));
  return {
    endpoint,
    keys: { p256dh: toBase64Url(publicBytes), auth: toBase64Url(authBytes) },
    privateKey: pair.privateKey,
    publicBytes,
    authBytes,
  };
}

/** The JSON a browser posts: `subscription.toJSON()`. */
export function subscriptionJson(sub: TestSubscriber, extra: Record<string, unknown> = {}) {
  return { endpoint: sub.endpoint, expirationTime: null, keys: sub.keys, ...extra };
}

async function hkdf(salt: Uint8Array, ikm: Uint8Array, info: Uint8Array, length: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", ikm, "HKDF", false, ["deriveBits"]);
  return new Uint8Array(await crypto.subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt, info }, key, length * 8));
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.byteLength;
  }
  return out;
}

/** RFC 8291 / RFC 8188 (aes128gcm) decryption with the subscriber's private key. */
export async function decryptPush(body: Uint8Array, sub: TestSubscriber): Promise<string> {
  const salt = body.slice(0, 16);
  const recordSize = new DataView(body.buffer, body.byteOffset + 16, 4).getUint32(0);
  const idLength = body[20];
  const serverPublic = body.slice(21, 21 + idLength);
  const ciphertext = body.slice(21 + idLength);
  expect(idLength).toBe(65);
  expect(ciphertext.byteLength).toBeLessThanOrEqual(recordSize);
  const serverKey = await crypto.subtle.importKey("raw", serverPublic, { name: "ECDH", namedCurve: "P-256" }, false, []);
  // workers-types spells the ECDH peer key `$public`; Web Crypto (and workerd) reads `public`.
  const ecdhParams = { name: "ECDH", public: serverKey } as unknown as SubtleCryptoDeriveKeyAlgorithm;
  const ecdh = new Uint8Array(await crypto.subtle.deriveBits(ecdhParams, sub.privateKey, 256));
  const keyInfo = concat(encoder.encode("WebPush: info\0"), sub.publicBytes, serverPublic);
  const ikm = await hkdf(sub.authBytes, ecdh, keyInfo, 32);
  const cek = await hkdf(salt, ikm, encoder.encode("Content-Encoding: aes128gcm\0"), 16);
  const nonce = await hkdf(salt, ikm, encoder.encode("Content-Encoding: nonce\0"), 12);
  const aes = await crypto.subtle.importKey("raw", cek, "AES-GCM", false, ["decrypt"]);
  const padded = new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv: nonce }, aes, ciphertext));
  // Last record: data, then the 0x02 delimiter, then zero padding.
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  expect(padded[end]).toBe(0x02);
  return new TextDecoder().decode(padded.slice(0, end));
}

/** Verifies an ES256 JWT against a raw 65-byte public key (base64url); returns its claims. */
export async function verifyJwt(jwt: string, publicKey: string): Promise<Record<string, unknown>> {
  const [header, payload, signature] = jwt.split(".");
  const key = await crypto.subtle.importKey("raw", fromBase64Url(publicKey), { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
  const valid = await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, fromBase64Url(signature), encoder.encode(`${header}.${payload}`));
  expect(valid).toBe(true);
  expect(JSON.parse(new TextDecoder().decode(fromBase64Url(header)))).toMatchObject({ alg: "ES256" });
  return JSON.parse(new TextDecoder().decode(fromBase64Url(payload)));
}

/** Signs an ES256 JWT with a raw public key and its private `d` (both base64url). */
export async function signJwt(claims: Record<string, unknown>, publicKey: string, privateKey: string): Promise<string> {
  const point = fromBase64Url(publicKey);
  const key = await crypto.subtle.importKey(
    "jwk",
    { kty: "EC", crv: "P-256", x: toBase64Url(point.slice(1, 33)), y: toBase64Url(point.slice(33)), d: privateKey },
    { name: "ECDSA", namedCurve: "P-256" },
    false,
    ["sign"],
  );
  const data = `${toBase64Url(encoder.encode(JSON.stringify({ typ: "JWT", alg: "ES256" })))}.${toBase64Url(encoder.encode(JSON.stringify(claims)))}`;
  const signature = await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, key, encoder.encode(data));
  return `${data}.${toBase64Url(signature)}`;
}

export interface PushRequest {
  url: string;
  headers: Record<string, string>;
  body: Uint8Array;
}

/**
 * A local push service: intercepts the worker's outbound fetch (same isolate), records each
 * request and answers with `respond(request, index)` (a status code or a Response).
 */
export function pushService(respond: (req: PushRequest, index: number) => number | Response = () => 201) {
  const requests: PushRequest[] = [];
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, key) => {
      headers[key] = value;
    });
    const req = { url: request.url, headers, body: new Uint8Array(await request.arrayBuffer()) };
    requests.push(req);
    const answer = respond(req, requests.length - 1);
    return typeof answer === "number" ? new Response(answer === 201 ? "" : "push service says no", { status: answer }) : answer;
  });
  return { requests, restore: () => spy.mockRestore() };
}

/** Polls until `check` returns a truthy value (or fails after `timeoutMs`). */
export async function waitFor<T>(check: () => Promise<T | null | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until a notification is completed; returns its detail. */
export async function waitForCompletion(key: string, appId: string, id: string) {
  return waitFor(async () => {
    const body = await json(await call("GET", `push/apps/${appId}/notifications/${id}`, { key }));
    return body.data?.status === "completed" ? body.data : null;
  });
}

export async function createApp(key: string, body: Record<string, unknown> = { name: "My app" }) {
  const res = await call("POST", "push/apps", { key, body });
  expect(res.status).toBe(201);
  return (await json(res)).data as { id: string; vapid_public_key: string; subscriber_count: number; settings: Record<string, unknown> };
}

export async function subscribe(key: string, appId: string, sub: TestSubscriber, extra: Record<string, unknown> = {}) {
  const res = await call("POST", `push/apps/${appId}/subscribers`, { key, body: subscriptionJson(sub, extra) });
  expect([200, 201]).toContain(res.status);
  return (await json(res)).data as { id: string };
}

export interface FakeMessage {
  body: unknown;
  attempts: number;
  acked: boolean;
  retried: { delaySeconds?: number } | null;
}

/** A queue batch whose ack/retry calls are recorded. */
export function fakeBatch(bodies: Array<{ body: unknown; attempts?: number }>) {
  const records: FakeMessage[] = bodies.map((b) => ({ body: b.body, attempts: b.attempts ?? 1, acked: false, retried: null }));
  const batch = {
    queue: "push-sends",
    messages: records.map((record, i) => ({
      id: `m${i}`,
      timestamp: new Date(),
      body: record.body,
      attempts: record.attempts,
      ack: () => void (record.acked = true),
      retry: (options?: { delaySeconds?: number }) => void (record.retried = options ?? {}),
    })),
    ackAll: () => {
      for (const r of records) r.acked = true;
    },
    retryAll: () => {
      for (const r of records) r.retried = {};
    },
  } as unknown as MessageBatch<unknown>;
  return { batch, records };
}

/** Rows of a query run inside an app's store (its SQLite tables: subscribers, notifications, deliveries, meta). */
export async function storeRows<T = Record<string, unknown>>(appId: string, query: string, ...params: SqlStorageValue[]): Promise<T[]> {
  return runInDurableObject(pushStore(env, appId), async (_object, state) =>
    state.storage.sql
      .exec(query, ...params)
      .toArray()
      .map((row) => ({ ...row }) as T),
  );
}

/**
 * A notification stored with its fan-out done, so that no queue consumer reaches it: a notification
 * without recipients is refused over the API (422), and one with recipients would be sent.
 */
export async function storedNotification(teamId: string, appId: string): Promise<{ id: string }> {
  const id = crypto.randomUUID();
  await env.DB.prepare(
    `INSERT INTO push_notifications (id, team_id, app_id, payload, ttl, urgency, target, vapid_subject, recipients, fanout_done, created_at, completed_at)
     VALUES (?1, ?2, ?3, '{}', 60, 'normal', '{"type":"all"}', 'mailto:o@example.com', 1, 1, ?4, ?4)`,
  )
    .bind(id, teamId, appId, new Date().toISOString())
    .run();
  return { id };
}
