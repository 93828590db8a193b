// The per-project log store: one Durable Object per project, the full-text search it serves,
// deleting a project with its entries, and the operator's one-time move of D1 rows into the stores.
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { setClock } from "../../../src/platform/clock";
import { logStore } from "../../../src/products/logs/logs.store";
import { admin, call, expectError, json } from "../../helpers/api";
import { allEntries, entryCount, ingest, ingestBatch, ndjson, setupProject, type LogsFixture } from "./helpers";

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

/** Messages held in a project's object, read inside the object itself (not through the API). */
async function messagesInObject(projectId: string): Promise<string[]> {
  return runInDurableObject(logStore(env, projectId), (_instance, state) =>
    state.storage.sql
      .exec<{ message: string }>("SELECT message FROM entries ORDER BY seq")
      .toArray()
      .map((r) => r.message),
  );
}

describe("one store per project", () => {
  it("keeps two projects' entries in two objects", async () => {
    const a = await setupProject();
    const b = await setupProject();
    await ingestBatch(a.token, ndjson([{ message: "a1" }, { message: "a2" }]));
    await ingest(b.token, { message: "b1" });
    const idA = env.LOG_STORE.idFromName(a.projectId);
    const idB = env.LOG_STORE.idFromName(b.projectId);
    expect(idA.equals(idB)).toBe(false);
    expect(await messagesInObject(a.projectId)).toEqual(["a1", "a2"]);
    expect(await messagesInObject(b.projectId)).toEqual(["b1"]);
    expect((await allEntries(a)).map((e) => e.message)).toEqual(["a2", "a1"]);
    expect((await allEntries(b)).map((e) => ({ message: e.message, project_id: e.project_id }))).toEqual([{ message: "b1", project_id: b.projectId }]);
  });

  it("never creates a store for another team's or an unknown project", async () => {
    const a = await setupProject();
    const other = await setupProject();
    await expectError(await call("GET", `logs/projects/${a.projectId}/entries`, { key: other.key }), 404, { error: "Project not found" });
    const unknown = crypto.randomUUID();
    await expectError(await call("GET", `logs/projects/${unknown}/entries`, { key: a.key }), 404, { error: "Project not found" });
    const tables = await runInDurableObject(logStore(env, unknown), (_i, state) =>
      state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name = 'entries'").toArray(),
    );
    // Touching the object here runs its migrations; what matters is that it holds no entries.
    expect(tables).toHaveLength(1);
    expect(await entryCount({ projectId: unknown })).toBe(0);
  });
});

