// The query API (a subset of Plausible's Stats API v2) and realtime, answered from the site's store:
// the date range resolved to whole UTC hours, the filters mapped to stored values ("Direct / None"
// is the empty source), Plausible's default order (time ascending when a time dimension is asked,
// else the first metric descending), then the rollup's rows. No Hono context here.
import type { Env } from "../../env";
import { nowMs } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { analyticsStore } from "./analytics.store";
import { DIRECT_SOURCE, type Dimension, type Metric, type Query } from "./analytics.schemas";
import { loadSite } from "./analytics-sites.service";
import type { StoreQuery } from "./store/analytics-store.queries";

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** The longest `[from, to]` range answered. */
export const MAX_RANGE_DAYS = 400;
/** Realtime: visitors with an event in the last 5 minutes (Plausible's). */
export const REALTIME_MS = 5 * 60_000;

/** A UTC day's start (ms) from `YYYY-MM-DD`, or null when it is no real date. */
function dayStart(date: string): number | null {
  const ms = Date.parse(`${date}T00:00:00Z`);
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== date ? null : ms;
}

/** The instants a date range covers: from included, to excluded (whole UTC days; ranges and days are UTC). */
export function resolveRange(range: Query["date_range"], now: number): { from: number; to: number } {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const tomorrow = today + DAY_MS;
  if (range === "day") return { from: today, to: tomorrow };
  if (range === "7d") return { from: today - 6 * DAY_MS, to: tomorrow };
  if (range === "30d") return { from: today - 29 * DAY_MS, to: tomorrow };
  if (range === "month") {
    const d = new Date(now);
    return { from: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), to: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
  }
  const [from, to] = range.map(dayStart);
  if (from === null || to === null) throw ApiError.validation({ date_range: ["must be real dates"] });
  if (to < from) throw ApiError.validation({ date_range: ["the end must not be before the start"] });
  if (to - from >= MAX_RANGE_DAYS * DAY_MS) throw ApiError.validation({ date_range: [`may span at most ${MAX_RANGE_DAYS} days`] });
  return { from, to: to + DAY_MS };
}

/** What a stored value is shown as, per dimension. */
function shown(dimension: Dimension, value: string | null): string | null {
  if (dimension === "visit:source") return value === "" || value === null ? DIRECT_SOURCE : value;
  if (dimension === "visit:country") return value === "" ? null : value;
  return value;
}

/** What a filter value is stored as, per dimension. */
function stored(dimension: Dimension, value: string): string {
  return dimension === "visit:source" && value === DIRECT_SOURCE ? "" : value;
}

export async function runQuery(env: Env, teamId: string, q: Query) {
  const site = await loadSite(env, teamId, q.site_id);
  if (new Set(q.dimensions).size !== q.dimensions.length) throw ApiError.validation({ dimensions: ["must not repeat a dimension"] });
  if (new Set(q.metrics).size !== q.metrics.length) throw ApiError.validation({ metrics: ["must not repeat a metric"] });
  const orderBy: StoreQuery["orderBy"] = q.order_by ?? defaultOrder(q.metrics, q.dimensions);
  for (const [key] of orderBy) {
    if (!(q.metrics as string[]).includes(key) && !(q.dimensions as string[]).includes(key)) {
      throw ApiError.validation({ order_by: [`${key} is neither a metric nor a dimension of the query`] });
    }
  }
  const { from, to } = resolveRange(q.date_range, nowMs());
  const rows = await analyticsStore(env, site.id).query({
    fromHour: Math.floor(from / HOUR_MS),
    toHour: Math.ceil(to / HOUR_MS),
    metrics: q.metrics,
    dimensions: q.dimensions,
    filters: q.filters.map(([op, dimension, values]) => [op, dimension, values.map((v) => stored(dimension, v))]),
    orderBy,
    limit: q.limit,
  });
  // No dimension: one row of totals, as Plausible answers (zeros over an empty range).
  const results = rows.map((row) => ({ dimensions: row.dimensions.map((value, i) => shown(q.dimensions[i], value)), metrics: row.metrics }));
  return {
    results,
    meta: {
      site_id: site.id,
      date_range: [new Date(from).toISOString(), new Date(to).toISOString()] as [string, string],
      metrics: q.metrics,
      dimensions: q.dimensions,
      total_rows: results.length,
    },
  };
}

function defaultOrder(metrics: Metric[], dimensions: Dimension[]): StoreQuery["orderBy"] {
  const time = dimensions.find((d) => d === "time:hour" || d === "time:day");
  if (time) return [[time, "asc"]];
  return dimensions.length > 0 ? [[metrics[0], "desc"]] : [];
}

/** Distinct visitors of the team's site in the last 5 minutes. */
export async function realtimeVisitors(env: Env, teamId: string, siteId: string) {
  const site = await loadSite(env, teamId, siteId);
  const since = nowMs() - REALTIME_MS;
  return { visitors: await analyticsStore(env, site.id).realtime(since), since: new Date(since).toISOString() };
}
