/** @jsxImportSource hono/jsx */
// The parts of a flag's page below its targeting: the history (version, actor, time, what changed)
// with a revert form per older version (made against the version the page showed: a stale revert
// is refused), the insights (evaluations per variant per hour of one environment, drawn with the
// console's charts, each an SVG with a table for screen readers, and the last evaluation), and
// the scheduled changes with their cancel and create forms.
import type { Context } from "hono";
import { BarChart, formatNumber, SeriesChart } from "../../../console/charts";
import { Time } from "../../../console/layout";
import { TableWrap } from "../../../console/pages/parts";
import { teamPath } from "../../../console/render";
import type { ConsoleEnv } from "../../../console/session";
import type { Flag } from "../flag-model";
import type { FlagInsights, HistoryEntry, ScheduledChange } from "../store/flag-rows";
import { keptFor, ProblemNote, VersionField, type Problem } from "./flag-form-parts";
import { ServeFields } from "./flag-serve";
import { sharesText } from "./flag-targeting";
import { canWrite } from "./flags-parts";

const ACTOR_WORDS = { key: "API key", user: "", schedule: "Scheduled change" } as const;

function ActorText(props: { actor: HistoryEntry["actor"] }) {
  const { actor } = props;
  if (actor.type === "user") return <span>{actor.label}</span>;
  if (actor.type === "key")
    return (
      <span>
        {ACTOR_WORDS.key} <code class="small">{actor.label}</code>
      </span>
    );
  return <span>{ACTOR_WORDS.schedule}</span>;
}

