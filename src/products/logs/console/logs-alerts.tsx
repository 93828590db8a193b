/** @jsxImportSource hono/jsx */
// A Logs project's alerts, on the project's page (logs-project.tsx): the form that creates or edits
// one (every field, on and off), deletion, and a test that counts the rule's window now. Every write
// goes through the services of /api/v1/logs/alerts, under the same tenancy and caps.
import { Hono, type Context } from "hono";
import { nowMs } from "../../../platform/clock";
import { ApiError, zodDetails } from "../../../platform/errors";
import { createAlert, deleteAlert, listAlerts, updateAlert, type AlertRow } from "../log-alerts.service";
import { logStore } from "../logs.store";
import { LOG_LEVELS } from "../../../db/schema/logs";
import { CreateAlertBody, UpdateAlertBody } from "../logs.schemas";
import { formText } from "../../../console/forms";
import { redirectWithFlash } from "../../../console/flash";
import { redirectTo } from "../../../console/render";
import { requireRole, type ConsoleEnv } from "../../../console/session";

export const logAlertPages = new Hono<ConsoleEnv>();

// ---------------------------------------------------------------------------------------------
// Alerts: create, edit (every field, on and off), delete, and a test that counts the rule's window now

/** The outcome of an alert's test, shown once beside it. */
export type AlertTestFlash = { alertId: string; text: string };

export function AlertForm(props: { action: string; alert?: AlertRow; testid: string }) {
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

logAlertPages.post("/logs/:project_id/alerts", async (c) => {
  requireRole(c, "developer");
  const parsed = CreateAlertBody.safeParse(await alertFields(c, false));
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  await createAlert(c.env, c.get("consoleTeam").id, c.req.param("project_id"), parsed.data);
  return redirectTo(c, `logs/${c.req.param("project_id")}`, "alert-created");
});

logAlertPages.post("/logs/:project_id/alerts/:alert_id", async (c) => {
  requireRole(c, "developer");
  const alert = await projectAlert(c);
  const parsed = UpdateAlertBody.safeParse(await alertFields(c, true));
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  await updateAlert(c.env, c.get("consoleTeam").id, alert.id, parsed.data);
  return redirectTo(c, `logs/${c.req.param("project_id")}`, "alert-saved");
});

logAlertPages.post("/logs/:project_id/alerts/:alert_id/delete", async (c) => {
  requireRole(c, "developer");
  const alert = await projectAlert(c);
  await deleteAlert(c.env, c.get("consoleTeam").id, alert.id);
  return redirectTo(c, `logs/${c.req.param("project_id")}`, "alert-deleted");
});

// A test counts the alert's window now with the store read the every-minute check makes, and says
// whether it would fire; it sends nothing (no API operation sends a test notification).
logAlertPages.post("/logs/:project_id/alerts/:alert_id/test", async (c) => {
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
