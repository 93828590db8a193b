/** @jsxImportSource hono/jsx */
// The Logs pages: the team's projects at `logs` (create one, its ingest token shown once), and a
// project's explorer at `logs/:project_id`: search (q, level, stream, time range) with cursor
// paging, the histogram of the range, rows that open to their metadata, the live tail (served
// here with the session, ending within seconds of sign-out or of the end of the membership),
// token rotation shown once, and the alerts with their firings (create, edit, switch off, delete, and a test that counts the window now). Every read and write goes through
// the services of /api/v1/logs, under the same tenancy.
import { Hono, type Context } from "hono";
import { getCookie } from "hono/cookie";
import type { Env } from "../../../env";
import { getDb } from "../../../db/client";
import { nowMs } from "../../../platform/clock";
import { ApiError, zodDetails } from "../../../platform/errors";
import { followCredential } from "../../../platform/follow-credential";
import { createAlert, deleteAlert, firingView, listAlerts, projectAlerts, projectFirings, updateAlert, type AlertRow } from "../log-alerts.service";
import { logStore } from "../logs.store";
import { LOG_LEVELS } from "../../../db/schema/logs";
import { TableWrap } from "../../../console/pages/parts";
import { openTail, projectEntries } from "../log-entries.service";
import { projectEntriesWithHistogram } from "../log-histogram";
import { CreateAlertBody, CreateProjectBody, DEFAULT_DAILY_LIMIT_MB, EntriesQuery, TailQuery, UpdateAlertBody } from "../logs.schemas";
import { createProject, getProject, listProjects, loadProject, projectStreams, projectView, rotateToken } from "../logs.service";
import { Time } from "../../../console/layout";
import { formText } from "../../../console/forms";
import { redirectWithFlash, takeFlash } from "../../../console/flash";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, roleAtLeast, type ConsoleEnv } from "../../../console/session";
import { teamsOf } from "../../../console/members.service";
import { loadSession, SESSION_COOKIE } from "../../../console/sign-in.service";
import { DEFAULT_RANGE, HistogramChart, IngestCommand, LogRow, RANGES, SearchForm, type RangeName, type SearchState } from "./logs-view";
import { settings } from "../../../platform/config";

export const logsPages = new Hono<ConsoleEnv>();

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
// Projects

/** The flash of a project's page after its creation or a rotation: the ingest token, shown once. */
type TokenFlash = { token: string };

