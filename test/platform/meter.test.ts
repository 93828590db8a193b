// The team's meter (issue 28): one object per team answers rate limits, quota reservations and
// usage reads; concurrent requests of an isolate ride one call per object (coalesce.ts) and every
// count stays exact. Concurrency is driven for real (hundreds of requests in flight at once), the
// hidden costs of the design are tested: a window rollover mid-flight, a plan change, the meter
// unreachable (limits fail open, quotas closed), a lost meter coming back from its D1 roll-up.
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { setClock } from "../../src/platform/clock";
import { ApiError } from "../../src/platform/errors";
import { consumeQuota, releaseQuota, type QuotaOwner } from "../../src/platform/quota";
import { COALESCE_MAX_BYTES, Coalescer } from "../../src/platform/coalesce";
import type { RateLimiter } from "../../src/platform/rate-limit/durable-object";
import { getMeter } from "../../src/platform/rate-limit/limiter";
import { readUsage } from "../../src/platform/usage/read-usage";
import { admin, call, json, setupTeam } from "../helpers/api";
import { meterOf, rollUpMeter, usedOf } from "../helpers/usage";

/** 2031-07-15T12:00:00Z: the start of a rate-limit window, mid-month. */
const T0 = Date.UTC(2031, 6, 15, 12, 0, 0);

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

/** A namespace whose objects cannot be reached. */
const unreachable = {
  idFromName: () => {
    throw new Error("Durable Object namespace unavailable");
  },
  get: () => {
    throw new Error("Durable Object namespace unavailable");
  },
} as unknown as Env["RATE_LIMITER"];

async function owner(plan: string): Promise<QuotaOwner> {
  const team = await setupTeam({ plan, ownerEmail: null });
  return { teamId: team.teamId, plan, ownerEmail: null };
}

