// The analytics store's two ways of answering a query: the tallies (a row per day and value, or
// per hour, with exact visitors counted once as they are first seen) and the visitor rollup (each
// visitor's hours). Random traffic written through the store's own append; every query the
// tallies can answer gives the same rows both ways, visitors counted once per day across batches
// and hours, and the tallies are what those queries read (their plan names no `hourly`).
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { analyticsStore } from "../../../src/products/analytics/analytics.store";
import type { Dimension, Metric } from "../../../src/products/analytics/analytics.schemas";
import type { AnalyticsStore, StoredEvent } from "../../../src/products/analytics/store/analytics-store";
import { rollupQuerySql, tallyOf, type StoreQuery } from "../../../src/products/analytics/store/analytics-store.queries";
import migrations from "../../../src/products/analytics/store/migrations/migrations.js";

const H = 3_600_000;
const DAY = 24 * H;
/** 2031-03-01 00:00 UTC. */
const DAY0 = Date.UTC(2031, 2, 1);

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Five days of visits: 1-6 events each within one day, from 300 visitors a day (a visitor's hash is its day's). */
function traffic(seed: number, count: number): StoredEvent[] {
  const rand = random(seed);
  const pick = <T>(list: T[]) => list[Math.floor(rand() * list.length)]!;
  const events: StoredEvent[] = [];
  while (events.length < count) {
    const day = Math.floor(rand() * 5);
    const visitor = `${day}-${Math.floor(rand() * 300)}`.padStart(16, "0");
    let ts = DAY0 + day * DAY + Math.floor(rand() * (DAY - 5 * H));
    const source = pick(["", "Google", "Hacker News"]);
    const country = pick(["", "DE", "US"]);
    for (let k = Math.floor(rand() * 6); k >= 0 && events.length < count; k--) {
      events.push({
        ts,
        name: pick(["pageview", "pageview", "pageview", "Signup"]),
        page: pick(["/", "/a", "/b", "/c"]),
        visitor,
        source,
        country,
        props: null,
      });
      ts += Math.floor(rand() * 40 * 60_000);
    }
  }
  return events.sort((a, b) => a.ts - b.ts);
}

const hours = (fromDay: number, toDay: number) => ({ fromHour: DAY0 / H + fromDay * 24, toHour: DAY0 / H + toDay * 24 });

function q(dimensions: Dimension[], range = hours(0, 5), metrics: Metric[] = ["visitors", "pageviews", "events"]): StoreQuery {
  return { ...range, metrics, dimensions, filters: [], orderBy: dimensions.length ? [[metrics[0]!, "desc"]] : [], limit: 10_000 };
}

const TALLIED: StoreQuery[] = [
  q([]),
  q([], hours(1, 2)),
  q([], hours(2, 9)),
  q(["event:page"]),
  q(["event:name"], hours(0, 1)),
  q(["visit:source"]),
  q(["visit:country"], hours(3, 5)),
  q(["time:day"]),
  q(["time:day", "event:page"]),
  q(["visit:source", "time:day"], hours(1, 3)),
  q(["time:hour"], hours(0, 2)),
  q(["time:hour", "time:day"], hours(4, 5)),
  q(["event:page"], hours(0, 5), ["visitors"]),
];