async function projectsPage(c: Context<ConsoleEnv>, extra: { errors?: Record<string, string[]>; name?: string } = {}, status: 200 | 422 = 200) {
  const team = c.get("consoleTeam");
  const projects = (await listProjects(c.env, team.id)).map(projectView);
  const canWrite = roleAtLeast(team.role, "developer");
  const base = teamPath(c, "logs");
  return page(
    c,
    { title: "Logs", active: "logs", status },
    <>
      <section class="section">
        <h2>Projects</h2>
        {projects.length === 0 ? (
          <div class="empty-state">
            <p>No log projects yet. A project holds the entries of one app or service and has its own ingest token.</p>
            {canWrite ? (
              <p>Create the first one below, then send it a line with curl.</p>
            ) : (
              <p class="muted">A developer, admin or owner of the team creates projects.</p>
            )}
          </div>
        ) : (
          <div class="table-wrap" role="region" aria-label="Log projects of the team" tabindex={0}>
            <table>
              <caption class="skip">Log projects of the team</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Ingest token</th>
                  <th scope="col">Streams</th>
                  <th scope="col">Kept</th>
                  <th scope="col">Daily limit</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {projects.map((p) => (
                  <tr data-testid="project-row">
                    <td>
                      <a href={`${base}/${p.id}`}>{p.name}</a>
                    </td>
                    <td>
                      <code>{p.ingest_token_prefix}…</code>
                    </td>
                    <td>{p.stream_count}</td>
                    <td>{p.retention_days} days</td>
                    <td>{p.daily_limit_mb} MB</td>
                    <td>
                      <Time iso={p.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {canWrite ? (
        <form method="post" action={base} class="section" data-testid="create-project">
          <h2>Create a project</h2>
          {extra.errors ? (
            <ul class="errors">
              {Object.entries(extra.errors).map(([field, messages]) => (
                <li>
                  {field}: {messages.join(", ")}
                </li>
              ))}
            </ul>
          ) : null}
          <div class="inline-form">
            <div class="field">
              <label for="project-name">Name</label>
              <input id="project-name" type="text" name="name" required maxlength={200} value={extra.name ?? ""} placeholder="api-production" />
            </div>
            <div class="field narrow">
              <label for="project-limit">Daily limit (MB)</label>
              <input id="project-limit" type="number" name="daily_limit_mb" min={1} max={1_048_576} value={String(DEFAULT_DAILY_LIMIT_MB)} />
            </div>
            <div class="field">
              <button type="submit">Create project</button>
            </div>
          </div>
        </form>
      ) : null}
    </>,
  );
}

logsPages.get("/logs", (c) => projectsPage(c));

logsPages.post("/logs", async (c) => {
  requireRole(c, "developer");
  const name = await formText(c, "name");
  const limit = await formText(c, "daily_limit_mb");
  const parsed = CreateProjectBody.safeParse({ name, ...(limit ? { daily_limit_mb: Number(limit) } : {}) });
  if (!parsed.success) return projectsPage(c, { errors: zodDetails(parsed.error), name }, 422);
  const { row, token } = await createProject(c.env, c.get("consoleTeam").id, parsed.data);
  return redirectWithFlash(c, `logs/${row.id}`, "created", { token } satisfies TokenFlash);
});

// ---------------------------------------------------------------------------------------------
// A project: the explorer

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

  // The project is looked up once, under the team (404 otherwise, before any store is reached);
  // every read after it takes the loaded row, in two calls made in parallel: the store's page and
  // histogram of the range in one, and the three D1 reads in one batch.
  const db = getDb(c.env.DB);
  const project = await loadProject(db, team.id, projectId);
  const [{ entries, histogram }, [streams, alerts, firingRows]] = await Promise.all([
    projectEntriesWithHistogram(c.env, project, { ...query, since, until }),
    db.batch([projectStreams(db, project, { limit: STREAMS_SHOWN }), projectAlerts(db, project), projectFirings(db, team.id, projectId, FIRINGS_SHOWN)]),
  ]);
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
          <div class="secret">
            <code id="new-token" data-testid="new-token">
              {fresh.token}
            </code>
            <button type="button" class="secondary small" data-copy="#new-token" hidden>
              Copy
            </button>
          </div>
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
            <div class="table-wrap" role="region" aria-label="Latest firings of the project's alerts, newest first" tabindex={0}>
              <table>
                <caption class="skip">Latest firings of the project's alerts, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Alert</th>
                    <th scope="col">Fired</th>
                    <th scope="col">Entries counted</th>
                    <th scope="col">Resolved</th>
                  </tr>
                </thead>
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
            </div>
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
    </>,
  );
}

logsPages.get("/logs/:project_id", (c) => projectPage(c));

logsPages.post("/logs/:project_id/rotate-token", async (c) => {
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
// Alerts: create, edit (every field, on and off), delete, and a test that counts the rule's window now

/** The outcome of an alert's test, shown once beside it. */
type AlertTestFlash = { alertId: string; text: string };

function AlertForm(props: { action: string; alert?: AlertRow; testid: string }) {
  const a = props.alert;
  const id = a ? `alert-${a.id}` : "alert-new";
  return (
    <form method="post" action={props.action} data-testid={props.testid}>
      <div class="inline-form">
        <div class="field">
          <label for={`${id}-name`}>Name</label>
          <input id={`${id}-name`} type="text" name="name" required maxlength={200} value={a?.name ?? ""} placeholder="Too many errors" />
        </div>
        <div class="field narrow">
          <label for={`${id}-level`}>Level</label>
          <select id={`${id}-level`} name="level">
            {LOG_LEVELS.map((level) => (
              <option value={level} selected={(a?.level ?? "error") === level}>
                {level}
              </option>
            ))}
          </select>
        </div>
        <div class="field narrow">
          <label for={`${id}-threshold`}>At least (entries)</label>
          <input id={`${id}-threshold`} type="number" name="threshold" required min={1} max={1_000_000} value={String(a?.threshold ?? 10)} />
        </div>
        <div class="field narrow">
          <label for={`${id}-window`}>Within (minutes)</label>
          <input id={`${id}-window`} type="number" name="window_minutes" required min={1} max={1_440} value={String(a?.windowMinutes ?? 5)} />
        </div>
      </div>
      <div class="inline-form">
        <div class="field">
          <label for={`${id}-email`}>Email a member (optional)</label>
          <input id={`${id}-email`} type="email" name="notify_email" maxlength={320} value={a?.notifyEmail ?? ""} />
        </div>
        <div class="field">
          <label for={`${id}-webhook`}>Call a webhook (optional)</label>
          <input id={`${id}-webhook`} type="url" name="notify_webhook" maxlength={2048} value={a?.notifyWebhook ?? ""} placeholder="https://" />
        </div>
      </div>
      {a ? (
        <label class="check">
          <input type="checkbox" name="enabled" value="on" checked={a.enabled} /> On (checked every minute)
        </label>
      ) : null}
      <p class="hint">Notifications go to the address and webhook given; at least one is needed.</p>
      <button type="submit" class="small">
        {a ? "Save alert" : "Create alert"}
      </button>
    </form>
  );
}

/** An alert's fields from a form: the API's body (empty addresses are none). */
async function alertFields(c: Context<ConsoleEnv>, editing: boolean) {
  const email = (await formText(c, "notify_email")).trim();
  const webhook = (await formText(c, "notify_webhook")).trim();
  const number = async (name: string) => {
    const text = await formText(c, name);
    return text === "" ? Number.NaN : Number(text);
  };
  const channels = [...(email ? ["email" as const] : []), ...(webhook ? ["webhook" as const] : [])];
  return {
    name: await formText(c, "name"),
    level: await formText(c, "level"),
    threshold: await number("threshold"),
    window_minutes: await number("window_minutes"),
    ...(channels.length || editing ? { channels } : {}),
    notify_email: email || null,
    notify_webhook: webhook || null,
    ...(editing ? { enabled: (await formText(c, "enabled")) === "on" } : {}),
  };
}

/** The alert of the path, if it belongs to the project of the path (404 otherwise). */
async function projectAlert(c: Context<ConsoleEnv>): Promise<AlertRow> {
  const alerts = await listAlerts(c.env, c.get("consoleTeam").id, c.req.param("project_id") ?? "");
  const alert = alerts.find((a) => a.id === c.req.param("alert_id"));
  if (!alert) throw new ApiError("not_found", "Alert not found");
  return alert;
}

logsPages.post("/logs/:project_id/alerts", async (c) => {
  requireRole(c, "developer");
  const parsed = CreateAlertBody.safeParse(await alertFields(c, false));
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  await createAlert(c.env, c.get("consoleTeam").id, c.req.param("project_id"), parsed.data);
  return redirectTo(c, `logs/${c.req.param("project_id")}`, "alert-created");
});

logsPages.post("/logs/:project_id/alerts/:alert_id", async (c) => {
  requireRole(c, "developer");
  const alert = await projectAlert(c);
  const parsed = UpdateAlertBody.safeParse(await alertFields(c, true));
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  await updateAlert(c.env, c.get("consoleTeam").id, alert.id, parsed.data);
  return redirectTo(c, `logs/${c.req.param("project_id")}`, "alert-saved");
});

logsPages.post("/logs/:project_id/alerts/:alert_id/delete", async (c) => {
  requireRole(c, "developer");
  const alert = await projectAlert(c);
  await deleteAlert(c.env, c.get("consoleTeam").id, alert.id);
  return redirectTo(c, `logs/${c.req.param("project_id")}`, "alert-deleted");
});

// A test counts the alert's window now with the store read the every-minute check makes, and says
// whether it would fire; it sends nothing (no API operation sends a test notification).
logsPages.post("/logs/:project_id/alerts/:alert_id/test", async (c) => {
  requireRole(c, "developer");
  const alert = await projectAlert(c);
  const at = nowMs();
  const [count = 0] = await logStore(c.env, alert.projectId).countLevels([{ level: alert.level, from: at - alert.windowMinutes * 60_000, to: at }]);
  const verdict =
    count >= alert.threshold
      ? `at or over the threshold of ${alert.threshold}: it fires${alert.enabled ? "" : " once switched on"} (unless it fired less than ${alert.windowMinutes} minutes ago).`
      : `under the threshold of ${alert.threshold}: it does not fire.`;
  const text = `${count} ${alert.level} ${count === 1 ? "entry" : "entries"} in the last ${alert.windowMinutes} minutes, ${verdict}`;
  return redirectWithFlash(c, `logs/${alert.projectId}`, "alert-tested", { alertId: alert.id, text } satisfies AlertTestFlash);
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

logsPages.get("/logs/:project_id/tail", async (c) => {
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
