/** @jsxImportSource hono/jsx */
// One environment of a flag on its page: the switch, the rules in words in evaluation order (each
// rollout with a form of its shares, each rule with a remove button), the fallthrough ("Otherwise:
// …") with a form that serves a variant or a rollout, and a form adding a rule of one clause.
// Every form carries the version the page showed, sent as If-Match: a change made meanwhile is
// refused rather than overwritten.
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import { teamPath } from "../../../console/render";
import type { ConsoleEnv } from "../../../console/session";
import type { Rollout, Rule, Serve } from "../evaluate";
import type { Flag } from "../flag-model";
import { fallthroughText, OP_CHOICES, percentText, ruleText } from "./flag-words";
import { canWrite, ReadOnly, ToggleForm } from "./flags-parts";

/** A refused form's message, placed beside the form it belongs to (`at` is that form's id). */
export interface Problem {
  at: string;
  message: string;
}

export function ProblemNote(props: { problem?: Problem | null; at: string }) {
  if (props.problem?.at !== props.at) return null;
  return (
    <p class="errors" role="alert" data-testid="form-problem">
      {props.problem.message}
    </p>
  );
}

/** The version a form is made against (If-Match). */
export const VersionField = (props: { flag: Flag }) => <input type="hidden" name="version" value={String(props.flag.version)} />;

/** Share inputs, one per variant, prefilled from a rollout (or 100% of a fixed variant). */
function Shares(props: { flag: Flag; id: string; serve: Serve }) {
  const weights = new Map<string, number>();
  if ("rollout" in props.serve) for (const v of props.serve.rollout.variations) weights.set(v.variant, v.weight);
  else weights.set(props.serve.variant, 100_000);
  return (
    <div class="inline-form">
      {Object.keys(props.flag.variants).map((variant) => (
        <div class="field narrow">
          <input type="hidden" name="variant" value={variant} />
          <label for={`${props.id}-${variant}`}>{variant} (%)</label>
          <input
            type="text"
            id={`${props.id}-${variant}`}
            name="percent"
            inputmode="decimal"
            size={7}
            value={String(Number((((weights.get(variant) ?? 0) / 100_000) * 100).toFixed(3)))}
          />
        </div>
      ))}
    </div>
  );
}

function RolloutForm(props: { c: Context<ConsoleEnv>; flag: Flag; env: string; rule: Rule & { serve: { rollout: Rollout } }; problem?: Problem | null }) {
  const id = `rollout-${props.env}-${props.rule.id}`;
  return (
    <form
      method="post"
      action={teamPath(props.c, `flags/${props.flag.key}/environments/${props.env}/rules/${encodeURIComponent(props.rule.id)}/rollout`)}
      data-testid="edit-rollout"
    >
      <ProblemNote problem={props.problem} at={id} />
      <VersionField flag={props.flag} />
      <Shares flag={props.flag} id={id} serve={props.rule.serve} />
      <button type="submit" class="secondary small">
        Save shares
      </button>
    </form>
  );
}

function FallthroughForm(props: { c: Context<ConsoleEnv>; flag: Flag; env: string; problem?: Problem | null }) {
  const serve = props.flag.environments[props.env]!.fallthrough;
  const id = `fallthrough-${props.env}`;
  const rollout = "rollout" in serve ? serve.rollout : null;
  return (
    <form method="post" action={teamPath(props.c, `flags/${props.flag.key}/environments/${props.env}/fallthrough`)} data-testid="edit-fallthrough">
      <ProblemNote problem={props.problem} at={id} />
      <VersionField flag={props.flag} />
      <div class="inline-form">
        <div class="field">
          <label for={`${id}-serve`}>Otherwise serve</label>
          <select id={`${id}-serve`} name="serve">
            {Object.keys(props.flag.variants).map((v) => (
              <option value={`variant:${v}`} selected={"variant" in serve && serve.variant === v}>
                {v}
              </option>
            ))}
            <option value="rollout" selected={rollout !== null}>
              a percentage rollout (shares below)
            </option>
          </select>
        </div>
        <div class="field narrow">
          <label for={`${id}-bucket`}>Bucket by</label>
          <input type="text" id={`${id}-bucket`} name="bucket_by" size={10} maxlength={256} value={rollout?.bucket_by ?? "key"} />
        </div>
      </div>
      <Shares flag={props.flag} id={id} serve={serve} />
      <button type="submit" class="secondary small">
        Save default rule
      </button>
    </form>
  );
}

