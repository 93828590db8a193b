// PushStore: the subscribers of one push app and the per-subscriber deliveries of its
// notifications, in a SQLite-backed Durable Object of their own (one object per app, named by the
// app id; only ever reached after the app was found in D1 under the caller's team). D1 keeps the
// app row with its subscriber_count (listing apps calls no store) and one row per notification;
// the volume (a million subscribers, a delivery per subscriber per send) lives here.
// The schema is Drizzle's (push-store.schema.ts) with migrations generated for the durable-sqlite
// driver and applied when the object starts; its raw SQL is push-store.queries.ts, its bulk work
// (import, sweep, retention) push-store.upkeep.ts and its delivery reads push-store.reads.ts. Every method is an RPC of the Worker, each one
// transaction; times come from the caller (the platform clock), except the alarm's, which runs on
// real time. The object is single-threaded, so the subscriber count it keeps (meta) is exact under
// parallel registrations; each change bumps `count_seq`, and D1 takes a count only with a newer seq.
import { log } from "../../../platform/log";
import { DurableObject } from "cloudflare:workers";
import { and, eq, inArray } from "drizzle-orm";
import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import type { Env } from "../../../env";
import type { PushTarget } from "../../../db/schema";
import { claimableAt, claimSet, claimSpec } from "../../../platform/jobs/claim";
import migrations from "./migrations/migrations.js";
import { pushSendsQueue } from "../push.messages";
import * as schema from "./push-store.schema";
import * as SQL from "./push-store.queries";
import { progressRows, resultRows, summaryRows, type NotificationSummary } from "./push-store.reads";
import { importRows, purgeRows, takeStuckRows } from "./push-store.upkeep";
import { requeueStuck, type DeliveryRecord, type LegacyImport, type Outcome, type SubscriberRecord } from "./push-store.types";

/** How often the alarm runs while the store has work (deliveries to sweep or purge, a count D1 may not hold). */
const ALARM_EVERY_MS = 3_600_000;
const ALARM_AGAIN_MS = 60_000;
/** The claim of a chunk of sends (platform/jobs/claim.ts): rows wait `queued` or `retrying` and go `sending`. */
const SEND_CLAIM = claimSpec(pushSendsQueue, { from: ["queued", "retrying"], inFlight: "sending" });

/** The store's subscriber count and the sequence number of its last change. */
export interface CountState {
  count: number;
  seq: number;
}

type Row = Record<string, SqlStorageValue>;

