// LogStore: the entries of one log project, in a SQLite-backed Durable Object of their own (one
// object per project, named by the project id). D1 keeps the control plane (projects, token
// hashes, streams, daily usage, alerts); the volume lives here, so capacity grows with the number
// of projects (10 GB per object) and a project's writes and reads run beside its data.
// The schema is Drizzle's (log-store.schema.ts) with migrations generated for the durable-sqlite
// driver and applied when the object starts. Every method is an RPC of the Worker; times come
// from the caller (the platform clock), except the retention alarm, which runs on real time.
import { DurableObject } from "cloudflare:workers";
import { and, count, eq, gt, inArray, lte, sql } from "drizzle-orm";
import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import type { Env } from "../../../env";
import { boundedPage, type BoundedPage } from "../../../platform/pagination";
import { utf8Length } from "../../../platform/sizes";
import migrations from "./migrations/migrations.js";
import * as schema from "./log-store.schema";
import {
  ANY_ENTRY,
  APPEND_ROWS,
  CHANGES,
  COUNT_APPENDED,
  DELETE_EXPIRED,
  DROP_EMPTY_COUNTS,
  ENTRIES_BETWEEN,
  entriesHistogramSql,
  entryPageSql,
  entryWhere,
  INDEX_AFTER,
  INSERT_LEGACY_IDS,
  MAX_SEQ,
  MINUTE_MS,
  rolledUpHistogramSql,
  UNCOUNT_EXPIRED,
  type EntryFilter,
} from "./log-store.queries";
import { rowChunks, type StoreRow } from "../logs.store";
import { MAX_TAILS, TailSet, type TailFilter } from "./log-tails";
import { keysHoldingScope } from "../../../platform/auth";

const DAY_MS = 86_400_000;
/** Retention deletes at most this many entries per statement, and this many statements per run. */
export const PURGE_CHUNK = 5_000;
export const PURGE_MAX_CHUNKS = 20;
/** How often the retention alarm looks at an object that holds entries; sooner while a purge is unfinished. */
const PURGE_EVERY_MS = 3_600_000;
const PURGE_AGAIN_MS = 60_000;
/** How long after an append its rows are added to the search index (a search never waits for it: it builds what is pending first). */
const INDEX_DELAY_MS = 100;
/** How long a tail request at the cap waits for vanished clients to be noticed before it is refused. */
const PROBE_MS = 200;

/** An entry as stored. */
export interface EntryRecord {
  seq: number;
  id: string;
  stream: string | null;
  level: string;
  message: string;
  service: string | null;
  trace_id: string | null;
  span_id: string | null;
  metadata: string | null;
  ts: number;
  created_at: number;
}

/** One count the alert check asks for: entries at `level` with from < ts <= to. */
export interface LevelWindow {
  level: string;
  from: number;
  to: number;
}