describe("tallies", () => {
  it("answer every query they can exactly as the visitor rollup does, across batches", async () => {
    const siteId = crypto.randomUUID();
    const stub = analyticsStore(env, siteId);
    const events = traffic(41, 3_000);
    // Batches of uneven sizes, as isolates write them: a visitor's events fall in several.
    for (let from = 0, size = 7; from < events.length; from += size, size = (size * 5) % 701) await stub.append(events.slice(from, from + size));
    for (const query of TALLIED) {
      expect(tallyOf(query), JSON.stringify(query.dimensions)).not.toBeNull();
      const tallied = await stub.query(query);
      expect(tallied.length, JSON.stringify(query.dimensions)).toBeGreaterThan(0);
      expect(tallied, JSON.stringify(query)).toEqual(await stub.query(query, "rollup"));
    }
    // The day totals are the seeded ones: events, pageviews, and distinct visitors per day summed.
    const [totals] = await stub.query(q([]));
    const visitorsPerDay = new Set(events.map((e) => `${Math.floor(e.ts / DAY)} ${e.visitor}`)).size;
    expect(totals!.metrics).toEqual([visitorsPerDay, events.filter((e) => e.name === "pageview").length, events.length]);
  });

  it("leave filters and pairs of dimensions to the rollup, and read no rollup otherwise", async () => {
    expect(tallyOf({ ...q([]), filters: [["is", "event:page", ["/"]]] })).toBeNull();
    expect(tallyOf(q(["event:page", "visit:source"]))).toBeNull();
    expect(tallyOf(q(["time:hour", "event:page"]))).toBeNull();
    expect(tallyOf(q(["event:page"], { fromHour: DAY0 / H + 3, toHour: DAY0 / H + 24 }))).toBeNull();
    for (const query of TALLIED) expect(rollupQuerySql(query).sql).not.toContain("hourly");
    expect(rollupQuerySql(q(["event:page", "visit:source"])).sql).toContain("FROM hourly");
  });

  it("count a visitor once per row however many events and batches it has", async () => {
    const siteId = crypto.randomUUID();
    const stub = analyticsStore(env, siteId);
    const ev = (ts: number, page: string, name = "pageview"): StoredEvent => ({
      ts,
      name,
      page,
      visitor: "00000000000000aa",
      source: "",
      country: "DE",
      props: null,
    });
    await stub.append([ev(DAY0 + H, "/"), ev(DAY0 + H + 60_000, "/"), ev(DAY0 + 2 * H, "/x", "Signup")]);
    await stub.append([ev(DAY0 + 3 * H, "/")]);
    expect(await stub.query(q([], hours(0, 1)))).toEqual([{ dimensions: [], metrics: [1, 3, 4] }]);
    expect(await stub.query(q(["event:page"], hours(0, 1)))).toEqual([
      { dimensions: ["/"], metrics: [1, 3, 3] },
      { dimensions: ["/x"], metrics: [1, 0, 1] },
    ]);
    expect(await stub.query(q(["time:hour"], hours(0, 1)))).toEqual([
      { dimensions: ["2031-03-01 01:00:00"], metrics: [1, 2, 2] },
      { dimensions: ["2031-03-01 02:00:00"], metrics: [1, 0, 1] },
      { dimensions: ["2031-03-01 03:00:00"], metrics: [1, 1, 1] },
    ]);
    const held = await stub.dump();
    // Seven rows of the visitor for its day (all, two pages, two names, the source, the country) and three hours.
    expect(held.tally_visitors).toHaveLength(10);
    // The retention: the counted visitors go after two days, the tallies after 400; both in bounded steps.
    await runInDurableObject(stub, (store) => (store as AnalyticsStore).trim(DAY0 + 3 * DAY));
    const trimmed = await stub.dump();
    expect(trimmed.tally_visitors).toHaveLength(0);
    expect(trimmed.tallies.length).toBeGreaterThan(0);
    expect(await stub.query(q([], hours(0, 1)))).toEqual([{ dimensions: [], metrics: [1, 3, 4] }]);
    await runInDurableObject(stub, (store) => (store as AnalyticsStore).trim(DAY0 + 401 * DAY));
    expect((await stub.dump()).tallies).toHaveLength(0);
  });

  it("skip what the instance knows stored: a known visitor's next event reads no visit and inserts no tally row; after a trim they are looked up again, counts exact", async () => {
    const stub = analyticsStore(env, crypto.randomUUID());
    const ev = (ts: number, page: string): StoredEvent => ({
      ts,
      name: "pageview",
      page,
      visitor: "00000000000000bb",
      source: "Google",
      country: "DE",
      props: null,
    });
    await stub.append([ev(DAY0 + H, "/")]);
    await runInDurableObject(stub, async (object, state) => {
      const store = object as AnalyticsStore;
      const exec = vi.spyOn(state.storage.sql, "exec");
      const looked = () => exec.mock.calls.map(([query]) => query).filter((query) => query.includes("FROM sessions") || query.includes("tally_visitors"));
      await store.append([ev(DAY0 + H + 60_000, "/")]);
      expect(looked()).toEqual([]);
      // A new page is a new row: only it is inserted.
      await store.append([ev(DAY0 + H + 120_000, "/new")]);
      expect(looked()).toHaveLength(1);
      expect(exec.mock.calls.find(([query]) => query.includes("tally_visitors"))![0]).toMatch(/VALUES \(\?, \?, \?, \?\) ON CONFLICT/);
      // The trim forgets the copies (nothing of this day is past its retention yet): the next event looks up again.
      store.trim(DAY0 + 2 * H);
      exec.mockClear();
      await store.append([ev(DAY0 + H + 180_000, "/")]);
      expect(looked()).toHaveLength(2);
      exec.mockRestore();
    });
    // One visitor, one visit (its first source kept), four pageviews.
    expect(await stub.query(q([], hours(0, 1)))).toEqual([{ dimensions: [], metrics: [1, 4, 4] }]);
    expect(await stub.query(q(["visit:source"], hours(0, 1)))).toEqual([{ dimensions: ["Google"], metrics: [1, 4, 4] }]);
    expect(await stub.query(q(["event:page"], hours(0, 1)))).toEqual([
      { dimensions: ["/"], metrics: [1, 3, 3] },
      { dimensions: ["/new"], metrics: [1, 1, 1] },
    ]);
  });

  it("are made by the migration from the rollup of a store that held events before them", async () => {
    const stub = analyticsStore(env, crypto.randomUUID());
    await stub.append(traffic(7, 800));
    const before = await Promise.all(TALLIED.map((query) => stub.query(query)));
    // The migration's own statements, run again over the same rollup once the tallies are emptied.
    const backfill = (migrations.migrations as Record<string, string>)
      .m0001!.split("--> statement-breakpoint")
      .map((statement) => statement.replace(/^\s*--.*$/gm, "").trim())
      .filter((statement) => statement.startsWith("INSERT"));
    expect(backfill).toHaveLength(12);
    await runInDurableObject(stub, (_store, state) => {
      state.storage.sql.exec("DELETE FROM tallies");
      state.storage.sql.exec("DELETE FROM tally_visitors");
      for (const statement of backfill) state.storage.sql.exec(statement);
    });
    expect(await Promise.all(TALLIED.map((query) => stub.query(query)))).toEqual(before);
  });
});
