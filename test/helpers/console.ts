// Console test helpers: form requests to /console with a session cookie and the app's Origin, a
// signed-in member of a team (through a real one-time link and its POST), and reading the sign-in
// links the platform mailed; the console routes of the app's route table.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import { getDb } from "../../src/db/client";
import type { Role } from "../../src/db/schema";
import { addMember } from "../../src/console/members.service";
import { createLink } from "../../src/console/sign-in.service";
import { app } from "../../src/app";
import { call, ORIGIN, setupTeam, type RequestOptions, type TestTeam } from "./api";

export interface ConsoleRequest {
  cookie?: string | null;
  /** Form fields; a repeated field is an array. */
  form?: Record<string, string | string[]>;
  /** The Origin header: the app's by default, null for none. */
  origin?: string | null;
  ip?: string;
  ctx?: ExecutionContext;
  /** The bindings the app is called with (the pool's by default). */
  env?: RequestOptions["env"];
}

/** A request to a console page (`path` under /console, or `/` for the landing page). */
export function page(method: string, path: string, options: ConsoleRequest = {}): Promise<Response> {
  const headers: Record<string, string> = {};
  if (options.cookie) headers.cookie = options.cookie;
  const origin = options.origin === undefined ? ORIGIN : options.origin;
  if (origin !== null && method !== "GET") headers.origin = origin;
  let raw: BodyInit | undefined;
  if (options.form) {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(options.form)) for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
    raw = body.toString();
    headers["content-type"] = "application/x-www-form-urlencoded";
  }
  return call(method, path.startsWith("/") && !path.startsWith("/console") && path !== "/" ? `/console${path}` : path, {
    headers,
    raw,
    ip: options.ip,
    ctx: options.ctx,
    env: options.env,
  });
}

/** `page`, then waits for the work the request left to its waitUntil (a sign-in link is mailed after the answer). */
export async function settledPage(method: string, path: string, options: ConsoleRequest = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await page(method, path, { ...options, ctx });
  await waitOnExecutionContext(ctx);
  return res;
}

/** The `edp_session=<token>` pair of a response's Set-Cookie, or null. */
export function sessionCookie(res: Response): string | null {
  const header = res.headers.get("set-cookie") ?? "";
  const match = /edp_session=([^;]*)/.exec(header);
  return match?.[1] ? `edp_session=${match[1]}` : null;
}

/** Uses a link token: POST /console/auth/<token>; returns the response. */
export function useLink(token: string, options: ConsoleRequest = {}): Promise<Response> {
  return page("POST", `/console/auth/${token}`, options);
}

/** Signs `email` in through a fresh sign-in link; returns the session cookie. */
export async function signIn(email: string): Promise<string> {
  const { token } = await createLink(getDb(env.DB), { kind: "sign_in", email });
  const res = await useLink(token);
  expect(res.status).toBe(303);
  const cookie = sessionCookie(res);
  expect(cookie).not.toBeNull();
  return cookie!;
}

export interface ConsoleTeam extends TestTeam {
  /** The signed-in member's session cookie. */
  cookie: string;
  email: string;
}

/** A new team (with one every-scope key) and a signed-in member of it with `role`. */
export async function consoleTeam(role: Role = "owner", options: Parameters<typeof setupTeam>[0] = {}): Promise<ConsoleTeam> {
  const team = await setupTeam({ ...options, ownerEmail: null });
  const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  await addMember(getDb(env.DB), team.teamId, { email, role });
  return { ...team, email, cookie: await signIn(email) };
}

/** Adds a member with a role to a team and signs them in. */
export async function memberOf(teamId: string, role: Role): Promise<{ email: string; cookie: string; userId: string }> {
  const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const member = await addMember(getDb(env.DB), teamId, { email, role });
  return { email, cookie: await signIn(email), userId: member.user_id };
}

/** The console links mailed to `email` (newest first), read from the platform outbox. */
export async function mailedLinks(email: string): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT text FROM platform_outbox WHERE \"to\" = ? AND kind LIKE 'console_%' ORDER BY created_at DESC")
    .bind(email)
    .all<{ text: string }>();
  return results.map((row) => /\/console\/auth\/([A-Za-z0-9_-]{43})/.exec(row.text)?.[1]).filter((t): t is string => Boolean(t));
}

/**
 * The console's routes of a method (`POST`, `GET`...) as the app registered them (`/console/...`
 * with their `:params`), read from the app's route table: a route added later is in the list
 * without anyone editing a test. Middleware (`ALL`) and the catch-all are left out.
 */
export function consoleRoutes(method: string): string[] {
  const paths = app.routes.filter((r) => r.method === method && r.path.startsWith("/console") && !r.path.includes("*")).map((r) => r.path);
  return [...new Set(paths)];
}

/** `path` with each `:name` replaced by `params[name]` (a missing name throws: every parameter needs a real id). */
export function fillPath(path: string, params: Record<string, string>): string {
  return path.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
    if (!(name in params)) throw new Error(`no value for :${name} in ${path}`);
    return params[name];
  });
}

/**
 * Post/redirect/get: expects `res` to be a 303 to a console page (never carrying a secret in its
 * address) and answers that page, opened with `cookie` as a browser would.
 */
export async function followRedirect(res: Response, cookie?: string | null): Promise<Response> {
  expect(res.status).toBe(303);
  const location = res.headers.get("location") ?? "";
  expect(location).toMatch(/^\/console\/[^?#]*(\?notice=[a-z-]+)?$/);
  return page("GET", location, { cookie });
}