export class LogStore extends DurableObject<Env> {
  private readonly db: DrizzleSqliteDODatabase<typeof schema>;
  private alarmChecked = false;
  private indexScheduled = false;
  private deleted = false;
  /** Open live tails (in memory: a restarted object has none, and their clients reconnect). */
  private readonly tails = new TailSet((keyIds) => keysHoldingScope(this.env.DB, keyIds, "logs:read"));

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = drizzle(ctx.storage, { schema });
    void ctx.blockConcurrencyWhile(async () => {
      await migrate(this.db, migrations);
    });
  }

  /**
   * Appends rows (JSON arrays of rows, see APPEND_ROWS) in one transaction: all of them or none.
   * Returns the seq range they took (the rows handed to the open tails).
   */
  async append(chunks: string[], settings: { receivedAt: number; retentionDays: number }): Promise<{ first: number; last: number; count: number }> {
    this.assertLive();
    const range = this.ctx.storage.transactionSync(() => {
      const before = this.maxSeq();
      for (const chunk of chunks) this.ctx.storage.sql.exec(APPEND_ROWS, chunk, settings.receivedAt);
      this.ctx.storage.sql.exec(COUNT_APPENDED, before);
      this.setMeta("retention_days", settings.retentionDays);
      const last = this.maxSeq();
      return { first: before + 1, last, count: last - before };
    });
    // Committed: hand the new rows to the open tails (written, not awaited: a slow reader never
    // holds an append up).
    if (this.tails.size > 0 && range.count > 0) {
      this.tails.publish(this.ctx.storage.sql.exec<EntryRecord & Record<string, SqlStorageValue>>(ENTRIES_BETWEEN, range.first, range.last));
    }
    this.scheduleIndex();
    await this.ensureAlarm();
    return range;
  }

  /**
   * Opens a live tail of the entries appended from now on that match `filter`: a Server-Sent Events
   * stream (see log-tails.ts), or null when the project already has its maximum of open tails.
   */
  async openTail(projectId: string, keyId: string | null, filter: TailFilter): Promise<ReadableStream<Uint8Array> | null> {
    this.assertLive();
    const stream = this.tails.open(projectId, keyId, filter, Date.now());
    if (stream || this.tails.size < MAX_TAILS) return stream;
    // At the cap: some of the open tails may be clients that already went away. Two pings a moment
    // apart make their streams fail (see TailSet.ping), then the cap is judged again. Bounded: only
    // at the cap, at most PROBE_MS.
    for (let i = 0; i < 2; i++) {
      this.tails.ping();
      await new Promise((resolve) => setTimeout(resolve, PROBE_MS / 2));
    }
    return this.tails.open(projectId, keyId, filter, Date.now());
  }

  /** The credential check of the tails (the interval runs it every CREDENTIAL_CHECK_MS; tests call it). */
  async checkTailCredentials(): Promise<number> {
    return this.tails.checkCredentials();
  }

  /** Open tails (tests, operators). */
  async tailCount(): Promise<number> {
    return this.tails.size;
  }

  /** The keep-alive and duration run of the tails, at `now` (the interval calls it; tests call it with a time of their choosing). */
  sweepTails(now: number): void {
    this.tails.sweep(now);
  }

  /**
   * Newest first by (ts, seq). A page holds at most `limit` entries, fewer when their messages and
   * metadata pass `maxBytes` (at least one entry): rows are read one by one from the cursor, so a
   * page of large entries never sits in memory whole. `more` tells whether anything follows.
   */
  async query(filter: EntryFilter, page: BoundedPage): Promise<{ rows: EntryRecord[]; more: boolean }> {
    this.assertLive();
    // A search reads the trigram index: whatever was appended since it was last built goes in first.
    if (filter.q !== undefined) this.indexPending();
    const { where, params } = entryWhere(filter);
    const cursor = this.ctx.storage.sql.exec<EntryRecord & Record<string, SqlStorageValue>>(entryPageSql(where), ...params, page.limit + 1);
    return boundedPage<EntryRecord>(cursor, page, entryBytes);
  }

  /**
   * A page of entries (query) and the histogram of the filter's whole range (histogram: the page's
   * cursor does not apply to it) in one call: the console's log explorer shows both.
   */
  async queryWithHistogram(
    filter: EntryFilter,
    page: { limit: number; maxBytes: number },
    plan: { start: number; width: number; count: number },
  ): Promise<{ rows: EntryRecord[]; more: boolean; histogram: { bucket: number; level: string; n: number }[] }> {
    const { after: _cursor, ...range } = filter;
    const [found, histogram] = await Promise.all([this.query(filter, page), this.histogram(range, plan)]);
    return { ...found, histogram };
  }

  /**
   * Entries per bucket and level in the filter's range, as rows `{bucket, level, n}` (`bucket` the
   * index of the bucket in the plan; empty buckets and levels are not returned). Without a text,
   * stream, service or trace filter, the whole minutes of the range are read from the per-minute
   * roll-up (one row per minute and level) and only the partial minutes at its two ends from the
   * entries; otherwise one grouped query over the entries of the range.
   */
  async histogram(filter: EntryFilter, plan: { start: number; width: number; count: number }): Promise<{ bucket: number; level: string; n: number }[]> {
    this.assertLive();
    if (filter.q !== undefined) this.indexPending();
    const { since, until } = filter;
    const rolledUp = filter.q === undefined && filter.stream === undefined && filter.service === undefined && filter.trace_id === undefined;
    const first = since === undefined ? 0 : Math.ceil(since / MINUTE_MS);
    const last = until === undefined ? 0 : Math.floor(until / MINUTE_MS);
    if (!rolledUp || since === undefined || until === undefined || last <= first) return this.histogramOfEntries(filter, plan);
    const sums = new Map<string, { bucket: number; level: string; n: number }>();
    const add = (rows: Iterable<{ bucket: number; level: string; n: number }>) => {
      for (const row of rows) {
        const key = `${row.bucket}|${row.level}`;
        const sum = sums.get(key);
        if (sum) sum.n += row.n;
        else sums.set(key, { ...row });
      }
    };
    add(
      this.ctx.storage.sql.exec<{ bucket: number; level: string; n: number }>(
        rolledUpHistogramSql(filter.level !== undefined),
        plan.start,
        plan.width,
        first,
        last,
        ...(filter.level === undefined ? [] : [filter.level]),
        plan.count,
      ),
    );
    add(this.histogramOfEntries({ ...filter, until: first * MINUTE_MS }, plan));
    add(this.histogramOfEntries({ ...filter, since: last * MINUTE_MS }, plan));
    return [...sums.values()];
  }

  /** The histogram counted from the entries themselves: one grouped query over the filter's range. */
  private histogramOfEntries(filter: EntryFilter, plan: { start: number; width: number; count: number }): { bucket: number; level: string; n: number }[] {
    const { where, params } = entryWhere({ ...filter, after: undefined });
    return this.ctx.storage.sql
      .exec<{ bucket: number; level: string; n: number }>(entriesHistogramSql(where), plan.start, plan.width, ...params, plan.count)
      .toArray();
  }

  /** The alert check's counts, one per window asked (index-only over (level, ts)). */
  async countLevels(windows: LevelWindow[]): Promise<number[]> {
    this.assertLive();
    return windows.map((w) => {
      const [row] = this.db
        .select({ n: count() })
        .from(schema.entries)
        .where(and(eq(schema.entries.level, w.level), gt(schema.entries.ts, w.from), lte(schema.entries.ts, w.to)))
        .all();
      return row?.n ?? 0;
    });
  }

  /** Entries held (tests, the operator's migration report). */
  async count(): Promise<number> {
    this.assertLive();
    return this.db.select({ n: count() }).from(schema.entries).all()[0]?.n ?? 0;
  }

  /**
   * Retention: deletes entries whose time is older than the project's retention_days at `now`,
   * oldest first, in bounded steps. `more` is true when the run stopped at its bound.
   */
  async purgeExpired(now: number): Promise<{ deleted: number; more: boolean }> {
    this.assertLive();
    const days = this.getMeta("retention_days");
    if (days === null) return { deleted: 0, more: false };
    const cutoff = now - days * DAY_MS;
    let deleted = 0;
    for (let i = 0; i < PURGE_MAX_CHUNKS; i++) {
      const rows = this.ctx.storage.transactionSync(() => {
        this.ctx.storage.sql.exec(UNCOUNT_EXPIRED, cutoff, PURGE_CHUNK);
        this.ctx.storage.sql.exec(DROP_EMPTY_COUNTS);
        this.ctx.storage.sql.exec(DELETE_EXPIRED, cutoff, PURGE_CHUNK);
        // changes() counts the rows of the DELETE itself, not the index rows its trigger removed.
        const n = this.ctx.storage.sql.exec<{ n: number }>(CHANGES).one().n;
        this.clampIndexMark();
        return n;
      });
      deleted += rows;
      if (rows < PURGE_CHUNK) return { deleted, more: false };
    }
    return { deleted, more: true };
  }

  /**
   * Imports rows of the former D1 table (the operator's one-time migration). The store records the
   * id of each row it took: a migration step that stopped between import and delete, and runs again,
   * imports nothing twice.
   */
  async importLegacy(rows: StoreRow[], settings: { retentionDays: number }): Promise<{ imported: number }> {
    this.assertLive();
    const imported = this.ctx.storage.transactionSync(() => {
      const seen = new Set(
        this.db
          .select({ id: schema.legacyIds.id })
          .from(schema.legacyIds)
          .where(inArray(schema.legacyIds.id, sql`(SELECT value FROM json_each(${JSON.stringify(rows.map((r) => r[0]))}))`))
          .all()
          .map((r) => r.id),
      );
      const fresh = rows.filter((r) => !seen.has(r[0]));
      if (fresh.length === 0) return 0;
      const before = this.maxSeq();
      for (const chunk of rowChunks(fresh)) this.ctx.storage.sql.exec(APPEND_ROWS, chunk, null);
      this.ctx.storage.sql.exec(COUNT_APPENDED, before);
      this.ctx.storage.sql.exec(INSERT_LEGACY_IDS, JSON.stringify(fresh.map((r) => r[0])));
      this.setMeta("retention_days", settings.retentionDays);
      return fresh.length;
    });
    this.scheduleIndex();
    await this.ensureAlarm();
    return { imported };
  }

  /** Deleting the project: every entry, the index and the alarm go. The object answers nothing after. */
  async destroy(): Promise<void> {
    this.deleted = true;
    this.tails.closeAll("project_deleted");
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
  }

  override async alarm(): Promise<void> {
    if (this.deleted) return;
    this.indexPending();
    const { more } = await this.purgeExpired(Date.now());
    // Whether any entry is left: one row looked at, not a count of the whole table.
    const held = this.ctx.storage.sql.exec(ANY_ENTRY).toArray().length > 0;
    if (more) await this.ctx.storage.setAlarm(Date.now() + PURGE_AGAIN_MS);
    else if (held) await this.ctx.storage.setAlarm(Date.now() + PURGE_EVERY_MS);
    else this.alarmChecked = false;
  }

  private async ensureAlarm(): Promise<void> {
    if (this.alarmChecked) return;
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + PURGE_EVERY_MS);
    this.alarmChecked = true;
  }

  private assertLive(): void {
    if (this.deleted) throw new Error("log store deleted");
  }

  /**
   * Adds the rows appended since the last build to the trigram index, in one transaction, and
   * moves the mark (`meta.fts_upto`). Appends leave this to a moment after they answer (see
   * scheduleIndex), so an ingest request never waits for tokenising; a search calls it first, so
   * it always sees every row. Returns the rows indexed.
   */
  indexPending(): number {
    if (this.deleted) return 0;
    return this.ctx.storage.transactionSync(() => {
      const upto = this.getMeta("fts_upto") ?? 0;
      const max = this.maxSeq();
      if (max <= upto) return 0;
      this.ctx.storage.sql.exec(INDEX_AFTER, upto);
      this.setMeta("fts_upto", max);
      return max - upto;
    });
  }

  /**
   * Indexes appended rows a moment after the append has answered. Not at once: an answer waits
   * for every storage write started before it goes out (the object's output gate), so a build
   * begun in the same turn would hold the ingest's answer as long as building in the append
   * itself. Appends that come meanwhile are built together.
   */
  private scheduleIndex(): void {
    if (this.indexScheduled) return;
    this.indexScheduled = true;
    setTimeout(() => {
      this.indexScheduled = false;
      this.indexPending();
    }, INDEX_DELAY_MS);
  }

  /**
   * After a delete: SQLite gives a new row max(seq) + 1, so when the highest rows are deleted their
   * seq values come back. The mark must stay at or below the highest seq held, or a new row would
   * count as indexed without being in the index.
   */
  private clampIndexMark(): void {
    const upto = this.getMeta("fts_upto") ?? 0;
    const max = this.maxSeq();
    if (upto > max) this.setMeta("fts_upto", max);
  }

  private maxSeq(): number {
    return this.ctx.storage.sql.exec<{ m: number | null }>(MAX_SEQ).one().m ?? 0;
  }

  private getMeta(key: string): number | null {
    const [row] = this.db.select({ value: schema.meta.value }).from(schema.meta).where(eq(schema.meta.key, key)).all();
    return row?.value ?? null;
  }

  private setMeta(key: string, value: number): void {
    this.db.insert(schema.meta).values({ key, value }).onConflictDoUpdate({ target: schema.meta.key, set: { value } }).run();
  }
}

/** What an entry counts against a page's byte budget: its message and metadata, plus the rest of its fields. */
function entryBytes(row: EntryRecord): number {
  return utf8Length(row.message) + utf8Length(row.metadata ?? "") + 256;
}
