// Analytics query (issue 41): a 30-day query over 1,000,000 events of one site against a 1-day
// query over 10,000 events of another, both through POST /api/v1/analytics/query, sequential
// requests (one at a time, DURATION seconds per side and round, alternating). Goal: within 1.5×
// (the month reads its tallies, a row per day and value, not its events). The events are written
// through the bench Worker's operator-only seeding hook, which calls the site store's own append
// (what the ingest's batch calls) with times spread over past days: the public ingest would take
// hours. Every answer checked against the seeded series: visitors, pageviews and events in total
// and per page. A third row times a filtered 30-day query, which reads the visitor rollup (each
// visitor's hours) instead of the tallies, for comparison (no goal).
import { api, sequential } from "../lib.mjs";

const MONTH_EVENTS = Number(process.env.ANALYTICS_MONTH_EVENTS ?? 1_000_000);
const DAY_EVENTS = Number(process.env.ANALYTICS_DAY_EVENTS ?? 10_000);
/** Events per seeding call (the hook appends them 5,000 at a time). */
const SEED_CALL = 100_000;

/**
 * The seeded series (bench/worker.ts, seededEvent): visits of 3 events, one visitor each; event i
 * on pages[i % 200] named names[i % 10] (one custom event in ten); visit v from sources[v % 4] and
 * countries[v % 5], on the day v % days before today.
 */
const SERIES = {
  per_visit: 3,
  pages: Array.from({ length: 200 }, (_, k) => `/docs/page-${k}`),
  names: [...Array(9).fill("pageview"), "Signup"],
  sources: ["", "Google", "Hacker News", "GitHub"],
  countries: ["US", "DE", "", "FR", "JP"],
};

/** What the query API must answer for `count` events of the series: totals and per page. */
function expected(count) {
  const pages = new Map();
  let pageviews = 0;
  for (let i = 0; i < count; i++) {
    const v = Math.floor(i / SERIES.per_visit);
    const page = SERIES.pages[i % SERIES.pages.length];
    const pageview = SERIES.names[i % SERIES.names.length] === "pageview" ? 1 : 0;
    pageviews += pageview;
    const row = pages.get(page) ?? { lastVisit: -1, visitors: 0, pageviews: 0, events: 0 };
    // Events come in visit order, so a page's visitors are the visits it changes to.
    if (row.lastVisit !== v) row.visitors++;
    row.lastVisit = v;
    row.pageviews += pageview;
    row.events++;
    pages.set(page, row);
  }
  return { totals: [Math.ceil(count / SERIES.per_visit), pageviews, count], pages };
}

