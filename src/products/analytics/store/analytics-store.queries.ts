// The SQL of an analytics query, built from a validated query: raw SQL because its SELECT list,
// GROUP BY and ORDER BY follow the caller's dimensions and metrics, and COUNT(DISTINCT …) with a
// CASE sum reads more plainly here than through Drizzle's builder. A query without filters and with
// at most one of page, name, source and country (and time by day, or time by hour alone) reads the
// tallies (a row per day and value, or per hour): a month is 30 rows per value whatever the number
// of events. Any other reads the hourly rollup, which keeps each visitor, so `visitors` stays exact
// under every filter and combination. Both count a visitor once per UTC day (its hash changes
// every day, so that is what the hash can tell anyway): a range's visitors are the sum of its days'.
// Every column and direction comes from the closed maps below, never from the caller's text;
// values are bound parameters. `contains` uses instr(), not LIKE: a Durable Object's SQLite refuses
// LIKE patterns over 50 bytes (docs: PLATFORM-NOTES), and instr() has no wildcards to escape.
import type { Dimension, FilterDimension, Metric } from "../analytics.schemas";

export interface StoreQuery {
  /** Unix hours, from included, to excluded. */
  fromHour: number;
  toHour: number;
  metrics: Metric[];
  dimensions: Dimension[];
  /** Filters on stored values (the Direct / None source is the empty string here). */
  filters: Array<[op: "is" | "is_not" | "contains", dimension: FilterDimension, values: string[]]>;
  orderBy: Array<[Metric | Dimension, "asc" | "desc"]>;
  limit: number;
}

/** How each query reads one table: its dimensions and metrics as SQL, and its range condition. */
interface Source {
  table: string;
  dimension: Record<Dimension, string>;
  metric: Record<Metric, string>;
  /** The range's condition, with the dim's bind first where the table has one. */
  where: string[];
}

const ROLLUP: Source = {
  table: "hourly",
  dimension: {
    "event:page": "page",
    "event:name": "name",
    "visit:source": "source",
    "visit:country": "country",
    "time:hour": "strftime('%Y-%m-%d %H:00:00', hour * 3600, 'unixepoch')",
    "time:day": "date(hour * 3600, 'unixepoch')",
  },
  metric: {
    // Once per UTC day, as the tallies count (a visitor's hash is a day's).
    visitors: "COUNT(DISTINCT (hour / 24) || ' ' || visitor)",
    pageviews: "COALESCE(SUM(CASE WHEN name = 'pageview' THEN events ELSE 0 END), 0)",
    events: "COALESCE(SUM(events), 0)",
  },
  where: ["hour >= ?", "hour < ?"],
};

const TALLY: Source = {
  table: "tallies",
  dimension: {
    "event:page": "value",
    "event:name": "value",
    "visit:source": "value",
    "visit:country": "value",
    "time:hour": "strftime('%Y-%m-%d %H:00:00', bucket * 3600, 'unixepoch')",
    "time:day": "date(bucket * 3600, 'unixepoch')",
  },
  metric: { visitors: "COALESCE(SUM(visitors), 0)", pageviews: "COALESCE(SUM(pageviews), 0)", events: "COALESCE(SUM(events), 0)" },
  where: ["dim = ?", "bucket >= ?", "bucket < ?"],
};

/** The tallies' dims: per UTC day (bucket: the day's first Unix hour), and `hour` (bucket: the hour). */
export const TALLY_DIMS = ["all", "page", "name", "source", "country", "hour"] as const;
export type TallyDim = (typeof TALLY_DIMS)[number];

const TALLY_DIM_OF: Partial<Record<Dimension, TallyDim>> = {
  "event:page": "page",
  "event:name": "name",
  "visit:source": "source",
  "visit:country": "country",
};

/**
 * The tally a query can be answered from, or null when it needs the rollup: no filter, at most
 * one of page, name, source and country (by day, over whole days), or time by hour alone.
 */
export function tallyOf(q: StoreQuery): TallyDim | null {
  if (q.filters.length > 0) return null;
  const others = q.dimensions.filter((d) => d !== "time:hour" && d !== "time:day");
  if (q.dimensions.includes("time:hour")) return others.length === 0 ? "hour" : null;
  if (others.length > 1 || q.fromHour % 24 !== 0 || q.toHour % 24 !== 0) return null;
  return others.length === 0 ? "all" : (TALLY_DIM_OF[others[0]!] ?? null);
}

/**
 * The statement and its parameters; its rows are `d0…dn` (dimensions) then `m0…mn` (metrics).
 * `via` forces the rollup (tests hold the two ways to the same answers).
 */
