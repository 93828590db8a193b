// How a form of a flag's page writes (flag-actions.tsx, flag-rule-actions.ts): a developer's
// change through the service the API calls, made against the version the page showed (If-Match),
// checked with the API's own PATCH schema first (its list limits included), so the console can
// make nothing the API would refuse. A refusal re-renders the flag's page at its status with the
// problem in words beside its form: at 422 with what was typed kept in that form, at 412 with the
// current flag (the form was made against an older one). A saved form redirects (303).
import type { Context } from "hono";
import { formList, formText } from "../../../console/forms";
import { redirectTo } from "../../../console/render";
import { requireRole, type ConsoleEnv } from "../../../console/session";
import { ApiError, zodDetails } from "../../../platform/errors";
import type { Clause, Serve } from "../evaluate";
import type { Flag } from "../flag-model";
import { ClauseSchema, UpdateFlagSchema, type UpdateFlagInput } from "../flags.schemas";
import { getFlag, updateFlag } from "../flags.service";
import { renderFlagPage } from "./flag-page";
import { parseShares } from "./flag-words";
import { lines, userActor } from "./flags-parts";

/** A refusal of the form `at`, shown on the flag's page. */
export class Refused extends Error {
  constructor(
    readonly at: string,
    message: string,
    readonly status: 412 | 422 = 422,
  ) {
    super(message);
  }
}

/** The fields of the forms that choose what to serve (flag-serve.tsx). */
export const SERVE_FIELDS = ["serve", "bucket_by", "percent"] as const;
/** The fields of the forms that make a condition (flag-rules.tsx). */
export const CLAUSE_FIELDS = ["attribute", "op", "values"] as const;

/** The version the form was made against; -1 (matching none) when absent. */
async function formVersion(c: Context<ConsoleEnv>): Promise<number> {
  const n = Number(await formText(c, "version"));
  return Number.isInteger(n) && n > 0 ? n : -1;
}

/** A form made against `sent` while the flag is at `now` (or moved on meanwhile: `now` unknown). */
const stale = (at: string, now: string, sent: number) =>
  new Refused(
    at,
    `This flag changed since you opened the page (it is at version ${now}; your form was made against version ${sent}). Nothing was saved: the page now shows the current version, so check it and send the form again.`,
    412,
  );

/** A store refusal in words: a stale form, or the fields the checks named. */
function refusalOf(error: unknown, at: string, sentVersion: number): Refused | null {
  if (!(error instanceof ApiError)) return null;
  if (error.code === "precondition_failed") return stale(at, /version (\d+)/.exec(error.message)?.[1] ?? "?", sentVersion);
  if (error.code === "validation") return new Refused(at, `Nothing was saved: ${detailsText(error)}.`);
  return null;
}

/** A validation error's details as one line ("environments.production.fallthrough.variant must name one of the variants"). */
export function detailsText(error: ApiError): string {
  const details = Object.entries(error.details ?? {}).map(([field, messages]) => `${field} ${messages.join(", ")}`);
  return details.join("; ") || error.message;
}

/**
 * Runs a write of the flag page: `work` makes the change on the flag the route names; a refusal
 * re-renders the page with the problem beside form `at` (and, at 422, the `keep` fields as they
 * were posted), a success redirects to the page with `notice`. A form made against another version
 * than the flag's is stale (412) before any check of its own; the store checks it again in the
 * transaction that writes. `conditional: false` (cancelling a schedule) takes no version.
 */
export async function write(
  c: Context<ConsoleEnv>,
  at: string,
  notice: string,
  work: (flag: Flag, version: number) => Promise<unknown>,
  keep: readonly string[] = [],
  conditional = true,
) {
  requireRole(c, "developer");
  const key = c.req.param("flag_key")!;
  const flag = await getFlag(c.env, c.get("consoleTeam").id, key);
  const version = await formVersion(c);
  try {
    if (conditional && version !== flag.version) throw stale(at, String(flag.version), version);
    await work(flag, version);
  } catch (error) {
    const refused = error instanceof Refused ? error : refusalOf(error, at, version);
    if (!refused) throw error;
    const values: Record<string, string[]> = {};
    if (refused.status === 422) for (const name of keep) values[name] = await formList(c, name);
    return renderFlagPage(c, key, { problem: { at: refused.at, message: refused.message, values }, status: refused.status });
  }
  return redirectTo(c, `flags/${key}`, notice);
}

/** The flag's change as the API's PATCH makes it (the same schema first), against the form's version. */
export function patch(c: Context<ConsoleEnv>, flag: Flag, version: number, body: UpdateFlagInput) {
  const parsed = UpdateFlagSchema.safeParse(body);
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  return updateFlag(c.env, c.get("consoleTeam").id, flag.key, parsed.data, version, userActor(c));
}

/** The environment of the route, or a 404 when the team has none of that key. */
export function environmentOf(c: Context<ConsoleEnv>, flag: Flag): string {
  const env = c.req.param("environment")!;
  if (!Object.hasOwn(flag.environments, env)) throw ApiError.notFound("Environment not found");
  return env;
}

async function postedShares(c: Context<ConsoleEnv>, at: string) {
  const variants = await formList(c, "variant");
  const percents = await formList(c, "percent");
  const parsed = parseShares(variants.map((variant, i) => ({ variant, percent: percents[i] ?? "" })));
  if ("error" in parsed) throw new Refused(at, `${parsed.error} Nothing was saved.`);
  // A variant at 0% is left out; the order of the others stays, so every context keeps its variant when a share grows.
  return parsed.variations.filter((v) => v.weight > 0);
}

/** A rule's posted description, trimmed: `{ description }`, or nothing when left empty (the rule has none). */
export async function postedDescription(c: Context<ConsoleEnv>): Promise<{ description?: string }> {
  const description = (await formText(c, "description")).trim();
  return description ? { description } : {};
}

/** What a serve form posted (flag-serve.tsx `ServeFields`): `variant:<name>`, or `rollout` with its attribute and shares. */
export async function postedServe(c: Context<ConsoleEnv>, at: string): Promise<Serve> {
  const choice = await formText(c, "serve");
  if (choice.startsWith("variant:")) return { variant: choice.slice("variant:".length) };
  if (choice !== "rollout") throw new Refused(at, "Choose a variant or a percentage rollout. Nothing was saved.");
  const bucketBy = (await formText(c, "bucket_by")).trim() || "key";
  if (bucketBy.length > 256) throw new Refused(at, "Bucket by names an attribute of at most 256 characters. Nothing was saved.");
  return { rollout: { ...(bucketBy === "key" ? {} : { bucket_by: bucketBy }), variations: await postedShares(c, at) } };
}

/** A clause value as typed: numbers for the comparisons that take numbers, text otherwise. */
function clauseValues(op: string, text: string): Array<string | number> {
  const values = lines(text);
  return ["lt", "lte", "gt", "gte"].includes(op) ? values.map((v) => (Number.isFinite(Number(v)) ? Number(v) : v)) : values;
}

/** The condition a form posted (attribute, operator, values), checked as the API checks a clause. */
export async function postedClause(c: Context<ConsoleEnv>, at: string): Promise<Clause> {
  const op = await formText(c, "op");
  const clause = ClauseSchema.safeParse({ attribute: (await formText(c, "attribute")).trim(), op, values: clauseValues(op, await formText(c, "values")) });
  if (!clause.success) {
    const problems = clause.error.issues.map((i) => `${i.path.join(".") || "condition"} ${i.message}`);
    throw new Refused(at, `Nothing was saved: ${problems.join("; ")}.`);
  }
  return clause.data;
}
