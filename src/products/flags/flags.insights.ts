// Insights without a store call per evaluation: each isolate adds up the evaluations (and track
// events) it answers per team, flag, environment, hour and variant, and sends them to the team's
// store in one call at most every window (INSIGHTS_FLUSH_MS per team, from the request's
// waitUntil, after its answer). A note after the window sends at once; the request that starts a
// new pending set within the window also leaves a timer in its waitUntil that sends the set when
// the window ends (at most one window away, well inside the ~30 s the runtime gives waitUntil work
// after the answer), so counts arrive within a window whatever comes next. One pending set per
// team, swapped out in one synchronous step by whichever sends it (the timer, a later note, the
// console's read): a set is sent once. An isolate evicted before its timer fires loses its counts
// (README "Insights and the stale list").
import type { Env } from "../../env";
import type { KeepAlive } from "../../platform/coalesce";
import { log } from "../../platform/log";
import { nowMs } from "../../platform/clock";
import type { Evaluation } from "./evaluate";
import { flagStore } from "./flags.store";
import type { RecordBatch } from "./store/flag-rows";

/** How long an isolate's counts of a team may wait before they are sent (the window). */
export const INSIGHTS_FLUSH_MS = 10_000;
let windowMs = INSIGHTS_FLUSH_MS;

/** Sets the window (tests, so a timer's send can be awaited); null: back to INSIGHTS_FLUSH_MS. */
export function setInsightsWindow(ms: number | null): void {
  windowMs = ms ?? INSIGHTS_FLUSH_MS;
}

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

/** The team's pending set, and whether this call started it (the first count of a window). */
function pendingOf(env: Env, teamId: string, keepAlive?: KeepAlive): { p: Pending; started: boolean } {
  let p = pending.get(teamId);
  if (p) return { p, started: false };
  if (pending.size >= TEAMS_MAX) flush(env, pending.keys().next().value!, keepAlive);
  p = { counts: new Map(), evaluated: new Map(), custom: new Map() };
  pending.set(teamId, p);
  return { p, started: true };
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
  keepAlive?: KeepAlive,
): void {
  const now = nowMs();
  const hour = hourOf(now);
  const at = new Date(now).toISOString();
  const { p, started } = pendingOf(env, teamId, keepAlive);
  for (const { flag, variant } of results) {
    if (variant === null) continue;
    const id = `${flag}\u0000${environment}\u0000${hour}\u0000${variant}\u0000${source}`;
    const entry = p.counts.get(id);
    if (entry) entry.count++;
    else p.counts.set(id, { flag, environment, hour, variant, source, count: 1 });
    if (fresh) p.evaluated.set(`${flag}\u0000${environment}`, { flag, environment, at });
  }
  maybeFlush(env, teamId, now, p, started, keepAlive);
}

export function noteCustomEvent(env: Env, teamId: string, environment: string, name: string, value: number, at: number, keepAlive?: KeepAlive): void {
  const hour = hourOf(at);
  const { p, started } = pendingOf(env, teamId, keepAlive);
  const id = `${name}\u0000${environment}\u0000${hour}`;
  const entry = p.custom.get(id);
  if (entry) {
    entry.count++;
    entry.value += value;
  } else p.custom.set(id, { name, environment, hour, count: 1, value });
  maybeFlush(env, teamId, nowMs(), p, started, keepAlive);
}

/** Convenience for evaluation answers. */
export function evaluationsNoted(results: Record<string, Evaluation>): Noted[] {
  return Object.entries(results).map(([flag, e]) => ({ flag, variant: e.variant }));
}

/**
 * Sends the team's counts when its window is over; else, when this note started the pending set
 * `p`, leaves a timer in the request's waitUntil that sends `p` at the window's end, unless
 * something sent it first (then `p` is no longer the team's pending set, and the timer does nothing).
 */
function maybeFlush(env: Env, teamId: string, now: number, p: Pending, started: boolean, keepAlive?: KeepAlive): void {
  const last = lastFlush.get(teamId) ?? 0;
  if (now - last >= windowMs || now < last) {
    flush(env, teamId, keepAlive);
    return;
  }
  // Outside a request (no waitUntil) the next note or flushInsights sends them.
  if (!started || !keepAlive) return;
  const wait = Math.min(windowMs, last + windowMs - now);
  keepAlive(
    new Promise((resolve) => setTimeout(resolve, wait)).then(() => {
      if (pending.get(teamId) === p) return flush(env, teamId);
    }),
  );
}

function flush(env: Env, teamId: string, keepAlive?: KeepAlive): Promise<void> {
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
