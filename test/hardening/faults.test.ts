// Fault injection across products: a failing D1 insert during log ingest, queue consumers that
// crash midway and are redelivered, R2 failing during an export, and the rate limiter's Durable
// Object unavailable (fails open, as src/platform/rate-limit/limiter.ts documents).
//
// Already covered elsewhere and not repeated here:
// - logs: test/products/logs/logs.errors.test.ts "storage failure" (DB.batch rejected → 503,
//   nothing stored, quota given back; a real insert failing inside a batch → 503, nothing left).
// - audit: test/products/audit/audit.consumer.test.ts (a redelivered message is acknowledged
//   without rendering again; a stale claim is taken over; R2 refusing the write → `failed`).
// - push: test/products/push/push.delivery.test.ts (a redelivered send or fan-out message sends
//   each subscriber once; a stale claim is retaken).
// - relay: test/products/relay/relay.happy.test.ts (two consumers claiming one delivery send once).
// - mail: test/products/mail/mail.happy.test.ts (a redelivered message after delivery changes nothing).
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { setClock, nowMs } from "../../src/platform/clock";
import { verifyStandardWebhook } from "../../src/platform/webhook-signature";
import { reportExportConsumer } from "../../src/products/audit/audit.consumer";
import { mailSendsConsumer } from "../../src/products/mail/mail.consumer";
import { pushSendsConsumer } from "../../src/products/push/push.consumer";
import { webhookDeliveriesConsumer } from "../../src/products/relay/relay.consumer";
import { relayStore } from "../../src/products/relay/relay.store";
import { anyIp, json } from "../helpers/api";
import { wrappedNamespace } from "../helpers/counting";
import { entryCount, withStoreTrigger } from "../products/logs/helpers";
import { postSettled } from "../products/mail/mail-helpers";
import { browserSubscription, storeRows, subscriptionJson } from "../products/push/push-helpers";
import { call, setupTeam } from "./fixtures";

afterEach(() => {
  vi.restoreAllMocks();
  setClock(null);
});

/** An env whose queue `name` records messages instead of delivering them (the test plays the queue). */
function recordingQueue(name: keyof Env): { env: Env; sent: unknown[] } {
  const sent: unknown[] = [];
  const queue = {
    send: async (body: unknown) => void sent.push(body),
    sendBatch: async (messages: Array<{ body: unknown }>) => void sent.push(...messages.map((m) => m.body)),
  } as unknown as Queue;
  return { env: { ...(env as Env), [name]: queue } as Env, sent };
}

interface FakeMessage {
  body: unknown;
  attempts: number;
  ack: ReturnType<typeof vi.fn>;
  retry: ReturnType<typeof vi.fn>;
}

function batchOf(queue: string, bodies: unknown[], attempts = 1): { batch: MessageBatch<unknown>; messages: FakeMessage[] } {
  const messages = bodies.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), body, attempts, ack: vi.fn(), retry: vi.fn() }));
  return { batch: { queue, messages, ackAll: vi.fn(), retryAll: vi.fn() } as unknown as MessageBatch<unknown>, messages };
}

/** The pool's bindings with every relay store's `method` failing, as a consumer dying after its external effect would (the store unreachable). */
/** The relay stores' calls that carry an attempt's record fail, as a store unreachable after the send would; the others pass. */
function recordsFailing(): Env {
  const carriesRecord = (args: unknown[]) => (args[0] as Array<Record<string, unknown>>).some((write) => "record" in write);
  const failing = wrappedNamespace(env.RELAY_STORE, (called, call, args) =>
    called === "writeMany" && carriesRecord(args) ? Promise.reject(new Error("Network connection lost.")) : call(),
  );
  return { ...(env as Env), RELAY_STORE: failing };
}

/** The next `times` calls of env.DB.batch fail (after `after` that pass), as a consumer dying after its external effect would. */
function failNextBatches(times = 1, options: { after?: number } = {}) {
  const original = env.DB.batch.bind(env.DB);
  let left = times;
  let pass = options.after ?? 0;
  return vi.spyOn(env.DB, "batch").mockImplementation(async (statements) => {
    if (pass > 0) {
      pass--;
      return original(statements);
    }
    if (left > 0) {
      left--;
      throw new Error("D1_ERROR: simulated crash after the external call");
    }
    return original(statements);
  });
}

