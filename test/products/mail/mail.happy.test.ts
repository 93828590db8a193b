// Sending, listing and reading emails; delivery through the outbox and an HTTP provider (fetch
// intercepted), retries and the final `failed`, redelivery idempotency, sandbox suspension,
// platform mail through the same consumer, mail webhooks and their signed deliveries.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../../src/env";
import { loadPrincipal, type Principal } from "../../../src/platform/auth";
import { setClock } from "../../../src/platform/clock";
import { queuePlatformMail } from "../../../src/platform/platform-mail";
import { deliveriesOf } from "../../../src/platform/jobs/queues";
import { verifyStandardWebhook } from "../../../src/platform/webhook-signature";
import { mailSendsConsumer, MAX_ATTEMPTS } from "../../../src/products/mail/mail.consumer";
import type { MailQueueMessage } from "../../../src/products/mail/mail.queue";
import { sweepMail } from "../../../src/products/mail/mail.cron";
import { checkEmail } from "../../../src/products/mail/mail.validation";
import { createEmails } from "../../../src/products/mail/mail.service";
import { admin, call, expectError, json, setupTeam } from "../../helpers/api";
import { setUsed } from "../../helpers/usage";
import { created, fakeBatch, LIVE, postSettled, recordingEnv, SANDBOX, SANDBOX_MAIL, sandboxTeam, send, waitForStatus } from "./mail-helpers";

afterEach(() => {
  vi.restoreAllMocks();
  setClock(null);
});

const PROVIDER = "http://mail-provider.test/v1/send";
const httpEnv = (queue: ReturnType<typeof recordingEnv>) =>
  ({ ...queue.env, MAIL_TRANSPORT: "http", MAIL_HTTP_URL: PROVIDER, MAIL_HTTP_TOKEN: "provider-token" }) as Env;

async function principalOf(key: string): Promise<Principal> {
  return (await loadPrincipal(env.DB, key)) as Principal;
}

/** Stores emails without queueing them (the test drives the consumer itself). */
async function storeEmails(key: string, bodies: Record<string, unknown>[], stream: "transactional" | "broadcast" = "transactional") {
  const recorder = recordingEnv();
  const accepted = bodies.map((body) => {
    const result = checkEmail(body);
    if (!("email" in result)) throw new Error(JSON.stringify(result));
    return { email: result.email, stream };
  });
  const rows = await createEmails(recorder.env, await principalOf(key), accepted);
  return { rows, recorder };
}

async function getEmail(key: string, id: string) {
  return (await json(await call("GET", `emails/${id}`, { key }))).data;
}

