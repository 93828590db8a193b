// The rate-limit Durable Object: one object per bucket key, holding fixed-window counters in its
// SQLite storage. The caller computes the window from the platform clock, so the object only
// counts; a hit is one RPC and one SQL statement. A key that stops being used (an IP seen once)
// must not keep its row forever: the first hit of a window sets an alarm two windows later, and
// the alarm deletes the object's storage once no window is current (DESIGN.md "Retention").
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import { WINDOW_SECONDS } from "./buckets";

/** Two windows without a new one: whatever the object holds can no longer be current. */
export const IDLE_MS = 2 * WINDOW_SECONDS * 1000;

export class RateLimiter extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.createTables();
  }

  private createTables(): void {
    this.sql.exec("CREATE TABLE IF NOT EXISTS windows (start INTEGER PRIMARY KEY, count INTEGER NOT NULL)");
    this.sql.exec("CREATE TABLE IF NOT EXISTS seen (id INTEGER PRIMARY KEY, at INTEGER NOT NULL)");
  }

  /** Counts one request in the window starting at `windowStart` (Unix seconds); returns the new count. */
  hit(windowStart: number, cost = 1): number {
    const row = this.sql
      .exec<{ count: number }>(
        "INSERT INTO windows (start, count) VALUES (?, ?) ON CONFLICT(start) DO UPDATE SET count = count + excluded.count RETURNING count",
        windowStart,
        cost,
      )
      .one();
    // Older windows are dead weight: the counter resets to zero at rollover.
    this.sql.exec("DELETE FROM windows WHERE start < ?", windowStart);
    if (row.count === cost) {
      // A new window: note when (real time, not the callers' clock, which tests move) and look
      // again once it can no longer be current.
      this.sql.exec("INSERT OR REPLACE INTO seen (id, at) VALUES (1, ?)", Date.now());
      void this.ctx.storage.setAlarm(Date.now() + IDLE_MS);
    }
    return row.count;
  }

  /** Retention: an object with no new window for IDLE_MS keeps nothing. */
  override async alarm(): Promise<void> {
    const seen = this.sql.exec<{ at: number }>("SELECT at FROM seen WHERE id = 1").toArray()[0]?.at ?? 0;
    if (Date.now() - seen < IDLE_MS) {
      await this.ctx.storage.setAlarm(seen + IDLE_MS);
      return;
    }
    await this.ctx.storage.deleteAll();
    // The instance may count again before it is evicted.
    this.createTables();
  }

  /** The count of a window without counting a request (tests and diagnostics). */
  peek(windowStart: number): number {
    const rows = this.sql.exec<{ count: number }>("SELECT count FROM windows WHERE start = ?", windowStart).toArray();
    return rows[0]?.count ?? 0;
  }
}
