/** @jsxImportSource hono/jsx */
// A push app's settings at `push/apps/:app_id/settings` (name, the default notification settings,
// FCM and APNs credentials replaced or removed, never shown), its deletion after typing its name,
// removing a subscriber (confirmed), and one notification with each subscriber's result at
// `push/apps/:app_id/notifications/:notification_id`. The services of updatePushApp,
// deletePushApp, deletePushSubscriber and getPushNotification; post/redirect/get, and a refused
// form answers again at 422 and changes nothing.
import { Hono, type Context } from "hono";
import { ApiError, zodDetails, type FieldErrors } from "../../../platform/errors";
import { deleteApp, getApp, updateApp } from "../push-apps.service";
import { getNotification } from "../push-notifications.service";
import { deleteSubscriber } from "../push-subscribers.service";
import { NotificationQuery, UpdateAppSchema, URGENCIES } from "../push.schemas";
import { formText } from "../../../console/forms";
import { Time } from "../../../console/layout";
import { ConfirmForm, DeleteSection, Errors, StatusBadge, TableWrap, ColumnHeads } from "../../../console/pages/parts";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, type ConsoleEnv } from "../../../console/session";

export const pushSettingsPages = new Hono<ConsoleEnv>();

const APP = "/push/apps/:app_id";

/** The settings the form edits; any other key the app's settings hold is kept as it is. */
const FIELDS = ["default_icon", "default_url", "default_ttl", "default_urgency", "vapid_subject"] as const;
type SettingsForm = Record<(typeof FIELDS)[number] | "name", string>;

