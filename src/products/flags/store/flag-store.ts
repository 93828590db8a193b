// FlagStore: a team's flags, segments, environments, their history and scheduled changes, and the
// insights counters, in a SQLite-backed Durable Object of their own (one per team, named by the team
// id the Worker takes from the caller's credential, so one team's ruleset never reaches another's
// evaluation). Every change runs in one transaction: the checks that need the team's environments
// and segments (flag-model.ts), the size caps, the new version with its history row, and the
// team's ruleset revision + 1 (the version isolates cache rulesets by). Scheduled changes are
// applied by the object's alarm, set for the earliest pending one. Every method is an RPC.
import { DurableObject } from "cloudflare:workers";
import { and, asc, desc, eq, sql } from "drizzle-orm";
import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import type { Env } from "../../../env";
import { log } from "../../../platform/log";
import { utf8Length } from "../../../platform/sizes";
import type { Ruleset, RulesetSegment } from "../evaluate";
import {
  changedFields,
  checkFlag,
  checkSegment,
  type Flag,
  newFlag,
  newSegment,
  patchFlag,
  patchSegment,
  rulesetFlag,
  type Segment,
  segmentsUsed,
  withEnvironments,
} from "../flag-model";
import type { Actor, CreateFlagInput, CreateSegmentInput, UpdateFlagInput, UpdateSegmentInput } from "../flags.schemas";
import { LIMITS } from "../flags.schemas";
import { readInsights, recordBatch } from "./flag-insights";
import { applyDue, createScheduled, listScheduled, nextDue } from "./flag-schedule";
import { invalid, ok, refuse, type FlagInsights, type HistoryEntry, type RecordBatch, type ScheduledChange, type StoreResult } from "./flag-rows";
import * as schema from "./flag-store.schema";
import migrations from "./migrations/migrations.js";

export type FlagDb = DrizzleSqliteDODatabase<typeof schema>;

/** The environments every team has from the start. */
export const INITIAL_ENVIRONMENTS = [
  { key: "production", name: "Production" },
  { key: "development", name: "Development" },
];

