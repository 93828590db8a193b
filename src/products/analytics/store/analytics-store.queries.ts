// The SQL of an analytics query over the hourly rollup, built from a validated query: raw SQL
// because its SELECT list, GROUP BY and ORDER BY follow the caller's dimensions and metrics, and
// COUNT(DISTINCT …) with a CASE sum reads more plainly here than through Drizzle's builder. Every
// column and direction comes from the closed maps below, never from the caller's text; values are
// bound parameters. `contains` uses instr(), not LIKE: a Durable Object's SQLite refuses LIKE
// patterns over 50 bytes (docs: PLATFORM-NOTES), and instr() has no wildcards to escape.
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

const DIMENSION_SQL: Record<Dimension, string> = {
  "event:page": "page",
  "event:name": "name",
  "visit:source": "source",
  "visit:country": "country",
  "time:hour": "strftime('%Y-%m-%d %H:00:00', hour * 3600, 'unixepoch')",
  "time:day": "date(hour * 3600, 'unixepoch')",
};

const METRIC_SQL: Record<Metric, string> = {
  visitors: "COUNT(DISTINCT visitor)",
  pageviews: "COALESCE(SUM(CASE WHEN name = 'pageview' THEN events ELSE 0 END), 0)",
  events: "COALESCE(SUM(events), 0)",
};

/** The statement and its parameters; its rows are `d0…dn` (dimensions) then `m0…mn` (metrics). */
export function rollupQuerySql(q: StoreQuery): { sql: string; params: Array<string | number> } {
  const params: Array<string | number> = [q.fromHour, q.toHour];
  const where = ["hour >= ?", "hour < ?"];
  for (const [op, dimension, values] of q.filters) {
    const column = DIMENSION_SQL[dimension];
    if (op === "contains") {
      where.push(`(${values.map(() => `instr(${column}, ?) > 0`).join(" OR ")})`);
    } else {
      where.push(`${column} ${op === "is" ? "IN" : "NOT IN"} (${values.map(() => "?").join(", ")})`);
    }
    params.push(...values);
  }
  const select = [...q.dimensions.map((d, i) => `${DIMENSION_SQL[d]} AS d${i}`), ...q.metrics.map((m, i) => `${METRIC_SQL[m]} AS m${i}`)];
  const alias = (key: Metric | Dimension) => {
    const d = q.dimensions.indexOf(key as Dimension);
    return d >= 0 ? `d${d}` : `m${q.metrics.indexOf(key as Metric)}`;
  };
  const order = q.orderBy.map(([key, direction]) => `${alias(key)} ${direction === "asc" ? "ASC" : "DESC"}`);
  // Ties keep a stable order: every dimension, ascending.
  for (let i = 0; i < q.dimensions.length; i++) order.push(`d${i} ASC`);
  let sql = `SELECT ${select.join(", ")} FROM hourly WHERE ${where.join(" AND ")}`;
  if (q.dimensions.length > 0) sql += ` GROUP BY ${q.dimensions.map((_, i) => `d${i}`).join(", ")}`;
  if (order.length > 0) sql += ` ORDER BY ${order.join(", ")}`;
  sql += " LIMIT ?";
  params.push(q.limit);
  return { sql, params };
}

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
export const STORE_TABLES = ["events", "hourly", "sessions"] as const;

/** Every row of one of the store's tables. */
export const dumpSql = (table: (typeof STORE_TABLES)[number]) => `SELECT * FROM ${table}`;

/** Deletes at most `step` rows of `table` matching `where` (one bound parameter): retention in bounded steps. */
export const trimStepSql = (table: (typeof STORE_TABLES)[number], where: string, step: number) =>
  `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${where} LIMIT ${step})`;
