// The first delivery attempt a send request starts itself (waitUntil), without waiting for the
// queue: delivered without running the consumer; the queue message, delayed past the lease, then
// sends nothing more; a failed first attempt is retried by the queue; a consumer racing the attempt
// is held off by the claim; batches attempt their first INLINE_FIRST_ATTEMPTS emails at once.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../../src/env";
import { MAX_ATTEMPTS, mailSendsConsumer } from "../../../src/products/mail/mail.consumer";
import { mailSendsQueue } from "../../../src/products/mail/mail.messages";
import { PROVIDER_TIMEOUT_MS } from "../../../src/products/mail/mail.transport";
import { FIRST_ATTEMPT_QUEUE_DELAY_SECONDS, LEASE_MS } from "../../../src/products/mail/mail.queue";
import { INLINE_FIRST_ATTEMPTS } from "../../../src/products/mail/mail.service";
import { call, json, setupTeam } from "../../helpers/api";
import { fakeBatch, LIVE, postSettled, recordingEnv } from "./mail-helpers";

afterEach(() => vi.restoreAllMocks());

const PROVIDER = "http://mail-provider.test/v1/send";
const httpEnv = (base: Env) => ({ ...base, MAIL_TRANSPORT: "http", MAIL_HTTP_URL: PROVIDER, MAIL_HTTP_TOKEN: "provider-token" }) as Env;

/** Intercepts the provider; `answer` decides each call's response. */
function provider(answer: (n: number) => Response | Promise<Response>) {
  const seen: string[] = [];
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    if (!request.url.startsWith(PROVIDER)) return real(input, init);
    seen.push(request.headers.get("idempotency-key") ?? "");
    return answer(seen.length);
  });
  return seen;
}

async function email(key: string, id: string) {
  return (await json(await call("GET", `emails/${id}`, { key }))).data;
}

