// Test helpers: requests through the Worker's Hono app (real D1, Durable Objects, R2,
// Queues inside workerd), team set-up (seeded into D1) and keys through the operator API, and one
// error assertion.
import { createExecutionContext, env } from "cloudflare:test";
import { expect } from "vitest";
import { app } from "../../src/app";
import type { Env } from "../../src/env";
import type { MailKeyPolicy } from "../../src/db/schema";
import { PLANS, type Plan } from "../../src/platform/plans";
import { keyScopes, specScopes } from "../../src/platform/scopes";
import { seedTeam } from "./seed";

export const ORIGIN = "http://app.test";
export const API = `${ORIGIN}/api/v1`;
export const ADMIN_TOKEN = "test-admin-token";
export const ALL_SCOPES = [...specScopes()];

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  /** Raw body (string or bytes) sent as is. */
  raw?: BodyInit;
  headers?: Record<string, string>;
  /**
   * Client IP, as Cloudflare's edge would report it. Without one, requests come from a rotating
   * set of client IPs, as the many respondents and senders of real traffic do, so the per-IP
   * buckets only limit a test that names its IP.
   */
  ip?: string;
  /** Other bindings than the pool's (e.g. a failing Durable Object namespace). */
  env?: Env;
  /** The request's ExecutionContext (to wait on its waitUntil work afterwards); a fresh one by default. */
  ctx?: ExecutionContext;
}

/**
 * The next of 64 client IPs (203.0.113.0/26, a documentation range), taken in turn: enough that no
 * per-IP bucket fills in a test that does not name its IP, few enough that the limiter's Durable
 * Objects stay warm.
 */
let nextIp = 0;
export function anyIp(): string {
  nextIp = (nextIp + 1) % 64;
  return `203.0.113.${nextIp}`;
}

/** Sends a request to the Worker. `path` is relative to /api/v1 unless it starts with `http` or `/`. */
export async function call(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
  const url = path.startsWith("http") ? path : path.startsWith("/") ? `${ORIGIN}${path}` : `${API}/${path}`;
  const headers: Record<string, string> = { "cf-connecting-ip": options.ip ?? anyIp(), ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: BodyInit | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  // The app's own fetch with the real bindings of the pool: going through the runtime entrypoint
  // (exports.default.fetch) grows slower with every request in this pool version (5 ms → 170 ms
  // within 600 requests), which no product behaviour depends on.
  return app.fetch(new Request(url, { method, headers, body }), options.env ?? env, options.ctx ?? createExecutionContext());
}

/** Operator API call with the test ADMIN_TOKEN. */
export function admin(method: string, path: string, body?: unknown): Promise<Response> {
  return call(method, `admin/${path}`, { key: ADMIN_TOKEN, body });
}

export interface TestTeam {
  teamId: string;
  key: string;
  keyId: string;
}

/** The sending domain every test team has verified unless `domains` says otherwise. */
export const TEST_SENDER_DOMAIN = "acme.dev";

/**
 * A new team with one key; every scope unless `scopes` says otherwise. Written straight into D1
 * (test/helpers/seed.ts): the tests that use it test something else than the operator API.
 */
export async function setupTeam(
  options: { plan?: string; scopes?: string[]; ownerEmail?: string | null; mail?: Partial<MailKeyPolicy>; domains?: string[] } = {},
): Promise<TestTeam> {
  // What the operator API would have refused fails here too.
  const plan = options.plan ?? "pro";
  expect(PLANS).toContain(plan);
  for (const scope of options.scopes ?? []) expect(keyScopes()).toContain(scope);
  return seedTeam({
    name: `team-${crypto.randomUUID().slice(0, 8)}`,
    plan: plan as Plan,
    ownerEmail: options.ownerEmail === undefined ? "owner@example.com" : options.ownerEmail,
    scopes: options.scopes ?? ALL_SCOPES,
    mail: options.mail,
    // Live keys send only from verified domains: the tests' sender domain is verified.
    domains: options.domains ?? [TEST_SENDER_DOMAIN],
  });
}

/** Another key for an existing team. */
export async function addKey(teamId: string, scopes: string[], mail?: Record<string, unknown>): Promise<{ key: string; id: string }> {
  const res = await admin("POST", `teams/${teamId}/keys`, { name: "test key", scopes, ...(mail ? { mail } : {}) });
  expect(res.status).toBe(201);
  return ((await res.json()) as { data: { key: string; id: string } }).data;
}

/** Asserts the status and the exact JSON body of an error response. */
export async function expectError(res: Response, status: number, body: unknown): Promise<void> {
  const text = await res.text();
  expect({ status: res.status, body: safeJson(text) }).toEqual({ status, body });
}

/** Parses a response's JSON body, typed loosely for assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function json<T = any>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
