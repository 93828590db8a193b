// The request log (written after the answer, batched per isolate, one Durable Object per team,
// bounded to 7 days and 10,000 rows) and a key's "last used" (at most one write a minute per key).
// What is written is read back from the store and D1; I/O is counted through wrapped bindings,
// never timed.
import { env, runDurableObjectAlarm, runInDurableObject, SELF } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { setClock } from "../../src/platform/clock";
import { teamObject } from "../../src/platform/rate-limit/middleware";
import { BATCH_STALE_MS, IsolateBatch } from "../../src/platform/isolate-batch";
import { lastUsedSettled, LAST_USED_EVERY_MS } from "../../src/platform/request-log/last-used";
import { ERROR_BODY_MAX, readCapped, requestLogSettled, requestLogStore } from "../../src/platform/request-log/request-log";
import { REQUEST_LOG_MAX_ROWS, type RequestLogRow } from "../../src/platform/request-log/request-log.types";
import { listRequests } from "../../src/platform/request-log/request-log.service";
import { admin, call, expectError, json, setupTeam } from "../helpers/api";
import { countingDb } from "../helpers/counting";
import { ingest, setupProject } from "../products/logs/helpers";

const DAY = 86_400_000;
/** 2031-06-01T12:00:00Z. */
const T0 = Date.UTC(2031, 5, 1, 12, 0, 0);

afterEach(() => setClock(null));

/** A batch whose writes wait at a gate until `release()`; `sent` lists the writes made. */
function gatedBatch(): { batch: IsolateBatch<number>; sent: number[][]; release: () => void } {
  const sent: number[][] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const batch = new IsolateBatch<number>({
    name: "test",
    batchMax: 100,
    pendingMax: 1000,
    send: async (items) => {
      await gate;
      sent.push(items);
    },
  });
  return { batch, sent, release };
}

/** Everything the isolate holds is written. */
async function settled(bindings: Env = env): Promise<void> {
  await Promise.all([requestLogSettled(bindings), lastUsedSettled(bindings)]);
}

async function logged(teamId: string, query: Parameters<typeof listRequests>[2] = {}) {
  await settled();
  return listRequests(env, teamId, query);
}

async function lastUsedAt(keyId: string): Promise<string | null> {
  const row = await env.DB.prepare("SELECT last_used_at FROM api_keys WHERE id = ?").bind(keyId).first<{ last_used_at: string | null }>();
  return row!.last_used_at;
}

/** A row as the Worker sends it, at `at`. */
const row = (at: number, status = 200, path = "/api/v1/usage"): RequestLogRow => [at, "GET", path, status, 3, "key-1", "edp_abc", crypto.randomUUID(), null];