/** Intercepts outbound fetch to `prefix`; everything else passes through. */
function intercept(prefix: string, answer: () => Response) {
  const seen: Request[] = [];
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (!request.url.startsWith(prefix)) return real(input, init);
    seen.push(request.clone());
    return answer();
  });
  return seen;
}

describe("log ingest with the store's insert failing", () => {
  it("single ingest: a real insert failure (trigger) answers 503, stores nothing and gives the quota back", async () => {
    const team = await setupTeam({ plan: "pro" });
    const project = (await json(await call("POST", "logs/projects", { key: team.key, body: { name: "api" } }))).data;
    vi.spyOn(console, "error").mockImplementation(() => {});
    await withStoreTrigger(
      project.id,
      "hardening_fail_single",
      `CREATE TRIGGER hardening_fail_single BEFORE INSERT ON entries WHEN NEW.message = 'poison-single' BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`,
      async () => {
        const res = await call("POST", "logs/ingest", { key: project.ingest_token, body: { message: "poison-single", stream: "brand-new" } });
        expect({ status: res.status, body: await res.json() }).toEqual({ status: 503, body: { error: "Log storage temporarily unavailable" } });
      },
    );
    expect(await entryCount({ projectId: project.id })).toBe(0);
    const streams = await env.DB.prepare("SELECT count(*) AS n FROM log_streams WHERE project_id = ?").bind(project.id).first<{ n: number }>();
    expect(streams!.n).toBe(0);
    expect((await json(await call("GET", "usage", { key: team.key }))).data.services.logs.used).toBe(0);
    // The same entry goes through once storage is back: the 503 was safe to retry.
    expect((await call("POST", "logs/ingest", { key: project.ingest_token, body: { message: "after", stream: "brand-new" } })).status).toBe(202);
    expect(await entryCount({ projectId: project.id })).toBe(1);
  });
});

