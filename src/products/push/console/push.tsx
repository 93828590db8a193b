/** @jsxImportSource hono/jsx */
// The push pages: the team's push apps (public key to copy, subscriber count; the first app's
// create button or curl), and one app with its subscribers (each removable), its recent
// notifications (status and per-status counts, each opening to its results) and a test
// notification to every subscriber; settings, deletion and one notification in push-settings.tsx. The same services as /api/v1/push; the
// VAPID private key and credentials never reach a page (the services' app shape has none).
import { Hono, type Context } from "hono";
import { ApiError, zodDetails } from "../../../platform/errors";
import { createApp, getApp, listApps } from "../push-apps.service";
import { listSubscribers } from "../push-subscribers.service";
import { listNotifications, sendNotification } from "../push-notifications.service";
import { CreateAppSchema, SendSchema } from "../push.schemas";
import { formText } from "../../../console/forms";
import { Time } from "../../../console/layout";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, roleAtLeast, type ConsoleEnv } from "../../../console/session";
import { CopyBlock, pageNumber, Pager, quotaOwnerOf, StatusBadge, TableWrap, ColumnHeads } from "../../../console/pages/parts";
import { pushSettingsPages } from "./push-settings";
import { settings } from "../../../platform/config";

export const pushPages = new Hono<ConsoleEnv>();
pushPages.route("/", pushSettingsPages);

const SUBSCRIBERS_PAGE = 20;

const canWrite = (c: Context<ConsoleEnv>) => roleAtLeast(c.get("consoleTeam").role, "developer");

