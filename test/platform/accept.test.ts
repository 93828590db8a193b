// The accept step (src/platform/jobs/accept.ts) on the real bindings: the team's meter (its
// rate-limit Durable Object) for the units, D1's platform outbox for the stored work, the mail
// sweep for what a refused enqueue left behind. Quota refused: nothing stored; store failed: the
// units given back exactly once and the product's error; enqueue refused: success, the row stored
// claimable, the first attempt still run, the sweep queues it; a first attempt that throws is logged
// and changes nothing of the answer.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { nowMs, setClock } from "../../src/platform/clock";
import { ApiError } from "../../src/platform/errors";
import { accept, type Background } from "../../src/platform/jobs/accept";
import { storePlatformMail } from "../../src/platform/platform-mail";
import { consumeQuota } from "../../src/platform/quota";
import { UNATTEMPTED_STALE_MS, sweepMail } from "../../src/products/mail/mail.cron";
import type { MailQueueMessage } from "../../src/products/mail/mail.queue";
import { setupTeam } from "../helpers/api";
import { usedOf } from "../helpers/usage";

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

const MAIL = { kind: "alert" as const, to: "ops@example.com", subject: "Alert", text: "x" };

/** A background that keeps what the step hands it, so the test can wait for it. */
function background(): Background & { settled: () => Promise<unknown> } {
  const work: Promise<unknown>[] = [];
  return { waitUntil: (promise) => void work.push(promise), settled: () => Promise.all(work) };
}

/** An env whose MAIL_QUEUE records (or refuses) what is sent. */
function mailQueue(refuse = false) {
  const sent: MailQueueMessage[] = [];
  const send = async (messages: Array<{ body: MailQueueMessage }>) => {
    if (refuse) throw new Error("queue down");
    sent.push(...messages.map((m) => m.body));
  };
  return { env: { ...(env as Env), MAIL_QUEUE: { sendBatch: send, send: (body: MailQueueMessage) => send([{ body }]) } } as unknown as Env, sent };
}

async function outboxRow(id: string) {
  return env.DB.prepare("SELECT status, attempts, lease_until FROM platform_outbox WHERE id = ?").bind(id).first();
}

async function outboxCount(teamId: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM platform_outbox WHERE team_id = ?").bind(teamId).first<{ n: number }>();
  return row!.n;
}