describe("queue consumers crashing midway and redelivered", () => {
  it("relay: the destination got the delivery, the consumer died before recording it; redeliveries do not send it again until the lease ends, then once with the same webhook-id", async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const source = (await json(await call("POST", "webhooks/sources", { key: team.key, body: { name: "s", provider: "generic" } }))).data;
    const destination = (
      await json(await call("POST", `webhooks/sources/${source.id}/destinations`, { key: team.key, body: { url: "http://127.0.0.1:9/relay-crash" } }))
    ).data;
    const queue = recordingQueue("WEBHOOK_QUEUE");
    const ingest = await call("POST", `/in/${source.slug}`, {
      raw: '{"type":"a.b"}',
      headers: { "content-type": "application/json" },
      ip: anyIp(),
      env: queue.env,
    });
    expect(ingest.status).toBe(202);
    // The ingest's own first attempt fails before the receiver is up (it runs in the background of
    // the request) and queues its retry.
    const eventId = (await json(ingest)).data.id;
    const delivery = async () => (await json(await call("GET", `webhooks/sources/${source.id}/events/${eventId}`, { key: team.key }))).data.deliveries[0];
    await vi.waitFor(async () => expect(await delivery()).toMatchObject({ status: "pending", attempts_count: 1 }));
    await vi.waitFor(() => expect(queue.sent).toHaveLength(1));
    const seen = intercept("http://127.0.0.1:9/relay-crash", () => new Response("ok"));
    vi.spyOn(console, "error").mockImplementation(() => {});

    // The claim in the source's store passes; the record after the send is the call that fails.
    const first = batchOf("webhook-deliveries", queue.sent);
    await webhookDeliveriesConsumer.consume(first.batch, recordsFailing());
    expect(seen).toHaveLength(1);
    expect(first.messages[0].retry).toHaveBeenCalled();

    // The queue redelivers (backoff 10 s): the claim still holds, nothing is sent.
    const second = batchOf("webhook-deliveries", queue.sent, 2);
    await webhookDeliveriesConsumer.consume(second.batch, env);
    expect(seen).toHaveLength(1);
    expect(second.messages[0].retry).toHaveBeenCalled();

    // Past the lease the consumer is presumed dead: one more send, with the same webhook-id, so the
    // receiver's de-duplication on webhook-id (Standard Webhooks) sees one delivery.
    setClock(nowMs() + 31_000);
    const third = batchOf("webhook-deliveries", queue.sent, 3);
    await webhookDeliveriesConsumer.consume(third.batch, env);
    expect(seen).toHaveLength(2);
    expect(third.messages[0].ack).toHaveBeenCalled();
    expect(seen[1].headers.get("webhook-id")).toBe(seen[0].headers.get("webhook-id"));
    const h = seen[1].headers;
    const signed = { id: h.get("webhook-id"), timestamp: h.get("webhook-timestamp"), signature: h.get("webhook-signature") };
    expect(await verifyStandardWebhook(destination.secret, signed, await seen[1].text(), Math.floor(nowMs() / 1000))).toBe(true);

    // Delivered: a fourth delivery of the message sends nothing.
    const fourth = batchOf("webhook-deliveries", queue.sent, 4);
    await webhookDeliveriesConsumer.consume(fourth.batch, env);
    expect(seen).toHaveLength(2);
    expect(fourth.messages[0].ack).toHaveBeenCalled();
    expect((await delivery()).status).toBe("delivered");
  });

  it("mail: the provider accepted the email, the consumer died before recording it; a redelivery sends nothing, and a later resend carries the same Idempotency-Key", async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const queue = recordingQueue("MAIL_QUEUE");
    const mailEnv = { ...queue.env, MAIL_TRANSPORT: "http", MAIL_HTTP_URL: "http://127.0.0.1:9/provider", MAIL_HTTP_TOKEN: "t" } as Env;
    // No ExecutionContext: the request makes no first attempt of its own, so the consumer below is the sender.
    const res = await postSettled(
      team.key,
      "emails",
      { from: "Acme <hello@acme.dev>", to: "user@example.com", subject: "Crash", text: "Hi", stream: "transactional" },
      { env: mailEnv, withContext: false },
    );
    expect(res.status).toBe(201);
    const emailId = (await json(res)).data.id;
    const seen = intercept("http://127.0.0.1:9/provider", () => Response.json({ id: "prov-1", status: "delivered" }));
    vi.spyOn(console, "error").mockImplementation(() => {});

    failNextBatches(1);
    const first = batchOf("mail-sends", queue.sent);
    await mailSendsConsumer.consume(first.batch, mailEnv);
    expect(seen).toHaveLength(1);
    expect(first.messages[0].retry).toHaveBeenCalled();

    const second = batchOf("mail-sends", queue.sent, 2);
    await mailSendsConsumer.consume(second.batch, mailEnv);
    expect(seen).toHaveLength(1);
    expect(second.messages[0].ack).toHaveBeenCalled();

    // After the lease (the hourly sweep re-queues a message left queued) the provider sees the same
    // Idempotency-Key, so it does not send a second email.
    setClock(nowMs() + 121_000);
    const third = batchOf("mail-sends", queue.sent, 1);
    await mailSendsConsumer.consume(third.batch, mailEnv);
    expect(seen).toHaveLength(2);
    expect(seen[1].headers.get("idempotency-key")).toBe(emailId);
    expect(seen[0].headers.get("idempotency-key")).toBe(emailId);
    const fourth = batchOf("mail-sends", queue.sent, 2);
    await mailSendsConsumer.consume(fourth.batch, mailEnv);
    expect(seen).toHaveLength(2);
    const row = await env.DB.prepare("SELECT status FROM emails WHERE id = ?").bind(emailId).first<{ status: string }>();
    expect(row!.status).toBe("delivered");
  });

  it("push: the push service got the message, the consumer died before recording it; redeliveries send nothing while the claim holds", async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const app = (await json(await call("POST", "push/apps", { key: team.key, body: { name: "crash" } }))).data;
    const sub = await browserSubscription(`https://127.0.0.1:9/push-crash/${crypto.randomUUID()}`);
    expect((await call("POST", `push/apps/${app.id}/subscribers`, { key: team.key, body: subscriptionJson(sub) })).status).toBe(201);
    const queue = recordingQueue("PUSH_QUEUE");
    const sent = await call("POST", `push/apps/${app.id}/notifications`, { key: team.key, env: queue.env, body: { title: "t", body: "b" } });
    expect(sent.status).toBe(202);
    const notificationId = (await json(sent)).data.id;
    const seen = intercept("https://127.0.0.1:9/push-crash/", () => new Response(null, { status: 201 }));
    vi.spyOn(console, "error").mockImplementation(() => {});

    // The fan-out message writes the delivery rows and queues the send message.
    const fanout = batchOf("push-sends", [...queue.sent]);
    queue.sent.length = 0;
    await pushSendsConsumer.consume(fanout.batch, queue.env);
    const sends = queue.sent.filter((m) => (m as { kind: string }).kind === "send");
    expect(sends).toHaveLength(1);

    // The store's write of the result fails (the consumer dies after the push service answered).
    await storeRows(
      app.id,
      "CREATE TRIGGER fail_record BEFORE UPDATE ON deliveries WHEN NEW.status = 'delivered' BEGIN SELECT RAISE(ABORT, 'simulated crash after the external call'); END",
    );
    const first = batchOf("push-sends", sends);
    await pushSendsConsumer.consume(first.batch, queue.env);
    await storeRows(app.id, "DROP TRIGGER fail_record");
    expect(seen).toHaveLength(1);
    expect(first.messages[0].retry).toHaveBeenCalled();

    for (const attempts of [2, 3]) {
      const again = batchOf("push-sends", sends, attempts);
      await pushSendsConsumer.consume(again.batch, queue.env);
      expect(seen).toHaveLength(1);
    }
    const [row] = await storeRows<{ status: string }>(app.id, "SELECT status FROM deliveries WHERE notification_id = ?", notificationId);
    expect(row.status).toBe("sending");
  });

  it("audit: the artefact was written, the consumer died before marking it; the redelivery waits for the lease, then exports once to the same object", async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const base = `orgs/${team.teamId}/projects/crash/audit`;
    const queue = recordingQueue("EXPORT_QUEUE");
    const res = await call("POST", `${base}/reports/export`, { key: team.key, env: queue.env, body: { format: "json" } });
    expect(res.status).toBe(202);
    const reportId = (await json(res)).data.id;
    vi.spyOn(console, "error").mockImplementation(() => {});

    // R2 write succeeds, every later D1 write fails: the consumer dies with the record `exporting`.
    const puts: string[] = [];
    const dying = {
      ...queue.env,
      DB: new Proxy(env.DB, {
        get(target, prop) {
          if (prop === "prepare") {
            return (sql: string) => {
              if (puts.length > 0 && /^update/i.test(sql.trim())) throw new Error("D1_ERROR: simulated crash");
              return target.prepare(sql);
            };
          }
          const value = Reflect.get(target, prop);
          return typeof value === "function" ? value.bind(target) : value;
        },
      }),
      REPORTS: {
        put: async (key: string, value: string, options?: R2PutOptions) => {
          puts.push(key);
          return env.REPORTS.put(key, value, options);
        },
        get: (key: string) => env.REPORTS.get(key),
      } as unknown as R2Bucket,
    } as Env;
    const first = batchOf("report-export", queue.sent);
    await reportExportConsumer.consume(first.batch, dying);
    expect(puts).toHaveLength(1);
    expect(first.messages[0].retry).toHaveBeenCalled();
    const status = async () => (await json(await call("GET", `${base}/reports/${reportId}`, { key: team.key }))).data.status;
    expect(await status()).toBe("exporting");

    // Redelivered within the lease: busy, retried, nothing rendered.
    const second = batchOf("report-export", queue.sent, 2);
    await reportExportConsumer.consume(second.batch, env);
    expect(second.messages[0].retry).toHaveBeenCalled();
    expect(await status()).toBe("exporting");

    // Past the lease: taken over and exported, to the same object key (no second artefact).
    setClock(nowMs() + 3 * 60_000);
    const third = batchOf("report-export", queue.sent, 3);
    await reportExportConsumer.consume(third.batch, env);
    expect(third.messages[0].ack).toHaveBeenCalled();
    expect(await status()).toBe("exported");
    const listed = await env.REPORTS.list({ prefix: `audit/${team.teamId}/` });
    expect(listed.objects.map((o) => o.key)).toEqual([puts[0]]);
    const fourth = batchOf("report-export", queue.sent, 4);
    await reportExportConsumer.consume(fourth.batch, env);
    expect(fourth.messages[0].ack).toHaveBeenCalled();
    expect((await env.REPORTS.list({ prefix: `audit/${team.teamId}/` })).objects).toHaveLength(1);
  });
});

