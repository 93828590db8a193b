import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../../src/platform/clock";
import { ENTRIES_PAGE_BYTES } from "../../../src/products/logs/log-entries.service";
import { call, expectError, json } from "../../helpers/api";
import { allEntries, entryCount, ingest, ingestBatch, ndjson, setupProject } from "./helpers";

afterEach(() => setClock(null));

describe("log projects", () => {
  it("creates a project with a plaintext token shown once, stored only as a hash", async () => {
    const f = await setupProject();
    expect(f.token).toMatch(/^lgt_[A-Za-z0-9_-]{43}$/);

    const got = await json(await call("GET", `logs/projects/${f.projectId}`, { key: f.key }));
    expect(got.data).toMatchObject({ id: f.projectId, name: "api", daily_limit_mb: 100, retention_days: 7, stream_count: 0 });
    expect(got.data.ingest_token_prefix).toBe(f.token.slice(0, 12));
    expect(got.data).not.toHaveProperty("ingest_token");

    const list = await json(await call("GET", "logs/projects", { key: f.key }));
    expect(list.data.map((p: { id: string }) => p.id)).toEqual([f.projectId]);
    expect(list.data[0]).not.toHaveProperty("ingest_token");

    const row = await env.DB.prepare("SELECT * FROM log_projects WHERE id = ?").bind(f.projectId).first<Record<string, string>>();
    expect(JSON.stringify(row)).not.toContain(f.token);
    const digest = Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(f.token))), (b) =>
      b.toString(16).padStart(2, "0"),
    ).join("");
    expect(row!.token_hash).toBe(digest);
  });

  it("accepts daily_limit_mb and retention_days", async () => {
    const f = await setupProject({ daily_limit_mb: 5, retention_days: 30 });
    const got = await json(await call("GET", `logs/projects/${f.projectId}`, { key: f.key }));
    expect(got.data).toMatchObject({ daily_limit_mb: 5, retention_days: 30 });
  });

  it("rotates the token: the new one works and the old one answers 401 at once", async () => {
    const f = await setupProject();
    expect((await ingest(f.token, { message: "before" })).status).toBe(202);
    const res = await call("POST", `logs/projects/${f.projectId}/rotate-token`, { key: f.key });
    expect(res.status).toBe(200);
    const rotated = (await json(res)).data;
    expect(rotated.ingest_token).not.toBe(f.token);
    expect(rotated.ingest_token_prefix).toBe(rotated.ingest_token.slice(0, 12));
    await expectError(await ingest(f.token, { message: "old" }), 401, { error: "Invalid or missing ingest token" });
    await expectError(await ingestBatch(f.token, '{"message":"old"}'), 401, { error: "Invalid or missing ingest token" });
    expect((await ingest(rotated.ingest_token, { message: "new" })).status).toBe(202);
    expect((await allEntries(f)).map((e) => e.message)).toEqual(["new", "before"]);
  });
});