export default {
  name: "analytics-query",
  async run({ url, adminToken, createTeamWithKey, median, rounds, duration }) {
    const { key } = await createTeamWithKey({ plan: "scale", scopes: ["analytics:write"] });
    const month = await api(url, "POST", "analytics/sites", key, { domain: "month.example" });
    const day = await api(url, "POST", "analytics/sites", key, { domain: "day.example" });

    const seed = async (site, count, days) => {
      for (let from = 0; from < count; from += SEED_CALL) {
        const res = await fetch(`${url}/__bench/seed/analytics`, {
          method: "POST",
          headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
          body: JSON.stringify({ site_id: site.id, from, count: Math.min(SEED_CALL, count - from), days, ...SERIES }),
        });
        if (res.status !== 201) throw new Error(`seeding answered ${res.status}: ${await res.text()}`);
      }
    };
    const seeding = performance.now();
    await seed(month, MONTH_EVENTS, 30);
    await seed(day, DAY_EVENTS, 1);
    console.error(`analytics-query: seeded ${MONTH_EVENTS + DAY_EVENTS} events in ${((performance.now() - seeding) / 1000).toFixed(0)} s`);

    const queries = {
      totals: (site, range) => ({ site_id: site.id, metrics: ["visitors", "pageviews", "events"], date_range: range }),
      pages: (site, range) => ({ site_id: site.id, metrics: ["visitors", "pageviews", "events"], date_range: range, dimensions: ["event:page"] }),
      // A filter needs each visitor's rows: the rollup, not the tallies (the comparison row).
      filtered: (site, range) => ({
        site_id: site.id,
        metrics: ["visitors", "pageviews", "events"],
        date_range: range,
        filters: [["is_not", "event:page", ["/nowhere"]]],
      }),
    };

    // The answers equal the seeded series, on both sites and both ways of reading.
    for (const [site, count, range] of [
      [month, MONTH_EVENTS, "30d"],
      [day, DAY_EVENTS, "day"],
    ]) {
      const want = expected(count);
      for (const kind of ["totals", "filtered"]) {
        const got = (await api(url, "POST", "analytics/query", key, queries[kind](site, range))).results;
        if (JSON.stringify(got) !== JSON.stringify([{ dimensions: [], metrics: want.totals }]))
          throw new Error(`${kind} over ${count} events: ${JSON.stringify(got)}, seeded ${JSON.stringify(want.totals)}`);
      }
      const rows = (await api(url, "POST", "analytics/query", key, queries.pages(site, range))).results;
      if (rows.length !== want.pages.size) throw new Error(`${rows.length} pages over ${count} events, seeded ${want.pages.size}`);
      for (const { dimensions, metrics } of rows) {
        const w = want.pages.get(dimensions[0]);
        if (!w || JSON.stringify(metrics) !== JSON.stringify([w.visitors, w.pageviews, w.events]))
          throw new Error(`page ${dimensions[0]} over ${count} events: ${JSON.stringify(metrics)}, seeded ${JSON.stringify(w)}`);
      }
    }

    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const time = (body) => sequential(`${url}/api/v1/analytics/query`, { method: "POST", headers, body: JSON.stringify(body), seconds: duration });
    const runs = { totalsMonth: [], totalsDay: [], pagesMonth: [], pagesDay: [], filteredMonth: [] };
    for (let i = 0; i < rounds; i++) {
      runs.totalsDay.push(median(await time(queries.totals(day, "day"))));
      runs.totalsMonth.push(median(await time(queries.totals(month, "30d"))));
      runs.pagesDay.push(median(await time(queries.pages(day, "day"))));
      runs.pagesMonth.push(median(await time(queries.pages(month, "30d"))));
      runs.filteredMonth.push(median(await time(queries.filtered(month, "30d"))));
    }
    const ms = (name) => median(runs[name]);
    const events = (n) => n.toLocaleString("en-US");
    const rounded = (month, day) => runs[month].map((m, i) => (m / runs[day][i]).toFixed(2)).join(", ");
    return [
      {
        figure: `analytics query, visitors + pageviews + events, 30 days over ${events(MONTH_EVENTS)} events, median ms`,
        value: ms("totalsMonth").toFixed(1),
        baseline: `${ms("totalsDay").toFixed(1)} (1 day over ${events(DAY_EVENTS)})`,
        ratio: `${(ms("totalsMonth") / ms("totalsDay")).toFixed(2)}×`,
        goal: "≤ 1.5×",
        note: `rounds: ${rounded("totalsMonth", "totalsDay")}; sequential; totals equal the seeded series`,
      },
      {
        figure: `analytics query by event:page (200 pages), 30 days over ${events(MONTH_EVENTS)} events, median ms`,
        value: ms("pagesMonth").toFixed(1),
        baseline: `${ms("pagesDay").toFixed(1)} (1 day over ${events(DAY_EVENTS)})`,
        ratio: `${(ms("pagesMonth") / ms("pagesDay")).toFixed(2)}×`,
        goal: "≤ 1.5×",
        note: `rounds: ${rounded("pagesMonth", "pagesDay")}; every page's counts equal the seeded series`,
      },
      {
        figure: `analytics query with a filter (the visitor rollup), 30 days over ${events(MONTH_EVENTS)} events, median ms`,
        value: ms("filteredMonth").toFixed(1),
        baseline: `${ms("totalsDay").toFixed(1)} (1 day over ${events(DAY_EVENTS)}, tallies)`,
        ratio: `${(ms("filteredMonth") / ms("totalsDay")).toFixed(2)}×`,
        note: "for comparison: a filter or two dimensions read each visitor's hours, not the tallies",
      },
    ];
  },
};
