import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { setClock } from "../../../src/platform/clock";
import { sha256Hex } from "../../../src/platform/crypto";
import type { Env } from "../../../src/env";
import type { RateLimiter } from "../../../src/platform/rate-limit/durable-object";
import { getLimiter } from "../../../src/platform/rate-limit/limiter";
import { call, expectError, json } from "../../helpers/api";
import { setUsed } from "../../helpers/usage";
import { allEntries, entryCount, ingest, ingestBatch, ndjson, setupProject, withStoreTrigger, type LogsFixture } from "./helpers";

const LEVEL = "level must be one of: debug, info, warn, error, fatal";
const STREAM_CAP = "Stream limit exceeded for this project (max 10000 streams)";

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

/** Puts a project at the stream cap with one direct statement: `existing` plus 9,999 others. */
async function seedStreamsToCap(f: LogsFixture, existing: string): Promise<void> {
  const names = [existing, ...Array.from({ length: 9_999 }, (_, i) => `seed-${i}`)];
  await env.DB.batch([
    env.DB.prepare("INSERT INTO log_streams (project_id, name, team_id, created_at) SELECT ?1, value, ?2, '2026-01-01T00:00:00.000Z' FROM json_each(?3)").bind(
      f.projectId,
      f.teamId,
      JSON.stringify(names),
    ),
    env.DB.prepare("UPDATE log_projects SET stream_count = 10000 WHERE id = ?").bind(f.projectId),
  ]);
}

/** A body stream of `size` bytes of NDJSON with no Content-Length, so only reading can tell its size. */
function streamOf(size: number): ReadableStream<Uint8Array> {
  const line = new TextEncoder().encode(JSON.stringify({ message: "x".repeat(1000) }) + "\n");
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close();
      const chunk = new Uint8Array(Math.min(64 * 1024, size - sent));
      for (let i = 0; i < chunk.length; i++) chunk[i] = line[(sent + i) % line.length];
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
}

describe("single ingest validation", () => {
  it("answers the spec's 422 messages", async () => {
    const f = await setupProject();
    for (const body of [{}, { message: "" }, { message: "   " }, { message: 42 }, { message: null, level: "info" }, { level: "loud" }]) {
      await expectError(await ingest(f.token, body), 422, { error: "message is required" });
    }
    for (const level of ["loud", "INFO", 3, ""]) {
      await expectError(await ingest(f.token, { message: "m", level }), 422, { error: LEVEL });
    }
    await expectError(await ingest(f.token, [{ message: "m" }]), 422, { error: "message is required" });
    await expectError(await ingest(f.token, { message: "m", stream: 5 }), 422, { error: "stream must be a string" });
    await expectError(await ingest(f.token, { message: "m", metadata: [1] }), 422, { error: "metadata must be an object" });
    await expectError(await ingest(f.token, { message: "m", service: "s".repeat(129) }), 422, { error: "service must be at most 128 characters" });
    await expectError(await ingest(f.token, { message: "m", metadata: { big: "x".repeat(40_000) } }), 422, { error: "metadata must be at most 32768 bytes" });
    expect(await entryCount(f)).toBe(0);
  });

  it("answers 400 on malformed JSON and 413 over 1 MB", async () => {
    const f = await setupProject();
    await expectError(await call("POST", "logs/ingest", { key: f.token, raw: "{nope", headers: { "content-type": "application/json" } }), 400, {
      error: "Malformed JSON in request body",
    });
    await expectError(await ingest(f.token, { message: "x".repeat(1024 * 1024) }), 413, { error: "Payload too large (max 1MB)" });
  });
});