function AddRuleForm(props: { c: Context<ConsoleEnv>; flag: Flag; env: string; problem?: Problem | null }) {
  const id = `add-rule-${props.env}`;
  return (
    <details class="subform" open={props.problem?.at === id}>
      <summary>Add a rule</summary>
      <form method="post" action={teamPath(props.c, `flags/${props.flag.key}/environments/${props.env}/rules`)} data-testid="add-rule">
        <ProblemNote problem={props.problem} at={id} />
        <VersionField flag={props.flag} />
        <div class="inline-form">
          <div class="field narrow">
            <label for={`${id}-attribute`}>Attribute</label>
            <input type="text" id={`${id}-attribute`} name="attribute" size={10} maxlength={256} placeholder="country" />
          </div>
          <div class="field narrow">
            <label for={`${id}-op`}>Operator</label>
            <select id={`${id}-op`} name="op">
              {OP_CHOICES.map(([op, words]) => (
                <option value={op}>{words}</option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for={`${id}-values`}>Values (comma separated; segment keys for a segment)</label>
            <input type="text" id={`${id}-values`} name="values" maxlength={20000} placeholder="DE, FR" />
          </div>
          <div class="field narrow">
            <label for={`${id}-serve`}>Serve</label>
            <select id={`${id}-serve`} name="serve">
              {Object.keys(props.flag.variants).map((v) => (
                <option value={v}>{v}</option>
              ))}
            </select>
          </div>
        </div>
        <p class="hint muted small">Rules are tried in order; the first that matches serves. Numbers compare as numbers for less/greater than.</p>
        <button type="submit" class="secondary small">
          Add rule
        </button>
      </form>
    </details>
  );
}

function RuleItem(props: { c: Context<ConsoleEnv>; flag: Flag; env: string; rule: Rule; write: boolean; problem?: Problem | null; children?: Child }) {
  const { rule } = props;
  return (
    <li data-testid="rule" data-rule={rule.id}>
      <span>{ruleText(rule)}</span>
      {props.write ? (
        <>
          {"rollout" in rule.serve ? <RolloutForm c={props.c} flag={props.flag} env={props.env} rule={rule as never} problem={props.problem} /> : null}
          <form
            method="post"
            action={teamPath(props.c, `flags/${props.flag.key}/environments/${props.env}/rules/${encodeURIComponent(rule.id)}/remove`)}
            class="inline-form"
          >
            <VersionField flag={props.flag} />
            <button type="submit" class="link-button small" aria-label={`Remove the rule: ${ruleText(rule)}`}>
              Remove
            </button>
          </form>
        </>
      ) : null}
    </li>
  );
}

/** One environment's card on the flag page. */
export function EnvironmentCard(props: { c: Context<ConsoleEnv>; flag: Flag; env: { key: string; name: string }; problem?: Problem | null }) {
  const { c, flag, env } = props;
  const config = flag.environments[env.key]!;
  const write = canWrite(c);
  return (
    <section class="card" aria-labelledby={`env-${env.key}`} data-testid="environment" data-environment={env.key}>
      <h3 id={`env-${env.key}`}>
        {env.name} <code class="small muted">{env.key}</code>
      </h3>
      <div class="row-actions">
        {write ? <ToggleForm c={c} flag={flag} environment={env.key} back="flag" /> : null}
        <span>
          {config.enabled ? <span class="badge ok">on: targeting applies</span> : <span class="badge gray">off: serves {flag.off_variant} to everyone</span>}
        </span>
      </div>
      <ProblemNote problem={props.problem} at={`rules-${env.key}`} />
      <ol class="rules" data-testid="rules">
        {config.rules.map((rule) => (
          <RuleItem c={c} flag={flag} env={env.key} rule={rule} write={write} problem={props.problem} />
        ))}
      </ol>
      <div data-testid="fallthrough">
        <p>
          <strong>Default rule.</strong> {fallthroughText(config.fallthrough)}
        </p>
        {write ? (
          <details class="subform" open={props.problem?.at === `fallthrough-${env.key}`}>
            <summary>Change the default rule</summary>
            <FallthroughForm c={c} flag={flag} env={env.key} problem={props.problem} />
          </details>
        ) : null}
      </div>
      {write ? <AddRuleForm c={c} flag={flag} env={env.key} problem={props.problem} /> : <ReadOnly what="change targeting" />}
    </section>
  );
}

/** A serve's shares as one short phrase for the history and schedules ("50% on, 50% off"). */
export function sharesText(serve: Serve): string {
  return "variant" in serve ? serve.variant : serve.rollout.variations.map((v) => `${percentText(v.weight)} ${v.variant}`).join(", ");
}