describe("sending and reading", () => {
  it("stores a queued message and the queue consumer delivers it through the outbox", async () => {
    const team = await setupTeam();
    const data = await created(
      await send(team.key, {
        ...LIVE,
        to: ["A <a@example.com>", "b@example.com"],
        cc: "c@example.com",
        html: "<p>Hi</p>",
        headers: { "X-Campaign": "spring" },
        tags: ["welcome"],
      }),
    );
    // Stored as parsed: display names re-quoted.
    expect(data).toMatchObject({
      from: '"Acme" <hello@acme.dev>',
      to: ['"A" <a@example.com>', "b@example.com"],
      cc: ["c@example.com"],
      subject: "Hello",
      html: "<p>Hi</p>",
      headers: { "X-Campaign": "spring" },
      tags: ["welcome"],
      stream: "transactional",
      sandbox: false,
      status: "queued",
      history: [{ status: "queued", detail: null }],
    });
    const delivered = await waitForStatus(team.key, data.id);
    expect(delivered.status).toBe("delivered");
    expect(delivered.history.map((h: { status: string }) => h.status)).toEqual(["queued", "sent", "delivered"]);
    const usage = await json(await call("GET", "usage", { key: team.key }));
    expect(usage.data.services.mail).toMatchObject({ metric: "emails_sent", used: 1 });
  });

  it("lists emails newest first with filters and pages", async () => {
    const team = await setupTeam();
    setClock(Date.UTC(2026, 9, 1, 8));
    const first = await created(await send(team.key, { ...LIVE, to: "first@example.com" }));
    setClock(Date.UTC(2026, 9, 2, 8));
    const second = await created(await send(team.key, { ...LIVE, stream: "broadcast", bcc: "Hidden@Example.com" }));
    setClock(Date.UTC(2026, 9, 3, 8));
    const third = await created(await send(team.key, LIVE));
    setClock(null);
    const ids = async (query: string) => (await json(await call("GET", `emails${query}`, { key: team.key }))).data.map((e: { id: string }) => e.id);
    expect(await ids("")).toEqual([third.id, second.id, first.id]);
    expect(await ids("?stream=broadcast")).toEqual([second.id]);
    expect(await ids("?recipient=hidden@example.com")).toEqual([second.id]);
    expect(await ids("?recipient=first@example.com")).toEqual([first.id]);
    expect(await ids("?since=2026-10-02T00:00:00Z&until=2026-10-03T00:00:00Z")).toEqual([second.id]);
    const page = await json(await call("GET", "emails?per_page=2&page=2", { key: team.key }));
    expect(page.data.map((e: { id: string }) => e.id)).toEqual([first.id]);
    expect(page.pagination).toEqual({ page: 2, per_page: 2, total: 3, total_pages: 2 });
    const byStatus = await json(await call("GET", "emails?status=failed", { key: team.key }));
    expect(byStatus.data).toEqual([]);
    await expectError(await call("GET", "emails?status=lost&per_page=500", { key: team.key }), 422, {
      error: "Validation failed",
      details: { status: [expect.any(String)], per_page: [expect.any(String)] },
    });
  });

  it("creates every item of a valid batch (201) in request order", async () => {
    const team = await setupTeam();
    const res = await call("POST", "emails/batch", {
      key: team.key,
      body: {
        emails: [
          { ...LIVE, subject: "One" },
          { ...LIVE, subject: "Two" },
        ],
      },
    });
    expect(res.status).toBe(201);
    const { data } = await json(res);
    expect(data.map((e: { subject: string }) => e.subject)).toEqual(["One", "Two"]);
    expect((await json(await call("GET", "usage", { key: team.key }))).data.services.mail.used).toBe(2);
  });
});