describe("what a request leaves in the log", () => {
  it("time, method, path without its query, status, latency, key and request id; no request body", async () => {
    setClock(T0);
    const team = await setupTeam();
    const res = await call("POST", "push/apps?x=secret-in-query", {
      key: team.key,
      body: { name: "very-secret-request-body" },
      headers: { "x-request-id": "req-123" },
    });
    expect(res.status).toBe(201);
    const { data } = await logged(team.teamId);
    expect(data).toEqual([
      {
        id: expect.any(String),
        created_at: new Date(T0).toISOString(),
        method: "POST",
        path: "/api/v1/push/apps",
        status: 201,
        latency_ms: expect.any(Number),
        key_id: team.keyId,
        key_prefix: expect.stringMatching(/^edp_/),
        request_id: "req-123",
        error: null,
      },
    ]);
    expect(data[0].latency_ms).toBeGreaterThanOrEqual(0);
    const stored = await runInDurableObject(requestLogStore(env, team.teamId), (_o, state) =>
      JSON.stringify(state.storage.sql.exec("SELECT * FROM requests").toArray()),
    );
    expect(stored).not.toContain("very-secret-request-body");
    expect(stored).not.toContain("secret-in-query");
  });

  it("an error row keeps the error body we answered, exactly", async () => {
    const team = await setupTeam({ scopes: ["logs:read"] });
    const res = await call("GET", "push/apps/00000000-0000-4000-8000-000000000000", { key: team.key });
    const body = await res.text();
    expect(res.status).toBe(403);
    const missing = await call("GET", "logs/projects/00000000-0000-4000-8000-000000000000", { key: team.key });
    const missingBody = await missing.text();
    expect(missing.status).toBe(404);
    const { data } = await logged(team.teamId);
    expect(data.map((r) => ({ status: r.status, error: r.error }))).toEqual([
      { status: 404, error: missingBody },
      { status: 403, error: body },
    ]);
  });

  it("an error body is kept up to 4 KB, cut on a character boundary", async () => {
    const long = "é".repeat(5_000) + "end";
    const kept = await readCapped(new Response(long), ERROR_BODY_MAX);
    expect(new TextEncoder().encode(kept!).byteLength).toBeLessThanOrEqual(ERROR_BODY_MAX);
    expect(kept!.length).toBe(ERROR_BODY_MAX / 2);
    expect(kept).toBe("é".repeat(ERROR_BODY_MAX / 2));
    const odd = await readCapped(new Response("a" + "é".repeat(5_000)), ERROR_BODY_MAX);
    expect(odd).toBe("a" + "é".repeat(ERROR_BODY_MAX / 2 - 1));
    expect(await readCapped(new Response('{"error":"x"}'), ERROR_BODY_MAX)).toBe('{"error":"x"}');
  });

  it("logs only requests made with the team's keys: not log ingest, public routes, the operator API or a bad key", async () => {
    const fixture = await setupProject();
    const before = (await logged(fixture.teamId)).data.length; // the project's creation
    expect(before).toBe(1);
    expect((await ingest(fixture.token, { message: "hello" })).status).toBe(202);
    expect((await admin("GET", `teams/${fixture.teamId}`)).status).toBe(200);
    expect((await call("GET", "usage", { key: "edp_" + "x".repeat(43) })).status).toBe(401);
    expect((await call("GET", "/health")).status).toBe(200);
    expect((await call("GET", "/s/no-such-survey")).status).toBe(404);
    const after = await logged(fixture.teamId);
    expect(after.data.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /api/v1/logs/projects"]);
  });

  it("a rate-limited request is logged with its 429", async () => {
    setClock(T0);
    const team = await setupTeam({ plan: "free", scopes: ["billing:read"] });
    // The team's window is full (600 a minute on free): the next request is refused.
    await env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(teamObject(team.teamId))).hit(T0 / 1000, 600);
    const res = await call("GET", "usage", { key: team.key });
    expect(res.status).toBe(429);
    const body = await res.text();
    const { data } = await logged(team.teamId, { status: "4xx" });
    expect(data.map((r) => ({ status: r.status, error: r.error }))).toEqual([{ status: 429, error: body }]);
  });

  it("another team's requests stay in that team's log", async () => {
    const a = await setupTeam();
    const b = await setupTeam();
    await call("GET", "usage", { key: a.key });
    await call("GET", "push/apps", { key: b.key });
    expect((await logged(a.teamId)).data.map((r) => r.path)).toEqual(["/api/v1/usage"]);
    expect((await logged(b.teamId)).data.map((r) => r.path)).toEqual(["/api/v1/push/apps"]);
  });
});

describe("reading the log", () => {
  it("newest first, by status class, paged by cursor", async () => {
    const team = await setupTeam();
    const now = Date.now();
    const store = requestLogStore(env, team.teamId);
    const statuses = [200, 201, 301, 404, 422, 500, 200, 403];
    await store.append(
      statuses.map((status, i) => row(now - 1000 + i, status, `/api/v1/r${i}`)),
      now,
    );
    const all = await listRequests(env, team.teamId, {});
    expect(all.data.map((r) => r.status)).toEqual([...statuses].reverse());
    expect(all.pagination.next_cursor).toBeNull();
    expect((await listRequests(env, team.teamId, { status: "4xx" })).data.map((r) => r.status)).toEqual([403, 422, 404]);
    expect((await listRequests(env, team.teamId, { status: "5xx" })).data.map((r) => r.status)).toEqual([500]);
    expect((await listRequests(env, team.teamId, { status: "3xx" })).data.map((r) => r.status)).toEqual([301]);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = await listRequests(env, team.teamId, { limit: 3, cursor });
      seen.push(...page.data.map((r) => r.path));
      if (!page.pagination.next_cursor) break;
      cursor = page.pagination.next_cursor;
    }
    expect(seen).toEqual(statuses.map((_, i) => `/api/v1/r${i}`).reverse());
  });

  it("rows with the same time keep a stable order across pages", async () => {
    const team = await setupTeam();
    const now = Date.now();
    await requestLogStore(env, team.teamId).append(
      Array.from({ length: 7 }, (_, i) => row(now, 200, `/p${i}`)),
      now,
    );
    const first = await listRequests(env, team.teamId, { limit: 4 });
    const second = await listRequests(env, team.teamId, { limit: 4, cursor: first.pagination.next_cursor! });
    expect([...first.data, ...second.data].map((r) => r.path)).toEqual(["/p6", "/p5", "/p4", "/p3", "/p2", "/p1", "/p0"]);
    expect(second.pagination.next_cursor).toBeNull();
  });

  it("a cursor that does not decode is a 422, not a 500", async () => {
    const team = await setupTeam();
    for (const cursor of ["nope", "!!!", btoa("1.2.3"), btoa("abc.def")]) {
      await expect(listRequests(env, team.teamId, { cursor })).rejects.toMatchObject({ status: 422, details: { cursor: ["is invalid"] } });
    }
  });
});

