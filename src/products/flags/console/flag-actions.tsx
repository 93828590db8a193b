/** @jsxImportSource hono/jsx */
// The POSTs of a flag's page: a rollout's shares, an environment's default rule, adding and
// removing a rule, the off variant, the settings, revert, scheduled changes and deletion. Each is
// a developer's write through the service the API calls (the same checks, versions and history,
// the console user as actor), made against the version the page showed (If-Match): a change
// made meanwhile is refused at 412 and nothing is saved. A refused form re-renders the flag page
// at its status (412, 422) with the problem in words beside its form; a saved one redirects (303).
import { Hono, type Context } from "hono";
import { formList, formText } from "../../../console/forms";
import { redirectTo } from "../../../console/render";
import { requireRole, type ConsoleEnv } from "../../../console/session";
import { ApiError } from "../../../platform/errors";
import type { Rule, Serve } from "../evaluate";
import type { Flag } from "../flag-model";
import { ClauseSchema, type UpdateFlagInput } from "../flags.schemas";
import { deleteFlag, deleteScheduledChange, getFlag, revertFlag, scheduleChange, updateFlag } from "../flags.service";
import { renderFlagPage } from "./flag-page";
import { parseShares } from "./flag-words";
import { lines, userActor } from "./flags-parts";

export const flagActions = new Hono<ConsoleEnv>();

/** A refusal of the form `at`, shown on the flag's page. */
class Refused extends Error {
  constructor(
    readonly at: string,
    message: string,
    readonly status: 412 | 422 = 422,
  ) {
    super(message);
  }
}

/** The version the form was made against; -1 (matching none) when absent. */
async function formVersion(c: Context<ConsoleEnv>): Promise<number> {
  const n = Number(await formText(c, "version"));
  return Number.isInteger(n) && n > 0 ? n : -1;
}

/** A store refusal in words: a stale form, or the fields the checks named. */
function refusalOf(error: unknown, at: string, sentVersion: number): Refused | null {
  if (!(error instanceof ApiError)) return null;
  if (error.code === "precondition_failed") {
    const now = /version (\d+)/.exec(error.message)?.[1];
    return new Refused(
      at,
      `This flag changed since you opened the page (it is at version ${now ?? "?"}; your form was made against version ${sentVersion}). Nothing was saved: the page now shows the current version, so check it and send the form again.`,
      412,
    );
  }
  if (error.code === "validation") {
    const details = Object.entries(error.details ?? {}).map(([field, messages]) => `${field} ${messages.join(", ")}`);
    return new Refused(at, `Nothing was saved: ${details.join("; ") || error.message}.`);
  }
  return null;
}

/**
 * Runs a write of the flag page: `work` reads the flag and makes the change; a refusal re-renders
 * the page with the problem beside form `at`, a success redirects to the page with `notice`.
 */
async function write(c: Context<ConsoleEnv>, at: string, notice: string, work: (flag: Flag, version: number) => Promise<unknown>) {
  requireRole(c, "developer");
  const key = c.req.param("flag_key")!;
  const flag = await getFlag(c.env, c.get("consoleTeam").id, key);
  const version = await formVersion(c);
  try {
    await work(flag, version);
  } catch (error) {
    const refused = error instanceof Refused ? error : refusalOf(error, at, version);
    if (!refused) throw error;
    return renderFlagPage(c, key, { problem: { at: refused.at, message: refused.message }, status: refused.status });
  }
  return redirectTo(c, `flags/${key}`, notice);
}

/** The flag's change as the API's PATCH makes it, against the form's version. */
const patch = (c: Context<ConsoleEnv>, flag: Flag, version: number, body: UpdateFlagInput) =>
  updateFlag(c.env, c.get("consoleTeam").id, flag.key, body, version, userActor(c));