describe("ingest", () => {
  it("stores a single entry with its fields and defaults the level to info", async () => {
    const f = await setupProject();
    const res = await ingest(f.token, { message: "user signed in", stream: "auth", service: "api", trace_id: "t1", span_id: "s1", metadata: { user: 42 } });
    expect(res.status).toBe(202);
    expect(await json(res)).toEqual({ ok: true });
    const [entry] = await allEntries(f);
    expect(entry).toMatchObject({
      project_id: f.projectId,
      message: "user signed in",
      level: "info",
      stream: "auth",
      service: "api",
      trace_id: "t1",
      span_id: "s1",
      metadata: { user: 42 },
    });
    expect(entry.id).toMatch(/^[0-9a-f-]{36}$/);
    const streams = await json(await call("GET", `logs/projects/${f.projectId}/streams`, { key: f.key }));
    expect(streams.data.map((s: { name: string }) => s.name)).toEqual(["auth"]);
  });

  it("counts a batch: blank lines ignored, CRLF tolerated, no trailing newline needed", async () => {
    const f = await setupProject();
    const body = [
      '{"message":"one","level":"warn","stream":"web"}',
      "",
      "   ",
      '{"message":"two"}\r',
      "not json",
      '{"level":"info"}', // missing message
      '{"message":"three","level":"loud"}', // invalid level
      '{"message":"four","stream":"jobs"}',
    ].join("\n");
    const res = await ingestBatch(f.token, body);
    expect(res.status).toBe(202);
    expect(await json(res)).toEqual({ ok: true, count: 3, dropped: 3 });
    const entries = await allEntries(f);
    expect(entries.map((e) => e.message).sort()).toEqual(["four", "one", "two"]);
    expect(entries.find((e) => e.message === "two").message).toBe("two");

    const trailing = await ingestBatch(f.token, '{"message":"a"}\r\n{"message":"b"}\r\n\r\n');
    expect(await json(trailing)).toEqual({ ok: true, count: 2, dropped: 0 });

    const streams = await json(await call("GET", `logs/projects/${f.projectId}/streams`, { key: f.key }));
    expect(streams.data.map((s: { name: string }) => s.name)).toEqual(["jobs", "web"]);
    const page = await json(await call("GET", `logs/projects/${f.projectId}/streams?limit=1&after=jobs`, { key: f.key }));
    expect(page.data.map((s: { name: string }) => s.name)).toEqual(["web"]);
    const project = await json(await call("GET", `logs/projects/${f.projectId}`, { key: f.key }));
    expect(project.data.stream_count).toBe(2);
  });

  it("answers 202 with count 0 for an empty body and for a body of only invalid lines", async () => {
    const f = await setupProject();
    expect(await json(await ingestBatch(f.token, ""))).toEqual({ ok: true, count: 0, dropped: 0 });
    expect(await json(await ingestBatch(f.token, "\n\r\n  \n"))).toEqual({ ok: true, count: 0, dropped: 0 });
    const bad = await ingestBatch(f.token, 'x\n{"message":""}\n[1]\n{"message":"a","level":"nope"}');
    expect(bad.status).toBe(202);
    expect(await json(bad)).toEqual({ ok: true, count: 0, dropped: 4 });
    expect(await allEntries(f)).toEqual([]);
  });

  it("counts 10,000 entries and drops the lines past the cap", async () => {
    const f = await setupProject();
    const lines = Array.from({ length: 10_003 }, (_, i) => JSON.stringify({ message: `m${i}`, level: i % 2 ? "error" : "info" }));
    lines.splice(5, 0, "garbage"); // one invalid line before the cap
    const res = await ingestBatch(f.token, lines.join("\n") + "\n");
    expect(await json(res)).toEqual({ ok: true, count: 10_000, dropped: 4 });
    expect(await entryCount(f)).toBe(10_000);
    const [last] = (await json(await call("GET", `logs/projects/${f.projectId}/entries?limit=1`, { key: f.key }))).data;
    // m0..m9999 are counted (the invalid line does not use up the cap); m10000..m10002 fall past it.
    expect(last.message).toBe("m9999");
  });

  it("keeps existing streams working and counts the bytes towards the usage quota", async () => {
    const f = await setupProject();
    const body = ndjson([{ message: "x".repeat(1000), stream: "s" }]);
    await ingestBatch(f.token, body);
    const usage = await json(await call("GET", "usage", { key: f.key }));
    expect(usage.data.services.logs.used).toBeCloseTo(Buffer.byteLength(body) / 1024 / 1024, 10);
  });
});

describe("entry query", () => {
  it("filters by level, stream, service, trace_id, time and text, newest first with a cursor", async () => {
    const f = await setupProject();
    setClock(Date.parse("2026-03-01T10:00:00Z"));
    await ingestBatch(
      f.token,
      ndjson([
        { message: "boot ok", level: "info", stream: "sys", service: "api" },
        { message: "disk 100% full", level: "error", stream: "sys", service: "worker", trace_id: "abc" },
      ]),
    );
    setClock(Date.parse("2026-03-01T11:00:00Z"));
    await ingestBatch(
      f.token,
      ndjson([
        { message: "Login failed", level: "warn", stream: "auth", service: "api", trace_id: "abc" },
        { message: "login ok", level: "info", stream: "auth", service: "api" },
      ]),
    );

    const q = async (query: string) => (await allEntries(f, query)).map((e) => e.message);
    expect(await q("")).toEqual(["login ok", "Login failed", "disk 100% full", "boot ok"]);
    expect(await q("level=error")).toEqual(["disk 100% full"]);
    expect(await q("stream=auth")).toEqual(["login ok", "Login failed"]);
    expect(await q("service=api&level=info")).toEqual(["login ok", "boot ok"]);
    expect(await q("trace_id=abc")).toEqual(["Login failed", "disk 100% full"]);
    expect(await q("q=login")).toEqual(["login ok", "Login failed"]);
    expect(await q("q=100%25")).toEqual(["disk 100% full"]);
    expect(await q("q=_")).toEqual([]);
    expect(await q("since=2026-03-01T10:30:00Z")).toEqual(["login ok", "Login failed"]);
    expect(await q("until=2026-03-01T11:00:00Z")).toEqual(["disk 100% full", "boot ok"]);

    const first = await json(await call("GET", `logs/projects/${f.projectId}/entries?limit=3`, { key: f.key }));
    expect(first.data.map((e: { message: string }) => e.message)).toEqual(["login ok", "Login failed", "disk 100% full"]);
    expect(first.pagination.limit).toBe(3);
    const second = await json(await call("GET", `logs/projects/${f.projectId}/entries?limit=3&cursor=${first.pagination.next_cursor}`, { key: f.key }));
    expect(second.data.map((e: { message: string }) => e.message)).toEqual(["boot ok"]);
    expect(second.pagination.next_cursor).toBeNull();
    expect(second.data[0].created_at).toBe("2026-03-01T10:00:00.000Z");
  });
});