describe("accept", () => {
  it("a refused reservation (429) stores nothing, queues nothing and attempts nothing", async () => {
    const team = await setupTeam({ plan: "free" });
    const queue = mailQueue();
    const store = vi.fn(() => storePlatformMail(queue.env, [{ teamId: team.teamId, ...MAIL }]));
    const attempt = vi.fn(async () => {});
    const error = await accept({
      name: "test",
      env: queue.env,
      quota: { owner: { teamId: team.teamId, plan: "free", ownerEmail: null }, service: "ai", units: 11 },
      store,
      enqueue: async () => {},
      attempt,
      background: background(),
    }).catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(429);
    expect(store).not.toHaveBeenCalled();
    expect(attempt).not.toHaveBeenCalled();
    expect(await outboxCount(team.teamId)).toBe(0);
    expect(await usedOf(team.teamId, "ai")).toBe(null);
  });

  it("a refusal handler may answer instead (a copy of stored work costs nothing)", async () => {
    const team = await setupTeam({ plan: "free" });
    const store = vi.fn(async () => "stored");
    const answer = await accept({
      name: "test",
      env: env as Env,
      quota: { owner: { teamId: team.teamId, plan: "free", ownerEmail: null }, service: "ai", units: 11, refused: async () => "duplicate" },
      store,
    });
    expect(answer).toBe("duplicate");
    expect(store).not.toHaveBeenCalled();
  });

  it("a failed store gives the units back exactly once and answers the product's error (503 with `unavailable`, an ApiError as it is, else the error)", async () => {
    const team = await setupTeam({ plan: "pro" });
    const owner = { teamId: team.teamId, plan: "pro", ownerEmail: null };
    vi.spyOn(console, "error").mockImplementation(() => {});
    // Units used before: a give-back done twice would show below them.
    await consumeQuota(env as Env, owner, "mail", 5);
    const enqueue = vi.fn(async () => {});
    const failing = (error: unknown) => ({
      name: "test",
      env: env as Env,
      quota: { owner, service: "mail" as const, units: 3 },
      store: async () => {
        throw error;
      },
      enqueue,
    });

    const unavailable = await accept({
      ...failing(new Error("disk I/O error")),
      unavailable: () => new ApiError("unavailable", "Could not be stored; retry later"),
    }).catch((e) => e);
    expect({ status: unavailable.status, message: unavailable.message }).toEqual({ status: 503, message: "Could not be stored; retry later" });
    expect(await usedOf(team.teamId, "mail")).toBe(5);

    const productError = await accept({
      ...failing(new ApiError("request_failed", "not shareable")),
      unavailable: () => new ApiError("unavailable", "x"),
    }).catch((e) => e);
    expect({ status: productError.status, message: productError.message }).toEqual({ status: 422, message: "not shareable" });
    expect(await usedOf(team.teamId, "mail")).toBe(5);

    const raw = new Error("R2: internal error");
    expect(await accept(failing(raw)).catch((e) => e)).toBe(raw);
    expect(await usedOf(team.teamId, "mail")).toBe(5);
    expect(enqueue).not.toHaveBeenCalled();
  });

  it("units the stored result did not use go back; the rest stay taken", async () => {
    const team = await setupTeam({ plan: "pro" });
    const stored = await accept({
      name: "test",
      env: env as Env,
      quota: { owner: { teamId: team.teamId, plan: "pro", ownerEmail: null }, service: "mail", units: 4 },
      store: async () => ({ kept: 1 }),
      unused: (s) => 4 - s.kept,
    });
    expect(stored).toEqual({ kept: 1 });
    expect(await usedOf(team.teamId, "mail")).toBe(1);
  });

  it("a refused enqueue is logged and answered as stored: the row waits claimable, the first attempt still runs, and the sweep queues it after a minute", async () => {
    const team = await setupTeam({ plan: "pro" });
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const refusing = mailQueue(true);
    const attempted: string[] = [];
    const bg = background();
    const t0 = nowMs();
    setClock(t0);
    const id = await accept({
      name: "test mail",
      env: refusing.env,
      quota: { owner: { teamId: team.teamId, plan: "pro", ownerEmail: null }, service: "mail", units: 1 },
      store: async () => (await storePlatformMail(refusing.env, [{ teamId: team.teamId, ...MAIL }]))[0],
      enqueue: (stored) => refusing.env.MAIL_QUEUE.sendBatch([{ body: { type: "platform", id: stored } }]),
      attempt: async (stored) => void attempted.push(stored),
      background: bg,
    });
    await bg.settled();
    expect(attempted).toEqual([id]);
    expect(errors.mock.calls.map(([line]) => String(line)).some((line) => line.includes("test mail: enqueue failed"))).toBe(true);
    expect(await outboxRow(id)).toEqual({ status: "pending", attempts: 0, lease_until: null });
    expect(await usedOf(team.teamId, "mail")).toBe(1);

    const recorder = mailQueue();
    setClock(t0 + UNATTEMPTED_STALE_MS);
    await sweepMail(recorder.env);
    expect(recorder.sent).not.toContainEqual({ type: "platform", id });
    setClock(t0 + UNATTEMPTED_STALE_MS + 1000);
    await sweepMail(recorder.env);
    expect(recorder.sent).toContainEqual({ type: "platform", id });
  });

  it("a first attempt that throws is logged; the answer and the stored work are unchanged", async () => {
    const team = await setupTeam({ plan: "pro" });
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const queue = mailQueue();
    const bg = background();
    const id = await accept({
      name: "test mail",
      env: queue.env,
      store: async () => (await storePlatformMail(queue.env, [{ teamId: team.teamId, ...MAIL }]))[0],
      enqueue: (stored) => queue.env.MAIL_QUEUE.sendBatch([{ body: { type: "platform", id: stored } }]),
      attempt: async () => {
        throw new Error("provider down");
      },
      background: bg,
    });
    await bg.settled();
    expect(queue.sent).toEqual([{ type: "platform", id }]);
    expect(await outboxRow(id)).toMatchObject({ status: "pending" });
    expect(errors.mock.calls.map(([line]) => String(line)).some((line) => line.includes("test mail: first attempt failed"))).toBe(true);
  });

  it("without a background (no execution context) there is no first attempt: the queue makes it", async () => {
    const attempt = vi.fn(async () => {});
    await accept({ name: "test", env: env as Env, store: async () => 1, enqueue: async () => {}, attempt, background: null });
    expect(attempt).not.toHaveBeenCalled();
  });
});