describe("delivery", () => {
  it("outbox: delivered once; a redelivered queue message changes nothing", async () => {
    const team = await setupTeam();
    const { rows, recorder } = await storeEmails(team.key, [LIVE]);
    expect(recorder.sent).toEqual([{ type: "email", id: rows[0].id }]);
    const { batch, messages } = fakeBatch(recorder.sent);
    await mailSendsConsumer.consume(batch, recorder.env);
    expect(messages[0].ack).toHaveBeenCalled();
    const again = fakeBatch(recorder.sent);
    await mailSendsConsumer.consume(again.batch, recorder.env);
    expect(again.messages[0].ack).toHaveBeenCalled();
    const email = await getEmail(team.key, rows[0].id);
    expect(email.status).toBe("delivered");
    expect(email.attempts).toBe(1);
    expect(email.history.map((h: { status: string }) => h.status)).toEqual(["queued", "sent", "delivered"]);
  });

  it("outbox: the sandbox simulator addresses bounce and complain", async () => {
    const team = await setupTeam();
    const { rows, recorder } = await storeEmails(team.key, [
      { ...LIVE, to: `bounced@${SANDBOX}` },
      { ...LIVE, to: `complained@${SANDBOX}` },
    ]);
    await mailSendsConsumer.consume(fakeBatch(recorder.sent).batch, recorder.env);
    const bounced = await getEmail(team.key, rows[0].id);
    expect(bounced.status).toBe("bounced");
    expect(bounced.history.at(-1)).toMatchObject({ status: "bounced", detail: `bounced@${SANDBOX}: simulated hard bounce` });
    expect((await getEmail(team.key, rows[1].id)).status).toBe("complained");
  });

  it("http: posts JSON with the bearer token and an idempotency key; the provider's id and status are kept", async () => {
    const team = await setupTeam();
    const { rows, recorder } = await storeEmails(team.key, [{ ...LIVE, html: "<b>x</b>", tags: ["t1"] }, LIVE]);
    const calls: Array<{ url: string; init: RequestInit }> = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      calls.push({ url: String(input), init: init as RequestInit });
      const status = calls.length === 1 ? undefined : "delivered";
      return Response.json({ id: `prov-${calls.length}`, status });
    });
    await mailSendsConsumer.consume(fakeBatch(recorder.sent).batch, httpEnv(recorder));
    expect(calls).toHaveLength(2);
    const headers = new Headers(calls[0].init.headers);
    expect(calls[0].url).toBe(PROVIDER);
    expect(calls[0].init.method).toBe("POST");
    expect(headers.get("authorization")).toBe("Bearer provider-token");
    expect(headers.get("idempotency-key")).toBe(rows[0].id);
    expect(JSON.parse(calls[0].init.body as string)).toEqual({
      id: rows[0].id,
      from: '"Acme" <hello@acme.dev>',
      to: [LIVE.to],
      cc: [],
      bcc: [],
      reply_to: [],
      subject: "Hello",
      html: "<b>x</b>",
      text: "Hi",
      headers: {},
      tags: ["t1"],
      stream: "transactional",
    });
    const first = await env.DB.prepare("SELECT status, provider_id FROM emails WHERE id = ?").bind(rows[0].id).first();
    expect(first).toEqual({ status: "sent", provider_id: "prov-1" });
    expect((await getEmail(team.key, rows[1].id)).history.map((h: { status: string }) => h.status)).toEqual(["queued", "sent", "delivered"]);
  });

  it("http: retries with backoff on 5xx and network errors, then marks the message failed", async () => {
    const team = await setupTeam();
    const { rows, recorder } = await storeEmails(team.key, [LIVE]);
    let n = 0;
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => {
      n++;
      if (n % 2) throw new TypeError("connection refused");
      return new Response("upstream down", { status: 503 });
    });
    const delays: number[] = [];
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const { batch, messages } = fakeBatch(recorder.sent, attempt);
      await mailSendsConsumer.consume(batch, httpEnv(recorder));
      if (attempt < MAX_ATTEMPTS) {
        expect(messages[0].retry).toHaveBeenCalledTimes(1);
        delays.push(messages[0].retry.mock.calls[0][0].delaySeconds);
        const email = await getEmail(team.key, rows[0].id);
        expect(email).toMatchObject({ status: "queued", attempts: attempt });
        expect(email.last_error).toMatch(attempt % 2 ? /provider unreachable/ : /HTTP 503/);
      } else {
        expect(messages[0].ack).toHaveBeenCalled();
      }
    }
    expect(delays).toEqual([10, 20, 40, 80]);
    expect(n).toBe(MAX_ATTEMPTS);
    const email = await getEmail(team.key, rows[0].id);
    expect(email.status).toBe("failed");
    expect(email.history.map((h: { status: string }) => h.status)).toEqual(["queued", "failed"]);
    expect(email.history[1].detail).toMatch(/after 5 attempts/);
  });

  it("http: a 4xx refusal fails at once without retrying", async () => {
    const team = await setupTeam();
    const { rows, recorder } = await storeEmails(team.key, [LIVE]);
    vi.spyOn(globalThis, "fetch").mockResolvedValue(new Response('{"error":"bad sender"}', { status: 422 }));
    const { batch, messages } = fakeBatch(recorder.sent);
    await mailSendsConsumer.consume(batch, httpEnv(recorder));
    expect(messages[0].ack).toHaveBeenCalled();
    expect(messages[0].retry).not.toHaveBeenCalled();
    expect(await getEmail(team.key, rows[0].id)).toMatchObject({ status: "failed", last_error: 'provider answered HTTP 422: {"error":"bad sender"}' });
  });

  it("off (production without a provider): nothing is sent or marked delivered; the message fails saying why", async () => {
    const team = await setupTeam();
    const { rows, recorder } = await storeEmails(team.key, [LIVE]);
    const fetchSpy = vi.spyOn(globalThis, "fetch");
    const { batch, messages } = fakeBatch(recorder.sent);
    await mailSendsConsumer.consume(batch, { ...recorder.env, MAIL_TRANSPORT: "off" } as Env);
    expect(fetchSpy).not.toHaveBeenCalled();
    expect(messages[0].ack).toHaveBeenCalled();
    expect(messages[0].retry).not.toHaveBeenCalled();
    const email = await getEmail(team.key, rows[0].id);
    expect(email).toMatchObject({
      status: "failed",
      last_error: 'no mail transport: MAIL_TRANSPORT is "off" (set "http" with MAIL_HTTP_URL: npm run deploy:setup -- --mail-url <provider URL>)',
    });
    expect(email.history.map((h: { status: string }) => h.status)).not.toContain("delivered");
  });

  it("a message held by another consumer (lease) is not sent twice", async () => {
    const team = await setupTeam();
    const { rows, recorder } = await storeEmails(team.key, [LIVE]);
    await env.DB.prepare("UPDATE emails SET lease_until = ? WHERE id = ?")
      .bind(Date.now() + 60_000, rows[0].id)
      .run();
    const spy = vi.spyOn(globalThis, "fetch");
    const { batch, messages } = fakeBatch(recorder.sent);
    await mailSendsConsumer.consume(batch, httpEnv(recorder));
    expect(spy).not.toHaveBeenCalled();
    expect(messages[0].ack).toHaveBeenCalled();
    expect((await getEmail(team.key, rows[0].id)).status).toBe("queued");
  });

  it("the hourly sweep queues again a message whose queue message was lost", async () => {
    const team = await setupTeam();
    const { rows } = await storeEmails(team.key, [LIVE]);
    const recorder = recordingEnv();
    // Other files' messages may be swept too (the database is shared): look at this one only.
    await sweepMail(recorder.env);
    expect(recorder.sent).not.toContainEqual({ type: "email", id: rows[0].id });
    setClock(Date.now() + 20 * 60_000);
    await sweepMail(recorder.env);
    expect(recorder.sent).toContainEqual({ type: "email", id: rows[0].id });
  });
});

