// AnalyticsStore: the events of one analytics site, in a SQLite-backed Durable Object of their own
// (one object per site, named by the site id, which the Worker only takes from a site row it read).
// An append stores a batch of events from one isolate in one transaction: each raw event, its
// visit's source (a visit keeps the source it started with while its events come less than
// SESSION_MS apart, as Plausible's sessions do), its hourly rollup row and its tally rows. Queries
// read the tallies, or the rollup where a filter or a pair of dimensions needs each visitor; realtime
// reads the raw events of the last minutes. The alarm (hourly while the store holds anything) trims
// raw events past RAW_RETENTION_DAYS, rollup hours and tallies past ROLLUP_RETENTION_DAYS, the
// tallies' visitors past TALLY_VISITORS_DAYS and visits idle for SESSION_MS, in bounded steps. Times of appends and queries come from the caller
// (the platform clock); the alarm runs on real time.
import { DurableObject } from "cloudflare:workers";
import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import type { Env } from "../../../env";
import migrations from "./migrations/migrations.js";
import * as schema from "./analytics-store.schema";
import {
  dumpSql,
  HOLDS_ANYTHING_SQL,
  INSERT_EVENT_SQL,
  REALTIME_SQL,
  ROLLUP_UPSERT_SQL,
  rollupQuerySql,
  SESSION_SQL,
  SESSION_UPSERT_SQL,
  STORE_TABLES,
  TALLY_DIMS,
  TALLY_SEEN_SQL,
  TALLY_TRIM_WHERE,
  TALLY_UPSERT_SQL,
  trimStepSql,
  type StoreQuery,
  type TallyDim,
} from "./analytics-store.queries";

/** Raw events are kept this long (realtime needs minutes; the rest is for a look at props). */
export const RAW_RETENTION_DAYS = 30;
/** Rollup hours are kept this long: what every query and the console read. */
export const ROLLUP_RETENTION_DAYS = 400;
/**
 * The visitors already counted in a tally are kept this long: events are stored with the time they
 * arrived, so only today's tallies still grow (a day more for an isolate whose clock lags at midnight).
 */
export const TALLY_VISITORS_DAYS = 2;
/** A visit ends after this long without an event (Plausible's session length). */
export const SESSION_MS = 30 * 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Rows deleted per statement and alarm run: an alarm never holds the object long. */
const DELETE_STEP = 5_000;
const ALARM_EVERY_MS = HOUR_MS;
const ALARM_AGAIN_MS = 60_000;

/** One counted event as the isolate hands it over: no address, no user agent. */
export interface StoredEvent {
  ts: number;
  name: string;
  page: string;
  visitor: string;
  /** The source this event's referrer or tags name; "" for none. */
  source: string;
  country: string;
  props: string | null;
}

export type QueryRow = { dimensions: Array<string | null>; metrics: number[] };

/** Tally rows (dim, bucket, value, visitor) an instance remembers as stored, at most (all forgotten past it). */
const KNOWN_TALLIED_MAX = 50_000;
/** Visits an instance remembers (visitor → source and last seen), at most (all forgotten past it). */
const KNOWN_SESSIONS_MAX = 20_000;

