// Audit findings over the database: create, list, read and PATCH a finding, with its status
// history and verifications, each write moving the project's summary counters in the same D1
// batch (the deltas are audit-summary.service.ts', the statements audit.queries.ts').
// Never sees Hono's context: routes pass the env, the scope and parsed inputs.
import { and, asc, eq } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { auditFindingHistory, auditFindings, auditVerifications, type AuditFinding, type FindingSource, type FindingStatus } from "../../db/schema/audit";
import { nowIso } from "../../platform/clock";
import { isUniqueViolation } from "../../platform/db-errors";
import { ApiError } from "../../platform/errors";
import { orNotFound } from "../../platform/tenancy";
import { findingDelta, isTerminal, verificationDelta, type Scope } from "./audit-summary.service";
import { normalizeTarget } from "./audit-scan.service";
import { guardedFindingUpdate, guardedHistoryInsert, prepared, projectPage, projectRow, summaryStatements } from "./audit.queries";

export interface FindingView {
  id: string;
  org_id: string;
  project_id: string;
  title: string;
  priority_score: number;
  status: FindingStatus;
  regression: boolean;
  source: FindingSource;
  target_url: string | null;
  test: string | null;
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
    source: row.source,
    target_url: row.targetUrl,
    test: row.test,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export async function createFinding(
  env: Env,
  scope: Scope,
  input: { title: string; priority_score: number; status: FindingStatus; target_url?: string; test?: string },
): Promise<FindingView> {
  // A finding about a scanned target and test is the one a scan keeps, closes and reopens (never a copy).
  const targetUrl = input.target_url === undefined ? null : normalizeTarget(env, input.target_url);
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
    source: "manual",
    targetUrl,
    test: targetUrl === null ? null : (input.test ?? null),
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
  ]).catch((error) => {
    if (isUniqueViolation(error)) throw ApiError.validation({ test: ["this project already has a finding for this target and test"] });
    throw error;
  });
  return findingView(row);
}

export async function listFindings(
  env: Env,
  scope: Scope,
  query: { status?: FindingStatus; page: number; per_page: number },
): Promise<{ items: FindingView[]; total: number }> {
  const { rows, total } = await projectPage(env, auditFindings, scope, query);
  return { items: rows.map(findingView), total };
}

export async function getFinding(env: Env, scope: Scope, id: string) {
  const db = getDb(env.DB);
  const [found, history, verifications] = await db.batch([
    db
      .select()
      .from(auditFindings)
      .where(projectRow(auditFindings, scope, id))
      .limit(1),
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

export async function updateFinding(env: Env, scope: Scope, id: string, patch: { title?: string; priority_score?: number; status?: FindingStatus }) {
  const db = getDb(env.DB);
  const [current] = await db
    .select()
    .from(auditFindings)
    .where(projectRow(auditFindings, scope, id))
    .limit(1);
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
  const write = {
    id,
    scope,
    version: row.version,
    fromStatus: row.status,
    status: next.status,
    title: next.title,
    priorityScore: next.priorityScore,
    everTerminal: next.everTerminal,
    at,
  };
  const statements = [
    ...(changed
      ? [guardedHistoryInsert(env.DB, write), ...summaryStatements(env.DB, scope, findingDelta(row, next, at), { findingId: id, version: row.version })]
      : []),
    guardedFindingUpdate(env.DB, write),
  ];
  const results = await env.DB.batch(statements);
  if ((results[results.length - 1].meta.changes ?? 0) === 0) {
    throw new ApiError("conflict", "The finding changed concurrently; retry the request");
  }
  return getFinding(env, scope, id);
}

function verificationView(row: typeof auditVerifications.$inferSelect) {
  return { id: row.id, finding_id: row.findingId, result: row.result, note: row.note, created_at: row.createdAt };
}

export async function addVerification(env: Env, scope: Scope, findingId: string, input: { result: "passed" | "failed"; note?: string }) {
  const db = getDb(env.DB);
  const [finding] = await db
    .select({ id: auditFindings.id })
    .from(auditFindings)
    .where(projectRow(auditFindings, scope, findingId))
    .limit(1);
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