describe("first delivery attempt from the send request", () => {
  it("holds a message under the queue's lease (declared with it, mail.messages.ts), which outlasts the provider call", () => {
    expect(LEASE_MS).toBe(mailSendsQueue.claim.leaseMs);
    expect(LEASE_MS).toBeGreaterThan(PROVIDER_TIMEOUT_MS);
    expect(MAX_ATTEMPTS).toBe(mailSendsQueue.claim.maxAttempts);
  });

  it("outbox: delivered without the queue consumer; the answer is unchanged; the delayed queue message then sends nothing", async () => {
    const team = await setupTeam();
    const queue = recordingEnv();
    const res = await postSettled(team.key, "emails", LIVE, { env: queue.env });
    expect(res.status).toBe(201);
    const { data } = await json(res);
    // The answer is the stored message, as before: queued, with its queued history entry.
    expect(data).toMatchObject({ status: "queued", attempts: 0, history: [{ status: "queued", detail: null }] });

    const delivered = await email(team.key, data.id);
    expect(delivered).toMatchObject({ status: "delivered", attempts: 1 });
    expect(delivered.history.map((h: { status: string }) => h.status)).toEqual(["queued", "sent", "delivered"]);
    // The safety net was queued, delayed past the attempt's lease.
    expect(queue.sent).toEqual([{ type: "email", id: data.id }]);
    expect(queue.delays).toEqual([FIRST_ATTEMPT_QUEUE_DELAY_SECONDS]);
    expect(FIRST_ATTEMPT_QUEUE_DELAY_SECONDS * 1000).toBeGreaterThan(LEASE_MS);

    // The queue message arrives: acked, nothing sent again.
    const { batch, messages } = fakeBatch(queue.sent);
    await mailSendsConsumer.consume(batch, queue.env);
    expect(messages[0].ack).toHaveBeenCalled();
    const after = await email(team.key, data.id);
    expect(after.attempts).toBe(1);
    expect(after.history).toHaveLength(3);
  });

  it("http: the provider gets the email once, from the request; running the consumer afterwards sends nothing more", async () => {
    const team = await setupTeam();
    const queue = recordingEnv();
    const seen = provider((n) => Response.json({ id: `prov-${n}`, status: "delivered" }));
    const res = await postSettled(team.key, "emails", LIVE, { env: httpEnv(queue.env) });
    const { id } = (await json(res)).data;
    expect(seen).toEqual([id]);
    for (let delivery = 1; delivery <= 2; delivery++) {
      const { batch, messages } = fakeBatch(queue.sent, delivery);
      await mailSendsConsumer.consume(batch, httpEnv(queue.env));
      expect(messages[0].ack).toHaveBeenCalled();
    }
    expect(seen).toEqual([id]);
    expect(await email(team.key, id)).toMatchObject({ status: "delivered", attempts: 1 });
  });

  it("a failed first attempt is left queued with its error and retried by the queue message", async () => {
    const team = await setupTeam();
    const queue = recordingEnv();
    const seen = provider((n) => (n === 1 ? new Response("upstream down", { status: 503 }) : Response.json({ id: "prov-2" })));
    vi.spyOn(console, "error").mockImplementation(() => {});
    const res = await postSettled(team.key, "emails", LIVE, { env: httpEnv(queue.env) });
    expect(res.status).toBe(201);
    const { id } = (await json(res)).data;
    const failed = await email(team.key, id);
    expect(failed).toMatchObject({ status: "queued", attempts: 1 });
    expect(failed.last_error).toMatch(/HTTP 503/);

    const { batch, messages } = fakeBatch(queue.sent);
    await mailSendsConsumer.consume(batch, httpEnv(queue.env));
    expect(messages[0].ack).toHaveBeenCalled();
    expect(seen).toEqual([id, id]);
    const sent = await email(team.key, id);
    expect(sent).toMatchObject({ status: "sent", attempts: 2, last_error: null });
    expect(sent.history.map((h: { status: string }) => h.status)).toEqual(["queued", "sent"]);
  });

  it("a refused first attempt (4xx) fails the email; the queue message then sends nothing", async () => {
    const team = await setupTeam();
    const queue = recordingEnv();
    const seen = provider(() => new Response("bad sender", { status: 400 }));
    const { id } = (await json(await postSettled(team.key, "emails", LIVE, { env: httpEnv(queue.env) }))).data;
    expect(await email(team.key, id)).toMatchObject({ status: "failed", attempts: 1 });
    await mailSendsConsumer.consume(fakeBatch(queue.sent).batch, httpEnv(queue.env));
    expect(seen).toHaveLength(1);
  });

  it("a queue message that arrives while the first attempt holds the lease sends nothing (the claim)", async () => {
    const team = await setupTeam();
    const queue = recordingEnv();
    let entered!: () => void;
    const inFlight = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const seen = provider(async () => {
      entered();
      await gate;
      return Response.json({ id: "prov-1", status: "delivered" });
    });
    const request = postSettled(team.key, "emails", LIVE, { env: httpEnv(queue.env) });
    await inFlight; // the request's attempt is at the provider, holding the lease
    const { batch, messages } = fakeBatch(queue.sent);
    await mailSendsConsumer.consume(batch, httpEnv(queue.env));
    expect(messages[0].ack).toHaveBeenCalled();
    expect(seen).toHaveLength(1);
    release();
    const { id } = (await json(await request)).data;
    expect(await email(team.key, id)).toMatchObject({ status: "delivered", attempts: 1 });
    expect(seen).toHaveLength(1);
  });

  it("status events of the first attempt reach the team's mail webhooks", async () => {
    const team = await setupTeam();
    const hook = await call("POST", "webhooks", { key: team.key, body: { url: "https://hooks.example.com/mail", events: ["email.delivered"] } });
    expect(hook.status).toBe(201);
    const webhookId = (await json(hook)).data.id;
    const queue = recordingEnv();
    await postSettled(team.key, "emails", LIVE, { env: queue.env });
    expect(queue.sent.filter((m) => m.type === "webhook")).toEqual([{ type: "webhook", webhookId, eventId: expect.any(String) }]);
  });

  it("batch: the first INLINE_FIRST_ATTEMPTS emails are delivered by the request, the rest by the queue, each once", async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const queue = recordingEnv();
    const count = INLINE_FIRST_ATTEMPTS + 3;
    const items = Array.from({ length: count }, (_, i) => ({ ...LIVE, subject: `n${i}` }));
    const res = await postSettled(team.key, "emails/batch", { emails: items }, { env: queue.env });
    expect(res.status).toBe(201);
    const rows: Array<{ id: string; status: string }> = (await json(res)).data;
    expect(rows.every((row) => row.status === "queued")).toBe(true);
    const statuses = async () => Promise.all(rows.map(async (row) => (await email(team.key, row.id)).status));
    expect(await statuses()).toEqual(rows.map((_, i) => (i < INLINE_FIRST_ATTEMPTS ? "delivered" : "queued")));
    expect(queue.sent).toEqual(rows.map((row) => ({ type: "email", id: row.id })));
    expect(queue.delays).toEqual(rows.map((_, i) => (i < INLINE_FIRST_ATTEMPTS ? FIRST_ATTEMPT_QUEUE_DELAY_SECONDS : undefined)));

    await mailSendsConsumer.consume(fakeBatch(queue.sent).batch, queue.env);
    expect(await statuses()).toEqual(rows.map(() => "delivered"));
    const attempts = await Promise.all(rows.map(async (row) => (await email(team.key, row.id)).attempts));
    expect(attempts).toEqual(rows.map(() => 1));
  });

  it("without an ExecutionContext the email waits for the queue, undelayed, as before", async () => {
    const team = await setupTeam();
    const queue = recordingEnv();
    const res = await postSettled(team.key, "emails", LIVE, { env: queue.env, withContext: false });
    expect(res.status).toBe(201);
    const { id } = (await json(res)).data;
    expect(await email(team.key, id)).toMatchObject({ status: "queued", attempts: 0 });
    expect(queue.delays).toEqual([undefined]);
    await mailSendsConsumer.consume(fakeBatch(queue.sent).batch, queue.env);
    expect((await email(team.key, id)).status).toBe("delivered");
  });
});
