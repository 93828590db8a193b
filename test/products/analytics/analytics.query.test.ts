// POST /api/v1/analytics/query (the Stats API v2 subset), realtime, and the store's rollup and
// retention: visitors stay distinct across hours, every dimension, filter, order and date range,
// answers from the rollup after the raw events are gone, and the errors.
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { call, expectError, json, setupTeam } from "../../helpers/api";
import { setClock } from "../../../src/platform/clock";
import { analyticsStore } from "../../../src/products/analytics/analytics.store";
import type { AnalyticsStore } from "../../../src/products/analytics/store/analytics-store";
import { FIREFOX_UA, createSite, dump, query, sendEvent, settle } from "./analytics.helpers";

afterEach(() => setClock(null));

const H = 3_600_000;
const DAY = 24 * H;
/** 2031-01-15 00:00 UTC. */
const T = Date.UTC(2031, 0, 15);

async function at(ms: number, body: Record<string, unknown>, options: { ip?: string; ua?: string } = {}) {
  setClock(ms);
  const res = await sendEvent(body, options);
  expect(res.status).toBe(202);
  expect(res.headers.get("x-analytics-dropped")).toBeNull();
}

/** A site with a known day of traffic (2031-01-15) and one event on each side of it. */
async function seeded() {
  const team = await setupTeam();
  const site = await createSite(team.key);
  const ev = (n: string, path: string, extra: Record<string, unknown> = {}) => ({ n, u: `https://example.com${path}`, d: site.id, ...extra });
  const alice = { ip: "198.51.100.1" };
  const bob = { ip: "198.51.100.2", ua: FIREFOX_UA };
  const carol = { ip: "198.51.100.3" };
  await at(T - 2 * H, ev("pageview", "/old"), alice);
  // Alice: 10:05 from Google, back at 11:50 (a new visit, direct) on another page; a signup.
  await at(T + 10 * H + 5 * 60_000, ev("pageview", "/", { r: "https://www.google.com/" }), alice);
  await at(T + 10 * H + 6 * 60_000, ev("Signup", "/", { p: { plan: "pro" } }), alice);
  await at(T + 11 * H + 50 * 60_000, ev("pageview", "/pricing"), alice);
  // Bob: 11:10 from Hacker News, two pages.
  await at(T + 11 * H + 10 * 60_000, ev("pageview", "/", { r: "https://news.ycombinator.com/item?id=1" }), bob);
  await at(T + 11 * H + 12 * 60_000, ev("pageview", "/docs/start"), bob);
  // Carol: 23:59, direct.
  await at(T + 23 * H + 59 * 60_000, ev("pageview", "/docs/api"), carol);
  await at(T + DAY + H, ev("pageview", "/tomorrow"), carol);
  await settle();
  return { team, site };
}

const DAY_RANGE = ["2031-01-15", "2031-01-15"];