export class FlagStore extends DurableObject<Env> {
  readonly db: FlagDb;
  /** Rulesets built for the current revision, by environment (dropped by every change). */
  private rulesets = new Map<string, Ruleset>();
  private rulesetRevision = -1;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = drizzle(ctx.storage, { schema });
    void ctx.blockConcurrencyWhile(async () => {
      await migrate(this.db, migrations);
      const at = new Date().toISOString();
      this.db.insert(schema.state).values({ id: 1, revision: 1 }).onConflictDoNothing().run();
      for (const e of INITIAL_ENVIRONMENTS)
        this.db
          .insert(schema.environments)
          .values({ ...e, createdAt: at })
          .onConflictDoNothing()
          .run();
    });
  }

  // Environments ---------------------------------------------------------------------------------

  async environments(): Promise<Array<{ key: string; name: string; created_at: string }>> {
    return this.environmentRows().map((e) => ({ key: e.key, name: e.name, created_at: e.createdAt }));
  }

  async createEnvironment(key: string, name: string, at: string): Promise<StoreResult<{ key: string; name: string; created_at: string }>> {
    return this.ctx.storage.transactionSync(() => {
      const rows = this.environmentRows();
      if (rows.some((e) => e.key === key)) return refuse(409, `Environment ${key} already exists`);
      if (rows.length >= LIMITS.environments) return invalid({ environments: [`a team has at most ${LIMITS.environments} environments`] });
      this.db.insert(schema.environments).values({ key, name, createdAt: at }).run();
      this.bump();
      return ok({ key, name, created_at: at });
    });
  }

  // Flags ----------------------------------------------------------------------------------------

  async listFlags(): Promise<Flag[]> {
    const envs = this.environmentKeys();
    return this.db
      .select({ doc: schema.flags.doc })
      .from(schema.flags)
      .orderBy(asc(schema.flags.key))
      .all()
      .map((r) => withEnvironments(JSON.parse(r.doc) as Flag, envs));
  }

  /** When each flag was last evaluated per environment (the stale list). */
  async lastEvaluated(): Promise<Array<{ flag: string; environment: string; at: string }>> {
    return this.db
      .select()
      .from(schema.lastEvaluated)
      .all()
      .map((r) => ({ flag: r.flagKey, environment: r.environment, at: r.at }));
  }

  async getFlag(key: string): Promise<Flag | null> {
    const flag = this.flagRow(key);
    return flag && withEnvironments(flag, this.environmentKeys());
  }

  async createFlag(input: CreateFlagInput, salt: string, actor: Actor, at: string): Promise<StoreResult<Flag>> {
    return this.ctx.storage.transactionSync(() => {
      if (this.flagRow(input.key)) return refuse(409, `Flag ${input.key} already exists`);
      return this.write(null, newFlag(input, salt, at), actor, at);
    });
  }

  async updateFlag(key: string, patch: UpdateFlagInput, ifMatch: number | null, actor: Actor, at: string): Promise<StoreResult<Flag>> {
    return this.ctx.storage.transactionSync(() => {
      const flag = this.flagRow(key);
      if (!flag) return refuse(404, "Flag not found");
      if (ifMatch !== null && ifMatch !== flag.version) return refuse(412, `Flag ${key} is at version ${flag.version}, not ${ifMatch}`);
      return this.write(flag, patchFlag(flag, patch), actor, at);
    });
  }

  /** `ifMatch`: the version the revert is made against (412 when the flag has moved on), as PATCH's If-Match. */
  async revertFlag(key: string, version: number, actor: Actor, at: string, ifMatch: number | null = null): Promise<StoreResult<Flag>> {
    return this.ctx.storage.transactionSync(() => {
      const flag = this.flagRow(key);
      if (!flag) return refuse(404, "Flag not found");
      if (ifMatch !== null && ifMatch !== flag.version) return refuse(412, `Flag ${key} is at version ${flag.version}, not ${ifMatch}`);
      const [old] = this.db
        .select({ doc: schema.flagHistory.doc })
        .from(schema.flagHistory)
        .where(and(eq(schema.flagHistory.flagKey, key), eq(schema.flagHistory.version, version)))
        .all();
      if (!old?.doc) return invalid({ version: [`is not a version of flag ${key}`] });
      const then = JSON.parse(old.doc) as Flag;
      return this.write(flag, { ...then, key: flag.key, salt: flag.salt, type: flag.type, created_at: flag.created_at }, actor, at);
    });
  }

  async deleteFlag(key: string): Promise<boolean> {
    return this.ctx.storage.transactionSync(() => {
      if (!this.flagRow(key)) return false;
      this.db.delete(schema.flags).where(eq(schema.flags.key, key)).run();
      this.db.delete(schema.flagSegments).where(eq(schema.flagSegments.flagKey, key)).run();
      this.db.delete(schema.flagHistory).where(eq(schema.flagHistory.flagKey, key)).run();
      this.db.delete(schema.scheduledChanges).where(eq(schema.scheduledChanges.flagKey, key)).run();
      this.db.delete(schema.insights).where(eq(schema.insights.flagKey, key)).run();
      this.db.delete(schema.lastEvaluated).where(eq(schema.lastEvaluated.flagKey, key)).run();
      this.bump();
      return true;
    });
  }

  async history(key: string, limit: number): Promise<HistoryEntry[] | null> {
    if (!this.flagRow(key)) return null;
    return this.db
      .select()
      .from(schema.flagHistory)
      .where(eq(schema.flagHistory.flagKey, key))
      .orderBy(desc(schema.flagHistory.version))
      .limit(limit)
      .all()
      .map((r) => ({ version: r.version, at: r.at, actor: JSON.parse(r.actor) as Actor, changes: JSON.parse(r.changes) as string[] }));
  }

  /**
   * Writes `next` as the version after `before` (null: a new flag), inside the caller's transaction:
   * checks against the team's environments and segments, the ruleset's size cap, the history row,
   * the segments the flag names, and the revision + 1. Nothing is written when a check fails.
   */
  write(before: Flag | null, next: Flag, actor: Actor, at: string, extraChanges: string[] = []): StoreResult<Flag> {
    const envs = this.environmentKeys();
    const segmentKeys = new Set(
      this.db
        .select({ key: schema.segments.key })
        .from(schema.segments)
        .all()
        .map((s) => s.key),
    );
    const errors = checkFlag(next, new Set(envs), segmentKeys);
    if (Object.keys(errors).length > 0) return invalid(errors);
    const changes = [...changedFields(before, next), ...extraChanges];
    const flag: Flag = { ...next, version: before ? before.version + 1 : 1, updated_at: at };
    const doc = JSON.stringify(flag);
    const size = utf8Length(doc);
    if (this.rulesetBytes(flag.key) + size > LIMITS.rulesetBytes)
      return invalid({ ruleset: [`would be larger than ${LIMITS.rulesetBytes / 1024 / 1024} MB of JSON`] });
    this.db
      .insert(schema.flags)
      .values({ key: flag.key, doc, version: flag.version, size, updatedAt: at })
      .onConflictDoUpdate({ target: schema.flags.key, set: { doc, version: flag.version, size, updatedAt: at } })
      .run();
    this.db
      .insert(schema.flagHistory)
      .values({ flagKey: flag.key, version: flag.version, at, actor: JSON.stringify(actor), changes: JSON.stringify(changes), doc })
      .run();
    this.db.delete(schema.flagSegments).where(eq(schema.flagSegments.flagKey, flag.key)).run();
    for (const segmentKey of segmentsUsed(flag)) this.db.insert(schema.flagSegments).values({ flagKey: flag.key, segmentKey }).run();
    this.bump();
    return ok(withEnvironments(flag, envs));
  }

  // Scheduled changes ------------------------------------------------------------------------------

  /** `ifMatch`: the flag's version the change is made against (412 when it has moved on); null: any. */
  async schedule(key: string, input: Parameters<typeof createScheduled>[2], actor: Actor, at: string, ifMatch: number | null = null) {
    const result = this.ctx.storage.transactionSync(() => createScheduled(this, key, input, actor, at, ifMatch));
    if (result.ok) await this.armAlarm();
    return result;
  }

  override async alarm(): Promise<void> {
    const applied = this.ctx.storage.transactionSync(() => applyDue(this, Date.now()));
    if (applied > 0) log.info("flags: scheduled changes applied", { applied });
    await this.armAlarm();
  }

  /** Applies the changes due at `now` (ms): the alarm's work, callable by tests with a moved clock. */
  async runDue(now: number): Promise<number> {
    const applied = this.ctx.storage.transactionSync(() => applyDue(this, now));
    await this.armAlarm();
    return applied;
  }

  async listScheduled(key: string): Promise<ScheduledChange[] | null> {
    return this.flagRow(key) ? listScheduled(this, key) : null;
  }

  /** Deletes a pending change; false when the flag has none with that id (applied ones stay as a record). */
  async deleteScheduled(key: string, id: string): Promise<boolean> {
    const removed = this.db
      .delete(schema.scheduledChanges)
      .where(and(eq(schema.scheduledChanges.flagKey, key), eq(schema.scheduledChanges.id, id)))
      .returning({ id: schema.scheduledChanges.id })
      .all();
    await this.armAlarm();
    return removed.length > 0;
  }

  private async armAlarm(): Promise<void> {
    const due = nextDue(this);
    if (due === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(due);
  }

  // Insights ---------------------------------------------------------------------------------------

  async record(batch: RecordBatch, now: number): Promise<void> {
    this.ctx.storage.transactionSync(() => recordBatch(this.db, batch, now));
  }

  async insights(key: string, sinceHour: string): Promise<FlagInsights | null> {
    return this.flagRow(key) ? readInsights(this.db, key, sinceHour) : null;
  }

  // Segments ---------------------------------------------------------------------------------------

  async listSegments(): Promise<Segment[]> {
    return this.db
      .select({ doc: schema.segments.doc })
      .from(schema.segments)
      .orderBy(asc(schema.segments.key))
      .all()
      .map((r) => JSON.parse(r.doc) as Segment);
  }

  async getSegment(key: string): Promise<Segment | null> {
    return this.segmentRow(key);
  }

  async createSegment(input: CreateSegmentInput, at: string): Promise<StoreResult<Segment>> {
    return this.ctx.storage.transactionSync(() => {
      if (this.segmentRow(input.key)) return refuse(409, `Segment ${input.key} already exists`);
      return this.writeSegment(newSegment(input, at), at);
    });
  }

  async updateSegment(key: string, patch: UpdateSegmentInput, at: string): Promise<StoreResult<Segment>> {
    return this.ctx.storage.transactionSync(() => {
      const segment = this.segmentRow(key);
      if (!segment) return refuse(404, "Segment not found");
      return this.writeSegment({ ...patchSegment(segment, patch), version: segment.version + 1 }, at);
    });
  }

  async deleteSegment(key: string): Promise<StoreResult<true>> {
    return this.ctx.storage.transactionSync(() => {
      if (!this.segmentRow(key)) return refuse(404, "Segment not found");
      const users = this.db.select({ flag: schema.flagSegments.flagKey }).from(schema.flagSegments).where(eq(schema.flagSegments.segmentKey, key)).all();
      if (users.length > 0) return refuse(409, `Segment ${key} is used by flags: ${users.map((u) => u.flag).join(", ")}`);
      this.db.delete(schema.segments).where(eq(schema.segments.key, key)).run();
      this.bump();
      return ok(true as const);
    });
  }

  private writeSegment(segment: Segment, at: string): StoreResult<Segment> {
    const errors = checkSegment(segment);
    if (Object.keys(errors).length > 0) return invalid(errors);
    const stored: Segment = { ...segment, updated_at: at };
    const doc = JSON.stringify(stored);
    const size = utf8Length(doc);
    const others = this.db
      .select({ n: sql<number>`coalesce(sum(${schema.segments.size}), 0)` })
      .from(schema.segments)
      .where(sql`${schema.segments.key} != ${segment.key}`)
      .get()!.n;
    const flagsSize = this.db
      .select({ n: sql<number>`coalesce(sum(${schema.flags.size}), 0)` })
      .from(schema.flags)
      .get()!.n;
    if (others + flagsSize + size > LIMITS.rulesetBytes) return invalid({ ruleset: [`would be larger than ${LIMITS.rulesetBytes / 1024 / 1024} MB of JSON`] });
    this.db
      .insert(schema.segments)
      .values({ key: stored.key, doc, version: stored.version, size })
      .onConflictDoUpdate({ target: schema.segments.key, set: { doc, version: stored.version, size } })
      .run();
    this.bump();
    return ok(stored);
  }

  // Rulesets ---------------------------------------------------------------------------------------

  /**
   * An environment's ruleset, or only its revision when the caller already holds it (`known`);
   * null when the team has no such environment.
   */
  async ruleset(environment: string, known: number | null): Promise<{ revision: number; ruleset: Ruleset | null } | null> {
    const revision = this.currentRevision();
    if (revision !== this.rulesetRevision) {
      this.rulesets.clear();
      this.rulesetRevision = revision;
    }
    let ruleset = this.rulesets.get(environment);
    if (!ruleset) {
      if (!this.environmentKeys().includes(environment)) return null;
      if (known === revision) return { revision, ruleset: null };
      const flags: Ruleset["flags"] = {};
      for (const row of this.db.select({ doc: schema.flags.doc }).from(schema.flags).all()) {
        const flag = JSON.parse(row.doc) as Flag;
        flags[flag.key] = rulesetFlag(flag, environment);
      }
      const segments: Record<string, RulesetSegment> = {};
      for (const s of await this.listSegments()) segments[s.key] = { key: s.key, included: s.included, excluded: s.excluded, rules: s.rules };
      ruleset = { environment, version: revision, flags, segments };
      this.rulesets.set(environment, ruleset);
    }
    return { revision, ruleset: known === revision ? null : ruleset };
  }

  // Rows -------------------------------------------------------------------------------------------

  flagRow(key: string): Flag | null {
    const [row] = this.db.select({ doc: schema.flags.doc }).from(schema.flags).where(eq(schema.flags.key, key)).all();
    return row ? (JSON.parse(row.doc) as Flag) : null;
  }

  private segmentRow(key: string): Segment | null {
    const [row] = this.db.select({ doc: schema.segments.doc }).from(schema.segments).where(eq(schema.segments.key, key)).all();
    return row ? (JSON.parse(row.doc) as Segment) : null;
  }

  private environmentRows() {
    return this.db.select().from(schema.environments).orderBy(asc(schema.environments.createdAt), sql`rowid`).all();
  }

  environmentKeys(): string[] {
    return this.environmentRows().map((e) => e.key);
  }

  private rulesetBytes(exceptFlag: string): number {
    const flagsSize = this.db
      .select({ n: sql<number>`coalesce(sum(${schema.flags.size}), 0)` })
      .from(schema.flags)
      .where(sql`${schema.flags.key} != ${exceptFlag}`)
      .get()!.n;
    const segmentsSize = this.db
      .select({ n: sql<number>`coalesce(sum(${schema.segments.size}), 0)` })
      .from(schema.segments)
      .get()!.n;
    return flagsSize + segmentsSize;
  }

  private currentRevision(): number {
    return this.db.select({ revision: schema.state.revision }).from(schema.state).where(eq(schema.state.id, 1)).get()!.revision;
  }

  private bump(): void {
    this.db
      .update(schema.state)
      .set({ revision: sql`${schema.state.revision} + 1` })
      .where(eq(schema.state.id, 1))
      .run();
  }
}