describe("batch size", () => {
  it("answers 413 past 5 MB read from a body without Content-Length, and accepts exactly 5 MB", async () => {
    const f = await setupProject({ daily_limit_mb: 1000 });
    const over = await call("POST", "logs/ingest/batch", {
      key: f.token,
      raw: streamOf(5 * 1024 * 1024 + 1),
      headers: { "content-type": "application/x-ndjson" },
    });
    await expectError(over, 413, { error: "Payload too large (max 5MB)" });
    expect(await entryCount(f)).toBe(0);

    const exact = await call("POST", "logs/ingest/batch", {
      key: f.token,
      raw: streamOf(5 * 1024 * 1024),
      headers: { "content-type": "application/x-ndjson" },
    });
    expect(exact.status).toBe(202);
    const body = await json(exact);
    // 5 MB of 1,015-byte lines: every whole line counted, the cut-off last one dropped.
    const lineBytes = JSON.stringify({ message: "x".repeat(1000) }).length + 1;
    expect(body).toEqual({ ok: true, count: Math.floor((5 * 1024 * 1024) / lineBytes), dropped: 1 });
  });

  it("answers 413 from the Content-Length alone", async () => {
    const f = await setupProject();
    const big = "x".repeat(5 * 1024 * 1024 + 10);
    await expectError(await ingestBatch(f.token, big), 413, { error: "Payload too large (max 5MB)" });
  });
});

describe("stream cap", () => {
  it("keeps existing streams working at the cap and rejects a new one whole", async () => {
    const f = await setupProject();
    await seedStreamsToCap(f, "web");

    expect((await ingest(f.token, { message: "old stream", stream: "web" })).status).toBe(202);
    expect((await ingest(f.token, { message: "no stream" })).status).toBe(202);
    await expectError(await ingest(f.token, { message: "new", stream: "brand-new" }), 422, { error: STREAM_CAP });

    const okBatch = await ingestBatch(f.token, ndjson([{ message: "a", stream: "web" }, { message: "b", stream: "seed-7" }, { message: "c" }]));
    expect(await json(okBatch)).toEqual({ ok: true, count: 3, dropped: 0 });

    const before = await entryCount(f);
    const rejected = await ingestBatch(
      f.token,
      ndjson([
        { message: "a", stream: "web" },
        { message: "b", stream: "brand-new" },
      ]),
    );
    await expectError(rejected, 422, { error: STREAM_CAP });
    expect(await entryCount(f)).toBe(before);
    const { n } = (await env.DB.prepare("SELECT count(*) AS n FROM log_streams WHERE project_id = ?").bind(f.projectId).first<{ n: number }>())!;
    expect(n).toBe(10_000);
  });

  it("lets the CHECK constraint refuse a batch that raced past the pre-check, storing nothing", async () => {
    const f = await setupProject();
    await seedStreamsToCap(f, "web");
    // A stale count, as if a concurrent batch had not yet written its streams.
    await env.DB.prepare("UPDATE log_projects SET stream_count = 0 WHERE id = ?").bind(f.projectId).run();
    await expectError(await ingestBatch(f.token, ndjson([{ message: "a", stream: "newer" }])), 422, { error: STREAM_CAP });
    expect(await entryCount(f)).toBe(0);
    const row = await env.DB.prepare("SELECT count(*) AS n FROM log_streams WHERE project_id = ? AND name = 'newer'").bind(f.projectId).first<{ n: number }>();
    expect(row!.n).toBe(0);
  });
});

