// Audit logic over the database, R2 and the export queue: findings and their status history,
// export records, share and revoke, and the signed share/download tokens. The summary and the
// counters each finding write keeps for it are in audit-summary.service.ts.
// Never sees Hono's context: routes pass the env, the team and parsed inputs.
import { parseMailbox } from "../mail/mail.policy";
import { and, asc, count, desc, eq, inArray, sql } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import {
  auditFindingHistory,
  auditFindings,
  auditReports,
  auditVerifications,
  type AuditFinding,
  type AuditReport,
  type FindingStatus,
  type ReportFormat,
  type ReportStatus,
} from "../../db/schema/audit";
import { isoSeconds, nowIso, nowSeconds } from "../../platform/clock";
import { signToken, verifyToken } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { queuePlatformMail } from "../../platform/platform-mail";
import { consumeQuota, releaseQuota, type QuotaOwner } from "../../platform/quota";
import { checkUrl, safeFetch, ssrfOptions } from "../../platform/ssrf";
import { orNotFound } from "../../platform/tenancy";
import { renderArtefact, type ReportView } from "./audit.render";
import type { ShareChannel } from "./audit.schemas";
import { SHARE_CHANNELS } from "./audit.schemas";
import {
  computeSummary,
  emptySummary,
  findingDelta,
  isTerminal,
  lastSevenDays,
  summaryStatements,
  verificationDelta,
  type Scope,
} from "./audit-summary.service";

export { computeSummary, emptySummary, lastSevenDays, NON_TERMINAL, TERMINAL, type Scope } from "./audit-summary.service";

export const SHARE_TTL_SECONDS = 48 * 3600;
export const DOWNLOAD_TTL_SECONDS = 5 * 60;
export const CHAT_TIMEOUT_MS = 10_000;
export const MAX_RECIPIENTS = 10;

// ---- findings -------------------------------------------------------------------------------

export interface FindingView {
  id: string;
  org_id: string;
  project_id: string;
  title: string;
  priority_score: number;
  status: FindingStatus;
  regression: boolean;
  created_at: string;
  updated_at: string;
}

