/** @jsxImportSource hono/jsx */
// The rules of one environment on a flag's page, in evaluation order: each rule in words with its
// conditions (each removable while another remains), a form adding a condition, a form changing
// what it serves (a variant or a percentage rollout, the same fields as the default rule's), moving
// it up or down, and its removal; then the form adding a rule (one condition, serving a variant or a rollout). Every
// form carries the version the page showed (If-Match); the posts are flag-rule-actions.ts's.
import type { Context } from "hono";
import { teamPath } from "../../../console/render";
import type { ConsoleEnv } from "../../../console/session";
import type { Rule } from "../evaluate";
import type { Flag } from "../flag-model";
import { keptFor, ProblemNote, VersionField, type FormValues, type Problem } from "./flag-form-parts";
import { ServeFields } from "./flag-serve";
import { clauseText, OP_CHOICES, ruleText } from "./flag-words";

/** The problem ids of a rule's forms (flag-rule-actions.ts names the same). */
export const ruleForms = (env: string, ruleId: string) => ({
  clause: `clause-${env}-${ruleId}`,
  serve: `serve-${env}-${ruleId}`,
  rule: `rule-${env}-${ruleId}`,
  description: `description-${env}-${ruleId}`,
});

/** The optional description of a rule (what it is for), prefilled with what was posted or stored. */
function DescriptionField(props: { id: string; value: string }) {
  return (
    <div class="field">
      <label for={`${props.id}-description`}>Description (optional)</label>
      <input type="text" id={`${props.id}-description`} name="description" maxlength={500} placeholder="Beta customers in Europe" value={props.value} />
    </div>
  );
}