describe("bounds", () => {
  it("keeps the newest 10,000 rows of a team, enforced on write", async () => {
    const team = await setupTeam();
    const store = requestLogStore(env, team.teamId);
    const now = Date.now();
    const total = REQUEST_LOG_MAX_ROWS + 250;
    for (let from = 0; from < total; from += 200) {
      const rows = Array.from({ length: Math.min(200, total - from) }, (_, i) => row(now - DAY + from + i, 200, `/n${from + i}`));
      expect((await store.append(rows, now)).held).toBe(Math.min(from + rows.length, REQUEST_LOG_MAX_ROWS));
    }
    expect(await store.count()).toBe(REQUEST_LOG_MAX_ROWS);
    const newest = await listRequests(env, team.teamId, { limit: 1 });
    expect(newest.data[0].path).toBe(`/n${total - 1}`);
    // The oldest kept is the 251st written.
    const oldest = await runInDurableObject(
      store,
      (_o, state) => state.storage.sql.exec<{ path: string }>("SELECT path FROM requests ORDER BY at, seq LIMIT 1").one().path,
    );
    expect(oldest).toBe("/n250");
  });

  it("keeps 7 days: older rows are not shown, and go on the next write (moved clock)", async () => {
    setClock(T0);
    const team = await setupTeam();
    await call("GET", "usage", { key: team.key });
    await call("GET", "push/apps", { key: team.key });
    expect((await logged(team.teamId)).data.length).toBe(2);
    setClock(T0 + 7 * DAY - 1);
    expect((await logged(team.teamId)).data.length).toBe(2);
    setClock(T0 + 7 * DAY + 1);
    expect((await logged(team.teamId)).data).toEqual([]);
    expect(await requestLogStore(env, team.teamId).count()).toBe(2);
    await call("GET", "usage", { key: team.key });
    expect((await logged(team.teamId)).data.map((r) => r.created_at)).toEqual([new Date(T0 + 7 * DAY + 1).toISOString()]);
    expect(await requestLogStore(env, team.teamId).count()).toBe(1);
  });

  it("the retention alarm deletes what aged out while nothing was written", async () => {
    const team = await setupTeam();
    const store = requestLogStore(env, team.teamId);
    const now = Date.now();
    await store.append([row(now - 8 * DAY, 200, "/old"), row(now - 1000, 200, "/new")], now - 8 * DAY);
    expect(await store.count()).toBe(2);
    expect(await runDurableObjectAlarm(store)).toBe(true);
    expect(await store.count()).toBe(1);
    expect((await listRequests(env, team.teamId, {})).data.map((r) => r.path)).toEqual(["/new"]);
    // Rows are left: the alarm is set again.
    expect(await runInDurableObject(store, (_o, state) => state.storage.getAlarm())).not.toBeNull();
  });
});