describe("sandbox suspension", () => {
  it("suspends a sandbox key at 10% bounces over 10 messages; the operator lifts it", async () => {
    const team = await sandboxTeam();
    const bodies = [...Array.from({ length: 9 }, () => SANDBOX_MAIL), { ...SANDBOX_MAIL, to: `bounced@${SANDBOX}` }];
    const { recorder } = await storeEmails(team.key, bodies.slice(0, 8));
    await mailSendsConsumer.consume(fakeBatch(recorder.sent).batch, recorder.env);
    // The 9th message, none bounced yet: the request's own first attempt delivers it.
    const ninth = await postSettled(team.key, "emails", SANDBOX_MAIL, { env: recordingEnv().env });
    expect(ninth.status).toBe(201);
    expect((await getEmail(team.key, (await json(ninth)).data.id)).status).toBe("delivered");
    const bounce = await storeEmails(team.key, [bodies[9]]);
    await mailSendsConsumer.consume(fakeBatch(bounce.recorder.sent).batch, bounce.recorder.env);
    await expectError(await send(team.key, SANDBOX_MAIL), 403, {
      error: "This key is suspended from sending because of its bounce or complaint rate",
      code: "sandbox_disabled",
    });
    const key = await json(await admin("PATCH", `keys/${team.keyId}`, { mail: { suspended: false } }));
    expect(key.data.mail.suspended).toBe(false);
    expect((await send(team.key, SANDBOX_MAIL)).status).toBe(201);
  });

  it("does not judge a key on fewer than 10 messages", async () => {
    const team = await sandboxTeam();
    const { recorder } = await storeEmails(team.key, [...Array.from({ length: 8 }, () => SANDBOX_MAIL), { ...SANDBOX_MAIL, to: `complained@${SANDBOX}` }]);
    await mailSendsConsumer.consume(fakeBatch(recorder.sent).batch, recorder.env);
    expect((await send(team.key, SANDBOX_MAIL)).status).toBe(201);
  });
});

