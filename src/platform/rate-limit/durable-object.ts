// The rate-limit Durable Object, and for a team the team's meter: fixed-window counters in its
// SQLite storage, and in a team's object (`default:team:<id>`) the team's monthly quota counters and
// their per-day counts too. The caller passes the instant from the platform clock, so the object
// only counts. An object holds its own bucket's counter (name "") and may hold named counters next
// to it: a team's object keeps its strict families there.
//
// `meter(at, items)` answers a batch of requests in one call, in order, each exactly as if it had
// come alone (the isolate coalesces concurrent requests per object, limiter.ts): counted in its
// counters, its quota units reserved or given back, or the month's usage read.
//
// Quota counters are seeded from D1 (`usage_counters`, `usage_daily`) the first time an object
// touches a month, and rolled up to D1 by an alarm at most ROLLUP_MS after they change: D1 is the
// durable record, the object the exact and fast one. A lost object comes back from the last
// roll-up (see docs/RATE-LIMITS.md). A key that stops being used (an IP seen once) must not keep
// its rows forever: once no window is current for IDLE_MS and nothing is left to roll up, the
// alarm deletes the object's storage (docs/ARCHITECTURE.md "Retention"). Its SQL is
// rate-limiter.queries.ts's: constant statements, each prepared by the runtime as before.
import { log, withLogScope } from "../log";
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import { NETWORK_DAY_PREFIX, NETWORK_PREFIX, OWN_COUNTER, WINDOW_SECONDS, type CounterSpec } from "./buckets";
import { readRolledUp, rollUp, type DailyUsage } from "../usage/rollup";
import * as SQL from "./rate-limiter.queries";

/** Two windows without a new one: whatever the object holds can no longer be current. */
export const IDLE_MS = 2 * WINDOW_SECONDS * 1000;
/** The longest a quota change waits before it is written to D1 (the most a lost meter forgets). */
export const ROLLUP_MS = 10_000;

/** One request of a batch: any of counting it, reserving or giving back units, reading usage. */
export interface MeterItem {
  /** Counts one request in these counters, in order; the first that refuses stops the rest (hitAll). */
  counters?: CounterSpec[];
  /**
   * Takes `amount` units of `service` this month when they fit under `limit` (null: no ceiling),
   * all or nothing; a negative amount gives units back (never below zero).
   */
  quota?: { service: string; amount: number; limit: number | null };
  /** Answers the month's usage, its days and the own counter's count in the window. */
  read?: boolean;
}

/** The month as the meter holds it. */
export interface UsageSnapshot {
  /** `YYYY-MM`. */
  period: string;
  /** Units used per service (a service never used is absent). */
  used: Record<string, number>;
  /** Units per day and service of the month, oldest first (days without use are absent). */
  daily: DailyUsage[];
  /** The own counter's count in the current window (the default bucket's, in a team's object). */
  windowCount: number;
}

export interface MeterAnswer {
  /** New counts of the counters reached (shorter than `counters` when one refused). */
  counts?: number[];
  /** Whether the units were taken, and the service's total after this item. */
  quota?: { ok: boolean; used: number };
  usage?: UsageSnapshot;
}

