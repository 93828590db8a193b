/** @jsxImportSource hono/jsx */
// A Logs project's explorer at `logs/:project_id`: search (q, level, stream, time range) with
// cursor paging, the histogram of the range, rows that open to their metadata, the live tail
// (served here with the session, ending within seconds of sign-out or of the end of the
// membership), token rotation shown once, and the alerts with their firings (their forms in
// logs-alerts.tsx). Every read goes through the services of /api/v1/logs, under the same tenancy.
import { Hono, type Context } from "hono";
import { getCookie } from "hono/cookie";
import type { Env } from "../../../env";
import { getDb } from "../../../db/client";
import { nowMs } from "../../../platform/clock";
import { ApiError, zodDetails } from "../../../platform/errors";
import { followCredential } from "../../../platform/follow-credential";
import { firingView, projectAlerts, projectFirings } from "../log-alerts.service";
import { DeleteSection, SecretValue, TableWrap, ColumnHeads } from "../../../console/pages/parts";
import { openTail, projectEntries } from "../log-entries.service";
import { projectEntriesWithHistogram } from "../log-histogram";
import { EntriesQuery, TailQuery } from "../logs.schemas";
import { foundProject, getProject, projectStreams, projectView, rotateToken, selectProject } from "../logs.service";
import { Time } from "../../../console/layout";
import { formText } from "../../../console/forms";
import { redirectWithFlash, takeFlash } from "../../../console/flash";
import { page, teamPath } from "../../../console/render";
import { requireRole, roleAtLeast, teamPageReads, type ConsoleEnv } from "../../../console/session";
import { teamsOf } from "../../../console/members.service";
import { loadSession, SESSION_COOKIE } from "../../../console/sign-in.service";
import { DEFAULT_RANGE, HistogramChart, IngestCommand, LogRow, RANGES, SearchForm, type RangeName, type SearchState } from "./logs-view";
import { AlertForm, type AlertTestFlash } from "./logs-alerts";
import { settings } from "../../../platform/config";

export const logProjectPages = new Hono<ConsoleEnv>();
/** Entries per explorer page. */
const PAGE_SIZE = 50;
/** Streams offered in the stream filter. */
const STREAMS_SHOWN = 200;
/** Firings shown on a project page. */
const FIRINGS_SHOWN = 20;

/** Query parameters with empty values dropped (an empty select or search field means "any"). */
function filled(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter((entry): entry is [string, string] => typeof entry[1] === "string" && entry[1] !== ""));
}

function queryString(values: Record<string, string | undefined>): string {
  const params = new URLSearchParams(filled(values)).toString();
  return params ? `?${params}` : "";
}

// ---------------------------------------------------------------------------------------------
// A project: the explorer

/** The explorer's D1 reads, made with the session's (scoped by the page's team: see teamPageReads). */
const explorerReads = teamPageReads("/logs/:project_id", (db, params) => {
  const owned = { id: params.project_id!, teamId: params.team_id! };
  return [
    selectProject(db, owned.teamId, owned.id),
    projectStreams(db, owned, { limit: STREAMS_SHOWN }),
    projectAlerts(db, owned),
    projectFirings(db, owned.teamId, owned.id, FIRINGS_SHOWN),
  ] as const;
});

/** The flash of a project's page after its creation or a rotation: the ingest token, shown once. */
export type TokenFlash = { token: string };

const NOTICES = {
  "alert-created": "Alert created. It is checked every minute.",
  "alert-saved": "Alert saved.",
  "alert-deleted": "Alert deleted.",
  "alert-tested": "Alert tested against the entries stored now; nothing was sent.",
  created: "The project was created.",
  rotated: "The ingest token was rotated: the old token no longer works.",
};

