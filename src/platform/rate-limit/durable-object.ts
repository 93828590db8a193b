// The rate-limit Durable Object: one object per bucket key, holding fixed-window counters in its
// SQLite storage. The caller computes the window from the platform clock, so the object only
// counts. An object holds its own bucket's counter (name "") and may hold named counters next to
// it: a team's object keeps its strict families there, so a request that is counted in the
// default bucket and a strict family is one RPC (`hitAll`). A key that stops being used (an IP
// seen once) must not keep its rows forever: the first hit of a window sets an alarm two windows
// later, and the alarm deletes the object's storage once no window is current (DESIGN.md
// "Retention"). Windows are 60 s unless the caller counts in longer ones (the console's sign-in
// links per address and hour): the object remembers the length it was last counted in.
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import { OWN_COUNTER, WINDOW_SECONDS, type CounterSpec } from "./buckets";

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
    this.sql.exec(
      "CREATE TABLE IF NOT EXISTS counters (name TEXT NOT NULL, start INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (name, start))",
    );
    this.sql.exec("CREATE TABLE IF NOT EXISTS seen (id INTEGER PRIMARY KEY, at INTEGER NOT NULL)");
    // Objects written before named counters kept one unnamed counter in `windows`: carry its
    // current count over once, so a deploy does not hand every team a fresh window.
    const legacy = this.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'windows'").toArray().length > 0;
    if (legacy) {
      this.sql.exec("INSERT OR IGNORE INTO counters (name, start, count) SELECT '', start, count FROM windows");
      this.sql.exec("DROP TABLE windows");
    }
  }

  /** Adds `cost` to one counter in the window starting at `windowStart` (Unix seconds); returns the new count. */
  private add(name: string, windowStart: number, cost: number, idleMs: number = IDLE_MS): number {
    const row = this.sql
      .exec<{ count: number }>(
        "INSERT INTO counters (name, start, count) VALUES (?, ?, ?) ON CONFLICT(name, start) DO UPDATE SET count = count + excluded.count RETURNING count",
        name,
        windowStart,
        cost,
      )
      .one();
    if (row.count === cost) {
      // The first hit of a window: older windows are dead weight (the counter resets to zero at
      // rollover), so drop them now rather than on every hit; note when (real time, not the
      // callers' clock, which tests move) and look again once the window can no longer be current.
      this.sql.exec("DELETE FROM counters WHERE start < ?", windowStart);
      this.sql.exec("INSERT OR REPLACE INTO seen (id, at) VALUES (1, ?)", Date.now());
      // Row 2 holds how long this object's windows keep it alive, when longer than the default.
      if (idleMs !== IDLE_MS) this.sql.exec("INSERT OR REPLACE INTO seen (id, at) VALUES (2, ?)", idleMs);
      void this.ctx.storage.setAlarm(Date.now() + idleMs);
    }
    return row.count;
  }

  /** Counts one request (or `cost`) in the window starting at `windowStart`; returns the new count. */
  hit(windowStart: number, cost = 1, name: string = OWN_COUNTER): number {
    return this.add(name, windowStart, cost);
  }

  /**
   * Counts one request in several counters of this object, in order, as the middleware would one
   * after the other: a counter whose count passes its limit refuses the request, and the counters
   * after it are not counted (spec Limits rule 2: the request fails when either is exceeded).
   * Returns the new count of each counter reached; the array is shorter when one refused.
   */
  hitAll(windowStart: number, counters: CounterSpec[], windowSeconds: number = WINDOW_SECONDS): number[] {
    const counts: number[] = [];
    const idleMs = 2 * windowSeconds * 1000;
    for (const counter of counters) {
      const count = this.add(counter.name, windowStart, 1, idleMs);
      counts.push(count);
      if (count > counter.limit) break;
    }
    return counts;
  }

  /** Retention: an object with no new window for two of its windows (IDLE_MS by default) keeps nothing. */
  override async alarm(): Promise<void> {
    const rows = this.sql.exec<{ id: number; at: number }>("SELECT id, at FROM seen").toArray();
    const seen = rows.find((row) => row.id === 1)?.at ?? 0;
    const idleMs = rows.find((row) => row.id === 2)?.at ?? IDLE_MS;
    if (Date.now() - seen < idleMs) {
      await this.ctx.storage.setAlarm(seen + idleMs);
      return;
    }
    await this.ctx.storage.deleteAll();
    // The instance may count again before it is evicted.
    this.createTables();
  }

  /** The count of a window without counting a request (tests and diagnostics). */
  peek(windowStart: number, name: string = OWN_COUNTER): number {
    const rows = this.sql.exec<{ count: number }>("SELECT count FROM counters WHERE name = ? AND start = ?", name, windowStart).toArray();
    return rows[0]?.count ?? 0;
  }
}
