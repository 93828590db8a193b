// The Logs product's two queue consumers and their message schemas. log-alert-checks: each message
// checks a group of projects (log-alerts.cron.ts queues them every minute and does the check).
// alert-notifications: one message per (firing, channel) when an alert fires,
// and one per (firing, channel) when that firing resolves. Email goes to the platform mail outbox
// (one unit of the team's mail quota each); a webhook is a JSON POST through the SSRF guard with a
// 10 s timeout, retried with backoff. A row per (notification, channel) in log_alert_deliveries
// makes redelivery harmless: a notification already sent is not sent again.
import { log } from "../../platform/log";
import { defineConsumer } from "../../platform/jobs/consume";
import type { Env } from "../../env";
import { and, eq, ne, sql } from "drizzle-orm";
import { getDb } from "../../db/client";
import { teams } from "../../db/schema";
import { logAlertDeliveries, logAlerts, logProjects } from "../../db/schema/logs";
import { backoffSeconds } from "../../platform/backoff";
import { nowIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { queuePlatformMail, tenantText, type MailContent } from "../../platform/platform-mail";
import { isTeamMailRecipient } from "../../platform/team-members";
import { consumeQuota } from "../../platform/quota";
import { discardBody } from "../../platform/outbound";
import { safeFetch, ssrfOptions } from "../../platform/ssrf";
import { checkProjects } from "./log-alerts.cron";
import { alertCheck, alertNotification, type AlertNotification, alertNotificationsQueue, alertChecksQueue } from "./logs.messages";

/**
 * The key of a notification's delivery record: the firing id for the firing's notification, with
 * `:resolved` for its resolve notification, so each is sent once per channel and neither blocks the other.
 */
export function deliveryKey(note: AlertNotification): string {
  return note.kind === "resolved" ? `${note.firing_id}:resolved` : note.firing_id;
}

/** Webhook timeout (the spec's delivery timeout for chat webhooks, applied here too). */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/** The consumer of the alert-notifications queue: each (firing, channel) sent once, retried with backoff. */
export const alertNotificationsConsumer = defineConsumer({
  queue: alertNotificationsQueue,
  schema: alertNotification,
  order: "parallel",
  handle: async (body, { env, attempts, isLastAttempt }) => {
    try {
      await deliver(env, body);
      return null;
    } catch (error) {
      // The channel failed: recorded on the delivery row; given up (acknowledged) after the last attempt.
      const reason = String((error as Error)?.message ?? error).slice(0, 500);
      await recordDelivery(env, body, isLastAttempt ? "failed" : "sending", reason).catch(() => {});
      return isLastAttempt ? null : backoffSeconds(attempts);
    }
  },
});

/** The consumer of the log-alert-checks queue: each message checks its projects; a failed check is retried. */
export const alertChecksConsumer = defineConsumer({
  queue: alertChecksQueue,
  schema: alertCheck,
  order: "parallel",
  handle: async (check, { env }) => {
    await checkProjects(env, check.at, check.project_ids);
    return null;
  },
  // The next minute's run checks again anyway: retry soon, not on a long backoff.
  retryAfterError: () => 10,
});

/** The alert of a notification with its project's name and its team's plan and owner; undefined when deleted. */
async function readAlert(env: Env, note: AlertNotification) {
  const [alert] = await getDb(env.DB)
    .select({
      id: logAlerts.id,
      project_id: logAlerts.projectId,
      name: logAlerts.name,
      level: logAlerts.level,
      threshold: logAlerts.threshold,
      window_minutes: logAlerts.windowMinutes,
      notify_email: logAlerts.notifyEmail,
      notify_webhook: logAlerts.notifyWebhook,
      project_name: logProjects.name,
      plan: teams.plan,
      owner_email: teams.ownerEmail,
    })
    .from(logAlerts)
    .innerJoin(logProjects, eq(logProjects.id, logAlerts.projectId))
    .innerJoin(teams, eq(teams.id, logAlerts.teamId))
    .where(and(eq(logAlerts.id, note.alert_id), eq(logAlerts.teamId, note.team_id)))
    .limit(1);
  return alert;
}

/** What a notification needs of its alert, its project and its team. */
type AlertRecord = NonNullable<Awaited<ReturnType<typeof readAlert>>>;

/** Sends one notification unless it was sent already; throws when the channel failed. */
async function deliver(env: Env, note: AlertNotification): Promise<void> {
  const alert = await readAlert(env, note);
  // Deleted since it fired, or its address was removed: nothing to send.
  const address = alert ? (note.channel === "email" ? alert.notify_email : alert.notify_webhook) : null;
  if (!alert || !address) return;

  // The claim: the first delivery of a (notification, channel) creates its row, a redelivery counts
  // one more attempt; once `sent`, the conflict updates nothing and returns no row, so nothing is sent twice.
  const at = nowIso();
  const [claim] = await getDb(env.DB)
    .insert(logAlertDeliveries)
    .values({
      firingId: deliveryKey(note),
      channel: note.channel,
      alertId: alert.id,
      teamId: note.team_id,
      status: "sending",
      attempts: 1,
      createdAt: at,
      updatedAt: at,
    })
    .onConflictDoUpdate({
      target: [logAlertDeliveries.firingId, logAlertDeliveries.channel],
      set: { attempts: sql`${logAlertDeliveries.attempts} + 1`, updatedAt: sql`excluded.updated_at` },
      setWhere: ne(logAlertDeliveries.status, "sent"),
    })
    .returning({ status: logAlertDeliveries.status });
  if (!claim) return;

  if (note.channel === "email") {
    // Only to an accepted member of the team, checked again at send: the address was one when the
    // alert was saved, but the member may have left since (no unit is spent then).
    if (!(await isTeamMailRecipient(env.DB, note.team_id, address))) {
      await recordDelivery(env, note, "failed", "notify_email is no longer a member of the team");
      return;
    }
    // An alert email goes to an address the team chose: one unit of its monthly mail quota. Without
    // one the email is not sent (recorded as failed, not retried); the webhook channel still goes.
    try {
      await consumeQuota(env, { teamId: note.team_id, plan: alert.plan, ownerEmail: alert.owner_email }, "mail", 1);
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== "monthly_quota") throw error;
      log.error("log alert email skipped: mail quota used up", { firing_id: note.firing_id, team_id: note.team_id });
      await recordDelivery(env, note, "failed", "monthly mail quota used up");
      return;
    }
    await sendEmail(env, note, alert, address);
  } else await sendWebhook(env, note, alert, address);

  await recordDelivery(env, note, "sent", null);
}