describe("a lost queue message", () => {
  it("relay: a delivery whose message never arrived is re-queued by the hourly job after 15 minutes and delivered once", async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const source = (await json(await call("POST", "webhooks/sources", { key: team.key, body: { name: "s", provider: "generic" } }))).data;
    expect((await call("POST", `webhooks/sources/${source.id}/destinations`, { key: team.key, body: { url: "http://127.0.0.1:9/relay-lost" } })).status).toBe(
      201,
    );
    // The ingest is accepted but its queue message is lost (recorded here, never delivered).
    const lost = recordingQueue("WEBHOOK_QUEUE");
    expect(
      (await call("POST", `/in/${source.slug}`, { raw: '{"type":"lost"}', headers: { "content-type": "application/json" }, ip: anyIp(), env: lost.env }))
        .status,
    ).toBe(202);
    // The ingest's own first attempt (sent at once since issue 15) fails: the receiver is not up yet.
    const store = relayStore(env, source.id);
    const eventId = (await json(await call("GET", `webhooks/sources/${source.id}/events`, { key: team.key }))).data[0].id;
    const firstAttempt = async () => {
      const [delivery] = (await json(await call("GET", `webhooks/sources/${source.id}/events/${eventId}`, { key: team.key }))).data.deliveries;
      return { status: delivery.status, attempts: delivery.attempts_count };
    };
    await vi.waitFor(async () => expect(await firstAttempt()).toEqual({ status: "pending", attempts: 1 }));
    const seen = intercept("http://127.0.0.1:9/relay-lost", () => new Response("ok"));

    // The store's alarm asks it for its lost deliveries (here at the platform clock's time).
    expect(await store.lostMessages(nowMs())).toEqual([]); // not yet overdue: its message may still come
    setClock(nowMs() + 16 * 60_000);
    const requeued = await store.lostMessages(nowMs());
    expect(requeued).toEqual(lost.sent);
    // The original message turns up after all, alongside the re-queued one: sent once.
    const { batch } = batchOf("webhook-deliveries", [...requeued, ...lost.sent]);
    await webhookDeliveriesConsumer.consume(batch, env);
    expect(seen).toHaveLength(1);
    expect((await firstAttempt()).status).toBe("delivered");
    expect(await store.lostMessages(nowMs())).toEqual([]);
  });
});