export function rollupQuerySql(q: StoreQuery, via?: "rollup"): { sql: string; params: Array<string | number> } {
  const tally = via === "rollup" ? null : tallyOf(q);
  const from: Source = tally ? TALLY : ROLLUP;
  const params: Array<string | number> = tally ? [tally, q.fromHour, q.toHour] : [q.fromHour, q.toHour];
  const where = [...from.where];
  for (const [op, dimension, values] of q.filters) {
    const column = from.dimension[dimension];
    if (op === "contains") {
      where.push(`(${values.map(() => `instr(${column}, ?) > 0`).join(" OR ")})`);
    } else {
      where.push(`${column} ${op === "is" ? "IN" : "NOT IN"} (${values.map(() => "?").join(", ")})`);
    }
    params.push(...values);
  }
  const select = [...q.dimensions.map((d, i) => `${from.dimension[d]} AS d${i}`), ...q.metrics.map((m, i) => `${from.metric[m]} AS m${i}`)];
  const alias = (key: Metric | Dimension) => {
    const d = q.dimensions.indexOf(key as Dimension);
    return d >= 0 ? `d${d}` : `m${q.metrics.indexOf(key as Metric)}`;
  };
  const order = q.orderBy.map(([key, direction]) => `${alias(key)} ${direction === "asc" ? "ASC" : "DESC"}`);
  // Ties keep a stable order: every dimension, ascending.
  for (let i = 0; i < q.dimensions.length; i++) order.push(`d${i} ASC`);
  let sql = `SELECT ${select.join(", ")} FROM ${from.table} WHERE ${where.join(" AND ")}`;
  if (q.dimensions.length > 0) sql += ` GROUP BY ${q.dimensions.map((_, i) => `d${i}`).join(", ")}`;
  if (order.length > 0) sql += ` ORDER BY ${order.join(", ")}`;
  sql += " LIMIT ?";
  params.push(q.limit);
  return { sql, params };
}

/**
 * An event's visitor in those of its six tally rows the store does not know it in yet, each
 * (dim, bucket, value, visitor) inserted once; answers the dims where the visitor is new (RETURNING
 * gives only the rows actually inserted). One constant string per number of rows: index rows - 1.
 */
export const TALLY_SEEN_SQL: readonly string[] = TALLY_DIMS.map(
  (_, i) =>
    `INSERT INTO tally_visitors (dim, bucket, value, visitor) VALUES ${Array(i + 1)
      .fill("(?, ?, ?, ?)")
      .join(", ")} ON CONFLICT DO NOTHING RETURNING dim`,
);

/** Adds to a tally row, or opens it. */
export const TALLY_UPSERT_SQL =
  "INSERT INTO tallies (dim, bucket, value, visitors, pageviews, events) VALUES (?, ?, ?, ?, ?, ?) " +
  "ON CONFLICT (dim, bucket, value) DO UPDATE SET visitors = visitors + excluded.visitors, " +
  "pageviews = pageviews + excluded.pageviews, events = events + excluded.events";

/** The tables' retention conditions on the bucket (every dim, so the primary key's order serves it). */
export const TALLY_TRIM_WHERE = `dim IN (${TALLY_DIMS.map((d) => `'${d}'`).join(", ")}) AND bucket < ?`;

/** Distinct visitors among the raw events since an instant (realtime). */
export const REALTIME_SQL = "SELECT COUNT(DISTINCT visitor) AS visitors FROM events WHERE ts >= ?";

/** One event's rollup row: adds to its hour's count, or opens it. */
export const ROLLUP_UPSERT_SQL =
  "INSERT INTO hourly (hour, visitor, name, page, source, country, events) VALUES (?, ?, ?, ?, ?, ?, 1) " +
  "ON CONFLICT (hour, name, page, source, country, visitor) DO UPDATE SET events = events + 1";

/** A visit's source: kept while its events come within the session window, else the new event's. */
export const SESSION_SQL = "SELECT source, last_seen FROM sessions WHERE visitor = ?";
export const SESSION_UPSERT_SQL =
  "INSERT INTO sessions (visitor, source, last_seen) VALUES (?, ?, ?) ON CONFLICT (visitor) DO UPDATE SET source = excluded.source, last_seen = excluded.last_seen";

export const INSERT_EVENT_SQL = "INSERT INTO events (ts, name, page, visitor, source, country, props) VALUES (?, ?, ?, ?, ?, ?, ?)";

/** Whether the store holds anything (the alarm keeps running while it does). */
export const HOLDS_ANYTHING_SQL = "SELECT EXISTS (SELECT 1 FROM hourly) OR EXISTS (SELECT 1 FROM events) AS n";

/** The store's tables (tests read them whole: what the store holds). */
export const STORE_TABLES = ["events", "hourly", "sessions", "tallies", "tally_visitors"] as const;

/** Every row of one of the store's tables. */
export const dumpSql = (table: (typeof STORE_TABLES)[number]) => `SELECT * FROM ${table}`;

/** Deletes at most `step` rows of `table` matching `where` (one bound parameter): retention in bounded steps. */
export const trimStepSql = (table: (typeof STORE_TABLES)[number], where: string, step: number) =>
  `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${where} LIMIT ${step})`;
