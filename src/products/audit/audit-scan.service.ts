// Audit scan runs over the database and the audit-scans queue: start a scan (the 3-minute rule,
// the accept step), read one, list a project's scans. The run itself is audit-scan.consumer.ts',
// the fetch audit-scan.fetch.ts', the grade audit-scan.grade.ts'; findings from a scan
// audit-scan-findings.service.ts'; schedules audit-scan-schedules.service.ts'.
// Never sees Hono's context: routes and console pages pass the env, the scope and parsed inputs.
import { and, count, desc, eq } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { auditScans, type AuditScan, type ScanStatus, type ScanTestResult } from "../../db/schema/audit";
import { nowIso, nowMs } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { accept } from "../../platform/jobs/accept";
import { orNotFound } from "../../platform/tenancy";
import type { Scope } from "./audit-summary.service";
import { targetProblem } from "./audit-scan.fetch";
import type { ScanMessage } from "./audit-scan.messages";
import { insertScanUnlessRecent } from "./audit-scan.queries";

/** A second scan of a target within this long answers the one in progress or just finished. */
export const SAME_TARGET_WINDOW_MS = 3 * 60_000;
/** The longest target URL accepted. */
export const TARGET_URL_MAX = 2048;

export interface ScanView {
  id: string;
  org_id: string;
  project_id: string;
  target_url: string;
  status: ScanStatus;
  score: number | null;
  grade: string | null;
  tests: ScanTestResult[];
  error: string | null;
  final_url: string | null;
  status_code: number | null;
  schedule_id: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export function scanView(row: AuditScan): ScanView {
  return {
    id: row.id,
    org_id: row.teamId,
    project_id: row.projectId,
    target_url: row.targetUrl,
    status: row.status,
    score: row.score,
    grade: row.grade,
    tests: row.tests ?? [],
    error: row.error,
    final_url: row.finalUrl,
    status_code: row.statusCode,
    schedule_id: row.scheduleId,
    created_at: row.createdAt,
    started_at: row.startedAt,
    finished_at: row.finishedAt,
  };
}

/**
 * The target as stored and compared (the URL parser's form: host lower-cased, default port
 * dropped, a path of at least `/`), or 422 `invalid_params` on `field`: not a URL, another
 * scheme, credentials, a forbidden address or name (the SSRF guard), APP_URL's host.
 */
export function normalizeTarget(env: Env, raw: string, field = "target_url"): string {
  const refuse = (message: string): never => {
    throw ApiError.validation({ [field]: [message] });
  };
  const text = raw.trim();
  if (!text) refuse("is required");
  if (text.length > TARGET_URL_MAX) refuse(`must be at most ${TARGET_URL_MAX} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse("must be a valid URL");
  }
  url.hash = "";
  const normalized = url.toString();
  const problem = targetProblem(env, normalized);
  if (problem) refuse(problem);
  return normalized;
}

/** The scan row of a new scan of `target` (already normalised). */
export function newScanRow(scope: Scope, target: string, extra: Partial<AuditScan> = {}): AuditScan {
  const at = nowIso();
  return {
    id: crypto.randomUUID(),
    teamId: scope.teamId,
    projectId: scope.projectId,
    targetUrl: target,
    status: "queued",
    score: null,
    grade: null,
    tests: null,
    error: null,
    finalUrl: null,
    statusCode: null,
    scheduleId: null,
    scheduleSlot: null,
    attempts: 0,
    leaseUntil: null,
    createdAt: at,
    updatedAt: at,
    startedAt: null,
    finishedAt: null,
    ...extra,
  };
}

/** The newest scan of the target in the project since `since`. */
async function recentScan(env: Env, scope: Scope, target: string, since: string): Promise<AuditScan | undefined> {
  const [row] = await getDb(env.DB)
    .select()
    .from(auditScans)
    .where(and(eq(auditScans.teamId, scope.teamId), eq(auditScans.projectId, scope.projectId), eq(auditScans.targetUrl, target)))
    .orderBy(desc(auditScans.createdAt), desc(auditScans.id))
    .limit(1);
  return row && row.createdAt >= since ? row : undefined;
}

/**
 * Starts a scan through the accept step: stored `queued` and queued, unless the project scanned
 * the same target within SAME_TARGET_WINDOW_MS, which answers that scan instead (`created`
 * false: 200, not 202). The check and the insert are one statement, so parallel requests store
 * one scan. A refused queue message is logged; the minute sweep queues the scan again.
 */
export async function startScan(env: Env, scope: Scope, rawTarget: string): Promise<{ scan: ScanView; created: boolean }> {
  const target = normalizeTarget(env, rawTarget);
  const row = newScanRow(scope, target);
  const since = new Date(nowMs() - SAME_TARGET_WINDOW_MS).toISOString();
  const stored = await accept({
    name: "audit scan",
    env,
    store: async () => {
      if (await insertScanUnlessRecent(env.DB, row, since)) return { row, created: true };
      const recent = await recentScan(env, scope, target, since);
      if (!recent) throw new Error("no scan stored and none recent");
      return { row: recent, created: false };
    },
    unavailable: () => new ApiError("unavailable", "The scan could not be stored; retry later"),
    enqueue: (s) => (s.created ? env.SCAN_QUEUE.send({ scan_id: s.row.id, team_id: s.row.teamId } satisfies ScanMessage) : Promise.resolve()),
  });
  return { scan: scanView(stored.row), created: stored.created };
}

export async function getScan(env: Env, scope: Scope, id: string): Promise<ScanView> {
  const [row] = await getDb(env.DB)
    .select()
    .from(auditScans)
    .where(and(eq(auditScans.id, id), eq(auditScans.teamId, scope.teamId), eq(auditScans.projectId, scope.projectId)))
    .limit(1);
  return scanView(orNotFound(row));
}

/**
 * A page of the project's scans, newest first, optionally of one target (compared in its
 * normalised form; a filter that is no URL matches nothing).
 */
export async function listScans(
  env: Env,
  scope: Scope,
  query: { target_url?: string; page: number; per_page: number },
): Promise<{ items: ScanView[]; total: number }> {
  let target: string | undefined;
  if (query.target_url !== undefined) {
    try {
      const url = new URL(query.target_url.trim());
      url.hash = "";
      target = url.toString();
    } catch {
      target = query.target_url;
    }
  }
  const db = getDb(env.DB);
  const where = and(
    eq(auditScans.teamId, scope.teamId),
    eq(auditScans.projectId, scope.projectId),
    target !== undefined ? eq(auditScans.targetUrl, target) : undefined,
  );
  const [rows, [{ total }]] = await db.batch([
    db
      .select()
      .from(auditScans)
      .where(where)
      .orderBy(desc(auditScans.createdAt), desc(auditScans.id))
      .limit(query.per_page)
      .offset((query.page - 1) * query.per_page),
    db.select({ total: count() }).from(auditScans).where(where),
  ]);
  return { items: rows.map(scanView), total };
}
