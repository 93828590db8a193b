/** @jsxImportSource hono/jsx */
// A flag's page at `flags/:flag_key`: what it is (key, type, tags, client side), its variants and
// off variant (flag-variants.tsx), each environment's targeting in words with its forms
// (flag-targeting.tsx, flag-rules.tsx), the scheduled changes, the insights and the history with
// revert (flag-sections.tsx), and its settings and deletion. Read through the services of /api/v1/flags; another team's flag is not
// in this team's store, so it answers the console's 404. The forms post to flag-actions.tsx and
// flag-rule-actions.ts, whose refusals re-render this page at their status with the problem
// beside its form (flag-write.ts).
import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { Time } from "../../../console/layout";
import { page, teamPath } from "../../../console/render";
import type { ConsoleEnv } from "../../../console/session";
import { nowMs } from "../../../platform/clock";
import type { Flag } from "../flag-model";
import { flushInsights } from "../flags.insights";
import { flagHistory, flagInsights, getFlag, getScheduledChange, listEnvironments, listScheduledChanges } from "../flags.service";
import { ProblemNote, VersionField, type Problem } from "./flag-form-parts";
import { HistorySection, InsightsSection, ScheduledChangeFacts, ScheduledSection } from "./flag-sections";
import { EnvironmentCard } from "./flag-targeting";
import { VariantsSection } from "./flag-variants";
import { canWrite, FlagTabs, TOGGLE_NOTICES } from "./flags-parts";

export const flagPage = new Hono<ConsoleEnv>();

const NOTICES = {
  ...TOGGLE_NOTICES,
  created: "Flag created. It is off in every environment: turn it on where you want it served.",
  saved: "Saved as a new version.",
  reverted: "Reverted: a new version equal to the one you chose.",
  scheduled: "Change scheduled. It is applied within 60 seconds of its time.",
  cancelled: "Scheduled change cancelled.",
};

function SettingsSection(props: { c: Context<ConsoleEnv>; flag: Flag; problem?: Problem | null }) {
  const { c, flag } = props;
  if (!canWrite(c)) return null;
  return (
    <section class="section" aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <form method="post" action={teamPath(c, `flags/${flag.key}/settings`)} data-testid="flag-settings">
        <ProblemNote problem={props.problem} at="settings" />
        <VersionField flag={flag} />
        <div class="field">
          <label for="flag-name">Name</label>
          <input type="text" id="flag-name" name="name" required maxlength={200} value={flag.name} />
        </div>
        <div class="field">
          <label for="flag-description">Description</label>
          <textarea id="flag-description" name="description" rows={2} maxlength={2000}>
            {flag.description}
          </textarea>
        </div>
        <div class="field">
          <label for="flag-tags">Tags (comma separated)</label>
          <input type="text" id="flag-tags" name="tags" value={flag.tags.join(", ")} />
        </div>
        <div class="field">
          <label class="check">
            <input type="checkbox" name="client_side" value="on" checked={flag.client_side} /> Served to client keys (browsers and apps)
          </label>
        </div>
        <button type="submit" class="secondary">
          Save settings
        </button>
      </form>
      <details class="subform">
        <summary>Delete this flag</summary>
        <form method="post" action={teamPath(c, `flags/${flag.key}/delete`)} data-testid="delete-flag">
          <p>Its history, schedules and insights go with it, and evaluations answer FLAG_NOT_FOUND within 5 seconds.</p>
          <label class="check">
            <input type="checkbox" name="confirm" value="yes" required /> Yes, delete {flag.key}
          </label>
          <button type="submit" class="danger">
            Delete flag
          </button>
        </form>
      </details>
    </section>
  );
}

/** The flag's page, with a refused form's problem beside it (at the refusal's status). */
export async function renderFlagPage(c: Context<ConsoleEnv>, key: string, options: { problem?: Problem; status?: ContentfulStatusCode } = {}) {
  const teamId = c.get("consoleTeam").id;
  const flag = await getFlag(c.env, teamId, key);
  // This isolate's counts not yet sent (at most 10 s of them) are sent first, so the page shows them.
  await flushInsights(c.env, teamId);
  const [environments, history, scheduled, insights] = await Promise.all([
    listEnvironments(c.env, teamId),
    flagHistory(c.env, teamId, key, 100),
    listScheduledChanges(c.env, teamId, key),
    flagInsights(c.env, teamId, key, 24),
  ]);
  const asked = c.req.query("insights");
  const insightsEnv = environments.some((e) => e.key === asked) ? asked! : (environments[0]?.key ?? "production");
  const problem = options.problem ?? null;
  return page(
    c,
    { title: flag.name, active: "flags", notices: NOTICES, status: options.status },
    <>
      <p class="breadcrumbs small">
        <a href={teamPath(c, "flags")}>Feature flags</a> / {flag.key}
      </p>
      <FlagTabs c={c} current="flags" />
      <dl class="meta-list" data-testid="flag-facts" data-version={flag.version}>
        <dt>Key</dt>
        <dd>
          <code>{flag.key}</code>
        </dd>
        <dt>Type</dt>
        <dd>{flag.type}</dd>
        <dt>Version</dt>
        <dd>
          {flag.version}, changed <Time iso={flag.updated_at} />
        </dd>
        <dt>Tags</dt>
        <dd>{flag.tags.length ? flag.tags.join(", ") : <span class="muted">none</span>}</dd>
        <dt>Client keys</dt>
        <dd>{flag.client_side ? "served to client keys (browsers and apps)" : "server-side only"}</dd>
        {flag.description ? (
          <>
            <dt>Description</dt>
            <dd>{flag.description}</dd>
          </>
        ) : null}
      </dl>
      <VariantsSection c={c} flag={flag} problem={problem} />
      <section class="section" aria-labelledby="targeting-title">
        <h2 id="targeting-title">Targeting</h2>
        <p class="muted small">Per environment, in the order they are tried: the first rule that matches serves; otherwise the default rule.</p>
        <div class="questions">
          {environments.map((env) => (
            <EnvironmentCard c={c} flag={flag} env={env} problem={problem} />
          ))}
        </div>
      </section>
      <ScheduledSection c={c} flag={flag} scheduled={scheduled} environments={environments} problem={problem} />
      <InsightsSection c={c} flag={flag} insights={insights} environment={insightsEnv} environments={environments} now={nowMs()} />
      <HistorySection c={c} flag={flag} history={history} problem={problem} />
      <SettingsSection c={c} flag={flag} problem={problem} />
    </>,
  );
}

flagPage.get("/flags/:flag_key", (c) => renderFlagPage(c, c.req.param("flag_key")));

// One scheduled change on its own page; the flag's page lists them all.
flagPage.get("/flags/:flag_key/scheduled/:change_id", async (c) => {
  const teamId = c.get("consoleTeam").id;
  const key = c.req.param("flag_key");
  const [flag, change] = await Promise.all([getFlag(c.env, teamId, key), getScheduledChange(c.env, teamId, key, c.req.param("change_id"))]);
  return page(
    c,
    { title: `Scheduled change of ${flag.name}`, active: "flags" },
    <>
      <p class="breadcrumbs small">
        <a href={teamPath(c, "flags")}>Feature flags</a> / <a href={teamPath(c, `flags/${flag.key}`)}>{flag.key}</a> / scheduled change
      </p>
      <FlagTabs c={c} current="flags" />
      <ScheduledChangeFacts c={c} flag={flag} change={change} />
    </>,
  );
});
