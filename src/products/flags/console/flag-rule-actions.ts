// The targeting POSTs of a flag's page, per environment: adding a rule (one condition, serving a
// variant or a rollout), a rule's conditions added and removed, what a rule serves (a variant or a
// rollout with its attribute and shares), a rule's description, moving a rule up or down (rules are tried in order),
// removing a rule, and the default rule. Each is one PATCH
// of the environment's rules or fallthrough through flag-write.ts (the API's schema and checks,
// the version the page showed as If-Match, the console user in the history).
import { Hono, type Context } from "hono";
import { formText } from "../../../console/forms";
import type { ConsoleEnv } from "../../../console/session";
import { ApiError } from "../../../platform/errors";
import type { Rule } from "../evaluate";
import type { Flag } from "../flag-model";
import { ruleForms } from "./flag-rules";
import { CLAUSE_FIELDS, environmentOf, patch, postedClause, postedDescription, postedServe, Refused, SERVE_FIELDS, write } from "./flag-write";

export const flagRuleActions = new Hono<ConsoleEnv>();

const RULE = "/flags/:flag_key/environments/:environment/rules/:rule_id";

/** The environment's rules and the one the route names (404 when it has none of that id). */
function ruleOf(c: Context<ConsoleEnv>, flag: Flag) {
  const env = environmentOf(c, flag);
  const rules = flag.environments[env]!.rules;
  const rule = rules.find((r) => r.id === c.req.param("rule_id"));
  if (!rule) throw ApiError.notFound("Rule not found");
  return { env, rules, rule };
}

/** The environment's rules with `rule` changed, as a PATCH of that environment. */
const withRule = (env: string, rules: Rule[], changed: Rule) => ({ environments: { [env]: { rules: rules.map((r) => (r.id === changed.id ? changed : r)) } } });

/** The problem id of the rule form `form` for the route's environment and rule. */
type RuleForm = keyof ReturnType<typeof ruleForms>;
const ruleForm = (c: Context<ConsoleEnv>, form: RuleForm) => ruleForms(c.req.param("environment")!, c.req.param("rule_id")!)[form];

flagRuleActions.post("/flags/:flag_key/environments/:environment/rules", (c) =>
  write(
    c,
    `add-rule-${c.req.param("environment")}`,
    "saved",
    async (flag, version) => {
      const env = environmentOf(c, flag);
      const at = `add-rule-${env}`;
      const rule: Omit<Rule, "id"> = { ...(await postedDescription(c)), clauses: [await postedClause(c, at)], serve: await postedServe(c, at) };
      await patch(c, flag, version, { environments: { [env]: { rules: [...flag.environments[env]!.rules, rule] } } });
    },
    ["description", ...CLAUSE_FIELDS, ...SERVE_FIELDS],
  ),
);

/**
 * One edit of the route's rule from its form `form`: `change` makes the new rule from the stored
 * one (refusals at the form's problem id `at`), saved as a PATCH of the environment's rules; `keep`
 * names the fields a 422 gives back.
 */
function changeRule(c: Context<ConsoleEnv>, form: RuleForm, change: (rule: Rule, at: string) => Promise<Rule>, keep: readonly string[] = []) {
  const at = ruleForm(c, form);
  return write(
    c,
    at,
    "saved",
    async (flag, version) => {
      const { env, rules, rule } = ruleOf(c, flag);
      await patch(c, flag, version, withRule(env, rules, await change(rule, at)));
    },
    keep,
  );
}

flagRuleActions.post(`${RULE}/description`, (c) =>
  changeRule(c, "description", async ({ description: _old, ...rest }) => ({ ...rest, ...(await postedDescription(c)) }), ["description"]),
);

flagRuleActions.post(`${RULE}/clauses`, (c) =>
  changeRule(c, "clause", async (rule, at) => ({ ...rule, clauses: [...rule.clauses, await postedClause(c, at)] }), CLAUSE_FIELDS),
);

flagRuleActions.post(`${RULE}/clauses/remove`, (c) =>
  changeRule(c, "rule", async (rule, at) => {
    const index = Number(await formText(c, "clause"));
    if (!Number.isInteger(index) || index < 0 || index >= rule.clauses.length) throw new Refused(at, "That condition is not in the rule. Nothing was saved.");
    // A rule without conditions matches everyone; the console makes one only on purpose (remove the rule instead).
    if (rule.clauses.length === 1) throw new Refused(at, "A rule keeps at least one condition: remove the rule instead. Nothing was saved.");
    return { ...rule, clauses: rule.clauses.filter((_, i) => i !== index) };
  }),
);

flagRuleActions.post(`${RULE}/serve`, (c) => changeRule(c, "serve", async (rule, at) => ({ ...rule, serve: await postedServe(c, at) }), SERVE_FIELDS));

flagRuleActions.post(`${RULE}/remove`, (c) =>
  write(c, `rules-${c.req.param("environment")}`, "saved", async (flag, version) => {
    const { env, rules, rule } = ruleOf(c, flag);
    await patch(c, flag, version, { environments: { [env]: { rules: rules.filter((r) => r.id !== rule.id) } } });
  }),
);

flagRuleActions.post(`${RULE}/move`, (c) =>
  write(c, ruleForm(c, "rule"), "saved", async (flag, version) => {
    const { env, rules, rule } = ruleOf(c, flag);
    const direction = await formText(c, "direction");
    const from = rules.indexOf(rule);
    const to = direction === "up" ? from - 1 : direction === "down" ? from + 1 : -1;
    if (to < 0 || to >= rules.length) throw new Refused(ruleForm(c, "rule"), "The rule cannot move that way. Nothing was saved.");
    const moved = [...rules];
    moved.splice(from, 1);
    moved.splice(to, 0, rule);
    await patch(c, flag, version, { environments: { [env]: { rules: moved } } });
  }),
);

flagRuleActions.post("/flags/:flag_key/environments/:environment/fallthrough", (c) =>
  write(
    c,
    `fallthrough-${c.req.param("environment")}`,
    "saved",
    async (flag, version) => {
      const env = environmentOf(c, flag);
      await patch(c, flag, version, { environments: { [env]: { fallthrough: await postedServe(c, `fallthrough-${env}`) } } });
    },
    SERVE_FIELDS,
  ),
);
