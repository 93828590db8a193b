// The Worker's side of the team's flag store (store/flag-store.ts): its stub, the refusals it
// answers turned into ApiErrors, and the isolate's cache of rulesets. An environment's ruleset is
// kept per isolate by its revision: an evaluation makes no store call (and no D1 read) while its
// entry was checked less than RULESET_REVALIDATE_MS ago; after that, one call (shared by the
// isolate's requests meanwhile) asks the store whether the revision moved, and only a moved one
// carries the ruleset again. A change made through this isolate drops the team's entries at once.
import type { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import { nowMs } from "../../platform/clock";
import { Coalescer } from "../../platform/coalesce";
import { namedObject } from "../../platform/durable-objects";
import { ApiError } from "../../platform/errors";
import { IsolateCache } from "../../platform/isolate-cache";
import { type PreparedRuleset, prepareRuleset } from "./evaluate";
import type { StoreResult } from "./store/flag-rows";
import type { FlagStore } from "./store/flag-store";

/** How long an isolate serves a ruleset without asking the store whether it changed: the propagation bound. */
export const RULESET_REVALIDATE_MS = 5_000;
/** Rulesets kept per isolate (the oldest goes first). */
export const RULESET_CACHE_MAX = 500;

/**
 * The store's methods as the Worker calls them. Their values hold caller JSON (`unknown` variant
 * values), which the RPC stub's typing cannot express (it turns them into `never`); the runtime
 * passes them by structured clone, exactly as typed here.
 */
export type FlagStoreApi = Omit<FlagStore, keyof DurableObject | "db" | "write" | "flagRow" | "environmentKeys" | "alarm">;

/** The store of one team: one object per team id (taken from the caller's credential, never from input). */
export function flagStore(env: Env, teamId: string): FlagStoreApi {
  return namedObject(env.FLAG_STORE, teamId) as unknown as FlagStoreApi;
}

/** The value of a store result, or its refusal as the product's ApiError. */
export function unwrap<T>(result: StoreResult<T>): T {
  if (result.ok) return result.value;
  const { status, message, details } = result.refusal;
  if (status === 422) throw ApiError.validation(details ?? {}, message);
  const code = status === 404 ? "not_found" : status === 409 ? "conflict" : "precondition_failed";
  throw new ApiError(code, message, details ? { details } : {});
}

interface CachedRuleset {
  teamId: string;
  revision: number;
  /** null: the team has no such environment (remembered as briefly as a ruleset). */
  prepared: PreparedRuleset | null;
  checkedAt: number;
}

// Entries outlive RULESET_REVALIDATE_MS on purpose: a stale entry still gives its revision to the
// revalidation, so an unchanged ruleset is never carried again.
const rulesets = new IsolateCache<CachedRuleset>({ ttlMs: 3_600_000, max: RULESET_CACHE_MAX, teamOf: (entry) => entry.teamId });

type Reply = Awaited<ReturnType<FlagStore["ruleset"]>>;
/** Store calls this isolate made for rulesets (the tests hold evaluations to none while current). */
export const rulesetCalls = { count: 0 };
const revalidations = new WeakMap<object, Coalescer<number | null, Reply>>();

function revalidator(env: Env): Coalescer<number | null, Reply> {
  let coalescer = revalidations.get(env.FLAG_STORE);
  if (!coalescer) {
    coalescer = new Coalescer(async (key, items) => {
      const [teamId, environment] = key.split("\u0000");
      // Every request in the call holds the same entry, or none: ask with the newest revision any holds.
      const known = items.reduce<number | null>((max, k) => (k !== null && (max === null || k > max) ? k : max), null);
      rulesetCalls.count++;
      const reply = await flagStore(env, teamId).ruleset(environment, known);
      return items.map(() => reply);
    });
    revalidations.set(env.FLAG_STORE, coalescer);
  }
  return coalescer;
}

/**
 * The prepared ruleset of a team's environment: from this isolate while checked within
 * RULESET_REVALIDATE_MS, else revalidated with the store. Null when the team has no such environment.
 */
export async function rulesetOf(env: Env, teamId: string, environment: string, keepAlive?: (p: Promise<unknown>) => void): Promise<PreparedRuleset | null> {
  const key = `${teamId}\u0000${environment}`;
  const now = nowMs();
  const cached = rulesets.get(key);
  if (cached && now - cached.checkedAt < RULESET_REVALIDATE_MS && now >= cached.checkedAt) return cached.prepared;
  const mark = rulesets.mark();
  const reply = await revalidator(env).run(key, cached?.prepared ? cached.revision : null, keepAlive);
  let entry: CachedRuleset;
  if (reply === null) entry = { teamId, revision: 0, prepared: null, checkedAt: nowMs() };
  else if (reply.ruleset === null && cached?.prepared && cached.revision === reply.revision) entry = { ...cached, checkedAt: nowMs() };
  else if (reply.ruleset) entry = { teamId, revision: reply.revision, prepared: prepareRuleset(reply.ruleset), checkedAt: nowMs() };
  else {
    // Another request's call asked with a revision this entry no longer holds: ask again for the whole ruleset.
    rulesetCalls.count++;
    const full = await flagStore(env, teamId).ruleset(environment, null);
    entry = full?.ruleset
      ? { teamId, revision: full.revision, prepared: prepareRuleset(full.ruleset), checkedAt: nowMs() }
      : { teamId, revision: 0, prepared: null, checkedAt: nowMs() };
  }
  rulesets.set(key, entry, mark);
  return entry.prepared;
}

/** A change was made through this isolate: its evaluations see it at once. */
export function forgetRulesets(teamId: string): void {
  rulesets.forgetTeam(teamId);
}
