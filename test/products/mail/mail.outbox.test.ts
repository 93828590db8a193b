// Platform mail under claim and sweep: the mail consumer claims an outbox row (platform/jobs/
// claim.ts: `pending` → `sending`, one more attempt, a lease) before it sends, so a redelivered
// message sends one mail; the mail sweep (every minute, platform/jobs/sweep.ts) queues again a row
// whose message was lost (a minute when never attempted, 15 minutes after an attempt), takes over
// a `sending` row whose consumer died once its lease ended, and settles a row with no attempt left.
import { createScheduledController, env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../../src/env";
import worker from "../../../src/index";
import { nowMs, setClock } from "../../../src/platform/clock";
import { queuePlatformMail } from "../../../src/platform/platform-mail";
import { MAX_ATTEMPTS, mailSendsConsumer, OUTBOX_CLAIM } from "../../../src/products/mail/mail.consumer";
import { STALE_MS, UNATTEMPTED_STALE_MS } from "../../../src/products/mail/mail.cron";
import { fakeBatch, recordingEnv } from "./mail-helpers";

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

const PROVIDER = "http://127.0.0.1:9/provider";

/** The recording env with the HTTP transport, whose provider calls are counted (and answered `answer`). */
function providerEnv(answer: () => Response = () => Response.json({ id: "prov-1", status: "delivered" })) {
  const recorder = recordingEnv({ MAIL_TRANSPORT: "http", MAIL_HTTP_URL: PROVIDER, MAIL_HTTP_TOKEN: "t" } as Partial<Env>);
  const calls: Request[] = [];
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (!request.url.startsWith(PROVIDER)) return real(input, init);
    calls.push(request);
    return answer();
  });
  return { ...recorder, calls };
}

async function row(id: string) {
  return env.DB.prepare("SELECT status, attempts, lease_until, updated_at FROM platform_outbox WHERE id = ?")
    .bind(id)
    .first<{ status: string; attempts: number; lease_until: number | null; updated_at: string }>();
}

const MAIL = { teamId: null, kind: "alert" as const, to: "ops@example.com", subject: "Alert", text: "x" };
const minuteCron = (at: number) => createScheduledController({ cron: "* * * * *", scheduledTime: at });

describe("platform outbox claim", () => {
  it("a redelivered message, one after the other or at the same time, sends one mail", async () => {
    const provider = providerEnv();
    const id = await queuePlatformMail(provider.env, MAIL);
    expect(provider.sent).toEqual([{ type: "platform", id }]);
    expect(await row(id)).toMatchObject({ status: "pending", attempts: 0, lease_until: null });

    // Two copies at once: the claim lets one send.
    const a = fakeBatch([{ type: "platform", id }]);
    const b = fakeBatch([{ type: "platform", id }], 2);
    await Promise.all([mailSendsConsumer.consume(a.batch, provider.env), mailSendsConsumer.consume(b.batch, provider.env)]);
    expect(provider.calls).toHaveLength(1);
    expect(await row(id)).toMatchObject({ status: "delivered", attempts: 1, lease_until: null });
    // And once more later: acknowledged, nothing sent.
    const late = fakeBatch([{ type: "platform", id }], 3);
    await mailSendsConsumer.consume(late.batch, provider.env);
    expect(late.messages[0].ack).toHaveBeenCalled();
    expect(provider.calls).toHaveLength(1);
  });

  it("a copy arriving while another holds the lease sends nothing; a failed attempt is retried with the attempt counted", async () => {
    let status = 503;
    const provider = providerEnv(() => new Response("busy", { status }));
    vi.spyOn(console, "error").mockImplementation(() => {});
    const id = await queuePlatformMail(provider.env, MAIL);
    // A consumer claimed it and is still sending (its lease is live).
    await env.DB.prepare("UPDATE platform_outbox SET status = ?, attempts = 1, lease_until = ? WHERE id = ?")
      .bind(OUTBOX_CLAIM.inFlight, nowMs() + OUTBOX_CLAIM.leaseMs, id)
      .run();
    const held = fakeBatch([{ type: "platform", id }]);
    await mailSendsConsumer.consume(held.batch, provider.env);
    expect(provider.calls).toHaveLength(0);
    expect(held.messages[0].ack).toHaveBeenCalled();

    // Its lease ends: the next copy takes it over; the provider answers 503, so it is retried.
    setClock(nowMs() + OUTBOX_CLAIM.leaseMs + 1000);
    const takeover = fakeBatch([{ type: "platform", id }]);
    await mailSendsConsumer.consume(takeover.batch, provider.env);
    expect(provider.calls).toHaveLength(1);
    expect(takeover.messages[0].retry).toHaveBeenCalled();
    expect(await row(id)).toMatchObject({ status: "pending", attempts: 2, lease_until: null });
    status = 200;
  });
});