async function projectPage(c: Context<ConsoleEnv>) {
  const team = c.get("consoleTeam");
  const projectId = c.req.param("project_id") ?? "";
  const params = c.req.query();
  const range: RangeName = Object.hasOwn(RANGES, params.range ?? "") ? (params.range as RangeName) : DEFAULT_RANGE;
  // The end of the range is pinned by the first page and carried by the paging links, so the pages
  // of one search never shift as new entries arrive.
  const untilMs = params.until ? Date.parse(params.until) : nowMs() + 1;
  if (!Number.isFinite(untilMs)) throw ApiError.validation({ until: ["must be an ISO 8601 date-time"] });
  const since = new Date(untilMs - RANGES[range].ms).toISOString();
  const until = new Date(untilMs).toISOString();
  const state: SearchState = { q: params.q ?? "", level: params.level ?? "", stream: params.stream ?? "", range };
  const parsed = EntriesQuery.safeParse(
    filled({ q: state.q, level: state.level, stream: state.stream, since, until, cursor: params.cursor, limit: String(PAGE_SIZE) }),
  );
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  const query = parsed.data;

  // The project under the team and its streams, alerts and firings came with the session's D1
  // round trip (explorerReads); the store is reached only once the project is found (404
  // otherwise), for the range's page and histogram in one call.
  const [projectRows, streams, alerts, firingRows] = await explorerReads(c);
  const project = foundProject(projectRows);
  const { entries, histogram } = await projectEntriesWithHistogram(c.env, project, { ...query, since, until });
  const firings = firingRows.map(firingView);
  // Nothing matched: is the project empty altogether (then teach the first command)?
  const searching = Boolean(query.q || query.level || query.stream || query.cursor);
  const empty = entries.data.length === 0 && (searching ? false : (await projectEntries(c.env, project, EntriesQuery.parse({ limit: "1" }))).data.length === 0);

  const base = teamPath(c, `logs/${projectId}`);
  const canWrite = roleAtLeast(team.role, "developer");
  const search = { q: state.q, level: state.level, stream: state.stream, range: range === DEFAULT_RANGE ? undefined : range };
  const older = entries.pagination.next_cursor ? `${base}${queryString({ ...search, until, cursor: entries.pagination.next_cursor })}` : null;
  const tailUrl = `${base}/tail${queryString({ q: state.q, level: state.level, stream: state.stream })}`;
  const alertNames = new Map(alerts.map((a) => [a.id, a.name]));
  const view = projectView(project);
  const notice = c.req.query("notice");
  const fresh = await takeFlash<TokenFlash>(c, "created", "rotated");
  const tested = await takeFlash<AlertTestFlash>(c, "alert-tested");

  return page(
    c,
    { title: view.name, active: "logs", notices: NOTICES },
    <>
      <p class="breadcrumbs small">
        <a href={teamPath(c, "logs")}>Logs</a> / {view.name}
      </p>
      {fresh ? (
        <section class="section" aria-labelledby="new-token-title">
          <h2 id="new-token-title">{notice === "created" ? `Project ${view.name} is ready` : "New ingest token"}</h2>
          <p class="warning">
            {notice === "created" ? "Copy the ingest token now." : "The old token stopped working just now. Copy the new one:"} It is shown only this once: we
            store only a hash of it.
          </p>
          <SecretValue id="new-token" value={fresh.token} />
          <p>Send the first entry:</p>
          <IngestCommand appUrl={settings(c.env).appUrl} token={fresh.token} tokenPrefix={view.ingest_token_prefix} id="first-entry" />
        </section>
      ) : notice === "created" || notice === "rotated" ? (
        <p class="muted">The ingest token was shown once and is not shown again. Rotate it if you did not copy it.</p>
      ) : null}
      <section class="section explorer">
        <SearchForm action={base} state={state} streams={streams.map((s) => s.name)} />
        <HistogramChart histogram={histogram} since={since} until={until} />
        <div class="tail-bar">
          <button type="button" class="secondary small" data-testid="tail-toggle" data-tail-url={tailUrl} aria-pressed="false" hidden>
            Live tail
          </button>
          <button type="button" class="secondary small" data-tail-pause aria-pressed="false" hidden>
            Pause
          </button>
          <p id="tail-status" class="muted small" role="status" aria-live="polite"></p>
        </div>
        {empty ? (
          <div class="empty-state" data-testid="logs-empty">
            <h2>No entries yet</h2>
            <p>Send this project its first line:</p>
            <IngestCommand appUrl={settings(c.env).appUrl} tokenPrefix={view.ingest_token_prefix} />
          </div>
        ) : entries.data.length === 0 ? (
          <p class="empty">No entries match in this time range. Widen the range or change the search.</p>
        ) : null}
        <div id="log-rows" class="log-rows" role="region" aria-label="Log entries, newest first">
          {entries.data.map((entry) => (
            <LogRow entry={entry} />
          ))}
        </div>
        <nav class="pager" aria-label="Pages">
          {query.cursor ? <a href={`${base}${queryString(search)}`}>Newest</a> : null}
          {older ? (
            <a href={older} rel="next" data-testid="older">
              Older entries
            </a>
          ) : null}
        </nav>
      </section>

      <section class="section" aria-labelledby="alerts-title">
        <h2 id="alerts-title">Alerts</h2>
        {alerts.length === 0 ? (
          <p class="muted">No alerts. An alert fires when a level passes a count within a window, e.g. 10 or more errors in 5 minutes.</p>
        ) : (
          <TableWrap label="Alerts of the project">
            <table>
              <caption class="skip">Alerts of the project</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Rule</th>
                  <th scope="col">Notifies</th>
                  <th scope="col">State</th>
                  <th scope="col">Last fired</th>
                  {canWrite ? (
                    <th scope="col">
                      <span class="skip">Actions</span>
                    </th>
                  ) : null}
                </tr>
              </thead>
              <tbody>
                {alerts.map((a) => {
                  const open = firings.find((f) => f.alert_id === a.id && f.resolved_at === null);
                  return (
                    <tr data-testid="alert-row" data-alert-id={a.id}>
                      <td>{a.name}</td>
                      <td>
                        {a.threshold} or more <span class={`level level-${a.level}`}>{a.level}</span> in {a.windowMinutes} min
                        {tested?.alertId === a.id ? (
                          <p class="notice" role="status" data-testid="alert-test-result">
                            {tested.text}
                          </p>
                        ) : null}
                      </td>
                      <td>{[a.notifyEmail, a.notifyWebhook].filter(Boolean).join(", ") || a.channels.join(", ")}</td>
                      <td>
                        {!a.enabled ? <span class="badge gray">off</span> : open ? <span class="badge danger">firing</span> : <span class="badge ok">ok</span>}
                      </td>
                      <td>
                        <Time iso={a.lastTriggeredAt === null ? null : new Date(a.lastTriggeredAt).toISOString()} />
                      </td>
                      {canWrite ? (
                        <td>
                          <div class="row-actions">
                            <form method="post" action={`${base}/alerts/${a.id}/test`} data-testid="test-alert">
                              <button type="submit" class="secondary small" aria-label={`Test ${a.name}`}>
                                Test
                              </button>
                            </form>
                            <form method="post" action={`${base}/alerts/${a.id}/delete`} data-testid="delete-alert">
                              <button type="submit" class="danger small" aria-label={`Delete ${a.name}`}>
                                Delete
                              </button>
                            </form>
                          </div>
                          <details>
                            <summary>Edit</summary>
                            <AlertForm action={`${base}/alerts/${a.id}`} alert={a} testid="edit-alert" />
                          </details>
                        </td>
                      ) : null}
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </TableWrap>
        )}
        {canWrite ? (
          <details open={alerts.length === 0}>
            <summary>Create an alert</summary>
            <AlertForm action={`${base}/alerts`} testid="create-alert" />
          </details>
        ) : null}
        {firings.length > 0 ? (
          <>
            <h3>Recent firings</h3>
            <TableWrap label="Latest firings of the project's alerts, newest first">
              <table>
                <caption class="skip">Latest firings of the project's alerts, newest first</caption>
                <ColumnHeads names={["Alert", "Fired", "Entries counted", "Resolved"]} />
                <tbody>
                  {firings.map((f) => (
                    <tr data-testid="firing-row">
                      <td>{alertNames.get(f.alert_id) ?? "deleted alert"}</td>
                      <td>
                        <Time iso={f.fired_at} />
                      </td>
                      <td>{f.count}</td>
                      <td>{f.resolved_at ? <Time iso={f.resolved_at} /> : <span class="badge danger">still firing</span>}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          </>
        ) : null}
      </section>

      <section class="section" aria-labelledby="ingest-title">
        <h2 id="ingest-title">Ingest</h2>
        <p>
          Token <code>{view.ingest_token_prefix}…</code> · entries kept {view.retention_days} days · up to {view.daily_limit_mb} MB a day · project id{" "}
          <code>{view.id}</code>
        </p>
        {empty ? null : <IngestCommand appUrl={settings(c.env).appUrl} tokenPrefix={view.ingest_token_prefix} />}
        {canWrite ? (
          <form method="post" action={`${base}/rotate-token`} data-testid="rotate-token">
            <button type="submit" class="danger small">
              Rotate token
            </button>
          </form>
        ) : null}
      </section>
      {canWrite ? (
        <DeleteSection
          what="project"
          consequence="Its token stops working and every entry, stream and alert of it is deleted."
          href={`${base}/delete`}
          testid="delete-project"
        />
      ) : null}
    </>,
  );
}

logProjectPages.get("/logs/:project_id", (c) => projectPage(c));

logProjectPages.post("/logs/:project_id/rotate-token", async (c) => {
  requireRole(c, "developer");
  const teamId = c.get("consoleTeam").id;
  const projectId = c.req.param("project_id");
  if ((await formText(c, "confirm")) !== "yes") {
    const project = await getProject(c.env, teamId, projectId);
    return page(
      c,
      { title: "Rotate the ingest token?", active: "logs" },
      <form method="post" class="section">
        <p>
          Rotate the ingest token of <strong>{project.name}</strong> (<code>{project.tokenPrefix}…</code>)? The current token stops working at once: every
          sender must switch to the new one.
        </p>
        <input type="hidden" name="confirm" value="yes" />
        <p class="presets">
          <button type="submit" class="danger solid" data-testid="confirm-rotate">
            Rotate token
          </button>
          <a class="button secondary" href={teamPath(c, `logs/${projectId}`)}>
            Cancel
          </a>
        </p>
      </form>,
    );
  }
  const { token } = await rotateToken(c.env, teamId, projectId);
  return redirectWithFlash(c, `logs/${projectId}`, "rotated", { token } satisfies TokenFlash);
});

// ---------------------------------------------------------------------------------------------
// The live tail

/**
 * Why a console tail must end now, or null while its viewer may go on: the session of the cookie
 * that opened it still valid, and its user still a member of the team.
 */
async function tailCredential(env: Env, token: string | undefined, teamId: string): Promise<string | null> {
  const db = getDb(env.DB);
  const user = await loadSession(db, token);
  if (!user) return "signed_out";
  return (await teamsOf(db, user.userId)).some((t) => t.id === teamId) ? null : "membership_ended";
}

logProjectPages.get("/logs/:project_id/tail", async (c) => {
  const teamId = c.get("consoleTeam").id;
  const parsed = TailQuery.safeParse(filled(c.req.query()));
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  const source = await openTail(c.env, teamId, null, c.req.param("project_id"), parsed.data);
  const token = getCookie(c, SESSION_COOKIE);
  return new Response(
    followCredential(source, () => tailCredential(c.env, token, teamId)),
    { status: 200, headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache, no-store", "x-accel-buffering": "no" } },
  );
});
