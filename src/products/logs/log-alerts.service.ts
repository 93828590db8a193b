// Log alerts of a project (create, change, delete, with the rules across their fields) and the
// history of their firings. Every query filters on the caller's team; another team's alert or
// project is "not found". Services take `(env, teamId, ...)` and open the database themselves.
import { insertUnderCap } from "../../platform/caps";
import { and, asc, desc, eq, inArray, isNull, lt, type SQL } from "drizzle-orm";
import { getDb, type Db } from "../../db/client";
import type { Env } from "../../env";
import { logAlertFirings, logAlerts, type AlertChannel } from "../../db/schema/logs";
import { nowIso, nowMs } from "../../platform/clock";
import { ApiError, type FieldErrors } from "../../platform/errors";
import { checkUrl, ssrfOptions, type SsrfOptions } from "../../platform/ssrf";
import { isTeamMailRecipient } from "../../platform/team-members";
import { orNotFound, ownedBy, ownedRow } from "../../platform/tenancy";
import type { CreateAlertBody, UpdateAlertBody } from "./logs.schemas";
import { decodeCursor, encodeCursor } from "../../platform/cursor";
import { loadProject, type ProjectRow } from "./logs.service";

export type AlertRow = typeof logAlerts.$inferSelect;

export const alertNotFound = () => new ApiError("not_found", "Alert not found");

export function alertView(row: AlertRow) {
  return {
    id: row.id,
    project_id: row.projectId,
    name: row.name,
    level: row.level,
    threshold: row.threshold,
    window_minutes: row.windowMinutes,
    channels: row.channels,
    notify_email: row.notifyEmail,
    notify_webhook: row.notifyWebhook,
    enabled: row.enabled,
    last_triggered_at: row.lastTriggeredAt === null ? null : new Date(row.lastTriggeredAt).toISOString(),
    inserted_at: row.insertedAt,
    updated_at: row.updatedAt,
  };
}

/**
 * The rules across fields, judged on the alert as it will be stored: each channel needs its
 * address, and a webhook address must pass the SSRF guard.
 */
function checkAlert(alert: { channels: AlertChannel[]; notifyEmail: string | null; notifyWebhook: string | null }, ssrf: SsrfOptions): void {
  const details: FieldErrors = {};
  if (alert.channels.includes("email") && !alert.notifyEmail) details.notify_email = ["is required when channels includes email"];
  if (alert.channels.includes("webhook") && !alert.notifyWebhook) details.notify_webhook = ["is required when channels includes webhook"];
  if (alert.notifyWebhook) {
    const reason = checkUrl(alert.notifyWebhook, ssrf);
    if (reason) (details.notify_webhook ??= []).push(reason);
  }
  if (alert.channels.length === 0) details.channels = ["is required when neither notify_email nor notify_webhook is set"];
  if (Object.keys(details).length > 0) throw ApiError.validation(details);
}

/** Refused notify_email (docs/ARCHITECTURE.md "Platform mail goes only to people who asked for it"). */
export const NOT_A_MEMBER = "must be the address of a member of the team who has accepted";

/** Alert email goes only to an accepted member of the team: 422 on notify_email otherwise. */
async function checkRecipient(env: Env, teamId: string, notifyEmail: string | null): Promise<void> {
  if (notifyEmail !== null && !(await isTeamMailRecipient(env.DB, teamId, notifyEmail))) {
    throw ApiError.validation({ notify_email: [NOT_A_MEMBER] });
  }
}

export async function listAlerts(env: Env, teamId: string, projectId: string): Promise<AlertRow[]> {
  const db = getDb(env.DB);
  return projectAlerts(db, await loadProject(db, teamId, projectId));
}

/** `listAlerts` for a project already loaded under the team: the query, to await or to batch with others. */
export function projectAlerts(db: Db, project: Pick<ProjectRow, "id" | "teamId">) {
  return db
    .select()
    .from(logAlerts)
    .where(and(eq(logAlerts.projectId, project.id), ownedBy(logAlerts, project.teamId)))
    .orderBy(asc(logAlerts.insertedAt), asc(logAlerts.id));
}

export async function createAlert(env: Env, teamId: string, projectId: string, input: CreateAlertBody): Promise<AlertRow> {
  const db = getDb(env.DB);
  await loadProject(db, teamId, projectId);
  const notifyEmail = input.notify_email ?? null;
  const notifyWebhook = input.notify_webhook ?? null;
  // Omitted channels follow the addresses that are set (spec: Log alerts rules).
  const channels: AlertChannel[] = input.channels ?? [...(notifyEmail ? ["email" as const] : []), ...(notifyWebhook ? ["webhook" as const] : [])];
  checkAlert({ channels, notifyEmail, notifyWebhook }, ssrfOptions(env));
  await checkRecipient(env, teamId, notifyEmail);
  const at = nowIso();
  const row: AlertRow = {
    id: crypto.randomUUID(),
    teamId,
    projectId,
    name: input.name,
    level: input.level,
    threshold: input.threshold,
    windowMinutes: input.window_minutes,
    channels,
    notifyEmail,
    notifyWebhook,
    enabled: input.enabled,
    lastTriggeredAt: null,
    insertedAt: at,
    updatedAt: at,
  };
  // Every alert is checked every minute and may mail or call out: a project holds a bounded number.
  if (!(await insertUnderCap(db, logAlerts, row, { column: logAlerts.projectId, value: projectId }, MAX_ALERTS_PER_PROJECT))) {
    throw ApiError.validation({ name: [`a project can have at most ${MAX_ALERTS_PER_PROJECT} alerts`] });
  }
  return row;
}

