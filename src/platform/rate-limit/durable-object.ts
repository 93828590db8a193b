// The rate-limit Durable Object: one object per bucket key, holding fixed-window counters in its
// SQLite storage. The caller computes the window from the platform clock, so the object only
// counts; a hit is one RPC and one SQL statement.
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";

export class RateLimiter extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec("CREATE TABLE IF NOT EXISTS windows (start INTEGER PRIMARY KEY, count INTEGER NOT NULL)");
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
    return row.count;
  }

  /** The count of a window without counting a request (tests and diagnostics). */
  peek(windowStart: number): number {
    const rows = this.sql.exec<{ count: number }>("SELECT count FROM windows WHERE start = ?", windowStart).toArray();
    return rows[0]?.count ?? 0;
  }
}