describe("search (q) through the trigram index", () => {
  async function seeded(): Promise<LogsFixture> {
    const f = await setupProject();
    await ingestBatch(
      f.token,
      ndjson([
        { message: "Payment FAILED for order 991" },
        { message: "payment ok", level: "info" },
        { message: 'quote "inside" here' },
        { message: "wildcards * and - and NEAR(a b) OR x" },
        { message: "naïve café résumé" },
        { message: "percent 100% and under_score" },
      ]),
    );
    return f;
  }
  const search = async (f: LogsFixture, q: string, extra = "") =>
    (await allEntries(f, `q=${encodeURIComponent(q)}${extra ? `&${extra}` : ""}`)).map((e) => e.message);

  it("matches any substring of 3+ characters, case-insensitively", async () => {
    const f = await seeded();
    expect(await search(f, "payment")).toEqual(["payment ok", "Payment FAILED for order 991"]);
    expect(await search(f, "AYMEN")).toEqual(["payment ok", "Payment FAILED for order 991"]);
    expect(await search(f, "der 99")).toEqual(["Payment FAILED for order 991"]);
    expect(await search(f, "nowhere")).toEqual([]);
    expect(await search(f, "café")).toEqual(["naïve café résumé"]);
  });

  it("treats FTS syntax in the query as plain text", async () => {
    const f = await seeded();
    expect(await search(f, '"inside"')).toEqual(['quote "inside" here']);
    expect(await search(f, "* and -")).toEqual(["wildcards * and - and NEAR(a b) OR x"]);
    expect(await search(f, "NEAR(a b)")).toEqual(["wildcards * and - and NEAR(a b) OR x"]);
    expect(await search(f, "OR x")).toEqual(["wildcards * and - and NEAR(a b) OR x"]);
    expect(await search(f, "100%")).toEqual(["percent 100% and under_score"]);
    expect(await search(f, "r_s")).toEqual(["percent 100% and under_score"]);
    expect(await search(f, '"')).toEqual(['quote "inside" here']);
  });

  it("serves one- and two-character queries without the index, LIKE metacharacters literal", async () => {
    const f = await seeded();
    expect(await search(f, "ï")).toEqual(["naïve café résumé"]);
    expect(await search(f, "%")).toEqual(["percent 100% and under_score"]);
    expect(await search(f, "_")).toEqual(["percent 100% and under_score"]);
    expect(await search(f, "OK")).toEqual(["payment ok"]);
  });

  it("combines with the other filters and pages with the cursor", async () => {
    const f = await setupProject();
    await ingestBatch(
      f.token,
      ndjson(Array.from({ length: 30 }, (_, i) => ({ message: `job ${i} ${i % 3 === 0 ? "timeout" : "done"}`, level: i % 2 ? "error" : "info" }))),
    );
    const hits = await allEntries(f, "q=timeout&level=error");
    expect(hits.map((e) => e.message)).toEqual(["job 27 timeout", "job 21 timeout", "job 15 timeout", "job 9 timeout", "job 3 timeout"]);
    const pages: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await json(
        await call("GET", `logs/projects/${f.projectId}/entries?q=timeout&limit=4${cursor ? `&cursor=${cursor}` : ""}`, { key: f.key }),
      );
      pages.push(...page.data.map((e: { message: string }) => e.message));
      cursor = page.pagination.next_cursor;
    } while (cursor);
    expect(pages).toHaveLength(10);
    expect(pages.every((m) => m.includes("timeout"))).toBe(true);
  });

  it("accepts the longest query the schema allows and refuses a longer one", async () => {
    const f = await setupProject();
    const long = "x".repeat(200);
    await ingest(f.token, { message: `a${long}b` });
    expect(await search(f, long)).toEqual([`a${long}b`]);
    const res = await call("GET", `logs/projects/${f.projectId}/entries?q=${"x".repeat(201)}`, { key: f.key });
    expect(res.status).toBe(422);
    // Found by the fuzz run: a NUL ended the FTS query string early (a 500).
    await expectError(await call("GET", `logs/projects/${f.projectId}/entries?q=ab%00cd%22`, { key: f.key }), 422, {
      error: "Validation failed",
      details: { q: ["must not contain NUL characters"] },
    });
  });
});

describe("deleting a project", () => {
  it("deletes the project, its token, alerts and every stored entry", async () => {
    const f = await setupProject();
    await ingestBatch(f.token, ndjson([{ message: "one", stream: "s" }, { message: "two" }]));
    await call("POST", `logs/projects/${f.projectId}/alerts`, {
      key: f.key,
      body: { name: "a", level: "error", threshold: 1, window_minutes: 5, notify_email: "owner@example.com" },
    });
    const res = await call("DELETE", `logs/projects/${f.projectId}`, { key: f.key });
    expect(res.status).toBe(204);
    await expectError(await call("GET", `logs/projects/${f.projectId}`, { key: f.key }), 404, { error: "Project not found" });
    await expectError(await ingest(f.token, { message: "late" }), 401, { error: "Invalid or missing ingest token" });
    const alerts = await env.DB.prepare("SELECT count(*) AS n FROM log_alerts WHERE project_id = ?").bind(f.projectId).first<{ n: number }>();
    expect(alerts!.n).toBe(0);
    const streams = await env.DB.prepare("SELECT count(*) AS n FROM log_streams WHERE project_id = ?").bind(f.projectId).first<{ n: number }>();
    expect(streams!.n).toBe(0);
    const left = await runInDurableObject(logStore(env, f.projectId), async (_i, state) => ({
      tables: state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name = 'entries'").toArray().length,
      alarm: await state.storage.getAlarm(),
    }));
    expect(left).toEqual({ tables: 0, alarm: null });
  });

  it("answers 404 for another team's project and 403 without logs:write, deleting nothing", async () => {
    const f = await setupProject();
    const other = await setupProject();
    await ingest(f.token, { message: "kept" });
    await expectError(await call("DELETE", `logs/projects/${f.projectId}`, { key: other.key }), 404, { error: "Project not found" });
    const reader = (await json(await admin("POST", `teams/${f.teamId}/keys`, { name: "reader", scopes: ["logs:read"] }))).data.key;
    const res = await call("DELETE", `logs/projects/${f.projectId}`, { key: reader });
    expect(res.status).toBe(403);
    expect(await entryCount(f)).toBe(1);
  });
});

