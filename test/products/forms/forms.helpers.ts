// Shared set-up of the Forms tests: forms through the API, public posts in each encoding (with
// the request's background work awaited when asked), multipart bodies built by hand, and SQL run
// inside a form's store.
import { createExecutionContext, env, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import { app } from "../../../src/app";
import { formStore } from "../../../src/products/forms/forms.store";
import { anyIp, call, json, ORIGIN } from "../../helpers/api";

export { env };

export interface CreatedForm {
  id: string;
  endpoint: string;
  webhook_secret: string | null;
  [key: string]: unknown;
}

export async function createForm(key: string, body: Record<string, unknown> = {}): Promise<CreatedForm> {
  const res = await call("POST", "forms", { key, body: { name: "Contact", ...body } });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await json(res)).data;
}

export interface PostOptions {
  headers?: Record<string, string>;
  ip?: string;
  /** Await the request's background work (the notification mail). */
  settled?: boolean;
}

/** A raw public post to /f/:id. */
export async function post(formId: string, body: BodyInit | null, contentType: string | null, options: PostOptions = {}): Promise<Response> {
  const headers: Record<string, string> = {
    "cf-connecting-ip": options.ip ?? anyIp(),
    ...(contentType ? { "content-type": contentType } : {}),
    ...options.headers,
  };
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(`${ORIGIN}/f/${formId}`, { method: "POST", headers, body, redirect: "manual" }), env, ctx);
  if (options.settled) await waitOnExecutionContext(ctx);
  return res;
}

export const postUrlencoded = (formId: string, fields: Record<string, string | string[]>, options: PostOptions = {}) => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) params.append(k, one);
  return post(formId, params.toString(), "application/x-www-form-urlencoded", options);
};

export const postJson = (formId: string, body: unknown, options: PostOptions = {}) => post(formId, JSON.stringify(body), "application/json", options);

export interface Part {
  name: string;
  value: string | Uint8Array;
  filename?: string;
  type?: string;
}

/** A multipart/form-data body written by hand (so tests control every byte), with its content type. */
export function multipart(parts: Part[], boundary = `----test${crypto.randomUUID().slice(0, 8)}`): { body: Uint8Array; contentType: string } {
  const enc = new TextEncoder();
  const chunks: Uint8Array[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ""}`;
    chunks.push(enc.encode(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ""}\r\n`));
    chunks.push(typeof p.value === "string" ? enc.encode(p.value) : p.value);
    chunks.push(enc.encode("\r\n"));
  }
  chunks.push(enc.encode(`--${boundary}--\r\n`));
  const size = chunks.reduce((n, c) => n + c.length, 0);
  const body = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.length;
  }
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

export async function postMultipart(formId: string, parts: Part[], options: PostOptions = {}) {
  const { body, contentType } = multipart(parts);
  return post(formId, body, contentType, options);
}

/** Rows of a SQL statement run inside a form's store (tables submissions, deliveries, attempts, state). */
export async function storeSql<T = Record<string, unknown>>(formId: string, sql: string, ...params: unknown[]): Promise<T[]> {
  return runInDurableObject(formStore(env, formId), (_object, state) => state.storage.sql.exec(sql, ...params).toArray() as T[]);
}

export async function submissions(key: string, formId: string, status: "inbox" | "spam" = "inbox") {
  const res = await call("GET", `forms/${formId}/submissions?status=${status}`, { key });
  expect(res.status).toBe(200);
  return (await json(res)).data as Array<{
    id: string;
    fields: Record<string, unknown>;
    files: Array<{ id: string; name: string; size: number }>;
    status: string;
  }>;
}