/** Records how a (notification, channel) delivery stands. */
async function recordDelivery(env: Env, note: AlertNotification, status: "sending" | "sent" | "failed", lastError: string | null): Promise<void> {
  await getDb(env.DB)
    .update(logAlertDeliveries)
    .set({ status, lastError, updatedAt: nowIso() })
    .where(and(eq(logAlertDeliveries.firingId, deliveryKey(note)), eq(logAlertDeliveries.channel, note.channel)));
}

function summary(note: AlertNotification, alert: Pick<AlertRecord, "level" | "window_minutes" | "threshold">): string {
  return `${note.count} ${alert.level} entries in the last ${alert.window_minutes} minute(s) (threshold ${alert.threshold})`;
}

/** What an alert's mail shows of the alert. */
type AlertMailFields = Pick<AlertRecord, "id" | "project_id" | "name" | "project_name" | "level" | "threshold" | "window_minutes">;

/** An alert's mail (fired or resolved): the alert and project names are tenant text (`tenantText`, the one rule of platform mail). */
export function alertMail(note: AlertNotification, record: AlertMailFields): MailContent {
  const alert = { ...record, name: tenantText(record.name), project_name: tenantText(record.project_name) };
  if (note.kind === "resolved") {
    return {
      subject: `[Log alert resolved] ${alert.name}: ${summary(note, alert)}`,
      text:
        `Your log alert "${alert.name}" on project "${alert.project_name}" is resolved: at ${note.resolved_at} its window is back under the threshold.\n\n` +
        `${summary(note, alert)}, counted from ${note.window_start} to ${note.resolved_at}.\n\n` +
        `It fired at ${note.triggered_at}.\nFiring id: ${note.firing_id}\nAlert id: ${alert.id}\nProject id: ${alert.project_id}\n`,
    };
  }
  return {
    subject: `[Log alert] ${alert.name}: ${summary(note, alert)}`,
    text:
      `Your log alert "${alert.name}" on project "${alert.project_name}" fired at ${note.triggered_at}.\n\n` +
      `${summary(note, alert)}, counted from ${note.window_start} to ${note.triggered_at}.\n\n` +
      `It will not fire again before ${alert.window_minutes} minute(s) have passed.\nAlert id: ${alert.id}\nProject id: ${alert.project_id}\n`,
  };
}

async function sendEmail(env: Env, note: AlertNotification, record: AlertRecord, to: string): Promise<void> {
  await queuePlatformMail(env, { teamId: note.team_id, kind: "alert", to, ...alertMail(note, record) });
}

async function sendWebhook(env: Env, note: AlertNotification, alert: AlertRecord, url: string): Promise<void> {
  const payload = {
    type: note.kind === "resolved" ? "log.alert.resolved" : "log.alert.triggered",
    firing_id: note.firing_id,
    triggered_at: note.triggered_at,
    ...(note.kind === "resolved" ? { resolved_at: note.resolved_at } : {}),
    window_start: note.window_start,
    count: note.count,
    alert: {
      id: alert.id,
      name: alert.name,
      project_id: alert.project_id,
      level: alert.level,
      threshold: alert.threshold,
      window_minutes: alert.window_minutes,
    },
  };
  const response = await safeFetch(
    url,
    {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "EdgePlatform-LogAlerts/1", "x-alert-firing-id": note.firing_id },
      body: JSON.stringify(payload),
    },
    { ...ssrfOptions(env), timeoutMs: WEBHOOK_TIMEOUT_MS },
  );
  // The answer is not needed: cancel it unread, so a huge reply costs nothing.
  await discardBody(response);
  if (response.status < 200 || response.status >= 300) throw new Error(`webhook answered ${response.status}`);
}
