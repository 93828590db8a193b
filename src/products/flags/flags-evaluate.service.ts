// What every evaluating path shares (server evaluate and bootstrap, client bootstrap, OFREP): the
// environment's ruleset from the isolate's cache, the context as the contract reads it, the ETag of
// an answer (the ruleset's revision and the context: a 304 needs both unchanged), the unit each
// evaluating call spends, and the entries of an answer.
import { z } from "@hono/zod-openapi";
import type { Env } from "../../env";
import { ApiError } from "../../platform/errors";
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { spendUnit, type QuotaOwner, type UnitAhead } from "../../platform/quota";
import { backgroundOrDetached } from "../../platform/request-context";
import { jsonFits } from "../../platform/sizes";
import type { Evaluation, PreparedRuleset } from "./evaluate";
import { rulesetOf } from "./flags.store";
import { sha1Hex } from "./sha1";

/** A context's JSON is capped like the other free-form objects callers send. */
export const CONTEXT_BYTES = 16 * 1024;

export const ContextSchema = z
  .record(z.string(), z.unknown())
  .refine((c) => jsonFits(c, CONTEXT_BYTES), `must be at most ${CONTEXT_BYTES / 1024} KB of JSON`)
  .openapi("FlagContext", { description: "Attributes of the evaluated context; its key is `key` (or `targetingKey`, the same field)." });

export const environmentNotFound = () => ApiError.notFound("Environment not found");

/** The prepared ruleset of a team's environment (404 when the team has none by that key). */
export async function rulesetFor(env: Env, teamId: string, environment: string, keepAlive?: (p: Promise<unknown>) => void): Promise<PreparedRuleset> {
  const prepared = await rulesetOf(env, teamId, environment, keepAlive);
  if (!prepared) throw environmentNotFound();
  return prepared;
}

/** The ETag of an evaluation answer: the ruleset revision and a hash of what was asked (`scope`: the credential's view). */
export function answerEtag(prepared: PreparedRuleset, scope: string, context: unknown): string {
  return `"${prepared.ruleset.version}-${sha1Hex(`${scope}\u0000${JSON.stringify(context)}`).slice(0, 20)}"`;
}

/** Whether `If-None-Match` names `etag` (a list, weak forms, or `*`). */
export function notModified(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || t === etag || t === `W/${etag}`;
  });
}

declare module "hono" {
  interface ContextVariableMap {
    /** The unit a client key's authentication took ahead for an evaluating route (authenticateClient). */
    flagsUnit?: UnitAhead;
  }
}

/**
 * Spends the one `evaluations` unit of an evaluating call (the monthly-quota 429 when none is
 * left): the unit taken ahead with the client key's counts when there is one, else spent now
 * (spendUnit: an unlimited plan's unit waits for nobody).
 */
export async function spendEvaluation(c: Context<AppEnv>, owner: QuotaOwner): Promise<void> {
  const ahead = c.get("flagsUnit");
  if (ahead) return ahead.spend();
  await spendUnit(c.env, owner, "flags", backgroundOrDetached(c));
}

export interface EvaluationEntry {
  value: unknown;
  variant: string | null;
  reason: Evaluation["reason"];
  version: number | null;
  error_code?: "FLAG_NOT_FOUND";
}

/** The answer's entries: the evaluation without its internal fields. */
export function entriesOf(results: Record<string, Evaluation>): Record<string, EvaluationEntry> {
  const out: Record<string, EvaluationEntry> = {};
  for (const [key, e] of Object.entries(results)) {
    const entry: EvaluationEntry = { value: e.value, variant: e.variant, reason: e.reason, version: e.version };
    if (e.error_code) entry.error_code = e.error_code;
    Object.defineProperty(out, key, { value: entry, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