describe("query", () => {
  it("answers totals, and keeps visitors distinct across hours", async () => {
    const { team, site } = await seeded();
    const totals = await query(team.key, { site_id: site.id, metrics: ["visitors", "pageviews", "events"], date_range: DAY_RANGE });
    expect(totals.results).toEqual([{ dimensions: [], metrics: [3, 5, 6] }]);
    expect(totals.meta).toMatchObject({ site_id: site.id, date_range: ["2031-01-15T00:00:00.000Z", "2031-01-16T00:00:00.000Z"], total_rows: 1 });
    const hours = await query(team.key, { site_id: site.id, metrics: ["visitors", "pageviews"], date_range: DAY_RANGE, dimensions: ["time:hour"] });
    expect(hours.results).toEqual([
      { dimensions: ["2031-01-15 10:00:00"], metrics: [1, 1] },
      { dimensions: ["2031-01-15 11:00:00"], metrics: [2, 3] },
      { dimensions: ["2031-01-15 23:00:00"], metrics: [1, 1] },
    ]);
    // Two days: the hours' visitors add up to 4, the range's distinct visitors are 3 + 1.
    const days = await query(team.key, { site_id: site.id, metrics: ["visitors"], date_range: ["2031-01-14", "2031-01-16"], dimensions: ["time:day"] });
    expect(days.results).toEqual([
      { dimensions: ["2031-01-14"], metrics: [1] },
      { dimensions: ["2031-01-15"], metrics: [3] },
      { dimensions: ["2031-01-16"], metrics: [1] },
    ]);
  });

  it("breaks down by page, name, source and country, ordered by the first metric by default", async () => {
    const { team, site } = await seeded();
    const pages = await query(team.key, { site_id: site.id, metrics: ["pageviews", "visitors"], date_range: DAY_RANGE, dimensions: ["event:page"] });
    expect(pages.results).toEqual([
      { dimensions: ["/"], metrics: [2, 2] },
      { dimensions: ["/docs/api"], metrics: [1, 1] },
      { dimensions: ["/docs/start"], metrics: [1, 1] },
      { dimensions: ["/pricing"], metrics: [1, 1] },
    ]);
    const names = await query(team.key, { site_id: site.id, metrics: ["events"], date_range: DAY_RANGE, dimensions: ["event:name"] });
    expect(names.results).toEqual([
      { dimensions: ["pageview"], metrics: [5] },
      { dimensions: ["Signup"], metrics: [1] },
    ]);
    const sources = await query(team.key, { site_id: site.id, metrics: ["visitors", "events"], date_range: DAY_RANGE, dimensions: ["visit:source"] });
    // Bob's second page keeps his visit's source; Alice's 11:50 visit is a new, direct one.
    expect(sources.results).toEqual([
      { dimensions: ["Direct / None"], metrics: [2, 2] },
      { dimensions: ["Google"], metrics: [1, 2] },
      { dimensions: ["Hacker News"], metrics: [1, 2] },
    ]);
    const countries = await query(team.key, { site_id: site.id, metrics: ["visitors"], date_range: DAY_RANGE, dimensions: ["visit:country"] });
    expect(countries.results).toEqual([{ dimensions: [null], metrics: [3] }]);
    const two = await query(team.key, {
      site_id: site.id,
      metrics: ["events"],
      date_range: DAY_RANGE,
      dimensions: ["visit:source", "event:name"],
      order_by: [["visit:source", "desc"]],
      limit: 2,
    });
    expect(two.results).toEqual([
      { dimensions: ["Hacker News", "pageview"], metrics: [2] },
      { dimensions: ["Google", "Signup"], metrics: [1] },
    ]);
  });

  it("filters with is, is_not and contains (Direct / None included)", async () => {
    const { team, site } = await seeded();
    const q = (filters: unknown[]) => query(team.key, { site_id: site.id, metrics: ["visitors", "pageviews"], date_range: DAY_RANGE, filters });
    expect((await q([["is", "event:page", ["/", "/pricing"]]])).results).toEqual([{ dimensions: [], metrics: [2, 3] }]);
    expect((await q([["is_not", "event:page", ["/"]]])).results).toEqual([{ dimensions: [], metrics: [3, 3] }]);
    expect((await q([["contains", "event:page", ["/docs"]]])).results).toEqual([{ dimensions: [], metrics: [2, 2] }]);
    expect((await q([["is", "visit:source", ["Direct / None"]]])).results).toEqual([{ dimensions: [], metrics: [2, 2] }]);
    expect(
      (
        await q([
          ["is", "event:name", ["Signup"]],
          ["is", "visit:source", ["Google"]],
        ])
      ).results,
    ).toEqual([{ dimensions: [], metrics: [1, 0] }]);
    // contains is case-sensitive, and a long value is no LIKE pattern.
    expect((await q([["contains", "event:page", ["/DOCS", "x".repeat(500)]]])).results).toEqual([{ dimensions: [], metrics: [0, 0] }]);
  });

  it("resolves day, 7d, 30d and month in UTC days, today included", async () => {
    const { team, site } = await seeded();
    const count = async (date_range: unknown) => (await query(team.key, { site_id: site.id, metrics: ["pageviews"], date_range })).results[0].metrics[0];
    setClock(T + 12 * H);
    expect(await count("day")).toBe(5);
    setClock(T + DAY + 12 * H);
    expect(await count("day")).toBe(1);
    expect(await count("7d")).toBe(7);
    setClock(T + 8 * DAY);
    expect(await count("7d")).toBe(0);
    expect(await count("30d")).toBe(7);
    expect(await count("month")).toBe(7);
    setClock(Date.UTC(2031, 1, 1, 1));
    expect(await count("month")).toBe(0);
  });

  it("answers from the rollup once the raw events are past their retention", async () => {
    const { team, site } = await seeded();
    const before = await query(team.key, { site_id: site.id, metrics: ["visitors", "pageviews"], date_range: DAY_RANGE, dimensions: ["event:page"] });
    await runInDurableObject(analyticsStore(env, site.id), (store) => (store as AnalyticsStore).trim(T + 40 * DAY));
    const held = await dump(site.id);
    expect(held.events).toHaveLength(0);
    expect(held.sessions).toHaveLength(0);
    expect(held.hourly.length).toBeGreaterThan(0);
    expect(await query(team.key, { site_id: site.id, metrics: ["visitors", "pageviews"], date_range: DAY_RANGE, dimensions: ["event:page"] })).toEqual(before);
    // Past the rollup's retention the hours go too; the store's alarm is set.
    await runInDurableObject(analyticsStore(env, site.id), (store) => (store as AnalyticsStore).trim(T + 500 * DAY));
    expect((await dump(site.id)).hourly).toHaveLength(0);
    expect(await runInDurableObject(analyticsStore(env, site.id), (_s, state) => state.storage.getAlarm())).not.toBeNull();
  });

  it("answers 422 for bad queries in the product's shape", async () => {
    const team = await setupTeam();
    const site = await createSite(team.key);
    const bad = async (body: Record<string, unknown>, field: string) => {
      const res = await call("POST", "analytics/query", { key: team.key, body: { site_id: site.id, metrics: ["visitors"], date_range: "day", ...body } });
      expect(res.status, JSON.stringify(body)).toBe(422);
      const answer = await json(res);
      expect(answer.error).toBe("Validation failed");
      expect(
        Object.keys(answer.details).some((key) => key.startsWith(field)),
        JSON.stringify(answer),
      ).toBe(true);
    };
    await bad({ metrics: ["bounce_rate"] }, "metrics");
    await bad({ metrics: [] }, "metrics");
    await bad({ date_range: "12mo" }, "date_range");
    await bad({ date_range: ["2031-02-30", "2031-03-01"] }, "date_range");
    await bad({ date_range: ["2031-03-02", "2031-03-01"] }, "date_range");
    await bad({ date_range: ["2020-01-01", "2031-03-01"] }, "date_range");
    await bad({ dimensions: ["visit:browser"] }, "dimensions");
    await bad({ dimensions: ["event:page", "event:page"] }, "dimensions");
    await bad({ filters: [["matches", "event:page", ["/"]]] }, "filters");
    await bad({ filters: [["is", "time:day", ["2031-01-01"]]] }, "filters");
    await bad({ order_by: [["pageviews", "desc"]] }, "order_by");
    await bad({ limit: 0 }, "limit");
    await bad({ unknown: 1 }, "unknown");
    await expectError(
      await call("POST", "analytics/query", { key: team.key, body: { site_id: crypto.randomUUID(), metrics: ["visitors"], date_range: "day" } }),
      404,
      {
        error: "Site not found",
      },
    );
  });
});

describe("realtime", () => {
  it("counts distinct visitors of the last 5 minutes", async () => {
    const team = await setupTeam();
    const site = await createSite(team.key);
    const now = Date.UTC(2031, 3, 1, 12);
    const ev = (path: string) => ({ n: "pageview", u: `https://example.com${path}`, d: site.id });
    await at(now - 10 * 60_000, ev("/a"), { ip: "198.51.100.20" });
    await at(now - 4 * 60_000, ev("/b"), { ip: "198.51.100.21" });
    await at(now - 60_000, ev("/c"), { ip: "198.51.100.21" });
    await at(now - 30_000, ev("/d"), { ip: "198.51.100.22" });
    await settle();
    setClock(now);
    const res = await call("GET", `analytics/sites/${site.id}/realtime`, { key: team.key });
    expect(res.status).toBe(200);
    expect((await json(res)).data).toEqual({ visitors: 2, since: new Date(now - 5 * 60_000).toISOString() });
  });
});