async function settingsPage(c: Context<ConsoleEnv>, extra: { errors?: FieldErrors; form?: SettingsForm } = {}) {
  const app = await getApp(c.env, c.get("consoleTeam").id, c.req.param("app_id") ?? "");
  const stored = app.settings as Record<string, unknown>;
  const form =
    extra.form ?? (Object.fromEntries([["name", app.name], ...FIELDS.map((f) => [f, stored[f] === undefined ? "" : String(stored[f])])]) as SettingsForm);
  const base = teamPath(c, `push/apps/${app.id}`);
  return page(
    c,
    { title: `${app.name}: settings`, active: "push", status: extra.errors ? 422 : 200 },
    <>
      <div class="row-actions">
        <a href={base}>← {app.name}</a>
      </div>
      <form method="post" action={`${base}/settings`} class="section" data-testid="push-settings">
        <h2>Settings</h2>
        <Errors errors={extra.errors} />
        <div class="field">
          <label for="app-name">Name</label>
          <input id="app-name" type="text" name="name" required maxlength={200} value={form.name} />
        </div>
        <fieldset>
          <legend>Defaults of every notification (empty: none)</legend>
          <div class="inline-form">
            <div class="field">
              <label for="set-icon">Icon</label>
              <input id="set-icon" type="text" name="default_icon" maxlength={2048} value={form.default_icon} placeholder="/icon.png" />
            </div>
            <div class="field">
              <label for="set-url">Opens</label>
              <input id="set-url" type="text" name="default_url" maxlength={2048} value={form.default_url} placeholder="https://example.com/" />
            </div>
          </div>
          <div class="inline-form">
            <div class="field narrow">
              <label for="set-ttl">Time to live (s)</label>
              <input id="set-ttl" type="number" name="default_ttl" min={1} max={2_419_200} value={form.default_ttl} />
            </div>
            <div class="field narrow">
              <label for="set-urgency">Urgency</label>
              <select id="set-urgency" name="default_urgency">
                <option value="">(push service's)</option>
                {URGENCIES.map((u) => (
                  <option value={u} selected={form.default_urgency === u}>
                    {u}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="set-subject">VAPID contact</label>
              <input id="set-subject" type="text" name="vapid_subject" maxlength={320} value={form.vapid_subject} placeholder="mailto:ops@example.com" />
            </div>
          </div>
        </fieldset>
        <p class="hint muted small">The VAPID keys are fixed for the life of the app (every subscription is bound to the public key).</p>
        <button type="submit">Save settings</button>
      </form>
      <DeleteSection
        what="app"
        consequence="Every subscriber and notification of it is deleted; browsers subscribed to it receive nothing more."
        href={`${base}/delete`}
        testid="delete-push-app"
      />
    </>,
  );
}

pushSettingsPages.get(`${APP}/settings`, (c) => {
  requireRole(c, "developer");
  return settingsPage(c);
});

pushSettingsPages.post(`${APP}/settings`, async (c) => {
  requireRole(c, "developer");
  const teamId = c.get("consoleTeam").id;
  const app = await getApp(c.env, teamId, c.req.param("app_id"));
  const form = { name: await formText(c, "name") } as SettingsForm;
  for (const field of FIELDS) form[field] = (await formText(c, field)).trim();
  // The app's other settings are kept; a field left empty is removed.
  const settings: Record<string, unknown> = { ...(app.settings as Record<string, unknown>) };
  for (const field of FIELDS) {
    if (form[field] === "") delete settings[field];
    else settings[field] = field === "default_ttl" ? Number(form[field]) : form[field];
  }
  const parsed = UpdateAppSchema.safeParse({ name: form.name, settings });
  if (!parsed.success) {
    // The settings' errors name their field (`settings.default_ttl`): the form's fields.
    const errors = Object.fromEntries(Object.entries(zodDetails(parsed.error)).map(([k, v]) => [k.replace(/^settings\./, ""), v]));
    return settingsPage(c, { errors, form });
  }
  await updateApp(c.env, teamId, app.id, parsed.data);
  return redirectTo(c, `push/apps/${app.id}`, "saved");
});

async function deleteAppPage(c: Context<ConsoleEnv>, error?: string) {
  const app = await getApp(c.env, c.get("consoleTeam").id, c.req.param("app_id") ?? "");
  return page(
    c,
    { title: `Delete ${app.name}?`, active: "push", status: error ? 422 : 200 },
    <ConfirmForm
      action={teamPath(c, `push/apps/${app.id}/delete`)}
      question={
        <>
          Delete the push app <strong>{app.name}</strong>, its {app.subscriber_count} {app.subscriber_count === 1 ? "subscriber" : "subscribers"} and its
          notifications? This cannot be undone.
        </>
      }
      typeName={app.name}
      error={error}
      button="Delete app"
      cancel={teamPath(c, `push/apps/${app.id}/settings`)}
      testid="confirm-delete-push-app"
    />,
  );
}

pushSettingsPages.get(`${APP}/delete`, (c) => {
  requireRole(c, "developer");
  return deleteAppPage(c);
});

pushSettingsPages.post(`${APP}/delete`, async (c) => {
  requireRole(c, "developer");
  const teamId = c.get("consoleTeam").id;
  const app = await getApp(c.env, teamId, c.req.param("app_id"));
  if ((await formText(c, "confirm_name")).trim() !== app.name) return deleteAppPage(c, "confirm name: type the name of the app exactly to delete it");
  await deleteApp(c.env, teamId, app.id);
  return redirectTo(c, "push", "deleted");
});

// ---------------------------------------------------------------------------------------------
// Removing a subscriber

pushSettingsPages.post(`${APP}/subscribers/:subscriber_id/delete`, async (c) => {
  requireRole(c, "developer");
  const teamId = c.get("consoleTeam").id;
  const appId = c.req.param("app_id");
  const subscriberId = c.req.param("subscriber_id");
  if ((await formText(c, "confirm")) !== "yes") {
    const app = await getApp(c.env, teamId, appId);
    return page(
      c,
      { title: "Remove the subscriber?", active: "push" },
      <ConfirmForm
        action={teamPath(c, `push/apps/${app.id}/subscribers/${encodeURIComponent(subscriberId)}/delete`)}
        question={
          <>
            Remove the subscriber <code>{subscriberId}</code> from <strong>{app.name}</strong>? Its browser receives nothing more until it subscribes again.
          </>
        }
        button="Remove subscriber"
        cancel={teamPath(c, `push/apps/${app.id}`)}
        testid="confirm-remove-subscriber"
      />,
    );
  }
  await deleteSubscriber(c.env, teamId, appId, subscriberId);
  return redirectTo(c, `push/apps/${appId}`, "subscriber-removed");
});

// ---------------------------------------------------------------------------------------------
// One notification

const RESULT_TONE: Record<string, string> = { queued: "gray", sending: "warn", retrying: "warn", delivered: "ok", failed: "danger", removed: "gray" };

pushSettingsPages.get(`${APP}/notifications/:notification_id`, async (c) => {
  const teamId = c.get("consoleTeam").id;
  const query = NotificationQuery.safeParse({ limit: "100", ...(c.req.query("cursor") ? { cursor: c.req.query("cursor") } : {}) });
  if (!query.success) throw ApiError.validation(zodDetails(query.error));
  const appId = c.req.param("app_id");
  const [app, n] = await Promise.all([getApp(c.env, teamId, appId), getNotification(c.env, teamId, appId, c.req.param("notification_id"), query.data)]);
  const base = teamPath(c, `push/apps/${app.id}/notifications/${n.id}`);
  return page(
    c,
    { title: String(n.payload.title ?? "Notification"), active: "push" },
    <>
      <div class="row-actions">
        <a href={teamPath(c, `push/apps/${app.id}`)}>← {app.name}</a>
      </div>
      <section class="section">
        <dl class="facts" data-testid="notification">
          <dt>Sent</dt>
          <dd>
            <Time iso={n.created_at} />
          </dd>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={n.status} tone={RESULT_TONE[n.status] ?? "gray"} />
          </dd>
          <dt>Recipients</dt>
          <dd>
            {n.recipients} · {n.counts.delivered} delivered · {n.counts.failed} failed · {n.counts.removed} removed
          </dd>
          <dt>Title</dt>
          <dd>{String(n.payload.title ?? "")}</dd>
          {n.payload.body ? (
            <>
              <dt>Message</dt>
              <dd>{String(n.payload.body)}</dd>
            </>
          ) : null}
        </dl>
        <details>
          <summary>Payload</summary>
          <pre class="code-sample">{JSON.stringify(n.payload, null, 2)}</pre>
        </details>
      </section>
      <section class="section" aria-labelledby="results-title">
        <h2 id="results-title">Per subscriber</h2>
        {n.results.length === 0 ? (
          <p class="empty">No result yet.</p>
        ) : (
          <TableWrap label="Result per subscriber">
            <table>
              <caption class="skip">Result per subscriber</caption>
              <ColumnHeads names={["Subscriber", "Result", "Attempts", "Code", "Updated"]} />
              <tbody>
                {n.results.map((r) => (
                  <tr data-testid="result-row" data-status={r.status}>
                    <td class="mono cell-clip">{r.subscriber_id}</td>
                    <td>
                      <StatusBadge status={r.status} tone={RESULT_TONE[r.status] ?? "gray"} />
                      {r.error ? <span class="muted small"> {r.error}</span> : null}
                    </td>
                    <td>{r.attempts}</td>
                    <td>{r.status_code ?? "—"}</td>
                    <td>
                      <Time iso={r.updated_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
        {n.results_next_cursor ? (
          <nav class="pager" aria-label="Pages">
            <a href={`${base}?cursor=${encodeURIComponent(n.results_next_cursor)}`} rel="next">
              More →
            </a>
          </nav>
        ) : null}
      </section>
    </>,
  );
});