/** Alerts per log project (checked and written in one statement, so it holds under parallel creates). */
export const MAX_ALERTS_PER_PROJECT = 20;

async function getAlert(db: Db, teamId: string, id: string): Promise<AlertRow> {
  const [row] = await db
    .select()
    .from(logAlerts)
    .where(ownedRow(logAlerts, teamId, id))
    .limit(1);
  return orNotFound(row, alertNotFound);
}

/** Changes only the fields given; the merged alert must still satisfy the rules. */
export async function updateAlert(env: Env, teamId: string, id: string, input: UpdateAlertBody): Promise<AlertRow> {
  const db = getDb(env.DB);
  const current = await getAlert(db, teamId, id);
  const changes: Partial<AlertRow> = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.level !== undefined) changes.level = input.level;
  if (input.threshold !== undefined) changes.threshold = input.threshold;
  if (input.window_minutes !== undefined) changes.windowMinutes = input.window_minutes;
  if (input.channels !== undefined) changes.channels = input.channels;
  if (input.notify_email !== undefined) changes.notifyEmail = input.notify_email;
  if (input.notify_webhook !== undefined) changes.notifyWebhook = input.notify_webhook;
  if (input.enabled !== undefined) changes.enabled = input.enabled;
  const merged = { ...current, ...changes };
  checkAlert(merged, ssrfOptions(env));
  if (changes.notifyEmail !== undefined) await checkRecipient(env, teamId, changes.notifyEmail);
  if (Object.keys(changes).length === 0) return current;
  const update = db
    .update(logAlerts)
    .set({ ...changes, updatedAt: nowIso() })
    .where(ownedRow(logAlerts, teamId, id))
    .returning();
  if (changes.enabled !== false) return orNotFound((await update)[0], alertNotFound);
  // Disabled: the check no longer looks at it, so an open firing is closed now (no notification).
  const [rows] = await db.batch([
    update,
    db
      .update(logAlertFirings)
      .set({ resolvedAt: nowMs() })
      .where(and(eq(logAlertFirings.alertId, id), eq(logAlertFirings.teamId, teamId), isNull(logAlertFirings.resolvedAt))),
  ]);
  return orNotFound(rows[0], alertNotFound);
}

export type FiringRow = typeof logAlertFirings.$inferSelect;

export function firingView(row: FiringRow) {
  return {
    id: row.id,
    alert_id: row.alertId,
    fired_at: new Date(row.firedAt).toISOString(),
    count: row.count,
    resolved_at: row.resolvedAt === null ? null : new Date(row.resolvedAt).toISOString(),
  };
}

/** Opaque cursor of the firings list: the fired_at of the last firing of a page (unique per alert). */
function firingCursor(row: FiringRow): string {
  return encodeCursor(`f${row.firedAt}`);
}

function firingPosition(cursor: string): number {
  return Number(decodeCursor(cursor, /^f(\d{1,16})$/)[1]);
}

/** An alert's firings, newest first, keyset-paginated on fired_at (the unique index (alert_id, fired_at) serves it). */
export async function listFirings(env: Env, teamId: string, alertId: string, page: { limit: number; cursor?: string }) {
  const db = getDb(env.DB);
  await getAlert(db, teamId, alertId);
  const conditions: SQL[] = [eq(logAlertFirings.alertId, alertId), eq(logAlertFirings.teamId, teamId)];
  if (page.cursor !== undefined) conditions.push(lt(logAlertFirings.firedAt, firingPosition(page.cursor)));
  const rows = await db
    .select()
    .from(logAlertFirings)
    .where(and(...conditions))
    .orderBy(desc(logAlertFirings.firedAt))
    .limit(page.limit + 1);
  const more = rows.length > page.limit;
  const shown = more ? rows.slice(0, page.limit) : rows;
  return {
    data: shown.map(firingView),
    pagination: { limit: page.limit, next_cursor: more ? firingCursor(shown[shown.length - 1]) : null },
  };
}

/**
 * The latest firings of all of a project's alerts, newest first (the console's alerts panel): one
 * query, each alert's rows read through the (alert_id, fired_at) index. The query, to await or to
 * batch with others; its rows answer through firingView.
 */
export function projectFirings(db: Db, teamId: string, projectId: string, limit: number) {
  return db
    .select()
    .from(logAlertFirings)
    .where(
      and(
        eq(logAlertFirings.teamId, teamId),
        inArray(
          logAlertFirings.alertId,
          db
            .select({ id: logAlerts.id })
            .from(logAlerts)
            .where(and(ownedBy(logAlerts, teamId), eq(logAlerts.projectId, projectId))),
        ),
      ),
    )
    .orderBy(desc(logAlertFirings.firedAt))
    .limit(limit);
}

export async function deleteAlert(env: Env, teamId: string, id: string): Promise<void> {
  const deleted = await getDb(env.DB)
    .delete(logAlerts)
    .where(ownedRow(logAlerts, teamId, id))
    .returning({ id: logAlerts.id });
  orNotFound(deleted[0], alertNotFound);
}
