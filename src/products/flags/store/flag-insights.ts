// The insights side of a team's flag store: counters of evaluations and exposures per flag,
// environment, hour and variant, the instant each flag was last evaluated per environment, and
// custom track events per name and hour. Isolates send them in batches (flags.insights.ts), never
// one store call per evaluation. Kept 90 days (older hours go at each write of a new hour).
import { and, asc, eq, gte, lt, sql } from "drizzle-orm";
import type { FlagInsights, RecordBatch } from "./flag-rows";
import * as schema from "./flag-store.schema";
import type { FlagDb } from "./flag-store";

/** Hours of insights kept. */
export const INSIGHTS_RETENTION_HOURS = 90 * 24;

export const hourOf = (ms: number) => new Date(ms).toISOString().slice(0, 13);

export function recordBatch(db: FlagDb, batch: RecordBatch, now: number): void {
  for (const c of batch.counts) {
    db.insert(schema.insights)
      .values({ flagKey: c.flag, environment: c.environment, hour: c.hour, variant: c.variant, source: c.source, count: c.count })
      .onConflictDoUpdate({
        target: [schema.insights.flagKey, schema.insights.environment, schema.insights.hour, schema.insights.variant, schema.insights.source],
        set: { count: sql`${schema.insights.count} + ${c.count}` },
      })
      .run();
  }
  for (const e of batch.evaluated) {
    db.insert(schema.lastEvaluated)
      .values({ flagKey: e.flag, environment: e.environment, at: e.at })
      .onConflictDoUpdate({
        target: [schema.lastEvaluated.flagKey, schema.lastEvaluated.environment],
        set: { at: sql`max(${schema.lastEvaluated.at}, excluded.at)` },
      })
      .run();
  }
  for (const e of batch.custom) {
    db.insert(schema.customEvents)
      .values({ name: e.name, environment: e.environment, hour: e.hour, count: e.count, valueSum: e.value })
      .onConflictDoUpdate({
        target: [schema.customEvents.name, schema.customEvents.environment, schema.customEvents.hour],
        set: { count: sql`${schema.customEvents.count} + ${e.count}`, valueSum: sql`${schema.customEvents.valueSum} + ${e.value}` },
      })
      .run();
  }
  const oldest = hourOf(now - INSIGHTS_RETENTION_HOURS * 3_600_000);
  db.delete(schema.insights).where(lt(schema.insights.hour, oldest)).run();
  db.delete(schema.customEvents).where(lt(schema.customEvents.hour, oldest)).run();
}

/** A flag's counters since `sinceHour` (inclusive), and when it was last evaluated anywhere. */
export function readInsights(db: FlagDb, flag: string, sinceHour: string): FlagInsights {
  const rows = db
    .select()
    .from(schema.insights)
    .where(and(eq(schema.insights.flagKey, flag), gte(schema.insights.hour, sinceHour)))
    .orderBy(asc(schema.insights.hour), asc(schema.insights.environment), asc(schema.insights.variant))
    .all();
  const hours = new Map<string, FlagInsights["hours"][number]>();
  for (const r of rows) {
    const id = `${r.environment}\u0000${r.hour}\u0000${r.variant}`;
    let entry = hours.get(id);
    if (!entry) {
      entry = { environment: r.environment, hour: r.hour, variant: r.variant, evaluations: 0, exposures: 0 };
      hours.set(id, entry);
    }
    if (r.source === "evaluation") entry.evaluations += r.count;
    else entry.exposures += r.count;
  }
  const last = db
    .select({ at: sql<string | null>`max(${schema.lastEvaluated.at})` })
    .from(schema.lastEvaluated)
    .where(eq(schema.lastEvaluated.flagKey, flag))
    .get();
  return { flag, last_evaluated_at: last?.at ?? null, hours: [...hours.values()] };
}