/** The environment of the route, or a 404 when the team has none of that key. */
function environmentOf(c: Context<ConsoleEnv>, flag: Flag): string {
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

flagActions.post("/flags/:flag_key/environments/:environment/rules/:rule_id/rollout", (c) =>
  write(c, `rollout-${c.req.param("environment")}-${c.req.param("rule_id")}`, "saved", async (flag, version) => {
    const env = environmentOf(c, flag);
    const at = `rollout-${env}-${c.req.param("rule_id")}`;
    const rules = flag.environments[env]!.rules;
    const rule = rules.find((r) => r.id === c.req.param("rule_id"));
    if (!rule || !("rollout" in rule.serve)) throw ApiError.notFound("Rule not found");
    const variations = await postedShares(c, at);
    const serve: Serve = { rollout: { ...rule.serve.rollout, variations } };
    await patch(c, flag, version, { environments: { [env]: { rules: rules.map((r) => (r.id === rule.id ? { ...r, serve } : r)) } } });
  }),
);

flagActions.post("/flags/:flag_key/environments/:environment/fallthrough", (c) =>
  write(c, `fallthrough-${c.req.param("environment")}`, "saved", async (flag, version) => {
    const env = environmentOf(c, flag);
    const at = `fallthrough-${env}`;
    const choice = await formText(c, "serve");
    let serve: Serve;
    if (choice.startsWith("variant:")) serve = { variant: choice.slice("variant:".length) };
    else if (choice === "rollout") {
      const bucketBy = (await formText(c, "bucket_by")).trim() || "key";
      if (bucketBy.length > 256) throw new Refused(at, "Bucket by names an attribute of at most 256 characters. Nothing was saved.");
      serve = { rollout: { ...(bucketBy === "key" ? {} : { bucket_by: bucketBy }), variations: await postedShares(c, at) } };
    } else throw new Refused(at, "Choose a variant or a percentage rollout. Nothing was saved.");
    await patch(c, flag, version, { environments: { [env]: { fallthrough: serve } } });
  }),
);

/** A clause value as typed: numbers for the comparisons that take numbers, text otherwise. */
function clauseValues(op: string, text: string): Array<string | number> {
  const values = lines(text);
  return ["lt", "lte", "gt", "gte"].includes(op) ? values.map((v) => (Number.isFinite(Number(v)) ? Number(v) : v)) : values;
}

flagActions.post("/flags/:flag_key/environments/:environment/rules", (c) =>
  write(c, `add-rule-${c.req.param("environment")}`, "saved", async (flag, version) => {
    const env = environmentOf(c, flag);
    const at = `add-rule-${env}`;
    const op = await formText(c, "op");
    const clause = ClauseSchema.safeParse({ attribute: (await formText(c, "attribute")).trim(), op, values: clauseValues(op, await formText(c, "values")) });
    if (!clause.success) {
      const problems = clause.error.issues.map((i) => `${i.path.join(".") || "clause"} ${i.message}`);
      throw new Refused(at, `The rule was not added: ${problems.join("; ")}.`);
    }
    const rule: Omit<Rule, "id"> = { clauses: [clause.data], serve: { variant: await formText(c, "serve") } };
    await patch(c, flag, version, { environments: { [env]: { rules: [...flag.environments[env]!.rules, rule] } } });
  }),
);

flagActions.post("/flags/:flag_key/environments/:environment/rules/:rule_id/remove", (c) =>
  write(c, `rules-${c.req.param("environment")}`, "saved", async (flag, version) => {
    const env = environmentOf(c, flag);
    const rules = flag.environments[env]!.rules;
    if (!rules.some((r) => r.id === c.req.param("rule_id"))) throw ApiError.notFound("Rule not found");
    await patch(c, flag, version, { environments: { [env]: { rules: rules.filter((r) => r.id !== c.req.param("rule_id")) } } });
  }),
);

flagActions.post("/flags/:flag_key/off-variant", (c) =>
  write(c, "off-variant", "saved", async (flag, version) => {
    await patch(c, flag, version, { off_variant: await formText(c, "off_variant") });
  }),
);

flagActions.post("/flags/:flag_key/settings", (c) =>
  write(c, "settings", "saved", async (flag, version) => {
    const name = (await formText(c, "name")).trim();
    if (!name) throw new Refused("settings", "The name can't be blank. Nothing was saved.");
    await patch(c, flag, version, {
      name: name.slice(0, 200),
      description: (await formText(c, "description")).slice(0, 2000),
      tags: lines(await formText(c, "tags")),
      client_side: (await formText(c, "client_side")) === "on",
    });
  }),
);

flagActions.post("/flags/:flag_key/revert", (c) =>
  write(c, "revert", "reverted", async (flag, version) => {
    const to = Number(await formText(c, "to"));
    if (!Number.isInteger(to) || to < 1) throw new Refused("revert", "Choose a version of the history to revert to. Nothing was reverted.");
    await revertFlag(c.env, c.get("consoleTeam").id, flag.key, to, userActor(c), version);
  }),
);

flagActions.post("/flags/:flag_key/scheduled", (c) =>
  write(c, "schedule", "scheduled", async (flag) => {
    const local = await formText(c, "at");
    const at = Date.parse(`${local}${/T\d\d:\d\d$/.test(local) ? ":00" : ""}Z`);
    if (!Number.isFinite(at)) throw new Refused("schedule", "Give the date and time (UTC) of the change. Nothing was scheduled.");
    const input = { environment: await formText(c, "environment"), at, enabled: (await formText(c, "enabled")) === "true" };
    await scheduleChange(c.env, c.get("consoleTeam").id, flag.key, input, userActor(c));
  }),
);

flagActions.post("/flags/:flag_key/scheduled/:change_id/cancel", (c) =>
  write(c, "schedule", "cancelled", async (flag) => {
    await deleteScheduledChange(c.env, c.get("consoleTeam").id, flag.key, c.req.param("change_id")!);
  }),
);

flagActions.post("/flags/:flag_key/delete", async (c) => {
  requireRole(c, "developer");
  const key = c.req.param("flag_key");
  if ((await formText(c, "confirm")) !== "yes")
    return renderFlagPage(c, key, { problem: { at: "settings", message: "Tick the box to confirm the deletion." }, status: 422 });
  await deleteFlag(c.env, c.get("consoleTeam").id, key);
  return redirectTo(c, "flags", "deleted");
});
