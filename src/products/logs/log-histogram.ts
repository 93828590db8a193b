// The histogram of a project's entries over a time range: entries per bucket by level, counted by
// the project's store (store/log-store.ts `histogram`: from its per-minute roll-up, or one grouped
// query over the entries when a text, stream, service or trace filter applies). The bucket is a
// minute for ranges up to MAX_BUCKETS minutes and widens to the next round width beyond, so a
// histogram never has more than MAX_BUCKETS bars whatever range is asked.
import { getDb } from "../../db/client";
import type { Env } from "../../env";
import { LOG_LEVELS, type LogLevel } from "../../db/schema/logs";
import { logStore } from "./logs.store";
import { loadProject, type ProjectRow } from "./logs.service";
import type { EntryFilter } from "./store/log-store.queries";
import { entriesPage, entriesPageSize, storeFilter } from "./log-entries.service";
import type { EntriesQuery } from "./logs.schemas";

const MINUTE_MS = 60_000;
/** Bars of one histogram at most. */
export const MAX_BUCKETS = 120;
/** Bucket widths in minutes, narrowest first: the first that keeps a range within MAX_BUCKETS is taken. */
const WIDTHS_MIN = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1_440, 2_880, 10_080, 20_160, 43_200];

/** How a range is cut: `count` buckets of `width` ms from `start` (a multiple of `width`, at or before the range's start). */
export interface BucketPlan {
  start: number;
  width: number;
  count: number;
}

/** The buckets of [since, until): minutes when they fit, wider round buckets when they would not. */
export function bucketPlan(since: number, until: number): BucketPlan {
  const span = Math.max(until - since, 1);
  const minutes = WIDTHS_MIN.find((w) => Math.ceil(span / (w * MINUTE_MS)) + 1 <= MAX_BUCKETS) ?? Math.ceil(span / MINUTE_MS / (MAX_BUCKETS - 1));
  const width = minutes * MINUTE_MS;
  const start = Math.floor(since / width) * width;
  return { start, width, count: Math.min(Math.ceil((until - start) / width), MAX_BUCKETS) };
}

export interface HistogramBucket {
  /** Start of the bucket (ISO 8601). */
  at: string;
  total: number;
  counts: Record<LogLevel, number>;
}

export interface Histogram {
  /** Bucket width in seconds. */
  bucket_seconds: number;
  buckets: HistogramBucket[];
  total: number;
}

/**
 * The histogram of a project's entries in [since, until) under the entry query's filters (level,
 * stream, service, trace_id, q), after the team's ownership of the project is checked in D1.
 * Every bucket is present, empty ones with zero counts.
 */
export async function entryHistogram(
  env: Env,
  teamId: string,
  projectId: string,
  range: { since: number; until: number },
  filter: Omit<EntryFilter, "since" | "until" | "after"> = {},
): Promise<Histogram> {
  return projectHistogram(env, await loadProject(getDb(env.DB), teamId, projectId), range, filter);
}

/** `entryHistogram` for a project already loaded under the team. */
export async function projectHistogram(
  env: Env,
  project: ProjectRow,
  range: { since: number; until: number },
  filter: Omit<EntryFilter, "since" | "until" | "after"> = {},
): Promise<Histogram> {
  const plan = bucketPlan(range.since, range.until);
  return histogramOf(plan, await logStore(env, project.id).histogram({ ...filter, since: range.since, until: range.until }, plan));
}

/**
 * A page of a project's entries and the histogram of the query's whole range under its filters,
 * in one call to the project's store (the console's log explorer). The query's since and until
 * are required: they are the histogram's range.
 */
export async function projectEntriesWithHistogram(env: Env, project: ProjectRow, query: EntriesQuery & { since: string; until: string }) {
  const plan = bucketPlan(Date.parse(query.since), Date.parse(query.until));
  const found = await logStore(env, project.id).queryWithHistogram(storeFilter(query), entriesPageSize(query), plan);
  return { entries: entriesPage(project.id, query, found), histogram: histogramOf(plan, found.histogram) };
}

/** Every bucket of the plan, empty ones with zero counts, from the store's rows. */
function histogramOf(plan: BucketPlan, rows: { bucket: number; level: string; n: number }[]): Histogram {
  const buckets: HistogramBucket[] = Array.from({ length: plan.count }, (_, i) => ({
    at: new Date(plan.start + i * plan.width).toISOString(),
    total: 0,
    counts: Object.fromEntries(LOG_LEVELS.map((level) => [level, 0])) as Record<LogLevel, number>,
  }));
  let total = 0;
  for (const row of rows) {
    const bucket = buckets[row.bucket];
    if (!bucket || !(row.level in bucket.counts)) continue;
    bucket.counts[row.level as LogLevel] += row.n;
    bucket.total += row.n;
    total += row.n;
  }
  return { bucket_seconds: plan.width / 1000, buckets, total };
}
