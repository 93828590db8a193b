// Shared set-up of the mail tests: sandbox keys, a send helper, a send that waits for the request's
// background work (the first delivery attempt), an env whose MAIL_QUEUE only records (so the
// automatic consumer never races a test that drives the consumer itself), a fake batch.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, vi } from "vitest";
import { app } from "../../../src/app";
import { getDb } from "../../../src/db/client";
import { addMember } from "../../../src/console/members.service";
import type { Env } from "../../../src/env";
import { anyIp, API, call, json, setupTeam, type TestTeam } from "../../helpers/api";
import type { MailQueueMessage } from "../../../src/products/mail/mail.queue";

export const SANDBOX = "sandbox.edge-platform.dev";
export const LIVE = { from: "Acme <hello@acme.dev>", to: "user@example.com", subject: "Hello", text: "Hi", stream: "transactional" };
export const SANDBOX_MAIL = { from: `test@${SANDBOX}`, to: "dev@example.com", subject: "Hello", text: "Hi" };

/**
 * A team whose key is a sandbox key (transactional only, allow-list dev@example.com and
 * qa@example.com, both accepted members of the team: sandbox mail goes only to members).
 */
export async function sandboxTeam(mail: Record<string, unknown> = {}): Promise<TestTeam> {
  const team = await setupTeam({
    mail: { sandbox: true, allowed_streams: ["transactional"], allowed_recipients: ["dev@example.com", "qa@example.com"], ...mail },
  });
  for (const email of ["dev@example.com", "qa@example.com"]) await addMember(getDb(env.DB), team.teamId, { email, role: "viewer" });
  return team;
}

export function send(key: string, body: unknown) {
  return call("POST", "emails", { key, body });
}

export function sendBatch(key: string, emails: unknown) {
  return call("POST", "emails/batch", { key, body: { emails } });
}

/**
 * POST to the API like `call`, then waits until the request's waitUntil work (the first delivery
 * attempt of the emails it stored) has finished, so a test can look at its outcome. Without
 * `withContext` the runtime gives the request no ExecutionContext at all.
 */
export async function postSettled(key: string, path: string, body: unknown, options: { env?: Env; withContext?: boolean } = {}): Promise<Response> {
  const request = new Request(`${API}/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "cf-connecting-ip": anyIp() },
    body: JSON.stringify(body),
  });
  if (options.withContext === false) return app.fetch(request, options.env ?? (env as Env));
  const ctx = createExecutionContext();
  const res = await app.fetch(request, options.env ?? (env as Env), ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

/** An env whose MAIL_QUEUE records messages (and the delay each was sent with) instead of delivering them. */
export function recordingEnv(overrides: Partial<Env> = {}): { env: Env; sent: MailQueueMessage[]; delays: Array<number | undefined> } {
  const sent: MailQueueMessage[] = [];
  const delays: Array<number | undefined> = [];
  const queue = {
    send: async (body: MailQueueMessage, options?: QueueSendOptions) => {
      sent.push(body);
      delays.push(options?.delaySeconds);
    },
    sendBatch: async (messages: Array<MessageSendRequest<MailQueueMessage>>) => {
      sent.push(...messages.map((m) => m.body));
      delays.push(...messages.map((m) => m.delaySeconds));
    },
  } as unknown as Queue;
  return { env: { ...(env as Env), MAIL_QUEUE: queue, ...overrides }, sent, delays };
}

/** A message batch with ack/retry spies. */
export function fakeBatch(bodies: MailQueueMessage[], attempts = 1) {
  const messages = bodies.map((body, i) => ({
    id: `m${i}`,
    timestamp: new Date(),
    body,
    attempts,
    ack: vi.fn(),
    retry: vi.fn(),
  }));
  const batch = { queue: "mail-sends", messages, ackAll: vi.fn(), retryAll: vi.fn() } as unknown as MessageBatch<unknown>;
  return { batch, messages };
}

/** Polls GET /emails/:id until the status leaves `queued` (the automatic consumer). */
export async function waitForStatus(key: string, id: string, timeoutMs = 8000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const body = await json(await call("GET", `emails/${id}`, { key }));
    if (body.data.status !== "queued" || Date.now() > end) return body.data;
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function created(res: Response) {
  expect(res.status).toBe(201);
  return (await json(res)).data;
}