describe("moving entries from D1 into the stores (operator)", () => {
  const T = Date.parse("2026-02-01T00:00:00Z");

  async function legacyRows(f: LogsFixture, n: number, from = 0) {
    const rows = Array.from({ length: n }, (_, i) => [
      `legacy-${f.projectId}-${from + i}`,
      f.teamId,
      f.projectId,
      "api",
      i % 2 ? "error" : "info",
      `old ${from + i}`,
      T + from + i,
    ]);
    await env.DB.batch(
      rows.map((r) =>
        env.DB.prepare("INSERT INTO log_entries (id, team_id, project_id, stream, level, message, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)").bind(...r),
      ),
    );
  }
  const legacyCount = async () => (await env.DB.prepare("SELECT count(*) AS n FROM log_entries").first<{ n: number }>())!.n;

  it("moves every row into its project's store in steps, keeping ids and times, then the D1 table is empty", async () => {
    setClock(T + 60_000);
    const a = await setupProject();
    const b = await setupProject();
    await legacyRows(a, 5);
    await legacyRows(b, 3);
    await ingest(a.token, { message: "new" });
    const before = await legacyCount();
    const steps = [];
    let more = true;
    while (more) {
      const res = await admin("POST", "logs/migrate-entries", { limit: 3 });
      expect(res.status).toBe(200);
      const step = (await json(res)).data;
      steps.push(step);
      more = step.more;
    }
    expect(steps.reduce((n, s) => n + s.moved + s.dropped, 0)).toBe(before);
    expect(await legacyCount()).toBe(0);
    const entries = await allEntries(a);
    expect(entries.map((e) => e.message)).toEqual(["new", "old 4", "old 3", "old 2", "old 1", "old 0"]);
    expect(entries[5]).toMatchObject({
      id: `legacy-${a.projectId}-0`,
      stream: "api",
      level: "info",
      created_at: new Date(T).toISOString(),
      project_id: a.projectId,
    });
    expect((await allEntries(b)).map((e) => e.message)).toEqual(["old 2", "old 1", "old 0"]);
    expect((await allEntries(a, "q=old 3")).map((e) => e.message)).toEqual(["old 3"]);
  });

  it("repeats nothing when a step stopped between import and delete", async () => {
    setClock(T + 60_000);
    const f = await setupProject();
    await legacyRows(f, 4);
    // Every other test's leftovers go first, so only this project's rows are moved here.
    const mine = async () => (await env.DB.prepare("SELECT count(*) AS n FROM log_entries WHERE project_id = ?").bind(f.projectId).first<{ n: number }>())!.n;
    const realPrepare = env.DB.prepare.bind(env.DB);
    const failDelete = vi.spyOn(env.DB, "prepare").mockImplementation((query: string) => {
      if (query.startsWith("DELETE FROM log_entries WHERE seq IN")) throw new Error("D1 unavailable");
      return realPrepare(query);
    });
    const res = await admin("POST", "logs/migrate-entries", { limit: 1000 });
    expect(res.status).toBe(500);
    failDelete.mockRestore();
    expect(await mine()).toBe(4);
    expect(await entryCount(f)).toBe(4);
    while ((await json(await admin("POST", "logs/migrate-entries", { limit: 1000 }))).data.more);
    expect(await mine()).toBe(0);
    expect(await entryCount(f)).toBe(4);
    // Rows added to D1 after the first import (a late writer) are still taken.
    await legacyRows(f, 2, 100);
    await admin("POST", "logs/migrate-entries", { limit: 1000 });
    expect(await entryCount(f)).toBe(6);
  });

  it("drops rows of deleted projects, and needs the operator token", async () => {
    setClock(T + 60_000);
    const f = await setupProject();
    await legacyRows(f, 2);
    await env.DB.prepare("PRAGMA foreign_keys = OFF").run();
    const gone = crypto.randomUUID();
    await env.DB.prepare("INSERT INTO log_entries (id, team_id, project_id, level, message, created_at) VALUES ('orphan', ?, ?, 'info', 'x', ?)")
      .bind(f.teamId, gone, T)
      .run();
    const refused = await call("POST", "admin/logs/migrate-entries", { key: f.key, body: {} });
    await expectError(refused, 401, { error: "Invalid or missing admin token" });
    await expectError(await admin("POST", "logs/migrate-entries", { limit: 0 }), 422, expect.anything());
    let dropped = 0;
    let more = true;
    while (more) {
      const step = (await json(await admin("POST", "logs/migrate-entries", {}))).data;
      dropped += step.dropped;
      more = step.more;
    }
    expect(dropped).toBeGreaterThanOrEqual(1);
    expect(await legacyCount()).toBe(0);
    expect(await entryCount({ projectId: gone })).toBe(0);
  });
});

