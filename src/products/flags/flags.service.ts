// The flags product's management logic over the team's flag store: flags (versions, history,
// revert, If-Match), scheduled changes, segments and environments. Every change made here drops
// this isolate's rulesets of the team, so its next evaluation sees the change at once.
import type { Env } from "../../env";
import type { Principal } from "../../platform/auth";
import { nowIso, nowMs } from "../../platform/clock";
import { randomToken } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { type Flag, servesOneVariant } from "./flag-model";
import type { Actor, CreateFlagInput, CreateSegmentInput, UpdateFlagInput, UpdateSegmentInput } from "./flags.schemas";
import { flagStore, forgetRulesets, unwrap } from "./flags.store";
import type { ScheduledChangeInput } from "./store/flag-rows";

/** A flag not evaluated for this long, or serving one variant everywhere for this long, is stale. */
export const STALE_DAYS = 30;

export const flagNotFound = () => ApiError.notFound("Flag not found");
export const segmentNotFound = () => ApiError.notFound("Segment not found");

/** Who a team API key is in a flag's history. */
export const keyActor = (principal: Pick<Principal, "keyId" | "keyPrefix">): Actor => ({ type: "key", id: principal.keyId, label: principal.keyPrefix });

export type StaleReason = "not_evaluated" | "one_variant";

/** Why a flag is stale at `now`, or null: not evaluated for STALE_DAYS, or one variant to everyone for STALE_DAYS. */
export function staleReason(flag: Flag, lastEvaluatedAt: string | null, now: number): StaleReason | null {
  const cutoff = new Date(now - STALE_DAYS * 86_400_000).toISOString();
  if ((lastEvaluatedAt ?? flag.created_at) < cutoff) return "not_evaluated";
  if (flag.updated_at < cutoff && Object.keys(flag.environments).every((env) => servesOneVariant(flag, env))) return "one_variant";
  return null;
}

export async function listFlags(env: Env, teamId: string, filter: { tag?: string; stale?: boolean }): Promise<Array<Flag & { stale_reason?: StaleReason }>> {
  const store = flagStore(env, teamId);
  let flags = await store.listFlags();
  if (filter.tag !== undefined) flags = flags.filter((f) => f.tags.includes(filter.tag!));
  if (!filter.stale) return flags;
  const last = new Map<string, string>();
  for (const e of await store.lastEvaluated()) if ((last.get(e.flag) ?? "") < e.at) last.set(e.flag, e.at);
  const now = nowMs();
  const stale: Array<Flag & { stale_reason: StaleReason }> = [];
  for (const flag of flags) {
    const reason = staleReason(flag, last.get(flag.key) ?? null, now);
    if (reason) stale.push({ ...flag, stale_reason: reason });
  }
  return stale;
}

export async function getFlag(env: Env, teamId: string, key: string): Promise<Flag> {
  const flag = await flagStore(env, teamId).getFlag(key);
  if (!flag) throw flagNotFound();
  return flag;
}

/** Changes made through this isolate are seen by its next evaluation. */
function changed<T>(teamId: string, value: T): T {
  forgetRulesets(teamId);
  return value;
}

export async function createFlag(env: Env, teamId: string, input: CreateFlagInput, actor: Actor): Promise<Flag> {
  const result = await flagStore(env, teamId).createFlag(input, randomToken(12), actor, nowIso());
  return changed(teamId, unwrap(result));
}

/** `If-Match: "<version>"` (weak or strong, or `*`), as a version; null when absent or `*`. */
export function ifMatchVersion(header: string | undefined): number | null {
  if (header === undefined || header.trim() === "*") return null;
  const match = /^\s*(?:W\/)?"?(\d+)"?\s*$/.exec(header);
  // A value that names no version can match none: 412, as RFC 9110 answers an unmatched If-Match.
  return match ? Number(match[1]) : -1;
}

export async function updateFlag(env: Env, teamId: string, key: string, patch: UpdateFlagInput, ifMatch: number | null, actor: Actor): Promise<Flag> {
  const result = await flagStore(env, teamId).updateFlag(key, patch, ifMatch, actor, nowIso());
  return changed(teamId, unwrap(result));
}

export async function revertFlag(env: Env, teamId: string, key: string, version: number, actor: Actor, ifMatch: number | null = null): Promise<Flag> {
  return changed(teamId, unwrap(await flagStore(env, teamId).revertFlag(key, version, actor, nowIso(), ifMatch)));
}

export async function deleteFlag(env: Env, teamId: string, key: string): Promise<void> {
  if (!(await flagStore(env, teamId).deleteFlag(key))) throw flagNotFound();
  changed(teamId, null);
}

export async function flagHistory(env: Env, teamId: string, key: string, limit: number) {
  const history = await flagStore(env, teamId).history(key, limit);
  if (!history) throw flagNotFound();
  return history;
}

/** `ifMatch`: the flag's version the change is scheduled against (412 when it has moved on; the console's form sends it). */
export async function scheduleChange(env: Env, teamId: string, key: string, input: ScheduledChangeInput, actor: Actor, ifMatch: number | null = null) {
  return unwrap(await flagStore(env, teamId).schedule(key, input, actor, nowIso(), ifMatch));
}

export async function listScheduledChanges(env: Env, teamId: string, key: string) {
  const list = await flagStore(env, teamId).listScheduled(key);
  if (!list) throw flagNotFound();
  return list;
}

export async function getScheduledChange(env: Env, teamId: string, key: string, id: string) {
  const change = (await listScheduledChanges(env, teamId, key)).find((c) => c.id === id);
  if (!change) throw ApiError.notFound("Scheduled change not found");
  return change;
}

export async function deleteScheduledChange(env: Env, teamId: string, key: string, id: string): Promise<void> {
  if (!(await flagStore(env, teamId).deleteScheduled(key, id))) throw ApiError.notFound("Scheduled change not found");
}

export async function flagInsights(env: Env, teamId: string, key: string, hours: number) {
  const since = new Date(nowMs() - hours * 3_600_000).toISOString().slice(0, 13);
  const insights = await flagStore(env, teamId).insights(key, since);
  if (!insights) throw flagNotFound();
  return insights;
}

// Segments ---------------------------------------------------------------------------------------

export const listSegments = (env: Env, teamId: string) => flagStore(env, teamId).listSegments();

export async function getSegment(env: Env, teamId: string, key: string) {
  const segment = await flagStore(env, teamId).getSegment(key);
  if (!segment) throw segmentNotFound();
  return segment;
}

export async function createSegment(env: Env, teamId: string, input: CreateSegmentInput) {
  return changed(teamId, unwrap(await flagStore(env, teamId).createSegment(input, nowIso())));
}

export async function updateSegment(env: Env, teamId: string, key: string, patch: UpdateSegmentInput) {
  return changed(teamId, unwrap(await flagStore(env, teamId).updateSegment(key, patch, nowIso())));
}

export async function deleteSegment(env: Env, teamId: string, key: string): Promise<void> {
  changed(teamId, unwrap(await flagStore(env, teamId).deleteSegment(key)));
}

// Environments -----------------------------------------------------------------------------------

export const listEnvironments = (env: Env, teamId: string) => flagStore(env, teamId).environments();

export async function createEnvironment(env: Env, teamId: string, input: { key: string; name?: string }) {
  return changed(teamId, unwrap(await flagStore(env, teamId).createEnvironment(input.key, input.name ?? input.key, nowIso())));
}