describe("platform mail", () => {
  it("goes through the same consumer and transport, from MAIL_FROM", async () => {
    const recorder = recordingEnv();
    const id = await queuePlatformMail(recorder.env, { teamId: null, kind: "report_share", to: "boss@example.com", subject: "A report", text: "See it" });
    expect(recorder.sent).toEqual([{ type: "platform", id }]);
    const calls: RequestInit[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (_input, init) => {
      calls.push(init as RequestInit);
      return Response.json({ id: "p-1" });
    });
    const { batch, messages } = fakeBatch(recorder.sent);
    await mailSendsConsumer.consume(batch, httpEnv(recorder));
    expect(messages[0].ack).toHaveBeenCalled();
    expect(JSON.parse(calls[0].body as string)).toMatchObject({
      from: env.MAIL_FROM,
      to: ["boss@example.com"],
      subject: "A report",
      text: "See it",
      tags: ["report_share"],
    });
    const row = await env.DB.prepare("SELECT status, sent_at FROM platform_outbox WHERE id = ?").bind(id).first<{ status: string; sent_at: string }>();
    expect(row?.status).toBe("sent");
    // Redelivery sends nothing more.
    await mailSendsConsumer.consume(fakeBatch(recorder.sent).batch, httpEnv(recorder));
    expect(calls).toHaveLength(1);
  });

  it("a usage warning is delivered by the queue consumer and consumes no quota", async () => {
    const team = await setupTeam({ plan: "free", ownerEmail: "owner@acme.dev" });
    await setUsed(team.teamId, "mail", 2399);
    expect((await send(team.key, LIVE)).status).toBe(201);
    let row: { status: string; to: string } | null = null;
    for (let i = 0; i < 80; i++) {
      row = await env.DB.prepare("SELECT status, \"to\" FROM platform_outbox WHERE team_id = ? AND kind = 'usage_warning'").bind(team.teamId).first();
      if (row?.status === "delivered") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(row).toEqual({ status: "delivered", to: "owner@acme.dev" });
    expect((await json(await call("GET", "usage", { key: team.key }))).data.services.mail.used).toBe(2400);
  });
});

describe("mail webhooks", () => {
  it("creates (secret shown once), lists and deletes", async () => {
    const team = await setupTeam();
    const res = await call("POST", "webhooks", {
      key: team.key,
      body: { url: "https://hooks.example.com/mail", events: ["email.delivered", "email.bounced"] },
    });
    expect(res.status).toBe(201);
    const hook = (await json(res)).data;
    expect(hook).toMatchObject({ url: "https://hooks.example.com/mail", events: ["email.delivered", "email.bounced"] });
    expect(hook.secret).toMatch(/^whsec_/);
    const list = (await json(await call("GET", "webhooks", { key: team.key }))).data;
    expect(list).toEqual([{ id: hook.id, url: hook.url, events: hook.events, created_at: hook.created_at }]);
    const stored = await env.DB.prepare("SELECT secret_encrypted FROM mail_webhooks WHERE id = ?").bind(hook.id).first<{ secret_encrypted: string }>();
    expect(stored?.secret_encrypted).not.toContain(hook.secret.slice(6));
    expect((await call("DELETE", `webhooks/${hook.id}`, { key: team.key })).status).toBe(204);
    await expectError(await call("DELETE", `webhooks/${hook.id}`, { key: team.key }), 404, { error: "Webhook not found" });
    expect((await json(await call("GET", "webhooks", { key: team.key }))).data).toEqual([]);
  });

  it("delivers signed status events for the subscribed types, with retries", async () => {
    const team = await setupTeam();
    const hook = (await json(await call("POST", "webhooks", { key: team.key, body: { url: "https://hooks.example.com/mail", events: ["email.delivered"] } })))
      .data;
    const { rows, recorder } = await storeEmails(team.key, [{ ...LIVE, tags: ["t"] }]);
    await mailSendsConsumer.consume(fakeBatch(recorder.sent.splice(0)).batch, recorder.env);
    const webhookMessages = recorder.sent.splice(0) as Array<MailQueueMessage & { type: "webhook" }>;
    expect(webhookMessages).toHaveLength(1); // delivered only, not sent
    expect(webhookMessages[0].webhookId).toBe(hook.id);

    const received: Request[] = [];
    let fail = true;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      received.push(new Request(input as string, init));
      return new Response(null, { status: fail ? 500 : 204 });
    });
    const firstTry = fakeBatch(webhookMessages, 1);
    await mailSendsConsumer.consume(firstTry.batch, recorder.env);
    expect(firstTry.messages[0].retry).toHaveBeenCalledWith({ delaySeconds: 10 });
    fail = false;
    const secondTry = fakeBatch(webhookMessages, 2);
    await mailSendsConsumer.consume(secondTry.batch, recorder.env);
    expect(secondTry.messages[0].ack).toHaveBeenCalled();

    const request = received[1];
    expect(request.url).toBe("https://hooks.example.com/mail");
    const body = await request.text();
    const ok = await verifyStandardWebhook(
      hook.secret,
      { id: request.headers.get("webhook-id"), timestamp: request.headers.get("webhook-timestamp"), signature: request.headers.get("webhook-signature") },
      body,
      Math.floor(Date.now() / 1000),
    );
    expect(ok).toBe(true);
    expect(JSON.parse(body)).toMatchObject({
      type: "email.delivered",
      data: { email_id: rows[0].id, status: "delivered", to: [LIVE.to], subject: "Hello", stream: "transactional", tags: ["t"] },
    });
    expect(request.headers.get("webhook-id")).toBe(received[0].headers.get("webhook-id"));

    // Failing on the queue's next-to-last delivery it is retried; on the last one it is given up:
    // acknowledged and logged (the queue's max_retries, from the queue table, sets which that is).
    fail = true;
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const nextToLast = fakeBatch(webhookMessages, deliveriesOf("mail-sends") - 1);
    await mailSendsConsumer.consume(nextToLast.batch, recorder.env);
    expect(nextToLast.messages[0].retry).toHaveBeenCalledOnce();
    const last = fakeBatch(webhookMessages, deliveriesOf("mail-sends"));
    await mailSendsConsumer.consume(last.batch, recorder.env);
    expect(last.messages[0].ack).toHaveBeenCalledOnce();
    expect(last.messages[0].retry).not.toHaveBeenCalled();
    expect(errors.mock.calls.map(([line]) => JSON.parse(String(line)).msg)).toEqual(["mail webhook delivery abandoned"]);
    expect(received).toHaveLength(4);
  });

  it("test delivery: 200 with the documented body when the endpoint answers 2xx", async () => {
    const team = await setupTeam();
    const hook = (await json(await call("POST", "webhooks", { key: team.key, body: { url: "https://hooks.example.com/mail", events: ["email.sent"] } }))).data;
    // The body is read inside the request that sent it (workerd ties streams to their request).
    const seen: Array<{ body: string; headers: Headers }> = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const request = new Request(input as string, init);
      seen.push({ body: await request.text(), headers: request.headers });
      return new Response(null, { status: 200 });
    });
    const res = await call("POST", `webhooks/${hook.id}/test`, { key: team.key });
    expect(res.status).toBe(200);
    const { data } = await json(res);
    expect(data).toMatchObject({ success: true, webhook_id: hook.id, status_code: 200 });
    expect(data.message_id).toMatch(/^msg_test_/);
    expect(JSON.parse(seen[0].body)).toMatchObject({ type: "email.test", data: { webhook_id: hook.id } });
    expect(seen[0].headers.get("webhook-signature")).toMatch(/^v1,/);
  });

  it("test delivery: 502 {error: {message, detail}} when the endpoint cannot be reached or refuses", async () => {
    const team = await setupTeam();
    const hook = (await json(await call("POST", "webhooks", { key: team.key, body: { url: "https://hooks.example.com/mail", events: ["email.sent"] } }))).data;
    vi.spyOn(globalThis, "fetch").mockImplementationOnce(async () => {
      throw new TypeError("Network connection lost.");
    });
    await expectError(await call("POST", `webhooks/${hook.id}/test`, { key: team.key }), 502, {
      error: { message: "Test delivery could not reach the endpoint", detail: "The endpoint could not be reached (connection failed or timed out)" },
    });
    // A timeout answers the same words as a refused connection: no port-scan oracle.
    vi.spyOn(globalThis, "fetch").mockImplementationOnce(async () => {
      throw new DOMException("The operation was aborted due to timeout", "TimeoutError");
    });
    await expectError(await call("POST", `webhooks/${hook.id}/test`, { key: team.key }), 502, {
      error: { message: "Test delivery could not reach the endpoint", detail: "The endpoint could not be reached (connection failed or timed out)" },
    });
    vi.spyOn(globalThis, "fetch").mockImplementationOnce(async () => new Response(null, { status: 500 }));
    await expectError(await call("POST", `webhooks/${hook.id}/test`, { key: team.key }), 502, {
      error: { message: "Test delivery was not accepted by the endpoint", detail: "The endpoint answered HTTP 500" },
    });
  });

  it("test delivery to a real unreachable local port answers 502", async () => {
    const team = await setupTeam();
    const hook = (await json(await call("POST", "webhooks", { key: team.key, body: { url: "http://127.0.0.1:9/hook", events: ["email.sent"] } }))).data;
    const res = await call("POST", `webhooks/${hook.id}/test`, { key: team.key });
    expect(res.status).toBe(502);
    const body = await json(res);
    expect(body.error).toEqual({
      message: "Test delivery could not reach the endpoint",
      detail: "The endpoint could not be reached (connection failed or timed out)",
    });
  });
});

