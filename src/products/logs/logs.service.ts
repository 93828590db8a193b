// Log projects (ingest tokens stored as SHA-256 hashes), streams, the entry query and alert CRUD.
// Every query filters on the caller's team; a project or alert of another team is "not found".
import { insertUnderCap } from "../../platform/caps";
import { and, asc, desc, eq, gt, isNull, lt, type SQL } from "drizzle-orm";
import { getDb, type Db } from "../../db/client";
import type { Env } from "../../env";
import { logAlertFirings, logAlerts, logProjects, logStreams, type AlertChannel } from "../../db/schema/logs";
import { nowIso, nowMs } from "../../platform/clock";
import { fromBase64Url, randomToken, sha256Hex, toBase64Url } from "../../platform/crypto";
import { ApiError, type FieldErrors } from "../../platform/errors";
import { checkUrl, type SsrfOptions } from "../../platform/ssrf";
import { orNotFound, ownedBy, ownedRow } from "../../platform/tenancy";
import type { CreateAlertBody, EntriesQuery, TailQuery, UpdateAlertBody } from "./logs.schemas";
import { MAX_TAILS } from "./store/log-tails";
import { entryView, logStore } from "./logs.store";
import type { EntryRecord } from "./store/log-store";

export const TOKEN_PREFIX = "lgt_";
const VISIBLE_PREFIX_LENGTH = 12;

export type ProjectRow = typeof logProjects.$inferSelect;
export type AlertRow = typeof logAlerts.$inferSelect;

export const projectNotFound = () => new ApiError("not_found", "Project not found");
export const alertNotFound = () => new ApiError("not_found", "Alert not found");

// Projects