describe("alerts CRUD", () => {
  it("creates with defaults and derived channels, lists, updates only given fields, deletes", async () => {
    const f = await setupProject();
    const created = await call("POST", `logs/projects/${f.projectId}/alerts`, {
      key: f.key,
      body: { name: "errors", level: "error", threshold: 5, window_minutes: 5, notify_email: "owner@example.com" },
    });
    expect(created.status).toBe(201);
    const alert = (await json(created)).data;
    expect(alert).toMatchObject({
      project_id: f.projectId,
      name: "errors",
      level: "error",
      threshold: 5,
      window_minutes: 5,
      channels: ["email"],
      notify_email: "owner@example.com",
      notify_webhook: null,
      enabled: true,
      last_triggered_at: null,
    });
    expect(alert.inserted_at).toBe(alert.updated_at);

    const both = await json(
      await call("POST", `logs/projects/${f.projectId}/alerts`, {
        key: f.key,
        body: {
          name: "b",
          level: "fatal",
          threshold: 1,
          window_minutes: 1,
          notify_email: "owner@example.com",
          notify_webhook: "https://hooks.example.com/x",
          enabled: false,
        },
      }),
    );
    expect(both.data).toMatchObject({ channels: ["email", "webhook"], enabled: false });

    const list = await json(await call("GET", `logs/projects/${f.projectId}/alerts`, { key: f.key }));
    expect(list.data.map((a: { id: string }) => a.id)).toEqual([alert.id, both.data.id]);

    setClock(Date.now() + 5_000);
    const put = await call("PUT", `logs/alerts/${alert.id}`, { key: f.key, body: { threshold: 10, enabled: false } });
    expect(put.status).toBe(200);
    const updated = (await json(put)).data;
    expect(updated).toMatchObject({ ...alert, threshold: 10, enabled: false, updated_at: updated.updated_at });
    expect(updated.updated_at > alert.updated_at).toBe(true);

    const del = await call("DELETE", `logs/alerts/${alert.id}`, { key: f.key });
    expect(del.status).toBe(204);
    await expectError(await call("DELETE", `logs/alerts/${alert.id}`, { key: f.key }), 404, { error: "Alert not found" });
    const after = await json(await call("GET", `logs/projects/${f.projectId}/alerts`, { key: f.key }));
    expect(after.data.map((a: { id: string }) => a.id)).toEqual([both.data.id]);
  });

  it("appears in the OpenAPI document", async () => {
    const doc = await json(await call("GET", "openapi.json"));
    for (const path of [
      "/api/v1/logs/ingest",
      "/api/v1/logs/ingest/batch",
      "/api/v1/logs/projects/{id}/alerts",
      "/api/v1/logs/alerts/{id}",
      "/api/v1/logs/projects/{id}/entries",
    ]) {
      expect(doc.paths).toHaveProperty([path]);
    }
    expect(doc.components.schemas).toHaveProperty("LogEntryInput");
  });
});

describe("entry pages are capped in bytes", () => {
  it("stops a page short of `limit` past the byte budget; the cursor continues after it, nothing lost or repeated", async () => {
    const f = await setupProject();
    const entries = Array.from({ length: 80 }, (_, i) => ({ message: `big-${String(i).padStart(2, "0")} ${"m".repeat(32_000)}` }));
    expect((await json(await ingestBatch(f.token, ndjson(entries)))).count).toBe(80);
    const first = await json(await call("GET", `logs/projects/${f.projectId}/entries?limit=1000`, { key: f.key }));
    const bytes = first.data.reduce((n: number, e: { message: string }) => n + e.message.length, 0);
    expect(first.data.length).toBeLessThan(80);
    expect(bytes).toBeLessThanOrEqual(ENTRIES_PAGE_BYTES);
    expect(first.pagination.next_cursor).not.toBeNull();
    const all = await allEntries(f);
    expect(all).toHaveLength(80);
    expect(new Set(all.map((e) => e.id)).size).toBe(80);
  });
});