function findingView(row: AuditFinding): FindingView {
  return {
    id: row.id,
    org_id: row.teamId,
    project_id: row.projectId,
    title: row.title,
    priority_score: row.priorityScore,
    status: row.status,
    regression: !isTerminal(row.status) && row.everTerminal,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export async function createFinding(
  env: Env,
  scope: Scope,
  input: { title: string; priority_score: number; status: FindingStatus },
): Promise<FindingView> {
  const db = getDb(env.DB);
  const at = nowIso();
  const row: AuditFinding = {
    id: crypto.randomUUID(),
    teamId: scope.teamId,
    projectId: scope.projectId,
    title: input.title,
    priorityScore: input.priority_score,
    status: input.status,
    everTerminal: isTerminal(input.status),
    version: 0,
    createdAt: at,
    updatedAt: at,
  };
  // The finding, its first history row and the project's summary counters in one transaction.
  await env.DB.batch([
    prepared(env.DB, db.insert(auditFindings).values(row)),
    prepared(
      env.DB,
      db.insert(auditFindingHistory).values({
        teamId: scope.teamId,
        projectId: scope.projectId,
        findingId: row.id,
        fromStatus: null,
        status: row.status,
        priorityScore: row.priorityScore,
        at,
      }),
    ),
    ...summaryStatements(env.DB, scope, findingDelta(null, row, at)),
  ]);
  return findingView(row);
}

/** A Drizzle query as a D1 statement, to batch it with the raw counter statements. */
function prepared(d1: D1Database, query: { toSQL(): { sql: string; params: unknown[] } }): D1PreparedStatement {
  const { sql: text, params } = query.toSQL();
  return d1.prepare(text).bind(...params);
}

function findingWhere(scope: Scope, id: string) {
  return and(eq(auditFindings.id, id), eq(auditFindings.teamId, scope.teamId), eq(auditFindings.projectId, scope.projectId));
}

export async function listFindings(
  env: Env,
  scope: Scope,
  query: { status?: FindingStatus; page: number; per_page: number },
): Promise<{ items: FindingView[]; total: number }> {
  const db = getDb(env.DB);
  const where = and(
    eq(auditFindings.teamId, scope.teamId),
    eq(auditFindings.projectId, scope.projectId),
    query.status ? eq(auditFindings.status, query.status) : undefined,
  );
  const [rows, [{ total }]] = await db.batch([
    db
      .select()
      .from(auditFindings)
      .where(where)
      .orderBy(desc(auditFindings.createdAt), desc(auditFindings.id))
      .limit(query.per_page)
      .offset((query.page - 1) * query.per_page),
    db.select({ total: count() }).from(auditFindings).where(where),
  ]);
  return { items: rows.map(findingView), total };
}

export async function getFinding(env: Env, scope: Scope, id: string) {
  const db = getDb(env.DB);
  const [found, history, verifications] = await db.batch([
    db.select().from(auditFindings).where(findingWhere(scope, id)).limit(1),
    db
      .select()
      .from(auditFindingHistory)
      .where(and(eq(auditFindingHistory.findingId, id), eq(auditFindingHistory.teamId, scope.teamId)))
      .orderBy(asc(auditFindingHistory.id)),
    db
      .select()
      .from(auditVerifications)
      .where(and(eq(auditVerifications.findingId, id), eq(auditVerifications.teamId, scope.teamId)))
      .orderBy(asc(auditVerifications.createdAt), asc(auditVerifications.id)),
  ]);
  const row = orNotFound(found[0]);
  return {
    ...findingView(row),
    status_history: history.map((h) => ({ from: h.fromStatus, to: h.status, priority_score: h.priorityScore, at: h.at })),
    verifications: verifications.map(verificationView),
  };
}

export async function updateFinding(
  env: Env,
  scope: Scope,
  id: string,
  patch: { title?: string; priority_score?: number; status?: FindingStatus },
) {
  const db = getDb(env.DB);
  const [current] = await db.select().from(auditFindings).where(findingWhere(scope, id)).limit(1);
  const row = orNotFound(current);
  const at = nowIso();
  const status = patch.status ?? row.status;
  const next: AuditFinding = {
    ...row,
    title: patch.title ?? row.title,
    priorityScore: patch.priority_score ?? row.priorityScore,
    status,
    everTerminal: row.everTerminal || isTerminal(status),
    version: row.version + 1,
    updatedAt: at,
  };
  const changed = next.status !== row.status || next.priorityScore !== row.priorityScore;
  // Optimistic concurrency: every statement is conditional on the row still being at the version
  // read (updated_at alone would let two PATCHes stamped in the same millisecond both pass), and
  // they run in one batch, so the history row and the summary counters move exactly when the
  // finding does, by the delta between the state read and the state written.
  const guard = "EXISTS (SELECT 1 FROM audit_findings WHERE id = ?1 AND team_id = ?2 AND project_id = ?3 AND version = ?4)";
  const statements = [
    ...(changed
      ? [
          env.DB.prepare(
            `INSERT INTO audit_finding_history (team_id, project_id, finding_id, from_status, status, priority_score, at)
             SELECT ?2, ?3, ?1, ?5, ?6, ?7, ?8 WHERE ${guard}`,
          ).bind(id, scope.teamId, scope.projectId, row.version, row.status, next.status, next.priorityScore, at),
          ...summaryStatements(env.DB, scope, findingDelta(row, next, at), { findingId: id, version: row.version }),
        ]
      : []),
    env.DB.prepare(
      `UPDATE audit_findings SET title = ?5, priority_score = ?6, status = ?7, ever_terminal = ?8, version = version + 1, updated_at = ?9
       WHERE id = ?1 AND team_id = ?2 AND project_id = ?3 AND version = ?4`,
    ).bind(id, scope.teamId, scope.projectId, row.version, next.title, next.priorityScore, next.status, next.everTerminal ? 1 : 0, at),
  ];
  const results = await env.DB.batch(statements);
  if ((results[results.length - 1].meta.changes ?? 0) === 0) {
    throw new ApiError("conflict", "The finding changed concurrently; retry the request", { status: 409 });
  }
  return getFinding(env, scope, id);
}

function verificationView(row: typeof auditVerifications.$inferSelect) {
  return { id: row.id, finding_id: row.findingId, result: row.result, note: row.note, created_at: row.createdAt };
}

export async function addVerification(env: Env, scope: Scope, findingId: string, input: { result: "passed" | "failed"; note?: string }) {
  const db = getDb(env.DB);
  const [finding] = await db.select({ id: auditFindings.id }).from(auditFindings).where(findingWhere(scope, findingId)).limit(1);
  orNotFound(finding);
  const row = {
    id: crypto.randomUUID(),
    teamId: scope.teamId,
    projectId: scope.projectId,
    findingId,
    result: input.result,
    note: input.note ?? null,
    createdAt: nowIso(),
  };
  await env.DB.batch([
    prepared(env.DB, db.insert(auditVerifications).values(row)),
    ...summaryStatements(env.DB, scope, verificationDelta(input.result, row.createdAt)),
  ]);
  return verificationView(row);
}

// ---- reports --------------------------------------------------------------------------------

export function reportView(row: AuditReport): ReportView {
  return {
    id: row.id,
    org_id: row.teamId,
    project_id: row.projectId,
    period_start: row.periodStart,
    period_end: row.periodEnd,
    format: row.format,
    status: row.status,
    snapshot: row.snapshot,
    exported_at: row.exportedAt,
    shared_at: row.sharedAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

function reportWhere(scope: Scope, id: string) {
  return and(eq(auditReports.id, id), eq(auditReports.teamId, scope.teamId), eq(auditReports.projectId, scope.projectId));
}

export async function getReport(env: Env, scope: Scope, id: string): Promise<AuditReport> {
  const [row] = await getDb(env.DB).select().from(auditReports).where(reportWhere(scope, id)).limit(1);
  return orNotFound(row);
}

export async function listReports(env: Env, scope: Scope, query: { status?: ReportStatus; page: number; per_page: number }) {
  const db = getDb(env.DB);
  const where = and(
    eq(auditReports.teamId, scope.teamId),
    eq(auditReports.projectId, scope.projectId),
    query.status ? eq(auditReports.status, query.status) : undefined,
  );
  const [rows, [{ total }]] = await db.batch([
    db
      .select()
      .from(auditReports)
      .where(where)
      .orderBy(desc(auditReports.createdAt), desc(auditReports.id))
      .limit(query.per_page)
      .offset((query.page - 1) * query.per_page),
    db.select({ total: count() }).from(auditReports).where(where),
  ]);
  return { items: rows.map(reportView), total };
}

/** The export message: ids only (Queue messages are small; the snapshot stays in D1). */
export interface ExportMessage {
  report_id: string;
  team_id: string;
}

/**
 * Creates an export: one AI quota unit (atomic), a `queued` record holding the live summary as its
 * snapshot, and a queue message. If the record or the message cannot be written the unit is given
 * back and nothing is left half-done.
 */
export async function startExport(
  env: Env,
  owner: QuotaOwner,
  scope: Scope,
  input: { format: ReportFormat; period_start?: string; period_end?: string },
): Promise<ReportView> {
  const days = lastSevenDays();
  const periodStart = input.period_start ?? days[0];
  const periodEnd = input.period_end ?? days[6];
  if (periodStart > periodEnd) throw ApiError.validation({ period_start: ["must not be after period_end"] });

  // The snapshot is read before the unit is taken, so a failed read costs the team nothing.
  const snapshot = await computeSummary(env, scope);
  await consumeQuota(env, owner, "ai", 1);
  const db = getDb(env.DB);
  const at = isoSeconds();
  const row: AuditReport = {
    id: crypto.randomUUID(),
    teamId: scope.teamId,
    projectId: scope.projectId,
    periodStart,
    periodEnd,
    format: input.format,
    status: "queued",
    snapshot,
    placeholder: false,
    objectKey: null,
    claimedAt: null,
    shareVersion: 0,
    exportedAt: null,
    sharedAt: null,
    createdAt: at,
    updatedAt: at,
  };
  try {
    await db.insert(auditReports).values(row);
  } catch (error) {
    await releaseQuota(env, scope.teamId, "ai", 1);
    throw error;
  }
  try {
    await env.EXPORT_QUEUE.send({ report_id: row.id, team_id: row.teamId } satisfies ExportMessage);
  } catch (error) {
    console.error(JSON.stringify({ msg: "audit export enqueue failed", report_id: row.id, error: String(error) }));
    await db.update(auditReports).set({ status: "failed", updatedAt: isoSeconds() }).where(eq(auditReports.id, row.id));
    await releaseQuota(env, scope.teamId, "ai", 1);
    throw new ApiError("unavailable", "The export could not be queued; retry later", { status: 503 });
  }
  return reportView(row);
}

/** R2 key of a report's artefact. */
export function objectKeyOf(row: Pick<AuditReport, "teamId" | "projectId" | "id">, extension: string): string {
  return `audit/${row.teamId}/${row.projectId}/${row.id}.${extension}`;
}

/** The artefact of an exported report from R2, or null when there is none yet. */
export async function readArtefact(env: Env, row: AuditReport): Promise<R2ObjectBody | null> {
  if (!row.objectKey) return null;
  return env.REPORTS.get(row.objectKey);
}

/** A download file name for an artefact. */
export function fileNameOf(row: AuditReport): string {
  const extension = row.objectKey?.split(".").pop() ?? "bin";
  return `audit-report-${row.projectId}-${row.id}.${extension}`;
}

// ---- share, tokens, revoke ------------------------------------------------------------------

interface ShareToken {
  k: "audit_share" | "audit_download";
  r: string;
  t: string;
  v: number;
  exp: number;
}

const appUrl = (env: Env) => env.APP_URL.replace(/\/+$/, "");

/** The public viewer address of a share token. */
function shareUrl(env: Env, token: string): string {
  return `${appUrl(env)}/insights/audit/reports/shared/${token}`;
}

/** A token is live while signed by us, unexpired, of the right kind, and its report still shared at that version. */
export async function resolveToken(env: Env, token: string, kind: ShareToken["k"]): Promise<AuditReport | null> {
  if (token.length > 2048) return null;
  const payload = await verifyToken<ShareToken>(env.SIGNING_KEY, token, env.SIGNING_KEY_PREVIOUS);
  if (!payload || payload.k !== kind || typeof payload.r !== "string" || typeof payload.t !== "string") return null;
  if (typeof payload.exp !== "number" || payload.exp <= nowSeconds()) return null;
  const [row] = await getDb(env.DB)
    .select()
    .from(auditReports)
    .where(and(eq(auditReports.id, payload.r), eq(auditReports.teamId, payload.t)))
    .limit(1);
  if (!row || row.status !== "shared" || row.shareVersion !== payload.v) return null;
  return row;
}

/** Mints the 5-minute download link of a shared report (a signed URL on this Worker). */
export async function mintDownloadUrl(env: Env, row: AuditReport): Promise<string> {
  const token = await signToken(env.SIGNING_KEY, {
    k: "audit_download",
    r: row.id,
    t: row.teamId,
    v: row.shareVersion,
    exp: nowSeconds() + DOWNLOAD_TTL_SECONDS,
  } satisfies ShareToken);
  return `${appUrl(env)}/insights/audit/reports/download/${token}`;
}

/** True for a single bare mailbox address (local@domain.tld, no display name), by the mail parser. */
export function isEmailAddress(value: string): boolean {
  const mailbox = parseMailbox(value);
  return !!mailbox && !mailbox.name && !value.includes("<");
}

export interface ShareInput {
  channel?: unknown;
  report_id?: string;
  recipients?: unknown;
  webhook_url?: unknown;
}

export interface ShareResultView {
  id: string;
  channel: ShareChannel;
  recipients: string[];
  accepted: string[];
  rejected: string[];
  shared_at: string;
  share_url: string;
}

/** Checks the channel and what it needs; throws the envelope's 422s. */
function validateShare(env: Env, input: ShareInput): { channel: ShareChannel; recipients: string[]; webhookUrl: string | null } {
  const channel = input.channel;
  if (typeof channel !== "string" || !(SHARE_CHANNELS as readonly string[]).includes(channel)) {
    throw new ApiError("invalid_channel", "channel must be one of: email, chat, link", { status: 422 });
  }
  if (channel === "email") {
    const list = input.recipients;
    if (!Array.isArray(list) || list.length < 1 || list.length > MAX_RECIPIENTS || !list.every((r) => typeof r === "string")) {
      throw ApiError.validation({ recipients: [`must be an array of 1 to ${MAX_RECIPIENTS} email addresses`] });
    }
    return { channel, recipients: list.map((r: string) => r.trim()), webhookUrl: null };
  }
  if (channel === "chat") {
    const url = input.webhook_url;
    const reason = typeof url === "string" && url.length <= 2048 ? checkUrl(url, ssrfOptions(env)) : "is required for channel chat";
    if (reason) throw ApiError.validation({ webhook_url: [reason] });
    return { channel, recipients: [], webhookUrl: url as string };
  }
  return { channel: "link", recipients: [], webhookUrl: null };
}

/** The project's most recent report, by created_at then id (both descending), if it has any. */
async function latestReport(env: Env, scope: Scope): Promise<AuditReport | undefined> {
  const [latest] = await getDb(env.DB)
    .select()
    .from(auditReports)
    .where(and(eq(auditReports.teamId, scope.teamId), eq(auditReports.projectId, scope.projectId)))
    .orderBy(desc(auditReports.createdAt), desc(auditReports.id))
    .limit(1);
  return latest;
}

/**
 * The project's most recent report (created_at, then id, both descending), or a new empty
 * placeholder JSON report when it has none: status `exported`, the empty summary as snapshot,
 * the last 7 days as period, and its JSON artefact written to R2. It consumes no AI quota.
 *
 * Race-free: the row is written by one `INSERT ... SELECT ... WHERE NOT EXISTS` (a single
 * statement, so atomic in D1), and the winner is re-read. Concurrent shares of an empty project
 * thus all use the same placeholder; a loser deletes the artefact it wrote for its own row.
 */
async function defaultReport(env: Env, scope: Scope): Promise<AuditReport> {
  const latest = await latestReport(env, scope);
  if (latest) return latest;

  const days = lastSevenDays();
  const at = isoSeconds();
  const row: AuditReport = {
    id: crypto.randomUUID(),
    teamId: scope.teamId,
    projectId: scope.projectId,
    periodStart: days[0],
    periodEnd: days[6],
    format: "json",
    status: "exported",
    snapshot: emptySummary(),
    placeholder: true,
    objectKey: null,
    claimedAt: null,
    shareVersion: 0,
    exportedAt: at,
    sharedAt: null,
    createdAt: at,
    updatedAt: at,
  };
  const artefact = renderArtefact(reportView(row));
  const objectKey = objectKeyOf(row, artefact.extension);
  row.objectKey = objectKey;
  // The artefact first: a row that exists always has its object.
  await env.REPORTS.put(objectKey, artefact.body, { httpMetadata: { contentType: artefact.contentType } });
  let inserted = false;
  try {
    const result = await env.DB.prepare(
      `INSERT INTO audit_reports (id, team_id, project_id, period_start, period_end, format, status, snapshot, placeholder,
         object_key, claimed_at, share_version, exported_at, shared_at, created_at, updated_at)
       SELECT ?1, ?2, ?3, ?4, ?5, 'json', 'exported', ?6, 1, ?7, NULL, 0, ?8, NULL, ?8, ?8
       WHERE NOT EXISTS (SELECT 1 FROM audit_reports WHERE team_id = ?2 AND project_id = ?3)`,
    )
      .bind(row.id, row.teamId, row.projectId, row.periodStart, row.periodEnd, JSON.stringify(row.snapshot), objectKey, at)
      .run();
    inserted = (result.meta.changes ?? 0) > 0;
  } finally {
    if (!inserted) await env.REPORTS.delete(objectKey).catch(() => undefined);
  }
  if (inserted) return row;
  // Another request created a report for the project in the meantime: use the latest one.
  return orNotFound(await latestReport(env, scope));
}

export async function shareReport(env: Env, scope: Scope, owner: QuotaOwner, input: ShareInput): Promise<ShareResultView> {
  const { channel, recipients, webhookUrl } = validateShare(env, input);
  const report = input.report_id ? await getReport(env, scope, input.report_id) : await defaultReport(env, scope);
  // Mail to addresses the team chose is metered like its own mail: one `mail` unit per recipient,
  // taken before anything changes (429 quota_exceeded, nothing shared), given back when not queued.
  const valid: string[] = [];
  const rejected: string[] = [];
  if (channel === "email") {
    for (const address of recipients) {
      if (!isEmailAddress(address)) rejected.push(address);
      else if (!valid.some((v) => v.toLowerCase() === address.toLowerCase())) valid.push(address);
    }
    if (valid.length) await consumeQuota(env, owner, "mail", valid.length);
  }

  // Only an exported (or already shared) report can be shared; anything else, or a row that
  // changed under us, is the envelope's request_failed.
  const sharedAt = isoSeconds();
  const db = getDb(env.DB);
  let updated: AuditReport[];
  try {
    updated = await db
      .update(auditReports)
      .set({ status: "shared", sharedAt, updatedAt: sharedAt })
      .where(and(reportWhere(scope, report.id), inArray(auditReports.status, ["exported", "shared"])))
      .returning();
  } catch (error) {
    console.error(JSON.stringify({ msg: "audit share update failed", report_id: report.id, error: String(error) }));
    updated = [];
  }
  const row = updated[0];
  if (!row) {
    await releaseQuota(env, owner.teamId, "mail", valid.length);
    throw new ApiError("request_failed", `Report ${report.id} could not be shared (status ${report.status}); only exported reports can be shared`, {
      status: 422,
    });
  }

  const token = await signToken(env.SIGNING_KEY, {
    k: "audit_share",
    r: row.id,
    t: row.teamId,
    v: row.shareVersion,
    exp: nowSeconds() + SHARE_TTL_SECONDS,
  } satisfies ShareToken);
  const url = shareUrl(env, token);

  const accepted: string[] = [];
  if (channel === "email") {
    const subject = `Audit report for project ${row.projectId}`;
    const text =
      `An audit report for project ${row.projectId} (${row.periodStart} to ${row.periodEnd}) was shared with you.\n\n` +
      `View it here (the link is valid for 48 hours): ${url}\n`;
    const results = await Promise.allSettled(
      valid.map((to) => queuePlatformMail(env, { teamId: row.teamId, kind: "report_share", to, subject, text })),
    );
    results.forEach((result, i) => {
      if (result.status === "fulfilled") accepted.push(valid[i]);
      else {
        rejected.push(valid[i]);
        console.error(JSON.stringify({ msg: "audit share mail not queued", report_id: row.id, error: String(result.reason) }));
      }
    });
    await releaseQuota(env, owner.teamId, "mail", valid.length - accepted.length);
  } else if (channel === "chat" && webhookUrl) {
    await postToChat(env, webhookUrl, row, url);
  }

  return { id: row.id, channel, recipients, accepted, rejected, shared_at: sharedAt, share_url: url };
}

/** Posts the share to a team chat incoming webhook; a failure is logged and never surfaces. */
async function postToChat(env: Env, webhookUrl: string, row: AuditReport, url: string): Promise<void> {
  const text = `Audit report for project ${row.projectId} (${row.periodStart} to ${row.periodEnd}): ${url}`;
  try {
    const res = await safeFetch(
      webhookUrl,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ text, report_id: row.id, project_id: row.projectId, share_url: url }),
      },
      { ...ssrfOptions(env), timeoutMs: CHAT_TIMEOUT_MS },
    );
    if (!res.ok) console.error(JSON.stringify({ msg: "audit chat share rejected", report_id: row.id, status: res.status }));
    await res.body?.cancel();
  } catch (error) {
    console.error(JSON.stringify({ msg: "audit chat share failed", report_id: row.id, error: String(error) }));
  }
}

/** Unshares every shared report of the project; their links die (the share version moves on). */
export async function revokeShares(env: Env, scope: Scope): Promise<{ status: "exported"; revoked_count: number; ids: string[]; id: string }> {
  const at = isoSeconds();
  const rows = await getDb(env.DB)
    .update(auditReports)
    .set({ status: "exported", shareVersion: sql`${auditReports.shareVersion} + 1`, updatedAt: at })
    .where(and(eq(auditReports.teamId, scope.teamId), eq(auditReports.projectId, scope.projectId), eq(auditReports.status, "shared")))
    .returning({ id: auditReports.id, sharedAt: auditReports.sharedAt });
  if (rows.length === 0) throw new ApiError("not_found", "No report of this project is shared");
  rows.sort((a, b) => (b.sharedAt ?? "").localeCompare(a.sharedAt ?? "") || b.id.localeCompare(a.id));
  return { status: "exported", revoked_count: rows.length, ids: rows.map((r) => r.id), id: rows[0].id };
}