export function projectView(row: ProjectRow) {
  return {
    id: row.id,
    name: row.name,
    daily_limit_mb: row.dailyLimitMb,
    retention_days: row.retentionDays,
    ingest_token_prefix: row.tokenPrefix,
    stream_count: row.streamCount,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

async function newIngestToken(): Promise<{ token: string; hash: string; prefix: string }> {
  const token = randomToken(32, TOKEN_PREFIX);
  return { token, hash: await sha256Hex(token), prefix: token.slice(0, VISIBLE_PREFIX_LENGTH) };
}

export async function createProject(
  db: Db,
  teamId: string,
  input: { name: string; daily_limit_mb: number; retention_days: number },
): Promise<{ row: ProjectRow; token: string }> {
  const at = nowIso();
  const { token, hash, prefix } = await newIngestToken();
  const [row] = await db
    .insert(logProjects)
    .values({
      id: crypto.randomUUID(),
      teamId,
      name: input.name,
      tokenHash: hash,
      tokenPrefix: prefix,
      dailyLimitMb: input.daily_limit_mb,
      retentionDays: input.retention_days,
      createdAt: at,
      updatedAt: at,
    })
    .returning();
  return { row, token };
}

export async function listProjects(db: Db, teamId: string): Promise<ProjectRow[]> {
  return db.select().from(logProjects).where(ownedBy(logProjects, teamId)).orderBy(asc(logProjects.createdAt), asc(logProjects.id));
}

export async function getProject(db: Db, teamId: string, id: string): Promise<ProjectRow> {
  const [row] = await db.select().from(logProjects).where(ownedRow(logProjects, teamId, id)).limit(1);
  return orNotFound(row, projectNotFound());
}

/** Replaces the token: the old one stops working with this write. */
export async function rotateToken(db: Db, teamId: string, id: string): Promise<{ row: ProjectRow; token: string }> {
  const { token, hash, prefix } = await newIngestToken();
  const [row] = await db
    .update(logProjects)
    .set({ tokenHash: hash, tokenPrefix: prefix, updatedAt: nowIso() })
    .where(ownedRow(logProjects, teamId, id))
    .returning();
  return { row: orNotFound(row, projectNotFound()), token };
}

/**
 * Deletes a project: its D1 rows first (the token stops working, alerts, streams and counters go
 * by cascade), then every entry of its store. Should the store not answer, its retention alarm
 * still removes the entries within the project's retention.
 */
export async function deleteProject(env: Env, teamId: string, id: string): Promise<void> {
  const db = getDb(env.DB);
  const deleted = await db.delete(logProjects).where(ownedRow(logProjects, teamId, id)).returning({ id: logProjects.id });
  orNotFound(deleted[0], projectNotFound());
  try {
    await logStore(env, id).destroy();
  } catch (error) {
    console.error(JSON.stringify({ msg: "log store delete failed", project: id, error: String(error) }));
  }
}

export async function listStreams(db: Db, teamId: string, projectId: string, page: { limit: number; after?: string }) {
  await getProject(db, teamId, projectId);
  const conditions: SQL[] = [eq(logStreams.projectId, projectId), eq(logStreams.teamId, teamId)];
  if (page.after !== undefined) conditions.push(gt(logStreams.name, page.after));
  const rows = await db
    .select({ name: logStreams.name, created_at: logStreams.createdAt })
    .from(logStreams)
    .where(and(...conditions))
    .orderBy(asc(logStreams.name))
    .limit(page.limit);
  return rows;
}

// Entries

/** Opaque cursor: the (ts, seq) of the last entry of a page. */
function encodeCursor(row: EntryRecord): string {
  return toBase64Url(new TextEncoder().encode(`${row.ts}.${row.seq}`));
}

function decodeCursor(cursor: string): { ts: number; seq: number } {
  try {
    const match = /^(\d{1,16})\.(\d{1,16})$/.exec(new TextDecoder().decode(fromBase64Url(cursor)));
    if (match) return { ts: Number(match[1]), seq: Number(match[2]) };
  } catch {
    // fall through to the validation error
  }
  throw ApiError.validation({ cursor: ["is invalid"] });
}

/**
 * Newest first, keyset-paginated on (time, seq), read from the project's store: the time index
 * serves the order, (level, time) the level filter, the trigram index `q`; the other filters are
 * checked on the rows walked. The project is looked up in D1 first, so another team's project (or
 * an unknown id) never reaches, or creates, a store.
 */
export async function queryEntries(env: Env, teamId: string, projectId: string, query: EntriesQuery) {
  await getProject(getDb(env.DB), teamId, projectId);
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  const { rows, more } = await logStore(env, projectId).query(
    {
      level: query.level,
      stream: query.stream,
      service: query.service,
      trace_id: query.trace_id,
      since: query.since ? Date.parse(query.since) : undefined,
      until: query.until ? Date.parse(query.until) : undefined,
      q: query.q,
      after,
    },
    { limit: query.limit, maxBytes: ENTRIES_PAGE_BYTES },
  );
  return {
    data: rows.map((row) => entryView(projectId, row)),
    pagination: { limit: query.limit, next_cursor: more ? encodeCursor(rows[rows.length - 1]) : null },
  };
}

/**
 * Opens a live tail of a project (after the D1 ownership check, so another team's or an unknown
 * project never reaches a store): the store's event stream, or 429 when the project has the
 * maximum of tails open.
 */
export async function openTail(env: Env, teamId: string, projectId: string, query: TailQuery): Promise<ReadableStream<Uint8Array>> {
  await getProject(getDb(env.DB), teamId, projectId);
  const stream = await logStore(env, projectId).openTail(projectId, {
    level: query.level,
    stream: query.stream,
    service: query.service,
    trace_id: query.trace_id,
    q: query.q,
  });
  if (!stream) throw new ApiError("tail_limit", `Too many live tails open for this project (max ${MAX_TAILS})`, { status: 429 });
  return stream;
}

/** Byte budget of one page of entries (messages and metadata): a page stops short of `limit` past it. */
export const ENTRIES_PAGE_BYTES = 2 * 1024 * 1024;

// Alerts

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

export async function listAlerts(db: Db, teamId: string, projectId: string): Promise<AlertRow[]> {
  await getProject(db, teamId, projectId);
  return db
    .select()
    .from(logAlerts)
    .where(and(eq(logAlerts.projectId, projectId), ownedBy(logAlerts, teamId)))
    .orderBy(asc(logAlerts.insertedAt), asc(logAlerts.id));
}

export async function createAlert(db: Db, teamId: string, projectId: string, input: CreateAlertBody, ssrf: SsrfOptions): Promise<AlertRow> {
  await getProject(db, teamId, projectId);
  const notifyEmail = input.notify_email ?? null;
  const notifyWebhook = input.notify_webhook ?? null;
  // Omitted channels follow the addresses that are set (spec: Log alerts rules).
  const channels: AlertChannel[] = input.channels ?? [...(notifyEmail ? ["email" as const] : []), ...(notifyWebhook ? ["webhook" as const] : [])];
  checkAlert({ channels, notifyEmail, notifyWebhook }, ssrf);
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
  const [row] = await db.select().from(logAlerts).where(ownedRow(logAlerts, teamId, id)).limit(1);
  return orNotFound(row, alertNotFound());
}

/** Changes only the fields given; the merged alert must still satisfy the rules. */
export async function updateAlert(db: Db, teamId: string, id: string, input: UpdateAlertBody, ssrf: SsrfOptions): Promise<AlertRow> {
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
  checkAlert(merged, ssrf);
  if (Object.keys(changes).length === 0) return current;
  const update = db
    .update(logAlerts)
    .set({ ...changes, updatedAt: nowIso() })
    .where(ownedRow(logAlerts, teamId, id))
    .returning();
  if (changes.enabled !== false) return orNotFound((await update)[0], alertNotFound());
  // Disabled: the check no longer looks at it, so an open firing is closed now (no notification).
  const [rows] = await db.batch([
    update,
    db
      .update(logAlertFirings)
      .set({ resolvedAt: nowMs() })
      .where(and(eq(logAlertFirings.alertId, id), eq(logAlertFirings.teamId, teamId), isNull(logAlertFirings.resolvedAt))),
  ]);
  return orNotFound(rows[0], alertNotFound());
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
function encodeFiringCursor(row: FiringRow): string {
  return toBase64Url(new TextEncoder().encode(`f${row.firedAt}`));
}

function decodeFiringCursor(cursor: string): number {
  try {
    const match = /^f(\d{1,16})$/.exec(new TextDecoder().decode(fromBase64Url(cursor)));
    if (match) return Number(match[1]);
  } catch {
    // fall through to the validation error
  }
  throw ApiError.validation({ cursor: ["is invalid"] });
}

/** An alert's firings, newest first, keyset-paginated on fired_at (the unique index (alert_id, fired_at) serves it). */
export async function listFirings(db: Db, teamId: string, alertId: string, page: { limit: number; cursor?: string }) {
  await getAlert(db, teamId, alertId);
  const conditions: SQL[] = [eq(logAlertFirings.alertId, alertId), eq(logAlertFirings.teamId, teamId)];
  if (page.cursor !== undefined) conditions.push(lt(logAlertFirings.firedAt, decodeFiringCursor(page.cursor)));
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
    pagination: { limit: page.limit, next_cursor: more ? encodeFiringCursor(shown[shown.length - 1]) : null },
  };
}

export async function deleteAlert(db: Db, teamId: string, id: string): Promise<void> {
  const deleted = await db.delete(logAlerts).where(ownedRow(logAlerts, teamId, id)).returning({ id: logAlerts.id });
  orNotFound(deleted[0], alertNotFound());
}