describe("R2 failing during export", () => {
  it("through the API and the registered consumer: the report ends `failed`, never stuck `exporting`, and the download says not ready", async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const base = `orgs/${team.teamId}/projects/r2-down/audit`;
    const queue = recordingQueue("EXPORT_QUEUE");
    const res = await call("POST", `${base}/reports/export`, { key: team.key, env: queue.env, body: { format: "csv" } });
    const reportId = (await json(res)).data.id;
    vi.spyOn(console, "error").mockImplementation(() => {});
    const broken = {
      ...queue.env,
      REPORTS: { put: async () => Promise.reject(new Error("R2: internal error")), get: async () => null } as unknown as R2Bucket,
    } as Env;
    const { default: worker } = await import("../../src/index");
    const { batch, messages } = batchOf("report-export", queue.sent);
    await worker.queue!(batch as never, broken, {} as ExecutionContext);
    expect(messages[0].ack).toHaveBeenCalled();
    const report = (await json(await call("GET", `${base}/reports/${reportId}`, { key: team.key }))).data;
    expect(report.status).toBe("failed");
    const download = await call("GET", `${base}/reports/${reportId}/download`, { key: team.key });
    expect(download.status).toBe(409);
    expect((await json(download)).error.code).toBe("report_not_ready");
  });
});