describe("daily limit", () => {
  it("answers 429 when a request would pass daily_limit_mb, stores nothing of it, and resets the next UTC day", async () => {
    const f = await setupProject({ daily_limit_mb: 1 });
    setClock(Date.parse("2026-04-10T23:00:00Z"));
    const lines = (n: number) => ndjson(Array.from({ length: n }, (_, i) => ({ message: `${i}`.padEnd(190, "x") })));
    const first = await ingestBatch(f.token, lines(5000)); // 1,020,000 bytes of 1,048,576
    expect((await json(first)).count).toBe(5000);
    await expectError(await ingestBatch(f.token, lines(3000)), 429, { error: "Daily log ingestion limit exceeded" });
    await expectError(await ingest(f.token, { message: "x".repeat(30_000) }), 429, { error: "Daily log ingestion limit exceeded" });
    expect(await entryCount(f)).toBe(5000);
    expect((await ingest(f.token, { message: "small" })).status).toBe(202);

    setClock(Date.parse("2026-04-11T00:00:01Z"));
    expect((await ingestBatch(f.token, lines(3000))).status).toBe(202);
  });

  it("lets the CHECK constraint refuse a write that raced past the pre-check, storing nothing", async () => {
    const f = await setupProject({ daily_limit_mb: 1 });
    expect((await ingest(f.token, { message: "first" })).status).toBe(202);
    // Stands in for a concurrent request that fills the day between this one's pre-check and its
    // write: the fill happens while this request takes its quota in the team's meter, after the
    // pre-check (the meter namespace is wrapped to fill the day first).
    const real = env.RATE_LIMITER;
    const racing = {
      idFromName: (name: string) => real.idFromName(name),
      get: (id: DurableObjectId) => ({
        meter: async (...args: Parameters<RateLimiter["meter"]>) => {
          await env.DB.prepare("UPDATE log_daily_usage SET bytes = limit_bytes WHERE project_id = ?").bind(f.projectId).run();
          return real.get(id).meter(...args);
        },
      }),
    } as unknown as Env["RATE_LIMITER"];
    const res = await call("POST", "logs/ingest", { key: f.token, body: { message: "racing" }, env: { ...env, RATE_LIMITER: racing } as Env });
    await expectError(res, 429, { error: "Daily log ingestion limit exceeded" });
    expect(await entryCount(f)).toBe(1);
    const usage = await env.DB.prepare("SELECT bytes, limit_bytes FROM log_daily_usage WHERE project_id = ?")
      .bind(f.projectId)
      .first<{ bytes: number; limit_bytes: number }>();
    // The racing write left the day full; this request added nothing to it.
    expect(usage!.bytes).toBe(usage!.limit_bytes);
  });
});

describe("rate limit and quota", () => {
  it("limits each token to 300 requests per window with the spec's 429", async () => {
    const f = await setupProject();
    setClock(Date.parse("2026-05-01T12:00:10Z"));
    // 299 requests of this window already counted under the token's hash (the bucket's key).
    const limiter = getLimiter(env);
    const key = `log_ingest:token:${await sha256Hex(f.token)}`;
    await Promise.all(Array.from({ length: 299 }, () => limiter.hit(key, 300)));
    const last = await ingestBatch(f.token, "");
    expect(last.status).toBe(202);
    expect(last.headers.get("x-ratelimit-limit")).toBe("300");
    expect(last.headers.get("x-ratelimit-remaining")).toBe("0");
    const refused = await ingest(f.token, { message: "one too many" });
    expect(refused.headers.get("retry-after")).toBe("50");
    await expectError(refused, 429, { error: "Rate limit exceeded", retry_after: 50 });

    // Another project's token has its own counter.
    const other = await setupProject();
    expect((await ingest(other.token, { message: "fine" })).status).toBe(202);
  });

  it("answers the monthly quota 429 when the logs quota is used up, storing nothing", async () => {
    const f = await setupProject({ plan: "free" });
    await setUsed(f.teamId, "logs", 1024);
    await expectError(await ingest(f.token, { message: "m" }), 429, { error: "Monthly usage limit exceeded. Upgrade your plan." });
    await expectError(await ingestBatch(f.token, '{"message":"m"}'), 429, { error: "Monthly usage limit exceeded. Upgrade your plan." });
    expect(await entryCount(f)).toBe(0);
  });
});

