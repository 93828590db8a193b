// Shared set-up of the audit tests: paths, findings, exports driven through the real consumer.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { call, json, setupTeam, type TestTeam } from "../../helpers/api";
import { processExport } from "../../../src/products/audit/audit.consumer";
import { eq } from "drizzle-orm";
import { getDb } from "../../../src/db/client";
import { auditReports, type AuditReport } from "../../../src/db/schema/audit";
import { isoSeconds } from "../../../src/platform/clock";
import { emptySummary } from "../../../src/products/audit/audit-summary.service";

export const auditBase = (team: TestTeam, project = "web-app") => `orgs/${team.teamId}/projects/${project}/audit`;

export async function newTeam(options: Parameters<typeof setupTeam>[0] = {}) {
  const team = await setupTeam(options);
  return { ...team, base: auditBase(team) };
}

export async function createFinding(key: string, base: string, body: Record<string, unknown>) {
  const res = await call("POST", `${base}/findings`, { key, body });
  expect(res.status).toBe(201);
  return (await json(res)).data as { id: string; status: string; priority_score: number };
}

export async function patchFinding(key: string, base: string, id: string, body: Record<string, unknown>) {
  const res = await call("PATCH", `${base}/findings/${id}`, { key, body });
  expect(res.status).toBe(200);
  return (await json(res)).data;
}

/** POST /export, then the export consumer run on its message (as the queue would deliver it). */
export async function exportReport(key: string, base: string, teamId: string, body: Record<string, unknown> = {}) {
  const res = await call("POST", `${base}/reports/export`, { key, body });
  expect(res.status).toBe(202);
  const record = (await json(res)).data;
  expect(record.status).toBe("queued");
  // The queue may deliver the same message in the background: whichever claims it first renders.
  await processExport(env, { report_id: record.id, team_id: teamId });
  await waitForStatus(key, base, record.id, "exported");
  return record as { id: string; format: string };
}

/** Polls a report until it reaches `status` (the queue delivers in the background). */
export async function waitForStatus(key: string, base: string, id: string, status: string, timeoutMs = 8000) {
  const started = Date.now();
  for (;;) {
    const res = await call("GET", `${base}/reports/${id}`, { key });
    const body = await json(res);
    if (body.data?.status === status) return body.data;
    if (Date.now() - started > timeoutMs) throw new Error(`report ${id} stayed ${body.data?.status}, expected ${status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A report row written directly at `at`, so no queue message exists for it (or races the test). */
export async function insertReport(teamId: string, at: number, fields: Partial<AuditReport> = {}): Promise<AuditReport> {
  const stamp = isoSeconds(at);
  const row: AuditReport = {
    id: crypto.randomUUID(),
    teamId,
    projectId: "web-app",
    periodStart: "2026-02-23",
    periodEnd: "2026-03-01",
    format: "csv",
    status: "queued",
    snapshot: emptySummary(),
    placeholder: false,
    objectKey: null,
    attempts: 0,
    leaseUntil: null,
    shareVersion: 0,
    exportedAt: null,
    sharedAt: null,
    createdAt: stamp,
    updatedAt: stamp,
    ...fields,
  };
  await getDb(env.DB).insert(auditReports).values(row);
  return row;
}

/** A report row as stored. */
export const loadReport = async (id: string) => (await getDb(env.DB).select().from(auditReports).where(eq(auditReports.id, id)))[0];
