// Insights without a store call per evaluation: each isolate adds up the evaluations (and track
// events) it answers per team, flag, environment, hour and variant, and sends them to the team's
// store in one call at most every INSIGHTS_FLUSH_MS per team (from the request's waitUntil, after
// its answer). A flush is made by a later note of the same team in the same isolate: counts noted
// within the window after a flush wait for the next one, and an isolate evicted meanwhile loses them
// (README "Insights and the stale list").
import type { Env } from "../../env";
import { log } from "../../platform/log";
import { nowMs } from "../../platform/clock";
import type { Evaluation } from "./evaluate";
import { flagStore } from "./flags.store";
import type { RecordBatch } from "./store/flag-rows";

export const INSIGHTS_FLUSH_MS = 10_000;
/** Teams with counts pending per isolate; one more flushes the oldest first. */
const TEAMS_MAX = 1_000;

interface Pending {
  counts: Map<string, RecordBatch["counts"][number]>;
  evaluated: Map<string, RecordBatch["evaluated"][number]>;
  custom: Map<string, RecordBatch["custom"][number]>;
}

const pending = new Map<string, Pending>();
const lastFlush = new Map<string, number>();
const hourOf = (ms: number) => new Date(ms).toISOString().slice(0, 13);

function pendingOf(env: Env, teamId: string, keepAlive?: (p: Promise<unknown>) => void): Pending {
  let p = pending.get(teamId);
  if (!p) {
    if (pending.size >= TEAMS_MAX) flush(env, pending.keys().next().value!, keepAlive);
    p = { counts: new Map(), evaluated: new Map(), custom: new Map() };
    pending.set(teamId, p);
  }
  return p;
}

export interface Noted {
  flag: string;
  variant: string | null;
}

/**
 * Counts `results` (evaluations answered, or exposures tracked) of an environment; `fresh` marks
 * each flag evaluated now (the stale list), which a client key's calls never do.
 */
export function noteInsights(
  env: Env,
  teamId: string,
  environment: string,
  results: Noted[],
  source: "evaluation" | "exposure",
  fresh: boolean,
  keepAlive?: (p: Promise<unknown>) => void,
): void {
  const now = nowMs();
  const hour = hourOf(now);
  const at = new Date(now).toISOString();
  const p = pendingOf(env, teamId, keepAlive);
  for (const { flag, variant } of results) {
    if (variant === null) continue;
    const id = `${flag}\u0000${environment}\u0000${hour}\u0000${variant}\u0000${source}`;
    const entry = p.counts.get(id);
    if (entry) entry.count++;
    else p.counts.set(id, { flag, environment, hour, variant, source, count: 1 });
    if (fresh) p.evaluated.set(`${flag}\u0000${environment}`, { flag, environment, at });
  }
  maybeFlush(env, teamId, now, keepAlive);
}

export function noteCustomEvent(
  env: Env,
  teamId: string,
  environment: string,
  name: string,
  value: number,
  at: number,
  keepAlive?: (p: Promise<unknown>) => void,
): void {
  const hour = hourOf(at);
  const p = pendingOf(env, teamId, keepAlive);
  const id = `${name}\u0000${environment}\u0000${hour}`;
  const entry = p.custom.get(id);
  if (entry) {
    entry.count++;
    entry.value += value;
  } else p.custom.set(id, { name, environment, hour, count: 1, value });
  maybeFlush(env, teamId, nowMs(), keepAlive);
}

/** Convenience for evaluation answers. */
export function evaluationsNoted(results: Record<string, Evaluation>): Noted[] {
  return Object.entries(results).map(([flag, e]) => ({ flag, variant: e.variant }));
}

function maybeFlush(env: Env, teamId: string, now: number, keepAlive?: (p: Promise<unknown>) => void): void {
  const last = lastFlush.get(teamId) ?? 0;
  if (now - last < INSIGHTS_FLUSH_MS && now >= last) return;
  flush(env, teamId, keepAlive);
}

function flush(env: Env, teamId: string, keepAlive?: (p: Promise<unknown>) => void): Promise<void> {
  const p = pending.get(teamId);
  pending.delete(teamId);
  lastFlush.set(teamId, nowMs());
  if (lastFlush.size > TEAMS_MAX) lastFlush.delete(lastFlush.keys().next().value!);
  if (!p || (p.counts.size === 0 && p.evaluated.size === 0 && p.custom.size === 0)) return Promise.resolve();
  const batch: RecordBatch = { counts: [...p.counts.values()], evaluated: [...p.evaluated.values()], custom: [...p.custom.values()] };
  const sent = flagStore(env, teamId)
    .record(batch, nowMs())
    .catch((error: unknown) => log.error("flags: insights not recorded", { team_id: teamId, error: String(error) }));
  keepAlive?.(sent);
  return sent;
}

/** Sends every team's pending counts now (tests, and the console before it reads insights). */
export async function flushInsights(env: Env, teamId?: string): Promise<void> {
  const teams = teamId ? [teamId] : [...pending.keys()];
  await Promise.all(teams.map((t) => flush(env, t)));
}