export class PushStore extends DurableObject<Env> {
  private deleted = false;
  private alarmChecked = false;
  private readonly db: DrizzleSqliteDODatabase<typeof schema>;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const db = drizzle(ctx.storage, { schema });
    this.db = db;
    void ctx.blockConcurrencyWhile(async () => {
      await migrate(db, migrations);
    });
  }

  /**
   * Registers a subscription, or updates the one with the same endpoint (tags and external_id only
   * when given). The count goes up only when the endpoint was new, in the same transaction.
   */
  async register(
    appId: string,
    input: Omit<SubscriberRecord, "tags" | "external_id" | "created_at" | "updated_at"> & { tags?: string[]; external_id?: string | null; at: string },
  ) {
    this.assertLive();
    const result = this.ctx.storage.transactionSync(() => {
      const sql = this.ctx.storage.sql;
      const existing = sql.exec<{ id: string }>(SQL.SUBSCRIBER_BY_ENDPOINT, input.endpoint).toArray()[0];
      if (existing) {
        const set: SQL.SubscriberUpdateColumn[] = ["p256dh", "auth", "expiration_time", "updated_at"];
        const params: SqlStorageValue[] = [input.p256dh, input.auth, input.expiration_time, input.at];
        if (input.tags) {
          set.push("tags");
          params.push(JSON.stringify(input.tags));
        }
        if (input.external_id !== undefined) {
          set.push("external_id");
          params.push(input.external_id);
        }
        sql.exec(SQL.updateSubscriberSql(set), ...params, existing.id);
      } else {
        sql.exec(
          SQL.INSERT_SUBSCRIBER,
          input.id,
          input.endpoint,
          input.p256dh,
          input.auth,
          input.expiration_time,
          JSON.stringify(input.tags ?? []),
          input.external_id ?? null,
          input.at,
          input.at,
        );
      }
      const id = existing?.id ?? input.id;
      const subscriber = sql.exec<SubscriberRecord & Row>(SQL.SUBSCRIBER_BY_ID, id).one();
      return { subscriber: { ...subscriber }, created: !existing, count: existing ? this.countState() : this.changeCount(1) };
    });
    await this.noteApp(appId);
    return result;
  }

  /** A page of subscribers, oldest first, with the total matching the filters. */
  async list(query: { page: number; perPage: number; tag?: string; externalId?: string }): Promise<{ rows: SubscriberRecord[]; total: number }> {
    this.assertLive();
    const { clause, params } = SQL.subscriberFilter(query);
    const sql = this.ctx.storage.sql;
    const rows = sql.exec<SubscriberRecord & Row>(SQL.subscriberPageSql(clause), ...params, query.perPage, (query.page - 1) * query.perPage).toArray();
    const total = clause ? sql.exec<{ n: number }>(SQL.countSubscribersSql(clause), ...params).one().n : this.countState().count;
    return { rows: rows.map((r) => ({ ...r })), total };
  }

  /** Deletes subscribers; the count goes down by the rows really deleted, in the same transaction. */
  async remove(appId: string, ids: string[]): Promise<{ removed: number; count: CountState }> {
    this.assertLive();
    const result = this.ctx.storage.transactionSync(() => {
      const removed = this.ctx.storage.sql.exec(SQL.DELETE_SUBSCRIBERS, JSON.stringify(ids)).toArray().length;
      return { removed, count: removed ? this.changeCount(-removed) : this.countState() };
    });
    await this.noteApp(appId);
    return result;
  }

  /** The recipients of a notification made at `createdAt`: how many, and which listed ids are not subscribers. */
  async recipients(target: PushTarget, createdAt: string): Promise<{ count: number; unknown: string[] }> {
    this.assertLive();
    const sql = this.ctx.storage.sql;
    let unknown: string[] = [];
    if (target.type === "subscribers") {
      unknown = sql
        .exec<{ value: string }>(SQL.UNKNOWN_SUBSCRIBERS, JSON.stringify(target.subscriber_ids))
        .toArray()
        .map((r) => r.value);
    }
    const t = SQL.targetWhere(target);
    const { n } = sql.exec<{ n: number }>(SQL.countRecipientsSql(t.sql), createdAt, ...t.params).one();
    return { count: n, unknown };
  }

  /**
   * One fan-out step: the next `limit` recipients after `after` in id order get a queued delivery
   * row (kept if it exists: a repeated step writes nothing twice). A step that finds fewer than
   * `limit` ends the fan-out and answers the rows written in all (`total`).
   */
  async fanOut(
    n: { id: string; createdAt: string; target: PushTarget },
    after: string | null,
    limit: number,
    at: string,
  ): Promise<{ ids: string[]; done: boolean; total: number }> {
    this.assertLive();
    const result = this.ctx.storage.transactionSync(() => {
      const sql = this.ctx.storage.sql;
      sql.exec(SQL.INSERT_NOTIFICATION, n.id, n.createdAt);
      const t = SQL.targetWhere(n.target);
      const ids = sql
        .exec<{ id: string }>(SQL.recipientPageSql(t.sql), n.createdAt, ...t.params, after ?? "", limit)
        .toArray()
        .map((r) => r.id);
      if (ids.length) sql.exec(SQL.INSERT_DELIVERIES, n.id, at, JSON.stringify(ids));
      if (ids.length === limit) return { ids, done: false, total: 0 };
      sql.exec(SQL.MARK_FANOUT_DONE, n.id);
      sql.exec(SQL.COMPLETE_IF_DONE, n.id, at);
      const { total } = sql.exec<{ total: number }>(SQL.COUNT_DELIVERIES, n.id).one();
      return { ids, done: true, total };
    });
    await this.ensureAlarm();
    return result;
  }

  /**
   * Claims the rows of `notificationId` among `subscriberIds` that are claimable at `at` (ms) and
   * returns them with their subscribers (null: deleted since). `busy`: some of the others are held
   * by another consumer right now.
   */
  async claim(
    notificationId: string,
    subscriberIds: string[],
    at: number,
  ): Promise<{ claimed: { subscriberId: string; attempts: number; subscriber: SubscriberRecord | null }[]; busy: boolean }> {
    this.assertLive();
    return this.ctx.storage.transactionSync(() => {
      const sql = this.ctx.storage.sql;
      const leaseEnd = at + SEND_CLAIM.leaseMs;
      const due = { nextAttemptAt: new Date(leaseEnd).toISOString(), updatedAt: new Date(at).toISOString() };
      const d = schema.deliveries;
      const won = this.db
        .update(d)
        .set(claimSet(d, SEND_CLAIM, at, due))
        .where(and(eq(d.notificationId, notificationId), inArray(d.subscriberId, subscriberIds), claimableAt(d, SEND_CLAIM, at)))
        .returning({ subscriber_id: d.subscriberId, attempts: d.attempts })
        .all();
      let busy = false;
      if (won.length < subscriberIds.length) {
        const mine = new Set(won.map((w) => w.subscriber_id));
        const others = subscriberIds.filter((id) => !mine.has(id));
        busy = sql.exec(SQL.ANY_SENDING_AMONG, notificationId, JSON.stringify(others)).toArray().length > 0;
      }
      const subs = new Map(
        sql
          .exec<SubscriberRecord & Row>(SQL.SUBSCRIBERS_BY_IDS, JSON.stringify(won.map((w) => w.subscriber_id)))
          .toArray()
          .map((s) => [s.id, { ...s }]),
      );
      return { claimed: won.map((w) => ({ subscriberId: w.subscriber_id, attempts: w.attempts, subscriber: subs.get(w.subscriber_id) ?? null })), busy };
    });
  }

  /**
   * The results of a send, in one transaction: each row's outcome, the deletion of subscribers the
   * push service said are gone (the count lowered by the rows really deleted) and the completion.
   */
  async record(
    appId: string,
    notificationId: string,
    outcomes: Outcome[],
    retryAt: string | null,
    at: string,
  ): Promise<{ removed: number; count: CountState }> {
    this.assertLive();
    const result = this.ctx.storage.transactionSync(() => {
      const sql = this.ctx.storage.sql;
      for (const o of outcomes)
        sql.exec(SQL.RECORD_DELIVERY, notificationId, o.subscriberId, o.status, o.statusCode, o.error, o.status === "retrying" ? retryAt : null, at);
      const gone = outcomes.filter((o) => o.status === "removed").map((o) => o.subscriberId);
      const removed = gone.length ? sql.exec(SQL.DELETE_SUBSCRIBERS, JSON.stringify(gone)).toArray().length : 0;
      sql.exec(SQL.COMPLETE_IF_DONE, notificationId, at);
      return { removed, count: removed ? this.changeCount(-removed) : this.countState() };
    });
    if (result.removed) await this.noteApp(appId);
    return result;
  }

  /** Per notification: delivery rows per status, and when it completed (null: not yet, or never fanned out here). */
  async summaries(ids: string[]): Promise<NotificationSummary[]> {
    this.assertLive();
    return summaryRows(this.ctx.storage.sql, ids);
  }

  /** A page of one notification's delivery rows in subscriber id order, after `cursor`. */
  async results(notificationId: string, query: { status?: string; cursor?: string; limit: number }): Promise<DeliveryRecord[]> {
    this.assertLive();
    return resultRows(this.ctx.storage.sql, notificationId, query);
  }

  /** The last subscriber with a delivery row, per notification (where a restarted fan-out resumes). */
  async progress(ids: string[]): Promise<Record<string, string | null>> {
    this.assertLive();
    return progressRows(this.ctx.storage.sql, ids);
  }

  /**
   * Imports rows of the former D1 tables (the operator's one-time migration), in one transaction.
   * Rows keep their ids, so a repeated step imports nothing twice; a legacy subscriber whose
   * endpoint registered here meanwhile is skipped (the newer registration wins).
   */
  async importLegacy(appId: string, rows: LegacyImport): Promise<{ subscribers: number; deliveries: number; count: CountState }> {
    this.assertLive();
    const result = this.ctx.storage.transactionSync(() => {
      const imported = importRows(this.ctx.storage.sql, rows);
      return { ...imported, count: imported.subscribers ? this.changeCount(imported.subscribers) : this.countState() };
    });
    await this.noteApp(appId);
    return result;
  }

  /** The store's subscriber count (tests, the migration's report). */
  async count(): Promise<CountState> {
    this.assertLive();
    return this.countState();
  }

  /** Deleting the app: every subscriber, delivery and the alarm go. The object answers nothing after. */
  async destroy(): Promise<void> {
    this.deleted = true;
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
  }

  /**
   * The alarm's sweep of deliveries whose queue message was lost: up to SWEEP_MAX_ROWS rows pending
   * more than SWEEP_STUCK_MS past due at `now`, oldest first, are marked due now (an overlapping run
   * does not take them again) and returned for requeueStuck to put in `send` messages.
   */
  async takeStuck(now: number): Promise<{ notification_id: string; subscriber_id: string }[]> {
    this.assertLive();
    return takeStuckRows(this.ctx.storage.sql, now);
  }

  /** Retention: deletes notifications older than DELIVERY_LOG_RETENTION_DAYS at `now` with their rows, in bounded steps. */
  async purgeExpired(now: number): Promise<{ deleted: number; more: boolean }> {
    this.assertLive();
    return purgeRows(this.ctx.storage.sql, now);
  }

  /** Writes the store's count to D1 unless D1 holds a newer one; remembers what D1 was told. */
  async syncCount(): Promise<void> {
    this.assertLive();
    const appId = await this.ctx.storage.get<string>("app_id");
    if (!appId) return;
    const state = this.countState();
    await this.env.DB.prepare(SQL.SYNC_COUNT).bind(state.count, state.seq, appId).run();
    this.setMeta("synced_seq", state.seq);
  }

  override async alarm(): Promise<void> {
    if (this.deleted) return;
    const now = Date.now();
    const results = await Promise.allSettled([requeueStuck(this.env.PUSH_QUEUE, this, now), this.purgeExpired(now), this.syncCount()]);
    const more = results[1].status === "fulfilled" && results[1].value.more;
    const held = this.ctx.storage.sql.exec(SQL.ANY_DELIVERY).toArray().length > 0;
    const unsynced = this.getMeta("synced_seq") < this.countState().seq;
    this.alarmChecked = false;
    if (more) await this.ctx.storage.setAlarm(now + ALARM_AGAIN_MS);
    else if (held || unsynced) await this.ctx.storage.setAlarm(now + ALARM_EVERY_MS);
    for (const r of results) if (r.status === "rejected") log.error("push store alarm: a step failed", { error: String(r.reason) });
  }

  /**
   * Remembers the app (the alarm writes its count to D1) and makes sure the alarm is set. Runs after
   * a committed change: a failure here is logged, not thrown, so the caller is told what was stored.
   */
  private async noteApp(appId: string): Promise<void> {
    try {
      if ((await this.ctx.storage.get<string>("app_id")) !== appId) await this.ctx.storage.put("app_id", appId);
      await this.ensureAlarm();
    } catch (error) {
      log.error("push store: app id or alarm not set", { app_id: appId, error: String(error) });
    }
  }

  private async ensureAlarm(): Promise<void> {
    if (this.alarmChecked) return;
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + ALARM_EVERY_MS);
    this.alarmChecked = true;
  }

  private assertLive(): void {
    if (this.deleted) throw new Error("push store deleted");
  }

  private countState(): CountState {
    return { count: this.getMeta("subscriber_count"), seq: this.getMeta("count_seq") };
  }

  /** Adds `delta` to the count and bumps its sequence (inside the caller's transaction). */
  private changeCount(delta: number): CountState {
    const state = { count: this.getMeta("subscriber_count") + delta, seq: this.getMeta("count_seq") + 1 };
    this.setMeta("subscriber_count", state.count);
    this.setMeta("count_seq", state.seq);
    return state;
  }

  private getMeta(key: string): number {
    return this.ctx.storage.sql.exec<{ value: number }>(SQL.GET_META, key).toArray()[0]?.value ?? 0;
  }

  private setMeta(key: string, value: number): void {
    this.ctx.storage.sql.exec(SQL.SET_META, key, value);
  }
}