export function HistorySection(props: { c: Context<ConsoleEnv>; flag: Flag; history: HistoryEntry[]; problem?: Problem | null }) {
  const { c, flag } = props;
  const write = canWrite(c);
  return (
    <section class="section" aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      <ProblemNote problem={props.problem} at="revert" />
      <TableWrap label="History of the flag">
        <table>
          <caption class="skip">Every version of the flag, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What changed</th>
              {write ? <th scope="col">Revert</th> : null}
            </tr>
          </thead>
          <tbody>
            {props.history.map((h) => (
              <tr data-testid="history-row" data-version={h.version}>
                <td>{h.version}</td>
                <td>
                  <Time iso={h.at} seconds />
                </td>
                <td>
                  <ActorText actor={h.actor} />
                </td>
                <td>
                  <code class="small wrap">{h.changes.join(", ")}</code>
                </td>
                {write ? (
                  <td>
                    {h.version === flag.version ? (
                      <span class="muted small">current</span>
                    ) : (
                      <form method="post" action={teamPath(c, `flags/${flag.key}/revert`)} data-testid="revert-flag">
                        <input type="hidden" name="to" value={String(h.version)} />
                        <VersionField flag={flag} />
                        <button type="submit" class="secondary small">
                          Revert to version {h.version}
                        </button>
                      </form>
                    )}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </section>
  );
}

/** The hours of the last `hours` hours, oldest first, as `YYYY-MM-DDTHH` (UTC), ending with `now`'s. */
export function lastHours(now: number, hours: number): string[] {
  const end = Math.floor(now / 3_600_000) * 3_600_000;
  return Array.from({ length: hours }, (_, i) => new Date(end - (hours - 1 - i) * 3_600_000).toISOString().slice(0, 13));
}

export function InsightsSection(props: {
  c: Context<ConsoleEnv>;
  flag: Flag;
  insights: FlagInsights;
  environment: string;
  environments: Array<{ key: string; name: string }>;
  now: number;
}) {
  const { c, flag, insights, environment } = props;
  const hours = lastHours(props.now, 24);
  const rows = insights.hours.filter((h) => h.environment === environment);
  const byVariant = new Map<string, Map<string, number>>();
  for (const r of rows) {
    const perHour = byVariant.get(r.variant) ?? new Map<string, number>();
    perHour.set(r.hour, (perHour.get(r.hour) ?? 0) + r.evaluations);
    byVariant.set(r.variant, perHour);
  }
  const variants = [...new Set([...Object.keys(flag.variants), ...byVariant.keys()])];
  const totals = variants.map((v) => ({ label: v, value: hours.reduce((sum, h) => sum + (byVariant.get(v)?.get(h) ?? 0), 0) }));
  const base = teamPath(c, `flags/${flag.key}`);
  return (
    <section class="section" aria-labelledby="insights-title" data-testid="insights">
      <h2 id="insights-title">Insights</h2>
      <p>
        Last evaluated: <Time iso={insights.last_evaluated_at} /> <span class="muted small">(server-side evaluations; counts arrive within about 10 s)</span>
      </p>
      <nav class="filters" aria-label="Environment of the insights">
        {props.environments.map((e) => (
          <a class="filter" href={`${base}?insights=${e.key}#insights-title`} aria-current={e.key === environment ? "page" : undefined}>
            {e.name}
          </a>
        ))}
      </nav>
      {totals.every((t) => t.value === 0) ? (
        <p class="muted" data-testid="insights-empty">
          No evaluations in {environment} in the last 24 hours. Evaluate the flag with a team key or a client key and its counts appear here.
        </p>
      ) : (
        <>
          <BarChart id="insights-variants" title={`Evaluations per variant in ${environment}, last 24 hours`} data={totals} />
          <div class="usage-grid">
            {totals
              .filter((t) => t.value > 0)
              .map((t) => (
                <div class="usage-card">
                  <h3>
                    {t.label} <span class="muted small">{formatNumber(t.value)} evaluations</span>
                  </h3>
                  <SeriesChart
                    id={`insights-${t.label.replace(/[^A-Za-z0-9_-]/g, "_")}`}
                    caption={`Evaluations serving ${t.label} per hour in ${environment}`}
                    unit="evaluations"
                    figcaption={false}
                    column="Hour (UTC)"
                    empty="No evaluations in the last 24 hours"
                    summary={`Evaluations serving ${t.label} per hour in ${environment}: ${formatNumber(t.value)} evaluations in the last 24 hours`}
                    tickEvery={6}
                    points={hours.map((h) => ({ label: `${h.replace("T", " ")}:00 UTC`, tick: `${h.slice(11)}h`, value: byVariant.get(t.label)?.get(h) ?? 0 }))}
                  />
                </div>
              ))}
          </div>
        </>
      )}
    </section>
  );
}

function changeText(s: ScheduledChange): string {
  const parts: string[] = [];
  if (s.enabled !== undefined) parts.push(s.enabled ? "turn on" : "turn off");
  if (s.fallthrough) parts.push(`otherwise serve ${sharesText(s.fallthrough)}`);
  return parts.join(", ");
}

function StatusBadge(props: { change: ScheduledChange }) {
  const { status } = props.change;
  return <span class={`badge ${status === "applied" ? "ok" : status === "failed" ? "danger" : "warn"}`}>{status}</span>;
}

/** Cancels a pending change: a small link-like button in the list, a button of its own on the change's page. */
function CancelForm(props: { c: Context<ConsoleEnv>; flag: Flag; change: ScheduledChange; own?: boolean }) {
  return (
    <form method="post" action={teamPath(props.c, `flags/${props.flag.key}/scheduled/${props.change.id}/cancel`)}>
      <button type="submit" class={props.own ? "secondary" : "link-button small"}>
        {props.own ? "Cancel this change" : "Cancel"}
      </button>
    </form>
  );
}

/** One scheduled change on its own (`getScheduledFlagChange`): what it does, who scheduled it and when, and what came of it. */
export function ScheduledChangeFacts(props: { c: Context<ConsoleEnv>; flag: Flag; change: ScheduledChange }) {
  const { c, flag, change } = props;
  return (
    <section class="section" aria-labelledby="change-title">
      <h2 id="change-title">Scheduled change</h2>
      <dl class="meta-list" data-testid="scheduled-change" data-status={change.status}>
        <dt>Environment</dt>
        <dd>{change.environment}</dd>
        <dt>Due</dt>
        <dd>
          <Time iso={change.at} /> <span class="muted small">(applied within 60 seconds of this time)</span>
        </dd>
        <dt>Change</dt>
        <dd>{changeText(change)}</dd>
        <dt>Status</dt>
        <dd>
          <StatusBadge change={change} />
        </dd>
        {change.error ? (
          <>
            <dt>Why it failed</dt>
            <dd>{change.error}</dd>
          </>
        ) : null}
        {change.applied_at ? (
          <>
            <dt>Applied</dt>
            <dd>
              <Time iso={change.applied_at} />
              {change.applied_version !== null ? `, as version ${change.applied_version}` : ""}
            </dd>
          </>
        ) : null}
        <dt>Scheduled by</dt>
        <dd>
          <ActorText actor={change.actor} />, <Time iso={change.created_at} />
        </dd>
      </dl>
      {canWrite(c) && change.status === "pending" ? <CancelForm c={c} flag={flag} change={change} own /> : null}
    </section>
  );
}

/** A scheduled change: an environment turned on or off, its default rule changed, or both, at a time (UTC). */
function ScheduleForm(props: { c: Context<ConsoleEnv>; flag: Flag; environments: Array<{ key: string; name: string }>; problem?: Problem | null }) {
  const { flag } = props;
  const kept = keptFor(props.problem, "schedule");
  const env = kept?.environment?.[0];
  const enabled = kept?.enabled?.[0] ?? "";
  return (
    <details class="subform" open={props.problem?.at === "schedule"}>
      <summary>Schedule a change</summary>
      <form method="post" action={teamPath(props.c, `flags/${flag.key}/scheduled`)} data-testid="schedule-change">
        <ProblemNote problem={props.problem} at="schedule" />
        <VersionField flag={flag} />
        <div class="inline-form">
          <div class="field narrow">
            <label for="schedule-env">Environment</label>
            <select id="schedule-env" name="environment">
              {props.environments.map((e) => (
                <option value={e.key} selected={e.key === env}>
                  {e.name}
                </option>
              ))}
            </select>
          </div>
          <div class="field narrow">
            <label for="schedule-state">On or off</label>
            <select id="schedule-state" name="enabled">
              <option value="" selected={enabled === ""}>
                Leave as it is
              </option>
              <option value="true" selected={enabled === "true"}>
                Turn on
              </option>
              <option value="false" selected={enabled === "false"}>
                Turn off
              </option>
            </select>
          </div>
          <div class="field narrow">
            <label for="schedule-at">At (UTC)</label>
            <input id="schedule-at" type="datetime-local" name="at" required value={kept?.at?.[0] ?? ""} />
          </div>
        </div>
        <ServeFields flag={flag} id="schedule" label="Default rule" serve={null} kept={kept} leave="Leave the default rule as it is" />
        <p class="hint muted small">Applied within 60 seconds of its time as a new version; a change whose variant was removed by then fails and says why.</p>
        <button type="submit" class="secondary">
          Schedule
        </button>
      </form>
    </details>
  );
}

export function ScheduledSection(props: {
  c: Context<ConsoleEnv>;
  flag: Flag;
  scheduled: ScheduledChange[];
  environments: Array<{ key: string; name: string }>;
  problem?: Problem | null;
}) {
  const { c, flag } = props;
  const write = canWrite(c);
  return (
    <section class="section" aria-labelledby="scheduled-title">
      <h2 id="scheduled-title">Scheduled changes</h2>
      {props.scheduled.length === 0 ? (
        <p class="muted">Nothing scheduled.</p>
      ) : (
        <TableWrap label="Scheduled changes">
          <table>
            <caption class="skip">Scheduled changes of the flag, by due time</caption>
            <thead>
              <tr>
                <th scope="col">Due</th>
                <th scope="col">Environment</th>
                <th scope="col">Change</th>
                <th scope="col">Status</th>
                {write ? <th scope="col">Cancel</th> : null}
              </tr>
            </thead>
            <tbody>
              {props.scheduled.map((s) => (
                <tr data-testid="scheduled-row" data-status={s.status}>
                  <td>
                    <a href={teamPath(c, `flags/${flag.key}/scheduled/${s.id}`)}>
                      <Time iso={s.at} />
                    </a>
                  </td>
                  <td>{s.environment}</td>
                  <td>{changeText(s)}</td>
                  <td>
                    <StatusBadge change={s} />
                    {s.error ? <span class="small muted"> {s.error}</span> : null}
                  </td>
                  {write ? <td>{s.status === "pending" ? <CancelForm c={c} flag={flag} change={s} /> : null}</td> : null}
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {write ? <ScheduleForm c={c} flag={flag} environments={props.environments} problem={props.problem} /> : null}
    </section>
  );
}