const monthOfMs = (ms: number) => new Date(ms).toISOString().slice(0, 7);
const dayOfMs = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export class RateLimiter extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** Months this object has seeded (the `months` table, read once per instance). */
  private seededMonths: Set<string> | null = null;
  /** Each counter's latest window as this instance wrote or read it in SQLite (read before SQLite). */
  private readonly windows = new Map<string, { start: number; count: number }>();
  /** Each service's units of a month (`m…`) and of a day (`d…`) as this instance wrote or read them in SQLite (read before SQLite). */
  private readonly units = new Map<string, number>();
  /** The month's units as last read from SQLite, until units change (read before SQLite). */
  private monthRead: { period: string; usage: Pick<UsageSnapshot, "used" | "daily"> } | null = null;
  /** The window (and the day) whose client networks' older windows (days) this instance dropped last (a block's object). */
  private readonly sweeps: Sweeps = { networksBefore: 0, networkDaysBefore: 0 };

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.createTables();
  }

  private createTables(): void {
    this.seededMonths = null;
    this.windows.clear();
    this.units.clear();
    this.sweeps.networksBefore = 0;
    this.sweeps.networkDaysBefore = 0;
    this.monthRead = null;
    this.sql.exec(SQL.CREATE_COUNTERS);
    this.sql.exec(SQL.CREATE_SEEN);
    // The meter: units per service and month, per day and service, each with a dirty mark until
    // the roll-up wrote it; `months` lists the months seeded from D1, with the team they belong to.
    this.sql.exec(SQL.CREATE_USAGE);
    this.sql.exec(SQL.CREATE_DAILY);
    this.sql.exec(SQL.CREATE_MONTHS);
    // Objects written before named counters kept one unnamed counter in `windows`: carry its
    // current count over once, so a deploy does not hand every team a fresh window.
    const legacy = this.sql.exec(SQL.HAS_LEGACY_WINDOWS).toArray().length > 0;
    if (legacy) {
      this.sql.exec(SQL.COPY_LEGACY_WINDOWS);
      this.sql.exec(SQL.DROP_LEGACY_WINDOWS);
    }
  }

  /** A tally of this object's counters for one call (read once, written once). */
  private tally(): Tally {
    return new Tally(this.sql, this.windows, this.units, (idleMs) => this.touch(idleMs), this.sweeps);
  }

  /**
   * Notes real-time use and makes sure an alarm will come for retention; row 2 of `seen` keeps an
   * idle time longer than IDLE_MS once a counter with longer windows was counted here.
   */
  private touch(idleMs: number = IDLE_MS): void {
    this.sql.exec(SQL.TOUCH_SEEN, Date.now());
    if (idleMs > IDLE_MS) this.sql.exec(SQL.KEEP_LONGER_IDLE, idleMs);
    void this.ctx.storage.getAlarm().then((alarm) => {
      if (alarm === null) return this.ctx.storage.setAlarm(Date.now() + IDLE_MS);
    });
  }

  /** Counts one request (or `cost`) in the window starting at `windowStart`; returns the new count. */
  hit(windowStart: number, cost = 1, name: string = OWN_COUNTER): number {
    const tally = this.tally();
    const count = tally.add(name, windowStart, cost, IDLE_MS);
    tally.write();
    return count;
  }

  /**
   * Counts one request in several counters of this object, in order, as the middleware would one
   * after the other: a counter whose count passes its limit refuses the request, and the counters
   * after it are not counted (spec Limits rule 2: the request fails when either is exceeded).
   * Returns the new count of each counter reached; the array is shorter when one refused.
   */
  hitAll(windowStart: number, counters: CounterSpec[]): number[] {
    const tally = this.tally();
    const counts = this.countIn(tally, windowStart, counters);
    tally.write();
    return counts;
  }

  /** hitAll in a tally (written by the caller). */
  private countIn(tally: Tally, windowStart: number, counters: CounterSpec[]): number[] {
    const counts: number[] = [];
    for (const counter of counters) {
      // A longer window (a multiple of WINDOW_SECONDS) is the one holding this 60-second window.
      const seconds = counter.windowSeconds ?? WINDOW_SECONDS;
      const count = tally.add(counter.name, Math.floor(windowStart / seconds) * seconds, 1, 2 * seconds * 1000);
      counts.push(count);
      if (count > counter.limit) break;
    }
    return counts;
  }

  /**
   * Answers a batch of requests at the platform instant `at` (ms), in order, each as if alone.
   * `teamId` names the team whose quota this object meters (needed by items with `quota` or `read`).
   * Throws when a month must be seeded from D1 and D1 fails: the caller fails closed for quotas.
   */
  async meter(at: number, teamId: string | null, items: MeterItem[]): Promise<MeterAnswer[]> {
    const period = monthOfMs(at);
    if (items.some((item) => item.quota || item.read)) {
      if (!teamId) throw new Error("meter: quota and usage need the team");
      // Only a month not met yet waits (for D1); otherwise the batch runs without yielding, so no
      // other call can come between its items.
      if (!this.seeded(period)) await this.seed(teamId, period);
    }
    const windowStart = Math.floor(at / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS;
    const day = dayOfMs(at);
    let changed = false;
    // The month's units as read for the last item that read them; a change to them reads again.
    let month: Pick<UsageSnapshot, "used" | "daily"> | null = null;
    // The batch's counters and units are counted in memory and written once at its end: the batch
    // runs without yielding, so no other call sees them in between.
    const tally = this.tally();
    const answers = items.map((item): MeterAnswer => {
      const answer: MeterAnswer = {};
      if (item.counters) answer.counts = this.countIn(tally, windowStart, item.counters);
      if (item.quota) {
        answer.quota = tally.take(period, day, item.quota);
        if (answer.quota.ok && item.quota.amount !== 0) {
          changed = true;
          // The instance's copy of the month goes before anything is written.
          this.monthRead = null;
        }
        month = null;
      }
      if (item.read) {
        if (month === null) {
          // Units taken earlier in this batch are written first: the read is SQL's.
          tally.write();
          month = this.monthUsage(period);
        }
        answer.usage = { period, ...month, windowCount: tally.count(OWN_COUNTER, windowStart) };
      }
      return answer;
    });
    tally.write();
    if (changed) this.scheduleRollUp();
    return answers;
  }

  /** Loads a month from D1 the first time this object meets it (blocking other calls meanwhile). */
  private async seed(teamId: string, period: string): Promise<void> {
    // A callback that throws would reset the object: a D1 failure is carried out and thrown here.
    const failure = await this.ctx.blockConcurrencyWhile(async () => {
      if (this.seeded(period)) return null;
      let rolled: Awaited<ReturnType<typeof readRolledUp>>;
      try {
        rolled = await readRolledUp(this.env.DB, teamId, period);
      } catch (error) {
        return error;
      }
      const { used, daily } = rolled;
      // A seeded count never lowers one this object holds (it may hold the month from before a
      // deleteAll it survived only in D1): the larger of the two wins.
      for (const [service, value] of Object.entries(used)) {
        this.sql.exec(SQL.SEED_USAGE, service, period, value);
      }
      for (const row of daily) {
        this.sql.exec(SQL.SEED_DAILY, row.day, row.service, row.used);
      }
      // Months before the previous one are finished and rolled up: keep only what can be read.
      this.sql.exec(SQL.FORGET_OLD_USAGE, previousMonth(period));
      this.sql.exec(SQL.FORGET_OLD_DAILY, `${previousMonth(period)}-01`);
      this.sql.exec(SQL.MARK_MONTH_SEEDED, period, teamId);
      this.monthRead = null;
      // Seeding may have raised units this instance holds a copy of.
      this.units.clear();
      this.seededMonths?.add(period);
      this.touch();
      return null;
    });
    if (failure !== null) throw failure;
  }

  private seeded(period: string): boolean {
    this.seededMonths ??= new Set(
      this.sql
        .exec<{ period: string }>(SQL.SELECT_SEEDED_PERIODS)
        .toArray()
        .map((row) => row.period),
    );
    return this.seededMonths.has(period);
  }

  /** The month's units per service and per day (the copy this instance read last while no unit changed). */
  private monthUsage(period: string): Pick<UsageSnapshot, "used" | "daily"> {
    if (this.monthRead?.period === period) return this.monthRead.usage;
    const used: Record<string, number> = {};
    for (const row of this.sql.exec<{ service: string; used: number }>(SQL.SELECT_MONTH_USAGE, period)) used[row.service] = row.used;
    const daily = this.sql
      .exec<{ day: string; service: string; used: number }>(SQL.SELECT_MONTH_DAILY, `${period}-01`, `${period}-32`)
      .toArray()
      .map((row) => ({ day: row.day, service: row.service, used: row.used }));
    this.monthRead = { period, usage: { used, daily } };
    return { used, daily };
  }

  /** A quota change is written to D1 within ROLLUP_MS: the alarm is brought forward when it is later. */
  private scheduleRollUp(): void {
    this.touch();
    void this.ctx.storage.getAlarm().then((alarm) => {
      const due = Date.now() + ROLLUP_MS;
      if (alarm === null || alarm > due) return this.ctx.storage.setAlarm(due);
    });
  }

  /**
   * Writes what changed to D1, then applies retention: an object with no new window for IDLE_MS
   * and nothing left to write keeps nothing (its months come back from D1 when it is used again).
   */
  override async alarm(): Promise<void> {
    return withLogScope({ alarm: "RateLimiter" }, () => this.rollUpOrForget());
  }

  private async rollUpOrForget(): Promise<void> {
    const pending = await this.rollUpNow();
    if (pending) {
      await this.ctx.storage.setAlarm(Date.now() + ROLLUP_MS);
      return;
    }
    const rows = this.sql.exec<{ id: number; at: number }>(SQL.SELECT_SEEN).toArray();
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

  /**
   * Writes the dirty quota rows to D1 in one batch (absolute values, so a repeat is harmless) and
   * clears the marks of rows unchanged since. Returns whether something is still to be written.
   */
  async rollUpNow(): Promise<boolean> {
    const months = this.sql.exec<{ service: string; period: string; used: number }>(SQL.SELECT_DIRTY_USAGE).toArray();
    const days = this.sql.exec<{ day: string; service: string; used: number }>(SQL.SELECT_DIRTY_DAILY).toArray();
    if (months.length === 0 && days.length === 0) return false;
    const teams = new Map(
      this.sql
        .exec<{ period: string; team_id: string }>(SQL.SELECT_MONTHS)
        .toArray()
        .map((m) => [m.period, m.team_id]),
    );
    const teamId = teams.values().next().value;
    if (!teamId) return false;
    try {
      await rollUp(this.env.DB, teamId, months, days);
    } catch (error) {
      log.error("meter roll-up failed, retrying", { team_id: teamId, error: String(error) });
      return true;
    }
    // Calls that ran during the write changed rows again: those stay dirty for the next roll-up.
    for (const m of months) this.sql.exec(SQL.CLEAN_USAGE, m.service, m.period, m.used);
    for (const d of days) this.sql.exec(SQL.CLEAN_DAILY, d.day, d.service, d.used);
    return this.sql.exec(SQL.ANY_DIRTY).toArray().length > 0;
  }

  /** The count of a window without counting a request (tests and diagnostics). */
  peek(windowStart: number, name: string = OWN_COUNTER): number {
    return this.tally().count(name, windowStart);
  }
}

/** When a block's object last dropped its client networks' older windows (`ip:…`) and days (`ipday:…`). */
interface Sweeps {
  networksBefore: number;
  networkDaysBefore: number;
}

/** Copies of units an instance keeps at most (a service's month or day each; every copy goes once past it). */
const KNOWN_UNITS_MAX = 256;

/** A service's units of the month and of the day, as a tally holds them. */
interface TalliedUnits {
  /** The object's copies of the month's and the day's units are keyed so. */
  monthKey: string;
  dayKey: string;
  service: string;
  period: string;
  day: string;
  month: number;
  today: number;
  changed: boolean;
}

interface TalliedCounter {
  name: string;
  start: number;
  count: number;
  /** The window had no row before this tally (its first hit). */
  fresh: boolean;
  /** Counted in this tally (to be written). */
  changed: boolean;
  idleMs: number;
}

/**
 * The counters and quota units one call touches: each read from SQLite at most once, counted in
 * memory, and written once by write() (a statement or two per counter and service, not per request
 * of the batch). A call runs without yielding between its first read and write(), so nothing else
 * counts in between.
 */
class Tally {
  private readonly counters = new Map<string, TalliedCounter>();
  private readonly units = new Map<string, TalliedUnits>();

  constructor(
    private readonly sql: SqlStorage,
    /** The object's copy of each counter's latest window (read before SQLite, updated by write()). */
    private readonly windows: Map<string, { start: number; count: number }>,
    /** The object's copy of each service's units per month and per day (read before SQLite, updated by write()). */
    private readonly known: Map<string, number>,
    /** Notes use for retention, with how long the window keeps the object alive. */
    private readonly touch: (idleMs: number) => void,
    /** The object's last sweeps of its client networks' windows and days. */
    private readonly sweeps: Sweeps,
  ) {}

  private counter(name: string, start: number): TalliedCounter {
    const key = `${name}\u0000${start}`;
    let counter = this.counters.get(key);
    if (!counter) {
      const known = this.windows.get(name);
      const row = known?.start === start ? known : this.sql.exec<{ count: number }>(SQL.SELECT_COUNT, name, start).toArray()[0];
      counter = { name, start, count: row?.count ?? 0, fresh: !row, changed: false, idleMs: IDLE_MS };
      this.counters.set(key, counter);
    }
    return counter;
  }

  /** The count of a window (0: nothing counted). */
  count(name: string, start: number): number {
    return this.counter(name, start).count;
  }

  /**
   * Adds `cost` to one counter in the window starting at `start` (Unix seconds); returns the new
   * count. `idleMs` is how long the window keeps the object alive (two windows).
   */
  add(name: string, start: number, cost: number, idleMs: number): number {
    const counter = this.counter(name, start);
    counter.count += cost;
    counter.changed = true;
    counter.idleMs = Math.max(counter.idleMs, idleMs);
    return counter.count;
  }

  private unitsOf(service: string, period: string, day: string): TalliedUnits {
    const key = `${service}\u0000${period}\u0000${day}`;
    let units = this.units.get(key);
    if (!units) {
      const monthKey = `m${service}\u0000${period}`;
      const dayKey = `d${service}\u0000${day}`;
      let month = this.known.get(monthKey);
      if (month === undefined) {
        month = this.sql.exec<{ used: number }>(SQL.SELECT_USED_IN_MONTH, service, period).toArray()[0]?.used ?? 0;
        this.remember(monthKey, month);
      }
      let today = this.known.get(dayKey);
      if (today === undefined) {
        today = this.sql.exec<{ used: number }>(SQL.SELECT_USED_ON_DAY, day, service).toArray()[0]?.used ?? 0;
        this.remember(dayKey, today);
      }
      units = { monthKey, dayKey, service, period, day, month, today, changed: false };
      this.units.set(key, units);
    }
    return units;
  }

  /**
   * Takes (or gives back) units in one step, as one request alone: all of `amount` when it fits
   * under the limit, or nothing; a give-back never goes below zero, and the day carries what the
   * month gained or lost today (never below zero either).
   */
  take(period: string, day: string, quota: NonNullable<MeterItem["quota"]>): { ok: boolean; used: number } {
    const units = this.unitsOf(quota.service, period, day);
    const current = units.month;
    const next = Math.max(0, current + quota.amount);
    if (quota.amount > 0 && quota.limit !== null && next > quota.limit) return { ok: false, used: current };
    if (next === current) return { ok: true, used: current };
    units.month = next;
    units.today = Math.max(0, units.today + (next - current));
    units.changed = true;
    return { ok: true, used: next };
  }

  /** Keeps the object's copy of a service's units (every copy goes once there are too many: days pass). */
  private remember(key: string, units: number): void {
    if (this.known.size >= KNOWN_UNITS_MAX && !this.known.has(key)) this.known.clear();
    this.known.set(key, units);
  }

  /**
   * Drops every client network's windows before `start` (`ip:…`, once per window) or its daily
   * counters before the day starting at `start` (`ipday:…`, once per day), in SQLite and in the
   * instance's copy.
   */
  private sweepNetworks(prefix: typeof NETWORK_PREFIX | typeof NETWORK_DAY_PREFIX, start: number): void {
    const last = prefix === NETWORK_PREFIX ? "networksBefore" : "networkDaysBefore";
    if (this.sweeps[last] >= start) return;
    this.sweeps[last] = start;
    this.sql.exec(prefix === NETWORK_PREFIX ? SQL.DROP_OLDER_NETWORK_WINDOWS : SQL.DROP_OLDER_NETWORK_DAYS, start);
    for (const [name, known] of this.windows) if (known.start < start && name.startsWith(prefix)) this.windows.delete(name);
  }

  /** Writes every counter counted in and every service's units taken or given back, marked for the roll-up. */
  write(): void {
    for (const units of this.units.values()) {
      if (!units.changed) continue;
      this.sql.exec(SQL.WRITE_USAGE, units.service, units.period, units.month);
      this.sql.exec(SQL.WRITE_DAILY, units.day, units.service, units.today);
      this.remember(units.monthKey, units.month);
      this.remember(units.dayKey, units.today);
      units.changed = false;
    }
    for (const counter of this.counters.values()) {
      if (!counter.changed) continue;
      this.sql.exec(SQL.WRITE_COUNT, counter.name, counter.start, counter.count);
      if (counter.fresh) {
        // The first hit of a window: the counter's older windows are dead weight (it resets to zero
        // at rollover), so drop them now rather than on every hit; note when (real time, not the
        // callers' clock, which tests move) and look again once the window can no longer be current.
        // A block's object counts many client networks (`ip:…`), most of them seen once: the first
        // new window of any of them drops every network's older windows, once per window, so a
        // network that never comes back leaves nothing behind while the block stays busy; a
        // network's daily caps (`ipday:…`) go the same way at each new day.
        if (counter.name.startsWith(NETWORK_PREFIX)) this.sweepNetworks(NETWORK_PREFIX, counter.start);
        else if (counter.name.startsWith(NETWORK_DAY_PREFIX)) this.sweepNetworks(NETWORK_DAY_PREFIX, counter.start);
        else this.sql.exec(SQL.DROP_OLDER_WINDOWS, counter.name, counter.start);
        this.touch(counter.idleMs);
      }
      const known = this.windows.get(counter.name);
      if (!known || known.start <= counter.start) this.windows.set(counter.name, { start: counter.start, count: counter.count });
      counter.changed = false;
      counter.fresh = false;
    }
  }
}

/** `YYYY-MM` of the month before `period`. */
function previousMonth(period: string): string {
  const [year, month] = period.split("-").map(Number) as [number, number];
  return new Date(Date.UTC(year, month - 2, 1)).toISOString().slice(0, 7);
}
