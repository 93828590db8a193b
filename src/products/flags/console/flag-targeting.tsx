/** @jsxImportSource hono/jsx */
// One environment of a flag on its page: the switch, the rules in words in evaluation order with
// their forms (flag-rules.tsx), the default rule ("Otherwise: …") with a form that serves a variant
// or a rollout (flag-serve.tsx, the same fields as a rule's), and the form adding a rule. Every
// form carries the version the page showed, sent as If-Match: a change made meanwhile is refused
// rather than overwritten.
import type { Context } from "hono";
import { teamPath } from "../../../console/render";
import type { ConsoleEnv } from "../../../console/session";
import type { Serve } from "../evaluate";
import type { Flag } from "../flag-model";
import { keptFor, ProblemNote, VersionField, type Problem } from "./flag-form-parts";
import { AddRuleForm, RuleItem } from "./flag-rules";
import { ServeFields } from "./flag-serve";
import { fallthroughText, percentText } from "./flag-words";
import { canWrite, ReadOnly, ToggleForm } from "./flags-parts";

function FallthroughForm(props: { c: Context<ConsoleEnv>; flag: Flag; env: string; problem?: Problem | null }) {
  const id = `fallthrough-${props.env}`;
  return (
    <form method="post" action={teamPath(props.c, `flags/${props.flag.key}/environments/${props.env}/fallthrough`)} data-testid="edit-fallthrough">
      <ProblemNote problem={props.problem} at={id} />
      <VersionField flag={props.flag} />
      <ServeFields
        flag={props.flag}
        id={id}
        label="Otherwise serve"
        serve={props.flag.environments[props.env]!.fallthrough}
        kept={keptFor(props.problem, id)}
      />
      <button type="submit" class="secondary small">
        Save default rule
      </button>
    </form>
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
        {config.rules.map((rule, index) => (
          <RuleItem c={c} flag={flag} env={env.key} rule={rule} index={index} count={config.rules.length} write={write} problem={props.problem} />
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