export class AnalyticsStore extends DurableObject<Env> {
  private readonly db: DrizzleSqliteDODatabase<typeof schema>;
  private alarmSet = false;
  /**
   * What this instance wrote or read, so a busy site's events skip the reads and inserts that would
   * find the same: the tally rows its visitors are counted in (a row, once stored, stays until the
   * trim, which forgets them all), and each visit's source and last event (written only here).
   */
  private readonly tallied = new Set<string>();
  private readonly sessions = new Map<string, { source: string; last_seen: number }>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = drizzle(ctx.storage, { schema });
    void ctx.blockConcurrencyWhile(async () => {
      await migrate(this.db, migrations);
    });
  }

  /**
   * Stores a batch of events in one transaction; answers how many were stored. Each event is a raw
   * row, its visit's source, its rollup row and its six tally rows (the tallies' additions are
   * summed over the batch first, so a batch of one page's views writes that page's row once).
   */
  async append(events: StoredEvent[]): Promise<number> {
    const sql = this.ctx.storage.sql;
    // The instance's copies take this batch's rows once its transaction has committed.
    const sessions = new Map<string, { source: string; last_seen: number }>();
    const tallied: string[] = [];
    this.ctx.storage.transactionSync(() => {
      const adds = new Map<string, { dim: TallyDim; bucket: number; value: string; visitors: number; pageviews: number; events: number }>();
      for (const e of events) {
        const open =
          sessions.get(e.visitor) ?? this.sessions.get(e.visitor) ?? sql.exec<{ source: string; last_seen: number }>(SESSION_SQL, e.visitor).toArray()[0];
        // A visit goes on (its first source stays) while events come within the window.
        const source = open && e.ts - open.last_seen < SESSION_MS && e.ts >= open.last_seen - SESSION_MS ? open.source : e.source;
        const lastSeen = Math.max(e.ts, open?.last_seen ?? 0);
        sql.exec(SESSION_UPSERT_SQL, e.visitor, source, lastSeen);
        sessions.set(e.visitor, { source, last_seen: lastSeen });
        sql.exec(INSERT_EVENT_SQL, e.ts, e.name, e.page, e.visitor, source, e.country, e.props);
        const hour = Math.floor(e.ts / HOUR_MS);
        sql.exec(ROLLUP_UPSERT_SQL, hour, e.visitor, e.name, e.page, source, e.country);
        const day = Math.floor(e.ts / DAY_MS) * 24;
        const rows: Record<TallyDim, [number, string]> = {
          all: [day, ""],
          page: [day, e.page],
          name: [day, e.name],
          source: [day, source],
          country: [day, e.country],
          hour: [hour, ""],
        };
        // Rows this instance knows stored are not inserted again (nor is a batch's own row: SQLite finds it).
        const unknown = TALLY_DIMS.map((dim) => ({ dim, row: `${dim}\u0000${rows[dim][0]}\u0000${rows[dim][1]}\u0000${e.visitor}` })).filter(
          ({ row }) => !this.tallied.has(row),
        );
        const fresh = new Set(
          unknown.length === 0
            ? []
            : sql
                .exec<{ dim: string }>(TALLY_SEEN_SQL[unknown.length - 1]!, ...unknown.flatMap(({ dim }) => [dim, ...rows[dim], e.visitor]))
                .toArray()
                .map((row) => row.dim),
        );
        for (const { row } of unknown) tallied.push(row);
        const pageview = e.name === "pageview" ? 1 : 0;
        for (const dim of TALLY_DIMS) {
          const [bucket, value] = rows[dim];
          const key = `${dim}\u0000${bucket}\u0000${value}`;
          const add = adds.get(key) ?? { dim, bucket, value, visitors: 0, pageviews: 0, events: 0 };
          add.visitors += fresh.has(dim) ? 1 : 0;
          add.pageviews += pageview;
          add.events += 1;
          adds.set(key, add);
        }
      }
      for (const a of adds.values()) sql.exec(TALLY_UPSERT_SQL, a.dim, a.bucket, a.value, a.visitors, a.pageviews, a.events);
    });
    if (this.tallied.size + tallied.length > KNOWN_TALLIED_MAX) this.tallied.clear();
    for (const row of tallied) this.tallied.add(row);
    if (this.sessions.size + sessions.size > KNOWN_SESSIONS_MAX) this.sessions.clear();
    for (const [visitor, visit] of sessions) this.sessions.set(visitor, visit);
    await this.ensureAlarm();
    return events.length;
  }

  /** Rows of a query over the tallies or the rollup (see analytics-store.queries.ts); `via` forces the rollup (tests). */
  async query(q: StoreQuery, via?: "rollup"): Promise<QueryRow[]> {
    const { sql, params } = rollupQuerySql(q, via);
    const rows = this.ctx.storage.sql.exec<Record<string, SqlStorageValue>>(sql, ...params).toArray();
    return rows.map((row) => ({
      dimensions: q.dimensions.map((_, i) => (row[`d${i}`] === null ? null : String(row[`d${i}`]))),
      metrics: q.metrics.map((_, i) => Number(row[`m${i}`] ?? 0)),
    }));
  }

  /** Distinct visitors with an event at or after `since` (ms). */
  async realtime(since: number): Promise<number> {
    const [row] = this.ctx.storage.sql.exec<{ visitors: number }>(REALTIME_SQL, since).toArray();
    return Number(row?.visitors ?? 0);
  }

  /** Every row of every table (tests: what the store holds). */
  async dump(): Promise<Record<string, Array<Record<string, SqlStorageValue>>>> {
    const out: Record<string, Array<Record<string, SqlStorageValue>>> = {};
    for (const table of STORE_TABLES) out[table] = this.ctx.storage.sql.exec(dumpSql(table)).toArray();
    return out;
  }

  /** The site was deleted: everything goes. */
  async destroy(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.alarmSet = false;
    this.forget();
  }

  /** Retention in bounded steps; runs again soon while a step was full, hourly while anything is held. */
  override async alarm(): Promise<void> {
    this.alarmSet = false;
    const unfinished = this.trim(Date.now());
    const [held] = this.ctx.storage.sql.exec<{ n: number }>(HOLDS_ANYTHING_SQL).toArray();
    if (unfinished || Number(held?.n ?? 0) > 0) {
      await this.ctx.storage.setAlarm(Date.now() + (unfinished ? ALARM_AGAIN_MS : ALARM_EVERY_MS));
      this.alarmSet = true;
    }
  }

  /** Deletes what is past its retention, at most DELETE_STEP rows per table; true when a step was full. */
  trim(now: number): boolean {
    const sql = this.ctx.storage.sql;
    const step = (table: (typeof STORE_TABLES)[number], where: string, bound: number) =>
      sql.exec(trimStepSql(table, where, DELETE_STEP), bound).rowsWritten >= DELETE_STEP;
    const raw = step("events", "ts < ?", now - RAW_RETENTION_DAYS * DAY_MS);
    const rolled = step("hourly", "hour < ?", Math.floor((now - ROLLUP_RETENTION_DAYS * DAY_MS) / HOUR_MS));
    const visits = step("sessions", "last_seen < ?", now - SESSION_MS);
    const tallied = step("tallies", TALLY_TRIM_WHERE, Math.floor((now - ROLLUP_RETENTION_DAYS * DAY_MS) / HOUR_MS));
    const counted = step("tally_visitors", TALLY_TRIM_WHERE, Math.floor((now - TALLY_VISITORS_DAYS * DAY_MS) / HOUR_MS));
    this.forget();
    return raw || rolled || visits || tallied || counted;
  }

  /** Drops the instance's copies of stored rows (the trim or a wipe may have deleted them). */
  private forget(): void {
    this.tallied.clear();
    this.sessions.clear();
  }

  private async ensureAlarm(): Promise<void> {
    if (this.alarmSet) return;
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + ALARM_EVERY_MS);
    this.alarmSet = true;
  }
}
