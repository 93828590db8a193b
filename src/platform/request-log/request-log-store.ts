// RequestLogStore: the request log of one team, in a SQLite-backed Durable Object of its own (one
// object per team, named by the team id). The request log is not control plane: it stays out of D1
// (no D1 write per request), and a team's writes and reads run beside its data.
// Bounded on every write: rows older than REQUEST_LOG_DAYS (by the caller's clock) and rows past the
// newest REQUEST_LOG_MAX_ROWS go in the same transaction as the append; an alarm deletes what ages
// out while nothing is written (on real time, like the log store's retention).
import { DurableObject } from "cloudflare:workers";
import { count } from "drizzle-orm";
import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import type { Env } from "../../env";
import migrations from "./migrations/migrations.js";
import * as schema from "./request-log.schema";
import { ANY_ROW, APPEND, CHANGES, DROP_EXPIRED, DROP_OLDEST, selectNewest } from "./request-log-store.queries";
import { REQUEST_LOG_DAYS, REQUEST_LOG_MAX_ROWS, type RequestLogRow, type RequestQuery, type RequestRecord } from "./request-log.types";

const DAY_MS = 86_400_000;
/** How often the retention alarm looks at an object that holds rows. */
const PURGE_EVERY_MS = 3_600_000;

export class RequestLogStore extends DurableObject<Env> {
  private readonly db: DrizzleSqliteDODatabase<typeof schema>;
  /** Rows held, known after the first write of this object's life (saves the bound's scan when under it). */
  private held: number | null = null;
  private alarmChecked = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = drizzle(ctx.storage, { schema });
    void ctx.blockConcurrencyWhile(async () => {
      await migrate(this.db, migrations);
    });
  }

  /** Appends a batch (all of it or nothing) and applies the bounds at `now`. Returns the rows held after. */
  async append(rows: RequestLogRow[], now: number): Promise<{ held: number }> {
    const held = this.ctx.storage.transactionSync(() => {
      const sql = this.ctx.storage.sql;
      let held = this.held ?? this.countRows();
      sql.exec(APPEND, JSON.stringify(rows));
      held += this.changes();
      sql.exec(DROP_EXPIRED, now - REQUEST_LOG_DAYS * DAY_MS);
      held -= this.changes();
      if (held > REQUEST_LOG_MAX_ROWS) {
        sql.exec(DROP_OLDEST, held - REQUEST_LOG_MAX_ROWS);
        held = REQUEST_LOG_MAX_ROWS;
      }
      return held;
    });
    this.held = held;
    await this.ensureAlarm();
    return { held };
  }

  /** Newest first by (at, seq); `more` tells whether anything follows the page. */
  async list(query: RequestQuery): Promise<{ rows: RequestRecord[]; more: boolean }> {
    const where = ["at >= ?"];
    const params: SqlStorageValue[] = [query.since];
    if (query.statusClass) {
      where.push("status BETWEEN ? AND ?");
      params.push(query.statusClass * 100, query.statusClass * 100 + 99);
    }
    if (query.after) {
      where.push("(at < ? OR (at = ? AND seq < ?))");
      params.push(query.after.at, query.after.at, query.after.seq);
    }
    const rows = this.ctx.storage.sql.exec<RequestRecord & Record<string, SqlStorageValue>>(selectNewest(where), ...params, query.limit + 1).toArray();
    return { rows: rows.slice(0, query.limit), more: rows.length > query.limit };
  }

  /** Rows held, whatever their age (tests, operators). */
  async count(): Promise<number> {
    return this.countRows();
  }

  override async alarm(): Promise<void> {
    this.ctx.storage.sql.exec(DROP_EXPIRED, Date.now() - REQUEST_LOG_DAYS * DAY_MS);
    if (this.held !== null) this.held -= this.changes();
    // Whether any row is left: one row looked at, not a count of the whole table.
    if (this.ctx.storage.sql.exec(ANY_ROW).toArray().length > 0) {
      await this.ctx.storage.setAlarm(Date.now() + PURGE_EVERY_MS);
    } else {
      this.alarmChecked = false;
    }
  }

  /** Rows changed by the last statement (its own rows, not index rows). */
  private changes(): number {
    return this.ctx.storage.sql.exec<{ n: number }>(CHANGES).one().n;
  }

  private countRows(): number {
    return this.db.select({ n: count() }).from(schema.requests).all()[0]?.n ?? 0;
  }

  private async ensureAlarm(): Promise<void> {
    if (this.alarmChecked) return;
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + PURGE_EVERY_MS);
    this.alarmChecked = true;
  }
}