describe("OpenAPI", () => {
  it("documents every mail route", async () => {
    const doc = await json(await call("GET", "openapi.json"));
    for (const path of [
      "/api/v1/emails",
      "/api/v1/emails/batch",
      "/api/v1/emails/{id}",
      "/api/v1/webhooks",
      "/api/v1/webhooks/{id}",
      "/api/v1/webhooks/{id}/test",
    ]) {
      expect(doc.paths[path]).toBeDefined();
    }
    expect(doc.paths["/api/v1/emails"].post.requestBody.content["application/json"].schema).toBeDefined();
  });
});

describe("a full batch", () => {
  it("stores 100 emails (multi-row inserts within D1's parameter limit) and answers them in order", async () => {
    const team = await setupTeam();
    const emails = Array.from({ length: 100 }, (_, i) => ({ ...LIVE, subject: `No ${i}` }));
    const res = await call("POST", "emails/batch", { key: team.key, body: { emails } });
    expect(res.status).toBe(201);
    const { data } = await json(res);
    expect(data.map((e: { subject: string }) => e.subject)).toEqual(emails.map((e) => e.subject));
    const count = await env.DB.prepare("SELECT count(*) AS n FROM email_events WHERE team_id = ? AND status = 'queued'")
      .bind(team.teamId)
      .first<{ n: number }>();
    expect(count?.n).toBe(100);
    expect((await json(await call("GET", "emails?per_page=100", { key: team.key }))).pagination.total).toBe(100);
  });
});