describe("the search index is built after the append, and a search never misses a row", () => {
  it("a search right after an ingest finds its rows; the mark follows deletes, so reused seq values are indexed", async () => {
    const f = await setupProject({ retention_days: 1 });
    // The newest row (seq 2) carries a time three days back: retention deletes it first.
    const backfilled = new Date(Date.now() - 3 * 86_400_000).toISOString();
    await ingestBatch(f.token, ndjson([{ message: "alpha one" }, { message: "beta two", timestamp: backfilled }]));
    // Whether or not the background build ran yet, the search indexes what is pending first.
    expect((await allEntries(f, "q=beta")).map((e) => e.message)).toEqual(["beta two"]);
    const stub = logStore(env, f.projectId);
    const mark = () =>
      runInDurableObject(stub, (_i, state) => state.storage.sql.exec<{ value: number }>("SELECT value FROM meta WHERE key = 'fts_upto'").one().value);
    expect(await mark()).toBe(2);

    // Deleting the highest rows lowers the mark, so the seq values SQLite hands out again are
    // indexed when new rows take them.
    expect(await stub.purgeExpired(Date.now())).toEqual({ deleted: 1, more: false });
    expect(await mark()).toBe(1);
    await ingest(f.token, { message: "gamma three" });
    expect((await allEntries(f, "q=gamma")).map((e) => e.message)).toEqual(["gamma three"]);
    expect((await allEntries(f, "q=beta")).map((e) => e.message)).toEqual([]);
    expect((await allEntries(f, "q=alpha")).map((e) => e.message)).toEqual(["alpha one"]);
    // The index holds exactly the rows held: one document per entry (FTS5's docsize table).
    const indexed = await runInDurableObject(stub, (_i, state) =>
      state.storage.sql
        .exec<{ id: number }>("SELECT id FROM entries_fts_docsize ORDER BY id")
        .toArray()
        .map((r) => r.id),
    );
    expect(indexed).toEqual([1, 2]);
  });

  it("an append returns before its rows are indexed, and the build follows on its own", async () => {
    const f = await setupProject();
    const stub = logStore(env, f.projectId);
    await ingestBatch(f.token, ndjson(Array.from({ length: 50 }, (_, i) => ({ message: `row ${i} marker` }))));
    // The background build runs once the append has answered; poll the mark without searching.
    let upto = 0;
    for (let i = 0; i < 50 && upto < 50; i++) {
      upto = await runInDurableObject(
        stub,
        (_i, state) => state.storage.sql.exec<{ value: number }>("SELECT value FROM meta WHERE key = 'fts_upto'").one().value,
      );
      if (upto < 50) await new Promise((r) => setTimeout(r, 10));
    }
    expect(upto).toBe(50);
    const hits = await runInDurableObject(
      stub,
      (_i, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM entries_fts WHERE entries_fts MATCH '\"marker\"'").one().n,
    );
    expect(hits).toBe(50);
  });
});
