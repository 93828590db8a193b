// Sharing audit reports: share by email, team chat or link (with the empty placeholder report of
// a project that has none), revoke, and the signed share and download tokens the public viewer
// resolves. Never sees Hono's context: routes pass the env, the scope and parsed inputs.
import { log } from "../../platform/log";
import { parseMailbox } from "../../platform/mailbox";
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { auditReports, type AuditReport } from "../../db/schema/audit";
import { isoSeconds, nowSeconds } from "../../platform/clock";
import { signToken, verifyToken } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { enqueuePlatformMail, storePlatformMail, tenantText, type MailContent } from "../../platform/platform-mail";
import { accept } from "../../platform/jobs/accept";
import type { QuotaOwner } from "../../platform/quota";
import { checkUrl, safeFetch, ssrfOptions } from "../../platform/ssrf";
import { orNotFound } from "../../platform/tenancy";
import { renderArtefact } from "./audit.render";
import { SHARE_CHANNELS, type ShareChannel } from "./audit.schemas";
import { emptySummary, lastSevenDays, type Scope } from "./audit-summary.service";
import { insertPlaceholderIfNone, projectRow } from "./audit.queries";
import { getReport, objectKeyOf, reportView } from "./audit.service";
import { settings } from "../../platform/config";

export const SHARE_TTL_SECONDS = 48 * 3600;
export const DOWNLOAD_TTL_SECONDS = 5 * 60;
export const CHAT_TIMEOUT_MS = 10_000;
export const MAX_RECIPIENTS = 10;

interface ShareToken {
  k: "audit_share" | "audit_download";
  r: string;
  t: string;
  v: number;
  exp: number;
}

/** The public viewer address of a share token. */
function shareUrl(env: Env, token: string): string {
  return `${settings(env).appUrl}/insights/audit/reports/shared/${token}`;
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
  if (row?.status !== "shared" || row.shareVersion !== payload.v) return null;
  return row;
}

/** A token of `kind` for the report at its current share version, valid `ttlSeconds` from now. */
function reportToken(env: Env, row: AuditReport, kind: ShareToken["k"], ttlSeconds: number): Promise<string> {
  return signToken(env.SIGNING_KEY, {
    k: kind,
    r: row.id,
    t: row.teamId,
    v: row.shareVersion,
    exp: nowSeconds() + ttlSeconds,
  } satisfies ShareToken);
}

/** Mints the 5-minute download link of a shared report (a signed URL on this Worker). */
export async function mintDownloadUrl(env: Env, row: AuditReport): Promise<string> {
  const token = await reportToken(env, row, "audit_download", DOWNLOAD_TTL_SECONDS);
  return `${settings(env).appUrl}/insights/audit/reports/download/${token}`;
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
    throw new ApiError("invalid_channel", "channel must be one of: email, chat, link");
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
    attempts: 0,
    leaseUntil: null,
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
    inserted = await insertPlaceholderIfNone(env.DB, row);
  } finally {
    if (!inserted) await env.REPORTS.delete(objectKey).catch(() => undefined);
  }
  if (inserted) return row;
  // Another request created a report for the project in the meantime: use the latest one.
  return orNotFound(await latestReport(env, scope));
}

/**
 * Shares a report through the accept step (platform/jobs/accept.ts). Mail to addresses the team
 * chose is metered like its own mail: one `mail` unit per valid recipient, taken before anything
 * changes (429 quota_exceeded, nothing shared). The store marks the report shared (only an exported
 * or already shared report: anything else, or a row that changed under us, is the envelope's
 * request_failed, every unit given back) and writes the share mails to the platform outbox in one
 * batch; when that batch fails its recipients are `rejected` and their units given back. A queue
 * that refuses the mail is logged: the rows wait `pending` for the mail sweep.
 */
export async function shareReport(env: Env, scope: Scope, owner: QuotaOwner, input: ShareInput): Promise<ShareResultView> {
  const { channel, recipients, webhookUrl } = validateShare(env, input);
  const report = input.report_id ? await getReport(env, scope, input.report_id) : await defaultReport(env, scope);
  const valid: string[] = [];
  const rejected: string[] = [];
  if (channel === "email") {
    for (const address of recipients) {
      if (!isEmailAddress(address)) rejected.push(address);
      else if (!valid.some((v) => v.toLowerCase() === address.toLowerCase())) valid.push(address);
    }
  }
  const sharedAt = isoSeconds();
  const shared = await accept({
    name: "audit share",
    env,
    quota: { owner, service: "mail", units: valid.length },
    store: () => markShared(env, scope, report, sharedAt, valid),
    unused: ({ mailIds }) => valid.length - mailIds.length,
    enqueue: ({ mailIds }) => enqueuePlatformMail(env, mailIds),
  });
  const { row, url, mailIds } = shared;
  const accepted = mailIds.length === valid.length ? valid : [];
  if (accepted.length < valid.length) rejected.push(...valid);
  if (channel === "chat" && webhookUrl) await postToChat(env, webhookUrl, row, url);
  return { id: row.id, channel, recipients, accepted, rejected, shared_at: sharedAt, share_url: url };
}

/**
 * The store of a share: the report marked shared, its share link, and one platform mail per
 * recipient in one outbox batch (ids empty when the batch failed: logged, its recipients rejected).
 */
async function markShared(
  env: Env,
  scope: Scope,
  report: AuditReport,
  sharedAt: string,
  recipients: string[],
): Promise<{ row: AuditReport; url: string; mailIds: string[] }> {
  let updated: AuditReport[];
  try {
    updated = await getDb(env.DB)
      .update(auditReports)
      .set({ status: "shared", sharedAt, updatedAt: sharedAt })
      .where(and(projectRow(auditReports, scope, report.id), inArray(auditReports.status, ["exported", "shared"])))
      .returning();
  } catch (error) {
    log.error("audit share update failed", { report_id: report.id, error: String(error) });
    updated = [];
  }
  const row = updated[0];
  if (!row) throw new ApiError("request_failed", `Report ${report.id} could not be shared (status ${report.status}); only exported reports can be shared`);
  const url = shareUrl(env, await reportToken(env, row, "audit_share", SHARE_TTL_SECONDS));
  if (recipients.length === 0) return { row, url, mailIds: [] };
  const content = shareMail({ projectId: row.projectId, periodStart: row.periodStart, periodEnd: row.periodEnd, url });
  try {
    const mailIds = await storePlatformMail(
      env,
      recipients.map((to) => ({ teamId: row.teamId, kind: "report_share" as const, to, ...content })),
    );
    return { row, url, mailIds };
  } catch (error) {
    log.error("audit share mail not stored", { report_id: row.id, error: String(error) });
    return { row, url, mailIds: [] };
  }
}

/** The share's mail: the project id is tenant text (`tenantText`, the one rule of platform mail). */
export function shareMail(input: { projectId: string; periodStart: string; periodEnd: string; url: string }): MailContent {
  const project = tenantText(input.projectId);
  return {
    subject: `Audit report for project ${project}`,
    text:
      `An audit report for project ${project} (${input.periodStart} to ${input.periodEnd}) was shared with you.\n\n` +
      `View it here (the link is valid for 48 hours): ${input.url}\n`,
  };
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
    if (!res.ok) log.error("audit chat share rejected", { report_id: row.id, status: res.status });
    await res.body?.cancel();
  } catch (error) {
    log.error("audit chat share failed", { report_id: row.id, error: String(error) });
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