describe("coalescing: fewer calls than requests, every position given once", () => {
  it("1,300 concurrent requests of one free team across a window edge: each window's positions 1..n once, nothing over 600 admitted", async () => {
    setClock(T0 + 59_000);
    const team = await setupTeam({ plan: "free", scopes: ["billing:read"] });
    const stats = getMeter(env).lines.stats;
    const before = { ...stats };
    const inFlight: Promise<Response>[] = [];
    for (let i = 0; i < 650; i++) inFlight.push(call("GET", "usage", { key: team.key }));
    // The window rolls over while most requests are still in line or in their call (after a few calls).
    for (let i = 0; i < 500 && stats.calls - before.calls < 3; i++) await new Promise((resolve) => setTimeout(resolve, 0));
    setClock(T0 + 60_000);
    for (let i = 0; i < 650; i++) inFlight.push(call("GET", "usage", { key: team.key }));
    const responses = await Promise.all(inFlight);

    const byWindow = new Map<string, { positions: number[]; refused: number }>();
    for (const res of responses) {
      const reset = res.headers.get("x-ratelimit-reset")!;
      const window = byWindow.get(reset) ?? { positions: [], refused: 0 };
      byWindow.set(reset, window);
      if (res.status === 429) {
        window.refused++;
        expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
        continue;
      }
      expect(res.status).toBe(200);
      window.positions.push(600 - Number(res.headers.get("x-ratelimit-remaining")));
    }
    let admitted = 0;
    for (const { positions, refused } of byWindow.values()) {
      // The admitted requests of a window hold positions 1..n, none twice, n = min(requests, 600):
      // nothing over the limit is admitted, and nothing under it refused.
      const requests = positions.length + refused;
      expect([...positions].sort((a, b) => a - b)).toEqual(Array.from({ length: Math.min(requests, 600) }, (_, i) => i + 1));
      admitted += positions.length;
    }
    // The object counted every request of the current window except the refusals the isolate
    // remembered (those are not counted again).
    const current = byWindow.get(String((T0 + 120_000) / 1000))!;
    const counted = await meterOf(team.teamId).peek((T0 + 60_000) / 1000);
    expect(counted).toBeGreaterThan(600);
    expect(counted).toBeLessThanOrEqual(current.positions.length + current.refused);
    expect(responses).toHaveLength(1_300);
    // Two windows were met (the rollover happened mid-flight) and at least 100 were refused; far
    // fewer calls than requests were made.
    expect([...byWindow.keys()].sort()).toEqual([String((T0 + 60_000) / 1000), String((T0 + 120_000) / 1000)]);
    expect(admitted).toBeLessThanOrEqual(1_200);
    expect(1_300 - admitted).toBeGreaterThanOrEqual(100);
    expect(stats.calls - before.calls).toBeLessThan(650);
  });

  it("a per-IP bucket the same way: 250 concurrent unauthenticated requests from one IP, exactly 100 counted in, positions once", async () => {
    setClock(T0 + 5_000);
    const ip = "203.0.113.250";
    const responses = await Promise.all(Array.from({ length: 250 }, () => call("GET", "usage", { ip })));
    const passed = responses.filter((r) => r.status === 401);
    const refused = responses.filter((r) => r.status === 429);
    expect(passed.length + refused.length).toBe(250);
    // The anonymous fallback (100 per 60 s): the first 100 reach the 401, each with its own position.
    expect(passed.map((r) => 100 - Number(r.headers.get("x-ratelimit-remaining"))).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    for (const r of refused) expect(r.headers.get("retry-after")).toBe("55");
  });

  it("quota reservations under concurrency: 40 parallel requests for 10 units take exactly 10, each total given once", async () => {
    setClock(T0);
    const o = await owner("free");
    const outcomes = await Promise.allSettled(Array.from({ length: 40 }, () => consumeQuota(env, o, "ai")));
    const totals = outcomes.filter((r) => r.status === "fulfilled").map((r) => (r as PromiseFulfilledResult<number>).value);
    expect(totals.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (const r of outcomes.filter((r) => r.status === "rejected")) expect(((r as PromiseRejectedResult).reason as ApiError).code).toBe("monthly_quota");
    expect(await usedOf(o.teamId, "ai")).toBe(10);
  });

  it("a batch mixing hits, reservations, give-backs and reads answers each as if alone, in order", async () => {
    setClock(T0);
    const team = await setupTeam({ plan: "free" });
    const answers = await runInDurableObject(meterOf(team.teamId), (meter) =>
      (meter as RateLimiter).meter(T0, team.teamId, [
        { counters: [{ name: "", limit: 2 }] },
        { quota: { service: "ai", amount: 6, limit: 10 } },
        { quota: { service: "ai", amount: 6, limit: 10 } },
        { quota: { service: "ai", amount: -2, limit: null } },
        {
          counters: [
            { name: "", limit: 2 },
            { name: "strict:push_subscribers", limit: 30 },
          ],
        },
        {
          counters: [
            { name: "", limit: 2 },
            { name: "strict:push_subscribers", limit: 30 },
          ],
        },
        { read: true },
      ]),
    );
    expect(answers.slice(0, 6)).toEqual([
      { counts: [1] },
      { quota: { ok: true, used: 6 } },
      { quota: { ok: false, used: 6 } },
      { quota: { ok: true, used: 4 } },
      { counts: [2, 1] },
      // Refused by the default counter: the strict family is not counted (spec Limits rule 2).
      { counts: [3] },
    ]);
    expect(answers[6]).toEqual({ usage: { period: "2031-07", used: { ai: 4 }, daily: [{ day: "2031-07-15", service: "ai", used: 4 }], windowCount: 3 } });
    // The batch's counts are kept (counted in memory, written once at its end), and the next call
    // goes on from them.
    const stub = meterOf(team.teamId);
    expect(await stub.peek(T0 / 1000)).toBe(3);
    expect(await stub.peek(T0 / 1000, "strict:push_subscribers")).toBe(1);
    expect(await stub.hitAll(T0 / 1000, [{ name: "strict:push_subscribers", limit: 30 }])).toEqual([2]);
  });
});

describe("the object's copies: counters and the month read from memory, SQLite still the record", () => {
  it("a usage read after units change in another call shows them; a new month reads the new month", async () => {
    setClock(T0);
    const team = await setupTeam({ plan: "free" });
    const meter = meterOf(team.teamId);
    const read = async (at: number) => (await meter.meter(at, team.teamId, [{ read: true }]))[0]!.usage!;
    expect((await read(T0)).used).toEqual({});
    await meter.meter(T0, team.teamId, [{ quota: { service: "ai", amount: 3, limit: 10 } }]);
    expect((await read(T0)).used).toEqual({ ai: 3 });
    // A refused reservation changes nothing; a give-back does.
    await meter.meter(T0, team.teamId, [{ quota: { service: "ai", amount: 20, limit: 10 } }]);
    await meter.meter(T0, team.teamId, [{ quota: { service: "ai", amount: -1, limit: null } }]);
    expect(await read(T0)).toEqual({ period: "2031-07", used: { ai: 2 }, daily: [{ day: "2031-07-15", service: "ai", used: 2 }], windowCount: 0 });
    const august = Date.UTC(2031, 7, 1, 0, 0, 0);
    setClock(august);
    expect(await read(august)).toEqual({ period: "2031-08", used: {}, daily: [], windowCount: 0 });
    await meter.meter(august, team.teamId, [{ quota: { service: "ai", amount: 1, limit: 10 } }]);
    expect((await read(august)).used).toEqual({ ai: 1 });
  });

  it("a service's units are read from SQLite once per instance and day, then from its copy; every take is written through", async () => {
    setClock(T0);
    const team = await setupTeam({ plan: "free" });
    const take = (instance: RateLimiter, at: number, amount: number) =>
      instance.meter(at, team.teamId, [{ quota: { service: "flags", amount, limit: 10 } }]).then((answers) => answers[0]!.quota);
    const stored = (state: DurableObjectState) => ({
      month: state.storage.sql.exec<{ used: number }>("SELECT used FROM usage WHERE service = 'flags'").toArray(),
      days: state.storage.sql.exec<{ day: string; used: number }>("SELECT day, used FROM daily WHERE service = 'flags' ORDER BY day").toArray(),
    });
    await runInDurableObject(meterOf(team.teamId), async (object, state) => {
      const instance = object as RateLimiter;
      expect(await take(instance, T0, 4)).toEqual({ ok: true, used: 4 });
      const exec = vi.spyOn(state.storage.sql, "exec");
      expect(await take(instance, T0, 5)).toEqual({ ok: true, used: 9 });
      // Refused from the copy, exactly as SQLite would: 9 + 2 > 10.
      expect(await take(instance, T0, 2)).toEqual({ ok: false, used: 9 });
      expect(await take(instance, T0, -3)).toEqual({ ok: true, used: 6 });
      const reads = exec.mock.calls.filter(([query]) => /^SELECT used FROM (usage|daily)/.test(query));
      expect(reads).toEqual([]);
      exec.mockRestore();
      expect(stored(state)).toEqual({ month: [{ used: 6 }], days: [{ day: "2031-07-15", used: 6 }] });
      // A new day keeps the month and starts its own count.
      expect(await take(instance, T0 + 86_400_000, 1)).toEqual({ ok: true, used: 7 });
      expect(stored(state)).toEqual({
        month: [{ used: 7 }],
        days: [
          { day: "2031-07-15", used: 6 },
          { day: "2031-07-16", used: 1 },
        ],
      });
      // Back on the first day (another isolate's clock): the month is the month's, not the old copy's.
      expect(await take(instance, T0 + 1000, 1)).toEqual({ ok: true, used: 8 });
      expect(stored(state).days).toEqual([
        { day: "2031-07-15", used: 7 },
        { day: "2031-07-16", used: 1 },
      ]);
    });
  });

  it("every count is written through to SQLite, an older window counted late keeps the newer one's count, a forgotten object counts from zero", async () => {
    setClock(T0);
    const team = await setupTeam({ plan: "free" });
    const meter = meterOf(team.teamId);
    const stored = () =>
      runInDurableObject(meter, (_instance, state) =>
        state.storage.sql.exec<{ start: number; count: number }>("SELECT start, count FROM counters WHERE name = '' ORDER BY start").toArray(),
      );
    const hit = async (at: number) => (await meter.meter(at, team.teamId, [{ counters: [{ name: "", limit: 600 }] }]))[0]!.counts![0];
    expect(await hit(T0)).toBe(1);
    expect(await hit(T0)).toBe(2);
    expect(await stored()).toEqual([{ start: T0 / 1000, count: 2 }]);
    // The next window drops the older one's row.
    expect(await hit(T0 + 60_000)).toBe(1);
    // A request counted at an older instant (another isolate's clock) gets that window, anew...
    expect(await hit(T0 + 1_000)).toBe(1);
    // ...and the newer window goes on from its own count.
    expect(await hit(T0 + 61_000)).toBe(2);
    expect(await stored()).toEqual([
      { start: T0 / 1000, count: 1 },
      { start: T0 / 1000 + 60, count: 2 },
    ]);
    // The object forgets everything (retention's deleteAll): the same window starts from zero,
    // not from the instance's copy.
    await runInDurableObject(meter, async (instance, state) => {
      await state.storage.deleteAll();
      (instance as unknown as { createTables(): void }).createTables();
    });
    expect(await hit(T0 + 62_000)).toBe(1);
    expect(await stored()).toEqual([{ start: T0 / 1000 + 60, count: 1 }]);
  });
});

describe("the coalescer's hand-over", () => {
  /** A coalescer whose first call waits for `release()`; `answer` answers each call's items; `calls` records them. */
  function gatedLines(answer: (items: number[]) => number[], options?: ConstructorParameters<typeof Coalescer<number, number>>[1]) {
    const calls: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const lines = new Coalescer<number, number>(async (_key, items) => {
      calls.push(items);
      if (calls.length === 1) await gate;
      return answer(items);
    }, options);
    return { lines, calls, release };
  }

  it("the request whose call returns hands the next call to the first waiter; a failed call fails every request it carried", async () => {
    const { lines, calls, release } = gatedLines((items) => {
      if (items.includes(-1)) throw new Error("object down");
      return items.map((n) => n * 10);
    });
    const first = lines.run("k", 1);
    const waiting = [2, 3, 4].map((n) => lines.run("k", n));
    release();
    expect(await first).toBe(10);
    expect(await Promise.all(waiting)).toEqual([20, 30, 40]);
    expect(calls).toEqual([[1], [2, 3, 4]]);
    const failing = [lines.run("k", 5), lines.run("k", -1)];
    const settled = await Promise.allSettled(failing);
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected"]);
    // The line is free again afterwards.
    expect(await lines.run("k", 6)).toBe(60);
  });

  it("riders and the next leader wake when the call settles: a timer per waiter and state, none per millisecond (no polling)", async () => {
    // Waits in line and for an answer far longer than the test: only the call's settling can wake them.
    const { lines, calls, release } = gatedLines((items) => items.map((n) => n + 1), { waitMs: 600_000, giveUpMs: 600_000 });
    const realSetTimeout = globalThis.setTimeout;
    const waits = vi.spyOn(scheduler, "wait");
    const timeouts = vi.spyOn(globalThis, "setTimeout");
    try {
      const first = lines.run("k", 1);
      const waiting = [2, 3].map((n) => lines.run("k", n));
      // The first call stays out for 100 ms: a waiter polling every millisecond would ask for ~100 timers.
      await new Promise((resolve) => realSetTimeout(resolve, 100));
      release();
      expect(await first).toBe(2);
      expect(await Promise.all(waiting)).toEqual([3, 4]);
      expect(calls).toEqual([[1], [2, 3]]);
      // 2 and 3: a timer in line each, 3 one more once it rides 2's call; a 1 ms look or two when a
      // waiter wakes before the next leader has made its call.
      expect(waits.mock.calls.length + timeouts.mock.calls.length).toBeLessThanOrEqual(6);
    } finally {
      waits.mockRestore();
      timeouts.mockRestore();
    }
  });

  it("a weighed call carries at most COALESCE_MAX_BYTES; an item heavier than that goes alone", async () => {
    const MB = 1024 * 1024;
    // Items are their own weight in MB.
    const { lines, calls, release } = gatedLines((items) => items, { weigh: (n) => n * MB });
    const first = lines.run("k", 1);
    const waiting = [3, 3, 3, 1, 20, 2].map((n) => lines.run("k", n));
    release();
    await Promise.all([first, ...waiting]);
    expect(COALESCE_MAX_BYTES).toBe(8 * MB);
    expect(calls).toEqual([[1], [3, 3], [3, 1], [20], [2]]);
  });

  it("a waiter whose leader never comes back leads a call itself; a waiter whose call never answers gets an error", async () => {
    let calls = 0;
    const lines = new Coalescer<number, number>(
      (_key, items) => {
        calls++;
        // The first call never answers (its request was cancelled): the requests waiting behind it
        // must not hang.
        if (calls === 1) return new Promise<number[]>(() => {});
        // The second carries 2 and 3 and never answers either: they give up, with an error.
        if (calls === 2) return new Promise<number[]>(() => {});
        return Promise.resolve(items.map((n) => n + 100));
      },
      { waitMs: 20, giveUpMs: 100 },
    );
    void lines.run("k", 1);
    // 2 and 3 wait in line; the first leader never hands over, so after the wait in line 2 leads
    // a call itself, carrying 3; that call never answers either (its leader hangs with it), and 3,
    // a rider, gives up with an error after the give-up bound.
    void lines.run("k", 2);
    const rider = lines.run("k", 3).then(
      () => "answered",
      (error: unknown) => String(error),
    );
    expect(await rider).toContain("no answer from k");
    expect(calls).toBe(2);
  });

  it("the leader's call, hand-over and answers are kept alive with its request (waitUntil), riders keep nothing alive", async () => {
    const kept: Array<Promise<unknown>> = [];
    const lines = new Coalescer<number, number>(async (_key, items) => items.map((n) => n + 1));
    const keepAlive = vi.fn((promise: Promise<unknown>) => void kept.push(promise));
    const answers = await Promise.all([lines.run("k", 1, keepAlive), lines.run("k", 2, keepAlive), lines.run("k", 3, keepAlive)]);
    expect(answers).toEqual([2, 3, 4]);
    // Two calls (1 alone, then 2 and 3): two leaders, each kept its call alive.
    expect(keepAlive).toHaveBeenCalledTimes(2);
    await Promise.all(kept);
  });

  it("a slow call is waited for past the wait in line: its riders get its answer, not an error", async () => {
    let release!: () => void;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const lines = new Coalescer<number, number>(
      async (_key, items) => {
        if (items.includes(2)) await slow;
        return items.map((n) => n * 2);
      },
      { waitMs: 20, giveUpMs: 10_000 },
    );
    const first = lines.run("k", 1);
    const riders = [lines.run("k", 2), lines.run("k", 3)];
    expect(await first).toBe(2);
    // The call carrying 2 and 3 is out; several wait periods pass before it answers.
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    expect(await Promise.all(riders)).toEqual([4, 6]);
  });
});

describe("plan changes, rollover and the meter unreachable", () => {
  it("a plan change applies to the next reservation (the limit travels with each request)", async () => {
    setClock(T0);
    const team = await setupTeam({ plan: "free" });
    const free: QuotaOwner = { teamId: team.teamId, plan: "free", ownerEmail: null };
    expect(await consumeQuota(env, free, "ai", 10)).toBe(10);
    await expect(consumeQuota(env, free, "ai")).rejects.toMatchObject({ code: "monthly_quota" });
    expect((await admin("PATCH", `teams/${team.teamId}`, { plan: "pro" })).status).toBe(200);
    expect(await consumeQuota(env, { ...free, plan: "pro" }, "ai")).toBe(11);
    // And GET /usage shows the new plan's limit over the same count.
    const usage = await json(await call("GET", "usage", { key: team.key }));
    expect(usage.data.services.ai).toEqual({ metric: "ai_units", used: 11, limit: 500, remaining: 489, unlimited: false });
  });

  it("the month rolls over in the meter: a new month starts from zero and the old one is kept in D1", async () => {
    setClock(Date.UTC(2031, 6, 31, 23, 59, 30));
    const o = await owner("free");
    expect(await consumeQuota(env, o, "ai", 10)).toBe(10);
    setClock(Date.UTC(2031, 7, 1, 0, 0, 0));
    expect(await consumeQuota(env, o, "ai")).toBe(1);
    expect(await usedOf(o.teamId, "ai", "2031-07")).toBe(10);
    expect(await usedOf(o.teamId, "ai", "2031-08")).toBe(1);
  });

  it("the meter unreachable: reservations fail closed (nothing taken), reads come from the last roll-up, limits fail open", async () => {
    setClock(T0);
    const team = await setupTeam({ plan: "free", scopes: ["billing:read"] });
    const o: QuotaOwner = { teamId: team.teamId, plan: "free", ownerEmail: null };
    await consumeQuota(env, o, "mail", 7);
    await rollUpMeter(team.teamId);
    await consumeQuota(env, o, "mail", 1); // not rolled up yet
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const down = { ...env, RATE_LIMITER: unreachable } as Env;
    const refused = await consumeQuota(down, o, "mail").then(
      () => "taken",
      (error: unknown) => (error instanceof ApiError ? error.code : "failed"),
    );
    expect(refused).toBe("failed");
    const usage = await readUsage(down, team.teamId, "free");
    expect(usage.live).toBe(false);
    expect(usage.month.services.mail.used).toBe(7);
    expect(usage.window).toEqual({ limit: 600, remaining: 600, reset: T0 / 1000 + 60 });
    const res = await call("GET", "usage", { key: team.key, env: down });
    expect(res.status).toBe(200);
    expect((await json(res)).data.services.mail.used).toBe(7);
    expect(errors.mock.calls.some(([line]) => String(line).includes("rate limiter unavailable, failing open"))).toBe(true);
    // Back up: the meter never lost its count.
    expect(await consumeQuota(env, o, "mail")).toBe(9);
  });
});

describe("the durable record: roll-up, loss and retention", () => {
  it("a lost meter comes back from its last roll-up; the alarm rolls up within ROLLUP_MS and keeps dirty rows", async () => {
    setClock(T0);
    const o = await owner("free");
    await consumeQuota(env, o, "push", 40);
    // Written to D1 by the alarm, not by the request.
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM usage_counters WHERE team_id = ?").bind(o.teamId).first("n")).toBe(0);
    expect(await runDurableObjectAlarm(meterOf(o.teamId))).toBe(true);
    expect(await env.DB.prepare("SELECT used FROM usage_counters WHERE team_id = ? AND service = 'push'").bind(o.teamId).first("used")).toBe(40);
    expect(
      await env.DB.prepare("SELECT day, used FROM usage_daily WHERE team_id = ? AND service = 'push'")
        .bind(o.teamId)
        .all()
        .then((r) => r.results),
    ).toEqual([{ day: "2031-07-15", used: 40 }]);
    await consumeQuota(env, o, "push", 2); // after the last roll-up: what a lost meter forgets
    // The object loses its storage and starts over (as a new instance would).
    await runInDurableObject(meterOf(o.teamId), async (meter, state) => {
      await state.storage.deleteAll();
      (meter as unknown as { createTables(): void }).createTables();
    });
    // The object starts over and seeds the month from D1.
    expect(await consumeQuota(env, o, "push", 1)).toBe(41);
  });

  it("a roll-up that fails keeps the rows dirty and retries; retention never deletes what is not rolled up", async () => {
    setClock(T0);
    const o = await owner("free");
    await consumeQuota(env, o, "mail", 3);
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const batch = vi.spyOn(env.DB, "batch").mockRejectedValue(new Error("D1_ERROR: unavailable"));
    await runInDurableObject(meterOf(o.teamId), async (meter, state) => {
      // Long idle: retention would delete everything, but the rows are not in D1 yet.
      state.storage.sql.exec("UPDATE seen SET at = 0");
      await (meter as RateLimiter).alarm();
    });
    batch.mockRestore();
    expect(errors.mock.calls.some(([line]) => String(line).includes("meter roll-up failed"))).toBe(true);
    expect(await usedOf(o.teamId, "mail")).toBe(3);
  });

  it("D1 failing while a month is seeded: the reservation fails closed, nothing is taken, and the next one seeds", async () => {
    setClock(T0);
    const o = await owner("free");
    const batch = vi.spyOn(env.DB, "batch").mockRejectedValue(new Error("D1_ERROR: unavailable"));
    const outcome = await consumeQuota(env, o, "ai", 2).then(
      () => "taken",
      (error: unknown) => (error instanceof ApiError ? error.code : "failed"),
    );
    batch.mockRestore();
    expect(outcome).toBe("failed");
    // The object was not reset and holds nothing for the month: the next reservation seeds it.
    expect(await consumeQuota(env, o, "ai", 2)).toBe(2);
  });

  it("readUsage: the month per service, its days and the current window in one read", async () => {
    const o = await owner("free");
    setClock(Date.UTC(2031, 6, 3, 9));
    await consumeQuota(env, o, "mail", 5);
    await consumeQuota(env, o, "logs", 0.5);
    setClock(Date.UTC(2031, 6, 4, 9));
    await consumeQuota(env, o, "mail", 2);
    await releaseQuota(env, o.teamId, "mail", 1);
    const usage = await readUsage(env, o.teamId, "free");
    expect(usage.month.period).toBe("2031-07");
    expect(usage.month.start).toBe("2031-07-01T00:00:00.000Z");
    expect(usage.month.services.mail).toEqual({ metric: "emails_sent", used: 6, limit: 3000, remaining: 2994, unlimited: false });
    expect(usage.month.services.ai.used).toBe(0);
    expect(usage.daily).toEqual([
      { day: "2031-07-03", service: "logs", used: 0.5 },
      { day: "2031-07-03", service: "mail", used: 5 },
      { day: "2031-07-04", service: "mail", used: 1 },
    ]);
    expect(usage.window).toEqual({ limit: 600, remaining: 600, reset: Date.UTC(2031, 6, 4, 9, 1) / 1000 });
    expect(usage.live).toBe(true);
    const enterprise = await readUsage(env, o.teamId, "enterprise");
    expect(enterprise.window).toEqual({ limit: null, remaining: null, reset: Date.UTC(2031, 6, 4, 9, 1) / 1000 });
    expect(enterprise.month.services.mail).toEqual({ metric: "emails_sent", used: 6, limit: null, remaining: null, unlimited: true });
  });
});