describe("rate limiter Durable Object unavailable", () => {
  /** An env whose RATE_LIMITER namespace throws on every use. */
  function limiterDown(): Env {
    const broken = {
      idFromName: () => {
        throw new Error("Durable Object namespace unavailable");
      },
      get: () => {
        throw new Error("Durable Object namespace unavailable");
      },
    } as unknown as Env["RATE_LIMITER"];
    return { ...(env as Env), RATE_LIMITER: broken };
  }

  it("rate limits fail open: authenticated, public and anonymous requests are let through and the outage is logged; quota reservations fail closed", async () => {
    const team = await setupTeam({ plan: "free" });
    const down = limiterDown();
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    // Free plan: 600 per window in the default bucket; counted normally it would be consulted on every call.
    const usage = await call("GET", "usage", { key: team.key, env: down });
    expect(usage.status).toBe(200);
    expect(usage.headers.get("x-ratelimit-limit")).toBe("600");
    expect(usage.headers.get("x-ratelimit-remaining")).toBe("600");
    const source = (await json(await call("POST", "webhooks/sources", { key: team.key, env: down, body: { name: "s", provider: "generic" } }))).data;
    // Ingest is let through the per-IP bucket, but its `webhooks` units cannot be reserved: the
    // relay's documented 503 (retry later), and nothing is stored.
    const ingest = await call("POST", `/in/${source.slug}`, { raw: "{}", headers: { "content-type": "application/json" }, env: down });
    expect(ingest.status).toBe(503);
    expect(await json(ingest)).toEqual({ error: "Event could not be stored; retry later" });
    expect((await relayStore(env, source.id).stats()).events).toBe(0);
    // Unauthenticated: still 401 (auth is not skipped), counted in no bucket.
    const anonymous = await call("GET", "usage", { env: down });
    expect(anonymous.status).toBe(401);
    const logged = errors.mock.calls.map(([line]) => String(line)).filter((line) => line.includes("rate limiter unavailable, failing open"));
    expect(logged.length).toBeGreaterThanOrEqual(3);
  });

  it("over the strict bucket's limit nothing is refused while the limiter is down, and refusals resume when it is back", async () => {
    const team = await setupTeam({ plan: "pro" });
    const app = (await json(await call("POST", "push/apps", { key: team.key, body: { name: "strict" } }))).data;
    vi.spyOn(console, "error").mockImplementation(() => {});
    const down = limiterDown();
    const register = async (target: Env | undefined) => {
      const sub = await browserSubscription(`https://127.0.0.1:9/strict/${crypto.randomUUID()}`);
      return (await call("POST", `push/apps/${app.id}/subscribers`, { key: team.key, env: target, body: subscriptionJson(sub) })).status;
    };
    setClock(Math.ceil(nowMs() / 60_000) * 60_000 + 1_000); // the start of a fresh window
    const statuses: number[] = [];
    for (let i = 0; i < 32; i++) statuses.push(await register(down));
    expect(statuses.filter((s) => s === 429)).toEqual([]);
    // Back up: the strict bucket (30 per 60 s) counts again from zero in this window.
    const after: number[] = [];
    for (let i = 0; i < 31; i++) after.push(await register(undefined));
    expect(after.slice(0, 30).every((s) => s === 201)).toBe(true);
    expect(after[30]).toBe(429);
  });

  it("the worker's own fetch handler (src/index.ts) fails open the same way", async () => {
    const team = await setupTeam({ plan: "free" });
    vi.spyOn(console, "error").mockImplementation(() => {});
    const { default: worker } = await import("../../src/index");
    const res = await worker.fetch!(
      new Request("http://app.test/api/v1/usage", { headers: { authorization: `Bearer ${team.key}`, "cf-connecting-ip": anyIp() } }) as never,
      limiterDown(),
      { waitUntil: () => {}, passThroughOnException: () => {}, props: {} } as unknown as ExecutionContext,
    );
    expect(res.status).toBe(200);
  });
});