pushPages.get("/push", async (c) => {
  const apps = await listApps(c.env, c.get("consoleTeam").id);
  const api = `${settings(c.env).appOrigin}/api/v1`;
  return page(
    c,
    { title: "Push", active: "push", notices: { deleted: "The app was deleted with its subscribers and notifications." } },
    apps.length === 0 ? (
      <section class="section">
        <h2>Create your first push app</h2>
        <p>An app holds its own VAPID key pair: browsers subscribe with its public key, and you send to its subscribers.</p>
        {canWrite(c) ? <CreateAppForm action={teamPath(c, "push")} /> : null}
        <p class="muted">
          Or over the API with a key that has <code>push:write</code>:
        </p>
        <CopyBlock
          id="create-app-curl"
          text={`curl -X POST ${api}/push/apps \\\n  -H "Authorization: Bearer $EDP_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '{"name": "My web app"}'`}
        />
      </section>
    ) : (
      <section class="section">
        <TableWrap label="Push apps of the team">
          <table>
            <caption class="skip">Push apps of the team</caption>
            <ColumnHeads names={["App", "Subscribers", "Public key", "Created"]} />
            <tbody>
              {apps.map((app) => (
                <tr data-testid="push-app-row">
                  <td>
                    <a href={teamPath(c, `push/apps/${app.id}`)}>{app.name}</a>
                  </td>
                  <td data-testid="subscriber-count">{app.subscriber_count}</td>
                  <td class="mono cell-clip">{app.vapid_public_key}</td>
                  <td>
                    <Time iso={app.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
        {canWrite(c) ? <CreateAppForm action={teamPath(c, "push")} /> : null}
      </section>
    ),
  );
});

function CreateAppForm(props: { action: string }) {
  return (
    <form method="post" action={props.action} class="inline-form" data-testid="create-push-app">
      <div class="field">
        <label for="app-name">App name</label>
        <input id="app-name" type="text" name="name" required maxlength={200} placeholder="My web app" />
      </div>
      <button type="submit">Create app</button>
    </form>
  );
}

pushPages.post("/push", async (c) => {
  requireRole(c, "developer");
  const parsed = CreateAppSchema.safeParse({ name: await formText(c, "name") });
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  const app = await createApp(c.env, c.get("consoleTeam").id, parsed.data);
  return redirectTo(c, `push/apps/${app.id}`, "created");
});

const STATUS_TONE = { queued: "gray", sending: "warn", completed: "ok" } as const;

const NOTICES = {
  created: "App created with a new VAPID key pair.",
  sent: "Test notification queued for every subscriber.",
  saved: "Settings saved.",
  "subscriber-removed": "Subscriber removed.",
};

pushPages.get("/push/apps/:app_id", async (c) => {
  const teamId = c.get("consoleTeam").id;
  const app = await getApp(c.env, teamId, c.req.param("app_id"));
  const subscriberPage = pageNumber(c);
  const [notifications, subscribers] = await Promise.all([
    listNotifications(c.env, teamId, app.id, 20),
    app.subscriber_count > 0 ? listSubscribers(c.env, teamId, app.id, { page: subscriberPage, per_page: SUBSCRIBERS_PAGE }) : null,
  ]);
  const base = teamPath(c, `push/apps/${app.id}`);
  return page(
    c,
    { title: app.name, active: "push", notices: NOTICES },
    <>
      <div class="row-actions">
        <a href={teamPath(c, "push")}>← Push apps</a>
        {canWrite(c) ? (
          <a class="button secondary small" href={`${base}/settings`} data-testid="push-app-settings">
            Settings
          </a>
        ) : null}
      </div>
      <div class="stats">
        <div class="stat">
          <span class="label">Subscribers</span>
          <span class="value" data-testid="subscriber-count" data-count={String(app.subscriber_count)}>
            {app.subscriber_count}
          </span>
        </div>
      </div>
      <section class="section" aria-labelledby="key-title">
        <h2 id="key-title">VAPID public key</h2>
        <p class="muted">
          Pass it as <code>applicationServerKey</code> to <code>pushManager.subscribe()</code> in the browser. The private key never leaves the platform.
        </p>
        <CopyBlock id="vapid-public-key" text={app.vapid_public_key} />
      </section>
      {app.subscriber_count === 0 ? (
        <section class="section" aria-labelledby="subscribe-title">
          <h2 id="subscribe-title">Subscribe the first browser</h2>
          <p>
            In your site's code, with its service worker registered, subscribe and send the subscription to your server, which registers it with a key that has{" "}
            <code>push:write</code>:
          </p>
          <CopyBlock
            id="subscribe-snippet"
            text={`// in the browser
const subscription = await registration.pushManager.subscribe({
  userVisibleOnly: true,
  applicationServerKey: "${app.vapid_public_key}",
});

// on your server
curl -X POST ${settings(c.env).appOrigin}/api/v1/push/apps/${app.id}/subscribers \\
  -H "Authorization: Bearer $EDP_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '<the subscription as JSON>'`}
          />
          <p class="muted small">The test notification button appears here once a browser has subscribed.</p>
        </section>
      ) : canWrite(c) ? (
        <section class="section" aria-labelledby="test-title">
          <h2 id="test-title">Send a test notification</h2>
          <form method="post" action={`${base}/test`} data-testid="test-notification">
            <div class="field">
              <label for="push-title">Title</label>
              <input id="push-title" type="text" name="title" required maxlength={200} value="Test notification" />
            </div>
            <div class="field">
              <label for="push-body">Message</label>
              <input id="push-body" type="text" name="body" maxlength={1000} value="It works!" />
            </div>
            <button type="submit">
              Send to {app.subscriber_count} {app.subscriber_count === 1 ? "subscriber" : "subscribers"}
            </button>
          </form>
        </section>
      ) : null}
      {subscribers ? (
        <section class="section" aria-labelledby="subscribers-title">
          <h2 id="subscribers-title">Subscribers</h2>
          <TableWrap label="Subscribers, newest first">
            <table>
              <caption class="skip">Subscribers, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Push service</th>
                  <th scope="col">External id</th>
                  <th scope="col">Tags</th>
                  <th scope="col">Subscribed</th>
                  {canWrite(c) ? <th scope="col">Remove</th> : null}
                </tr>
              </thead>
              <tbody>
                {subscribers.data.map((s) => (
                  <tr data-testid="subscriber-row">
                    <td class="mono cell-clip">{hostOf(s.endpoint)}</td>
                    <td>{s.external_id ?? <span class="muted">—</span>}</td>
                    <td>{s.tags.length ? s.tags.map((t) => <span class="badge gray">{t}</span>) : <span class="muted">—</span>}</td>
                    <td>
                      <Time iso={s.created_at} />
                    </td>
                    {canWrite(c) ? (
                      <td>
                        <form method="post" action={`${base}/subscribers/${s.id}/delete`} class="inline">
                          <button type="submit" class="danger small" aria-label={`Remove subscriber ${s.id}`}>
                            Remove
                          </button>
                        </form>
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
          <Pager base={base} page={subscriberPage} pages={subscribers.pagination.total_pages} />
        </section>
      ) : null}
      <section class="section" aria-labelledby="sent-title">
        <h2 id="sent-title">Recent notifications</h2>
        {notifications.length === 0 ? (
          <p class="empty">Nothing sent yet.</p>
        ) : (
          <TableWrap label="Recent notifications, newest first">
            <table>
              <caption class="skip">Recent notifications, newest first</caption>
              <ColumnHeads names={["Sent", "Title", "Status", "Recipients", "Delivered", "Failed", "Removed"]} />
              <tbody>
                {notifications.map((n) => (
                  <tr data-testid="notification-row" data-status={n.status}>
                    <td>
                      <Time iso={n.created_at} />
                    </td>
                    <td class="cell-clip">
                      <a href={`${base}/notifications/${n.id}`}>{String(n.payload.title ?? "") || "(no title)"}</a>
                    </td>
                    <td>
                      <StatusBadge status={n.status} tone={STATUS_TONE[n.status]} />
                    </td>
                    <td>{n.recipients}</td>
                    <td>{n.counts.delivered}</td>
                    <td>{n.counts.failed}</td>
                    <td>{n.counts.removed}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
      </section>
    </>,
  );
});

/** A subscription's push service, by the host of its endpoint (the rest of the address is the browser's capability). */
function hostOf(endpoint: string): string {
  try {
    return new URL(endpoint).host;
  } catch {
    return "?";
  }
}

pushPages.post("/push/apps/:app_id/test", async (c) => {
  requireRole(c, "developer");
  const parsed = SendSchema.safeParse({ title: await formText(c, "title"), body: await formText(c, "body") });
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  const sent = await sendNotification(c.env, await quotaOwnerOf(c), c.req.param("app_id"), parsed.data);
  return redirectTo(c, `push/apps/${sent.app_id}`, "sent");
});