describe("batching per isolate", () => {
  it("requests in their own request contexts, answered and ended, all reach the log", async () => {
    const team = await setupTeam({ scopes: ["billing:read"] });
    const answers = await Promise.all(
      Array.from({ length: 30 }, () =>
        SELF.fetch("http://app.test/api/v1/usage", { headers: { authorization: `Bearer ${team.key}`, "cf-connecting-ip": "203.0.113.7" } }),
      ),
    );
    for (const res of answers) {
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    // Their waitUntil work may still be running in their own contexts: wait for the rows, bounded.
    let held = 0;
    for (let i = 0; i < 200 && held < 30; i++) {
      await settled();
      held = await requestLogStore(env, team.teamId).count();
      if (held < 30) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(held).toBe(30);
  });

  it("writes the items of many requests in fewer calls, and an item whose request ended waits for the next drain", async () => {
    const { batch, sent, release } = gatedBatch();
    batch.add(1);
    const first = batch.drain(); // leads a write of [1], held at the gate
    batch.add(2);
    batch.add(3);
    const second = batch.drain(); // waits for the write in flight, then leads [2, 3]
    batch.add(4); // a request that added an item and ended without draining
    release();
    await Promise.all([first, second]);
    expect(sent).toEqual([[1], [2, 3, 4]]);
    batch.add(5);
    await batch.drain();
    expect(sent).toEqual([[1], [2, 3, 4], [5]]);
    expect(batch.size).toBe(0);
  });

  it("a leader lingers for more items: the items of requests arriving meanwhile go in its one write", async () => {
    const sent: number[][] = [];
    const batch = new IsolateBatch<number>({ name: "test", batchMax: 100, pendingMax: 1000, lingerMs: 30, send: async (items) => void sent.push(items) });
    batch.add(1);
    const leader = batch.drain();
    await new Promise((resolve) => setTimeout(resolve, 5));
    batch.add(2);
    const standby = batch.drain();
    batch.add(3);
    await batch.drain(); // a third request: the leader and the standby have its item, it returns at once
    expect(sent).toEqual([]);
    await Promise.all([leader, standby]);
    expect(sent).toEqual([[1, 2, 3]]);
  });

  it("while a write is in flight one drain stands by and the others return at once; every item is written", async () => {
    const { batch, sent, release } = gatedBatch();
    batch.add(0);
    const leader = batch.drain();
    batch.add(1);
    let standbyDone = false;
    const standby = batch.drain()!.then(() => (standbyDone = true));
    // The others have nothing to keep alive: no promise, so no waitUntil of their own.
    for (let i = 2; i < 10; i++) {
      batch.add(i);
      expect(batch.drain()).toBeNull();
    }
    expect(standbyDone).toBe(false);
    expect(sent).toEqual([]);
    const settled = batch.settled();
    release();
    await Promise.all([leader, standby, settled]);
    expect(sent.flat().sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(sent).toHaveLength(2);
    expect(batch.size).toBe(0);
  });

  it("a write lost with its request (never settles) does not hold the others past BATCH_STALE_MS", async () => {
    setClock(T0);
    const sent: string[][] = [];
    let calls = 0;
    const batch = new IsolateBatch<string>({
      name: "test",
      batchMax: 100,
      pendingMax: 1000,
      send: async (items) => {
        if (calls++ === 0) return new Promise<void>(() => undefined);
        sent.push(items);
      },
    });
    batch.add("lost");
    void batch.drain();
    batch.add("next");
    setClock(T0 + BATCH_STALE_MS + 1);
    await batch.drain();
    expect(sent).toEqual([["next"]]);
  });

  it("a failed write is dropped and logged, never retried forever nor thrown; the pending items are bounded", async () => {
    let fail = true;
    const sent: number[][] = [];
    const batch = new IsolateBatch<number>({
      name: "test",
      batchMax: 10,
      pendingMax: 5,
      send: async (items) => {
        if (fail) throw new Error("store unavailable");
        sent.push(items);
      },
    });
    batch.add(1);
    await expect(batch.drain()).resolves.toBeUndefined();
    fail = false;
    for (let i = 2; i <= 9; i++) batch.add(i);
    expect(batch.size).toBe(5);
    await batch.drain();
    expect(sent).toEqual([[5, 6, 7, 8, 9]]);
  });

  it("the request log's store failing does not change the answer", async () => {
    const team = await setupTeam({ scopes: ["billing:read"] });
    const broken = {
      idFromName: (name: string) => env.REQUEST_LOG_STORE.idFromName(name),
      get: () => ({ append: () => Promise.reject(new Error("store unavailable")) }),
    } as unknown as Env["REQUEST_LOG_STORE"];
    const bindings = { ...env, REQUEST_LOG_STORE: broken } as Env;
    const res = await call("GET", "usage", { key: team.key, env: bindings });
    expect(res.status).toBe(200);
    await expect(requestLogSettled(bindings)).resolves.toBeUndefined();
  });

  it("REQUEST_LOG=off writes nothing", async () => {
    const team = await setupTeam({ scopes: ["billing:read"] });
    const bindings = { ...env, REQUEST_LOG: "off" } as Env;
    expect((await call("GET", "usage", { key: team.key, env: bindings })).status).toBe(200);
    await settled(bindings);
    expect(await requestLogStore(env, team.teamId).count()).toBe(0);
    expect(await lastUsedAt(team.keyId)).toBeNull();
  });
});

describe("a key's last used", () => {
  it("is written after the answer, at most once a minute per key", async () => {
    setClock(T0);
    const team = await setupTeam({ scopes: ["billing:read"] });
    const { db, queries } = countingDb();
    const bindings = { ...env, DB: db } as Env;
    expect(await lastUsedAt(team.keyId)).toBeNull();
    for (let i = 0; i < 5; i++) expect((await call("GET", "usage", { key: team.key, env: bindings })).status).toBe(200);
    await settled(bindings);
    const writes = () => queries.filter((q) => q.includes("last_used_at")).length;
    expect(writes()).toBe(1);
    expect(await lastUsedAt(team.keyId)).toBe(new Date(T0).toISOString());
    setClock(T0 + LAST_USED_EVERY_MS - 1);
    await call("GET", "usage", { key: team.key, env: bindings });
    await settled(bindings);
    expect(writes()).toBe(1);
    expect(await lastUsedAt(team.keyId)).toBe(new Date(T0).toISOString());
    setClock(T0 + LAST_USED_EVERY_MS + 5);
    await call("GET", "usage", { key: team.key, env: bindings });
    await settled(bindings);
    expect(writes()).toBe(2);
    expect(await lastUsedAt(team.keyId)).toBe(new Date(T0 + LAST_USED_EVERY_MS + 5).toISOString());
  });

  it("a key another isolate wrote less than a minute ago is not written again", async () => {
    setClock(T0);
    const team = await setupTeam({ scopes: ["billing:read"] });
    const other = new Date(T0 - 30_000).toISOString();
    await env.DB.prepare("UPDATE api_keys SET last_used_at = ? WHERE id = ?").bind(other, team.keyId).run();
    await call("GET", "usage", { key: team.key });
    await settled();
    expect(await lastUsedAt(team.keyId)).toBe(other);
  });
});

describe("GET /api/v1/requests", () => {
  it("lists the team's requests, newest first, filtered and paged", async () => {
    const team = await setupTeam({ scopes: ["billing:read", "push:read"] });
    await call("GET", "usage", { key: team.key });
    await call("GET", "push/apps/00000000-0000-4000-8000-000000000000", { key: team.key });
    await settled();
    const res = await call("GET", "requests?limit=1", { key: team.key });
    expect(res.status).toBe(200);
    const page = await json(res);
    expect(page.data.map((r: { path: string; status: number }) => `${r.status} ${r.path}`)).toEqual([
      "404 /api/v1/push/apps/00000000-0000-4000-8000-000000000000",
    ]);
    expect(page.pagination.limit).toBe(1);
    const next = await json(await call("GET", `requests?limit=1&cursor=${page.pagination.next_cursor}`, { key: team.key }));
    expect(next.data.map((r: { path: string }) => r.path)).toEqual(["/api/v1/usage"]);
    const errors = await json(await call("GET", "requests?status=4xx", { key: team.key }));
    expect(errors.data.map((r: { status: number }) => r.status)).toEqual([404]);
    expect(JSON.parse(errors.data[0].error)).toEqual({ error: "App not found" });
  });

  it("needs billing:read; bad filters answer 422 in the validation shape", async () => {
    const team = await setupTeam({ scopes: ["push:read"] });
    await expectError(await call("GET", "requests", { key: team.key }), 403, { error: "Insufficient scope" });
    await expectError(await call("GET", "requests"), 401, { error: "Invalid or missing API key" });
    const reader = await setupTeam({ scopes: ["billing:read"] });
    for (const query of ["status=6xx", "status=200", "limit=0", "limit=101", "limit=x", `cursor=${"a".repeat(201)}`]) {
      const res = await call("GET", `requests?${query}`, { key: reader.key });
      expect(res.status, query).toBe(422);
      expect(Object.keys((await json(res)).details).length, query).toBeGreaterThan(0);
    }
    await expectError(await call("GET", "requests?cursor=bm9wZQ", { key: reader.key }), 422, {
      error: "Validation failed",
      details: { cursor: ["is invalid"] },
    });
  });

  it("never shows another team's requests", async () => {
    const a = await setupTeam({ scopes: ["billing:read"] });
    const b = await setupTeam({ scopes: ["billing:read"] });
    await call("GET", "usage", { key: a.key });
    await settled();
    const seen = await json(await call("GET", "requests", { key: b.key }));
    expect(seen.data.every((r: { key_id: string }) => r.key_id === b.keyId)).toBe(true);
    expect(seen.data.some((r: { key_id: string }) => r.key_id === a.keyId)).toBe(false);
  });
});
