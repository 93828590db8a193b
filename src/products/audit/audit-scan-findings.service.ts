// Findings from a finished scan: one finding per project, target and test (a unique index holds
// it, whoever opened it: a scan never duplicates a finding a person recorded for the same target
// and test). A failing test opens one (`source: "scan"`, `priority_score` = |modifier|, status
// `new`) or keeps the open one; a passing test closes an open one (`resolved`, with a passed
// verification); a `resolved` one failing again is reopened (`new`), which the audit product's own
// rule makes a regression (a non-terminal finding that has been terminal); a `dismissed` one (a
// person's decision) is never reopened nor closed. Every change writes the finding's history row
// and the summary deltas (audit-summary.service.ts) in the same D1 batch, each statement guarded by
// the finding's version as read, exactly like a PATCH: a scan that raced another change of the
// finding changes nothing of it, and a scan processed twice applies its changes once.
import { and, eq, isNotNull } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { auditFindings, type AuditFinding, type ScanTestResult } from "../../db/schema/audit";
import { findingDelta, isTerminal, verificationDelta, type Scope } from "./audit-summary.service";
import { guardedFindingUpdate, prepared, summaryStatements } from "./audit.queries";
import { scanHistoryInsert, scanVerificationInsert } from "./audit-scan.queries";
import { TEST_TITLES, type ScanTestName } from "./audit-scan.results";

/** The title of a scan's finding (500 characters at most, as every title). */
export function scanFindingTitle(test: ScanTestResult, target: string): string {
  const title = TEST_TITLES[test.name as ScanTestName] ?? test.name;
  return `${title} failed on ${target}: ${test.result}`.slice(0, 500);
}

/** The project's findings about `target` that name a test, by test. */
export async function findingsOfTarget(env: Env, scope: Scope, target: string): Promise<Map<string, AuditFinding>> {
  const rows = await getDb(env.DB)
    .select()
    .from(auditFindings)
    .where(
      and(
        eq(auditFindings.teamId, scope.teamId),
        eq(auditFindings.projectId, scope.projectId),
        eq(auditFindings.targetUrl, target),
        isNotNull(auditFindings.test),
      ),
    );
  return new Map(rows.map((row) => [row.test!, row]));
}

/** What a scan does to the finding of one test. */
export type FindingAction = "open" | "keep" | "close" | "reopen" | "none";

/** The rule, as a pure function of the test and the finding found (if any). */
export function findingAction(test: Pick<ScanTestResult, "pass">, finding: Pick<AuditFinding, "status"> | undefined): FindingAction {
  if (!test.pass) {
    if (!finding) return "open";
    if (finding.status === "dismissed") return "none";
    return isTerminal(finding.status) ? "reopen" : "keep";
  }
  if (!finding || isTerminal(finding.status)) return "none";
  return "close";
}

/**
 * The statements applying a scan's tests to the project's findings of its target, for the batch
 * that finishes the scan (their order inside it matters: each finding's guarded statements come
 * before the update that moves its version). `existing` is what findingsOfTarget read.
 */
export function scanFindingStatements(
  env: Env,
  scope: Scope,
  scan: { id: string; targetUrl: string },
  tests: ScanTestResult[],
  existing: Map<string, AuditFinding>,
  at: string,
): D1PreparedStatement[] {
  const d1 = env.DB;
  const db = getDb(d1);
  const statements: D1PreparedStatement[] = [];
  for (const test of tests) {
    const finding = existing.get(test.name);
    const action = findingAction(test, finding);
    if (action === "open") {
      const row: AuditFinding = {
        id: crypto.randomUUID(),
        teamId: scope.teamId,
        projectId: scope.projectId,
        title: scanFindingTitle(test, scan.targetUrl),
        priorityScore: Math.abs(test.score_modifier),
        status: "new",
        everTerminal: false,
        version: 0,
        source: "scan",
        targetUrl: scan.targetUrl,
        test: test.name,
        createdAt: at,
        updatedAt: at,
      };
      // A finding another scan opened meanwhile wins the unique index: this insert does nothing,
      // and the statements after it, guarded by this new id, do nothing either.
      const guard = { id: row.id, teamId: scope.teamId, projectId: scope.projectId, version: 0 };
      statements.push(
        prepared(d1, db.insert(auditFindings).values(row).onConflictDoNothing()),
        scanHistoryInsert(d1, guard, { from: null, to: row.status, priorityScore: row.priorityScore, at }),
        ...summaryStatements(d1, scope, findingDelta(null, row, at), { findingId: row.id, version: 0 }),
      );
      continue;
    }
    if (!finding || (action !== "close" && action !== "reopen")) continue;
    const status = action === "close" ? "resolved" : "new";
    const next: AuditFinding = { ...finding, status, everTerminal: true, version: finding.version + 1, updatedAt: at };
    const guard = { id: finding.id, teamId: scope.teamId, projectId: scope.projectId, version: finding.version };
    statements.push(
      scanHistoryInsert(d1, guard, { from: finding.status, to: status, priorityScore: finding.priorityScore, at }),
      ...summaryStatements(d1, scope, findingDelta(finding, next, at), { findingId: finding.id, version: finding.version }),
    );
    if (action === "close") {
      statements.push(
        scanVerificationInsert(d1, guard, { id: crypto.randomUUID(), note: `Scan ${scan.id}: ${test.name} passed (${test.result})`.slice(0, 2000), at }),
        ...summaryStatements(d1, scope, verificationDelta("passed", at), { findingId: finding.id, version: finding.version }),
      );
    }
    statements.push(
      guardedFindingUpdate(d1, {
        id: finding.id,
        scope,
        version: finding.version,
        fromStatus: finding.status,
        status,
        title: finding.title,
        priorityScore: finding.priorityScore,
        everTerminal: true,
        at,
      }),
    );
  }
  return statements;
}