describe("storage failure", () => {
  it("answers 503 when the store insert fails, stores nothing and gives the quota back", async () => {
    const f = await setupProject();
    // The team's meter has met this month already (it reads D1 once per month, in a batch).
    expect((await call("GET", "usage", { key: f.key })).status).toBe(200);
    const batch = vi.spyOn(env.DB, "batch").mockRejectedValue(new Error("D1_ERROR: storage unavailable"));
    await expectError(await ingest(f.token, { message: "m", stream: "s" }), 503, { error: "Log storage temporarily unavailable" });
    await expectError(await ingestBatch(f.token, ndjson([{ message: "a" }, { message: "b" }])), 503, { error: "Log storage temporarily unavailable" });
    expect(batch).toHaveBeenCalledTimes(2);
    batch.mockRestore();
    expect(await entryCount(f)).toBe(0);
    const usage = await json(await call("GET", "usage", { key: f.key }));
    expect(usage.data.services.logs.used).toBe(0);
  });

  it("answers 503 when the usage meter cannot be reached: the quota fails closed, the rate limit open, nothing is stored", async () => {
    const f = await setupProject();
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const broken = {
      idFromName: () => {
        throw new Error("Durable Object namespace unavailable");
      },
      get: () => {
        throw new Error("Durable Object namespace unavailable");
      },
    } as unknown as Env["RATE_LIMITER"];
    const res = await call("POST", "logs/ingest", { key: f.token, body: { message: "m" }, env: { ...env, RATE_LIMITER: broken } as Env });
    await expectError(res, 503, { error: "Log storage temporarily unavailable" });
    expect(await entryCount(f)).toBe(0);
    expect(errors.mock.calls.some(([line]) => String(line).includes("rate limiter unavailable, failing open"))).toBe(true);
  });

  it("answers 503 when a real insert fails inside the store, and the batch leaves nothing behind", async () => {
    const f = await setupProject();
    await withStoreTrigger(
      f.projectId,
      "fail_log_insert",
      `CREATE TRIGGER fail_log_insert BEFORE INSERT ON entries WHEN NEW.message = 'poison' BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`,
      async () => {
        const res = await ingestBatch(f.token, ndjson([{ message: "fine", stream: "new-stream" }, { message: "poison" }]));
        await expectError(res, 503, { error: "Log storage temporarily unavailable" });
      },
    );
    expect(await entryCount(f)).toBe(0);
    const streams = await env.DB.prepare("SELECT count(*) AS n FROM log_streams WHERE project_id = ?").bind(f.projectId).first<{ n: number }>();
    expect(streams!.n).toBe(0);
    const project = await json(await call("GET", `logs/projects/${f.projectId}`, { key: f.key }));
    expect(project.data.stream_count).toBe(0);
    const day = await env.DB.prepare("SELECT bytes FROM log_daily_usage WHERE project_id = ?").bind(f.projectId).first<{ bytes: number }>();
    expect(day?.bytes ?? 0).toBe(0);
    expect((await json(await call("GET", "usage", { key: f.key }))).data.services.logs.used).toBe(0);
    expect((await allEntries(f)).length).toBe(0);
  });
});

