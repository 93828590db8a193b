// Scheduled changes of a flag's environment (`{environment, at, enabled?, fallthrough?}`), kept in
// the team's flag store and applied by its alarm, set for the earliest pending change: each due
// change is one new version of its flag (actor: the schedule), in the alarm's transaction. A change
// whose flag no longer accepts it (the fallthrough names a variant since removed) is marked failed
// with the reason, and the others still apply.
import { and, asc, eq, lte } from "drizzle-orm";
import { LIMITS, type Actor } from "../flags.schemas";
import { invalid, ok, refuse, type ScheduledChange, type ScheduledChangeInput, type StoreResult } from "./flag-rows";
import * as schema from "./flag-store.schema";
import type { FlagStore } from "./flag-store";

type Row = typeof schema.scheduledChanges.$inferSelect;

export function scheduledOf(row: Row): ScheduledChange {
  const change = JSON.parse(row.change) as Pick<ScheduledChange, "enabled" | "fallthrough">;
  return {
    id: row.id,
    flag: row.flagKey,
    environment: row.environment,
    at: new Date(row.at).toISOString(),
    ...change,
    status: row.status,
    actor: JSON.parse(row.actor) as Actor,
    created_at: row.createdAt,
    applied_at: row.appliedAt,
    applied_version: row.appliedVersion,
    error: row.error,
  };
}

/** `ifMatch`: the flag's version the change is made against (412 when it has moved on), null: any. */
export function createScheduled(
  store: FlagStore,
  key: string,
  input: ScheduledChangeInput,
  actor: Actor,
  at: string,
  ifMatch: number | null = null,
): StoreResult<ScheduledChange> {
  const flag = store.flagRow(key);
  if (!flag) return refuse(404, "Flag not found");
  if (ifMatch !== null && ifMatch !== flag.version) return refuse(412, `Flag ${key} is at version ${flag.version}, not ${ifMatch}`);
  if (!store.environmentKeys().includes(input.environment)) return invalid({ environment: ["is not an environment of the team"] });
  const unknown: Record<string, string[]> = {};
  if (input.fallthrough && "variant" in input.fallthrough && !Object.hasOwn(flag.variants, input.fallthrough.variant)) {
    unknown["fallthrough.variant"] = ["must name one of the variants"];
  } else if (input.fallthrough && "rollout" in input.fallthrough) {
    input.fallthrough.rollout.variations.forEach((v, i) => {
      if (!Object.hasOwn(flag.variants, v.variant)) unknown[`fallthrough.rollout.variations.${i}.variant`] = ["must name one of the variants"];
    });
  }
  if (Object.keys(unknown).length > 0) return invalid(unknown);
  const pending = store.db
    .select({ id: schema.scheduledChanges.id })
    .from(schema.scheduledChanges)
    .where(and(eq(schema.scheduledChanges.flagKey, key), eq(schema.scheduledChanges.status, "pending")))
    .all();
  if (pending.length >= LIMITS.scheduled) return invalid({ scheduled_changes: [`a flag has at most ${LIMITS.scheduled} pending scheduled changes`] });
  const change: Pick<ScheduledChangeInput, "enabled" | "fallthrough"> = {};
  if (input.enabled !== undefined) change.enabled = input.enabled;
  if (input.fallthrough !== undefined) change.fallthrough = input.fallthrough;
  const row: Row = {
    id: crypto.randomUUID(),
    flagKey: key,
    environment: input.environment,
    at: input.at,
    change: JSON.stringify(change),
    actor: JSON.stringify(actor),
    status: "pending",
    createdAt: at,
    appliedAt: null,
    appliedVersion: null,
    error: null,
  };
  store.db.insert(schema.scheduledChanges).values(row).run();
  return ok(scheduledOf(row));
}

export function listScheduled(store: FlagStore, key: string): ScheduledChange[] {
  return store.db
    .select()
    .from(schema.scheduledChanges)
    .where(eq(schema.scheduledChanges.flagKey, key))
    .orderBy(asc(schema.scheduledChanges.at))
    .all()
    .map(scheduledOf);
}

/** When the alarm should next run (ms), or null when nothing is pending. */
export function nextDue(store: FlagStore): number | null {
  const [row] = store.db
    .select({ at: schema.scheduledChanges.at })
    .from(schema.scheduledChanges)
    .where(eq(schema.scheduledChanges.status, "pending"))
    .orderBy(asc(schema.scheduledChanges.at))
    .limit(1)
    .all();
  return row ? row.at : null;
}

/** Applies every pending change due at `now` (ms), oldest first; returns how many applied. */
export function applyDue(store: FlagStore, now: number): number {
  const due = store.db
    .select()
    .from(schema.scheduledChanges)
    .where(and(eq(schema.scheduledChanges.status, "pending"), lte(schema.scheduledChanges.at, now)))
    .orderBy(asc(schema.scheduledChanges.at))
    .all();
  let applied = 0;
  const at = new Date(now).toISOString();
  for (const row of due) {
    const change = JSON.parse(row.change) as Pick<ScheduledChangeInput, "enabled" | "fallthrough">;
    const flag = store.flagRow(row.flagKey);
    const base = flag?.environments[row.environment];
    let error: string | null = null;
    let version: number | null = null;
    if (!flag) error = "the flag was deleted";
    else {
      const envs = { ...flag.environments };
      envs[row.environment] = {
        enabled: change.enabled ?? base?.enabled ?? false,
        rules: base?.rules ?? [],
        fallthrough: change.fallthrough ??
          base?.fallthrough ?? { variant: flag.type === "boolean" && Object.hasOwn(flag.variants, "on") ? "on" : Object.keys(flag.variants)[0] },
      };
      const result = store.write(flag, { ...flag, environments: envs }, { type: "schedule", id: row.id, label: `scheduled change ${row.id}` }, at);
      if (result.ok) {
        version = result.value.version;
        applied++;
      } else error = `${result.refusal.message}: ${JSON.stringify(result.refusal.details ?? {})}`;
    }
    store.db
      .update(schema.scheduledChanges)
      .set({ status: error ? "failed" : "applied", appliedAt: at, appliedVersion: version, error })
      .where(eq(schema.scheduledChanges.id, row.id))
      .run();
  }
  return applied;
}