describe("webhook delivery edges", () => {
  async function pendingDelivery() {
    const team = await setupTeam();
    const hook = (
      await json(await call("POST", "webhooks", { key: team.key, body: { url: "https://hooks.example.com/e", events: ["email.failed", "email.delivered"] } }))
    ).data;
    const { recorder } = await storeEmails(team.key, [LIVE]);
    await mailSendsConsumer.consume(fakeBatch(recorder.sent.splice(0)).batch, recorder.env);
    return { team, hook, recorder, messages: recorder.sent.splice(0) };
  }

  it("gives up after the last attempt and acknowledges", async () => {
    const { recorder, messages } = await pendingDelivery();
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(null, { status: 503 }));
    const last = fakeBatch(messages, 6);
    await mailSendsConsumer.consume(last.batch, recorder.env);
    expect(last.messages[0].ack).toHaveBeenCalled();
    expect(last.messages[0].retry).not.toHaveBeenCalled();
  });

  it("drops deliveries to a deleted webhook without calling it", async () => {
    const { team, hook, recorder, messages } = await pendingDelivery();
    expect((await call("DELETE", `webhooks/${hook.id}`, { key: team.key })).status).toBe(204);
    const spy = vi.spyOn(globalThis, "fetch");
    const run = fakeBatch(messages);
    await mailSendsConsumer.consume(run.batch, recorder.env);
    expect(spy).not.toHaveBeenCalled();
    expect(run.messages[0].ack).toHaveBeenCalled();
  });
});

describe("platform mail sweep", () => {
  it("queues again platform mail whose queue message was lost", async () => {
    const lost = recordingEnv({
      MAIL_QUEUE: {
        send: async () => {
          throw new Error("queue down");
        },
      } as unknown as Queue,
    });
    const id = await queuePlatformMail(lost.env, { teamId: null, kind: "alert", to: "ops@example.com", subject: "Alert", text: "x" });
    setClock(Date.now() + 20 * 60_000);
    const recorder = recordingEnv();
    expect((await sweepMail(recorder.env)).platform).toBeGreaterThanOrEqual(1);
    expect(recorder.sent).toContainEqual({ type: "platform", id });
    setClock(null);
    await mailSendsConsumer.consume(fakeBatch([{ type: "platform", id }]).batch, recorder.env);
    const row = await env.DB.prepare("SELECT status FROM platform_outbox WHERE id = ?").bind(id).first<{ status: string }>();
    expect(row?.status).toBe("delivered");
  });
});