describe("platform outbox sweep", () => {
  it("queues a never-attempted row after a minute, an attempted one after 15 minutes, through the minute cron", async () => {
    const refusing = recordingEnv({
      MAIL_QUEUE: {
        send: async () => Promise.reject(new Error("queue down")),
        sendBatch: async () => Promise.reject(new Error("queue down")),
      } as unknown as Queue,
    });
    vi.spyOn(console, "error").mockImplementation(() => {});
    const t0 = nowMs();
    setClock(t0);
    const fresh = await queuePlatformMail(refusing.env, MAIL);
    const retried = await queuePlatformMail(refusing.env, MAIL);
    await env.DB.prepare("UPDATE platform_outbox SET attempts = 1 WHERE id = ?").bind(retried).run();

    const recorder = recordingEnv();
    setClock(t0 + UNATTEMPTED_STALE_MS);
    await worker.scheduled(minuteCron(nowMs()), recorder.env);
    expect(recorder.sent).not.toContainEqual({ type: "platform", id: fresh });

    setClock(t0 + UNATTEMPTED_STALE_MS + 1000);
    await worker.scheduled(minuteCron(nowMs()), recorder.env);
    expect(recorder.sent).toContainEqual({ type: "platform", id: fresh });
    expect(recorder.sent).not.toContainEqual({ type: "platform", id: retried });
    // Marked: the next run leaves it alone.
    const count = () => recorder.sent.filter((m) => m.type === "platform" && m.id === fresh).length;
    await worker.scheduled(minuteCron(nowMs()), recorder.env);
    expect(count()).toBe(1);

    setClock(t0 + STALE_MS + 1000);
    await worker.scheduled(minuteCron(nowMs()), recorder.env);
    expect(recorder.sent).toContainEqual({ type: "platform", id: retried });
  });

  it("takes over a row left `sending` by a dead consumer once its lease ended, and fails one with no attempt left", async () => {
    const recorder = recordingEnv();
    const t0 = nowMs();
    setClock(t0);
    const dead = await queuePlatformMail(recorder.env, MAIL);
    const spent = await queuePlatformMail(recorder.env, MAIL);
    recorder.sent.length = 0;
    const leaseEnd = t0 + OUTBOX_CLAIM.leaseMs;
    await env.DB.prepare("UPDATE platform_outbox SET status = 'sending', attempts = 1, lease_until = ? WHERE id = ?").bind(leaseEnd, dead).run();
    await env.DB.prepare("UPDATE platform_outbox SET status = 'sending', attempts = ?, lease_until = ? WHERE id = ?").bind(MAX_ATTEMPTS, leaseEnd, spent).run();

    // Rows of the tests before may be swept too: only these two are looked at.
    const mine = () => recorder.sent.filter((m) => m.type === "platform" && (m.id === dead || m.id === spent));
    setClock(leaseEnd);
    await worker.scheduled(minuteCron(nowMs()), recorder.env);
    expect(mine()).toEqual([]);

    setClock(leaseEnd + 1000);
    await worker.scheduled(minuteCron(nowMs()), recorder.env);
    expect(mine()).toEqual([{ type: "platform", id: dead }]);
    expect(await row(dead)).toMatchObject({ status: "pending", attempts: 1, lease_until: null });
    expect(await row(spent)).toMatchObject({ status: "failed", lease_until: null });
    // The re-queued message is sent once.
    await mailSendsConsumer.consume(fakeBatch(mine()).batch, recorder.env);
    expect(await row(dead)).toMatchObject({ status: "delivered", attempts: 2 });
  });
});