describe("management validation and 404", () => {
  it("answers the documented validation body", async () => {
    const f = await setupProject();
    await expectError(await call("POST", "logs/projects", { key: f.key, body: { name: "", daily_limit_mb: 0 } }), 422, {
      error: "Validation failed",
      details: { name: [expect.any(String)], daily_limit_mb: [expect.any(String)] },
    });
    await expectError(await call("GET", `logs/projects/${f.projectId}/entries?level=loud`, { key: f.key }), 422, {
      error: "Validation failed",
      details: { level: [expect.any(String)] },
    });
    await expectError(await call("GET", `logs/projects/${f.projectId}/entries?cursor=bogus`, { key: f.key }), 422, {
      error: "Validation failed",
      details: { cursor: ["is invalid"] },
    });
    await expectError(await call("GET", `logs/projects/${f.projectId}/entries?since=yesterday`, { key: f.key }), 422, {
      error: "Validation failed",
      details: { since: [expect.any(String)] },
    });
  });

  it("validates alerts: required fields, channel addresses, derived channels, PUT on the merged alert", async () => {
    const f = await setupProject();
    const path = `logs/projects/${f.projectId}/alerts`;
    await expectError(await call("POST", path, { key: f.key, body: {} }), 422, {
      error: "Validation failed",
      details: { name: [expect.any(String)], level: [expect.any(String)], threshold: [expect.any(String)], window_minutes: [expect.any(String)] },
    });
    const base = { name: "a", level: "error", threshold: 3, window_minutes: 5 };
    await expectError(await call("POST", path, { key: f.key, body: { ...base, channels: ["email"] } }), 422, {
      error: "Validation failed",
      details: { notify_email: ["is required when channels includes email"] },
    });
    await expectError(await call("POST", path, { key: f.key, body: { ...base, channels: ["email", "webhook"], notify_email: "owner@example.com" } }), 422, {
      error: "Validation failed",
      details: { notify_webhook: ["is required when channels includes webhook"] },
    });
    await expectError(await call("POST", path, { key: f.key, body: base }), 422, {
      error: "Validation failed",
      details: { channels: ["is required when neither notify_email nor notify_webhook is set"] },
    });
    await expectError(await call("POST", path, { key: f.key, body: { ...base, notify_webhook: "ftp://example.com/x" } }), 422, {
      error: "Validation failed",
      details: { notify_webhook: ["must use https"] },
    });
    await expectError(
      await call("POST", path, { key: f.key, body: { ...base, channels: ["sms"], threshold: 0, window_minutes: 1441, notify_email: "nope" } }),
      422,
      {
        error: "Validation failed",
        details: {
          threshold: [expect.any(String)],
          window_minutes: [expect.any(String)],
          "channels.0": [expect.any(String)],
          notify_email: [expect.any(String)],
        },
      },
    );
    await expectError(await call("POST", path, { key: f.key, body: { ...base, channels: ["email", "email"], notify_email: "owner@example.com" } }), 422, {
      error: "Validation failed",
      details: { channels: ["must not repeat a channel"] },
    });

    const alert = (await json(await call("POST", path, { key: f.key, body: { ...base, notify_email: "owner@example.com" } }))).data;
    await expectError(await call("PUT", `logs/alerts/${alert.id}`, { key: f.key, body: { notify_email: null } }), 422, {
      error: "Validation failed",
      details: { notify_email: ["is required when channels includes email"] },
    });
    await expectError(await call("PUT", `logs/alerts/${alert.id}`, { key: f.key, body: { channels: ["webhook"] } }), 422, {
      error: "Validation failed",
      details: { notify_webhook: ["is required when channels includes webhook"] },
    });
    await expectError(await call("PUT", `logs/alerts/${alert.id}`, { key: f.key, body: { level: "loud" } }), 422, {
      error: "Validation failed",
      details: { level: [expect.any(String)] },
    });
    const unchanged = await json(await call("GET", path, { key: f.key }));
    expect(unchanged.data[0]).toEqual(alert);
  });

  it("answers 404 Project not found / Alert not found for unknown ids", async () => {
    const f = await setupProject();
    const missing = crypto.randomUUID();
    for (const [method, suffix] of [
      ["GET", ""],
      ["POST", "/rotate-token"],
      ["GET", "/streams"],
      ["GET", "/entries"],
      ["GET", "/alerts"],
    ] as const) {
      await expectError(await call(method, `logs/projects/${missing}${suffix}`, { key: f.key }), 404, { error: "Project not found" });
    }
    await expectError(
      await call("POST", `logs/projects/not-a-uuid/alerts`, {
        key: f.key,
        body: { name: "a", level: "error", threshold: 1, window_minutes: 1, notify_email: "owner@example.com" },
      }),
      404,
      { error: "Project not found" },
    );
    await expectError(await call("PUT", `logs/alerts/${missing}`, { key: f.key, body: { threshold: 2 } }), 404, { error: "Alert not found" });
    await expectError(await call("DELETE", `logs/alerts/${missing}`, { key: f.key }), 404, { error: "Alert not found" });
  });
});