/** Attribute, operator and values of a condition, prefilled with what was posted after a refusal. */
function ClauseFields(props: { id: string; kept: FormValues | null }) {
  const { id, kept } = props;
  const op = kept?.op?.[0];
  return (
    <div class="inline-form">
      <div class="field narrow">
        <label for={`${id}-attribute`}>Attribute</label>
        <input type="text" id={`${id}-attribute`} name="attribute" size={10} maxlength={256} placeholder="country" value={kept?.attribute?.[0] ?? ""} />
      </div>
      <div class="field narrow">
        <label for={`${id}-op`}>Operator</label>
        <select id={`${id}-op`} name="op">
          {OP_CHOICES.map(([value, words]) => (
            <option value={value} selected={op === value}>
              {words}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for={`${id}-values`}>Values (comma separated; segment keys for a segment)</label>
        <input type="text" id={`${id}-values`} name="values" maxlength={20000} placeholder="DE, FR" value={kept?.values?.[0] ?? ""} />
      </div>
    </div>
  );
}

export function RuleItem(props: {
  c: Context<ConsoleEnv>;
  flag: Flag;
  env: string;
  rule: Rule;
  index: number;
  count: number;
  write: boolean;
  problem?: Problem | null;
}) {
  const { c, flag, env, rule, problem } = props;
  const base = teamPath(c, `flags/${flag.key}/environments/${env}/rules/${encodeURIComponent(rule.id)}`);
  const forms = ruleForms(env, rule.id);
  // HTML ids by position: a rule's id is the API caller's text.
  const id = `rule-${env}-${props.index}`;
  const text = ruleText(rule);
  return (
    <li data-testid="rule" data-rule={rule.id}>
      <span>{text}</span>
      {rule.description ? (
        <p class="muted small" data-testid="rule-description">
          {rule.description}
        </p>
      ) : null}
      {props.write ? (
        <>
          <ProblemNote problem={problem} at={forms.rule} />
          {rule.clauses.length > 1 ? (
            <ul class="small" aria-label={`Conditions of the rule: ${text}`}>
              {rule.clauses.map((clause, i) => (
                <li data-testid="clause">
                  {clauseText(clause)}{" "}
                  <form method="post" action={`${base}/clauses/remove`} class="inline-form" data-testid="remove-clause">
                    <VersionField flag={flag} />
                    <input type="hidden" name="clause" value={String(i)} />
                    <button type="submit" class="link-button small" aria-label={`Remove condition: ${clauseText(clause)}`}>
                      Remove condition
                    </button>
                  </form>
                </li>
              ))}
            </ul>
          ) : null}
          <details class="subform" open={problem?.at === forms.clause}>
            <summary>Add a condition</summary>
            <form method="post" action={`${base}/clauses`} data-testid="add-clause">
              <ProblemNote problem={problem} at={forms.clause} />
              <VersionField flag={flag} />
              <ClauseFields id={`${id}-clause`} kept={keptFor(problem, forms.clause)} />
              <p class="hint muted small">The rule matches when every condition does.</p>
              <button type="submit" class="secondary small">
                Add condition
              </button>
            </form>
          </details>
          <details class="subform" open={problem?.at === forms.description}>
            <summary>{rule.description ? "Change the description" : "Describe the rule"}</summary>
            <form method="post" action={`${base}/description`} data-testid="edit-rule-description">
              <ProblemNote problem={problem} at={forms.description} />
              <VersionField flag={flag} />
              <DescriptionField id={`${id}-description`} value={keptFor(problem, forms.description)?.description?.[0] ?? rule.description ?? ""} />
              <button type="submit" class="secondary small">
                Save the description
              </button>
            </form>
          </details>
          <details class="subform" open={"rollout" in rule.serve || problem?.at === forms.serve}>
            <summary>Change what it serves</summary>
            <form method="post" action={`${base}/serve`} data-testid="edit-rule-serve">
              <ProblemNote problem={problem} at={forms.serve} />
              <VersionField flag={flag} />
              <ServeFields flag={flag} id={`${id}-serve`} label="Serve" serve={rule.serve} kept={keptFor(problem, forms.serve)} />
              <button type="submit" class="secondary small">
                Save what it serves
              </button>
            </form>
          </details>
          {[
            { direction: "up", words: "Move up", possible: props.index > 0 },
            { direction: "down", words: "Move down", possible: props.index < props.count - 1 },
          ].map(({ direction, words, possible }) =>
            possible ? (
              <form method="post" action={`${base}/move`} class="inline-form" data-testid={`move-rule-${direction}`}>
                <VersionField flag={flag} />
                <input type="hidden" name="direction" value={direction} />
                <button type="submit" class="link-button small" aria-label={`${words}: ${text}`}>
                  {words}
                </button>
              </form>
            ) : null,
          )}
          <form method="post" action={`${base}/remove`} class="inline-form">
            <VersionField flag={flag} />
            <button type="submit" class="link-button small" aria-label={`Remove rule: ${text}`}>
              Remove rule
            </button>
          </form>
        </>
      ) : null}
    </li>
  );
}

export function AddRuleForm(props: { c: Context<ConsoleEnv>; flag: Flag; env: string; problem?: Problem | null }) {
  const { flag, env, problem } = props;
  const id = `add-rule-${env}`;
  const first = Object.keys(flag.variants)[0];
  return (
    <details class="subform" open={problem?.at === id}>
      <summary>Add a rule</summary>
      <form method="post" action={teamPath(props.c, `flags/${flag.key}/environments/${env}/rules`)} data-testid="add-rule">
        <ProblemNote problem={problem} at={id} />
        <VersionField flag={flag} />
        <DescriptionField id={id} value={keptFor(problem, id)?.description?.[0] ?? ""} />
        <ClauseFields id={id} kept={keptFor(problem, id)} />
        <ServeFields flag={flag} id={id} label="Serve" serve={first === undefined ? null : { variant: first }} kept={keptFor(problem, id)} />
        <p class="hint muted small">
          Rules are tried in order; the first that matches serves. Add more conditions to the rule once it is made. Numbers compare as numbers for less/greater
          than.
        </p>
        <button type="submit" class="secondary small">
          Add rule
        </button>
      </form>
    </details>
  );
}
