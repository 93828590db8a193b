import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import { getDb } from "../../../src/db/client";
import { auditReports, type AuditReport } from "../../../src/db/schema/audit";
import { nowMs, setClock } from "../../../src/platform/clock";
import { CLAIM_LEASE_MS, reportExportConsumer, processExport } from "../../../src/products/audit/audit.consumer";
import type { Env } from "../../../src/env";
import { setupTeam } from "../../helpers/api";
import { usedOf } from "../../helpers/usage";
import { insertReport as insertReportAt, loadReport } from "./audit-helpers";

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

/** A report row written directly now, so no queue message races the test. */
const insertReport = (teamId: string, fields: Partial<AuditReport> = {}) =>
  insertReportAt(teamId, nowMs(), { projectId: "p1", periodStart: "2026-01-01", periodEnd: "2026-01-07", format: "json", ...fields });

const load = loadReport;

/** The env with an R2 binding whose put() is counted (and optionally fails). */
function countingEnv(fail = false): { env: Env; puts: string[] } {
  const puts: string[] = [];
  const reports = {
    put: async (key: string, value: string, options?: R2PutOptions) => {
      puts.push(key);
      if (fail) throw new Error("R2 unavailable");
      return env.REPORTS.put(key, value, options);
    },
    get: (key: string) => env.REPORTS.get(key),
  } as unknown as R2Bucket;
  return { env: { ...env, REPORTS: reports } as Env, puts };
}

function fakeMessage(body: unknown, attempts = 1) {
  return { id: crypto.randomUUID(), body, attempts, timestamp: new Date(), ack: vi.fn(), retry: vi.fn() };
}

describe("report-export consumer", () => {
  it("exports once: a redelivered message is acknowledged without rendering again", async () => {
    const team = await setupTeam();
    const row = await insertReport(team.teamId, { format: "csv" });
    const counting = countingEnv();
    expect(await processExport(counting.env, { report_id: row.id, team_id: team.teamId })).toBe("exported");
    const exported = await load(row.id);
    expect(exported.status).toBe("exported");
    expect(exported.objectKey).toBe(`audit/${team.teamId}/p1/${row.id}.csv`);
    expect(exported.exportedAt).toMatch(/Z$/);

    const redelivered = fakeMessage({ report_id: row.id, team_id: team.teamId }, 2);
    await reportExportConsumer.consume({ queue: "report-export", messages: [redelivered] } as unknown as MessageBatch<unknown>, counting.env);
    expect(redelivered.ack).toHaveBeenCalledOnce();
    expect(redelivered.retry).not.toHaveBeenCalled();
    expect(counting.puts).toHaveLength(1);
    expect((await load(row.id)).exportedAt).toBe(exported.exportedAt);
  });

  it("does not touch a report of another team named in the message", async () => {
    const team = await setupTeam();
    const other = await setupTeam();
    const row = await insertReport(team.teamId);
    expect(await processExport(env, { report_id: row.id, team_id: other.teamId })).toBe("missing");
    expect((await load(row.id)).status).toBe("queued");
  });

  it("retries later while another delivery holds a fresh claim, and takes over a stale one", async () => {
    const team = await setupTeam();
    setClock(new Date("2026-02-01T12:00:00Z"));
    const row = await insertReport(team.teamId, { status: "exporting", leaseUntil: Date.parse("2026-02-01T11:59:30Z") + CLAIM_LEASE_MS });
    const counting = countingEnv();
    const busy = fakeMessage({ report_id: row.id, team_id: team.teamId });
    await reportExportConsumer.consume({ queue: "report-export", messages: [busy] } as unknown as MessageBatch<unknown>, counting.env);
    expect(busy.retry).toHaveBeenCalledWith({ delaySeconds: 10 });
    expect(busy.ack).not.toHaveBeenCalled();
    expect(counting.puts).toHaveLength(0);

    setClock(new Date("2026-02-01T12:02:00Z")); // the claim is now 2.5 minutes old
    expect(await processExport(counting.env, { report_id: row.id, team_id: team.teamId })).toBe("exported");
    expect(counting.puts).toHaveLength(1);
    expect(await load(row.id)).toMatchObject({ status: "exported", exportedAt: "2026-02-01T12:02:00Z" });
  });

  it("marks the report failed (not stuck in exporting) and logs when R2 refuses the write", async () => {
    const team = await setupTeam();
    const row = await insertReport(team.teamId, { format: "pdf" });
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const failing = countingEnv(true);
    const message = fakeMessage({ report_id: row.id, team_id: team.teamId });
    await reportExportConsumer.consume({ queue: "report-export", messages: [message] } as unknown as MessageBatch<unknown>, failing.env);
    expect(message.ack).toHaveBeenCalledOnce();
    expect(await load(row.id)).toMatchObject({ status: "failed", objectKey: null, exportedAt: null });
    expect(errors.mock.calls.some(([line]) => String(line).includes("audit export failed") && String(line).includes(row.id))).toBe(true);
    // A later redelivery leaves the failed record alone.
    expect(await processExport(failing.env, { report_id: row.id, team_id: team.teamId })).toBe("already_done");
    expect(failing.puts).toHaveLength(1);
  });

  it("acknowledges malformed messages with a log line", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const message = fakeMessage({ nope: true });
    await reportExportConsumer.consume({ queue: "report-export", messages: [message] } as unknown as MessageBatch<unknown>, env);
    expect(message.ack).toHaveBeenCalledOnce();
    expect(errors).toHaveBeenCalled();
  });
});

describe("export enqueue failure", () => {
  it("answers the export (stored `queued`, the unit kept), logs the refusal, and the minute sweep queues it within two minutes", async () => {
    const { startExport } = await import("../../../src/products/audit/audit.service");
    const { requeueStuckExports } = await import("../../../src/products/audit/audit.cron");
    const team = await setupTeam();
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const broken = {
      ...env,
      EXPORT_QUEUE: {
        send: async () => {
          throw new Error("queue down");
        },
      },
    } as unknown as Env;
    const owner = { teamId: team.teamId, plan: "pro", ownerEmail: null };
    const start = nowMs();
    setClock(start);
    const view = await startExport(broken, owner, { teamId: team.teamId, projectId: "p1" }, { format: "json" });
    expect(view.status).toBe("queued");
    expect(await load(view.id)).toMatchObject({ status: "queued", attempts: 0, leaseUntil: null });
    expect(await usedOf(team.teamId, "ai")).toBe(1);
    expect(errors.mock.calls.map(([line]) => String(line)).some((line) => line.includes("audit export: enqueue failed"))).toBe(true);

    // Not yet at one minute; past it, the sweep sends the message the accept could not.
    const sent: unknown[] = [];
    const recording = {
      ...env,
      EXPORT_QUEUE: { sendBatch: async (messages: Array<{ body: unknown }>) => void sent.push(...messages.map((m) => m.body)) },
    } as unknown as Env;
    setClock(start + 60_000);
    await requeueStuckExports(recording);
    expect(sent).not.toContainEqual({ report_id: view.id, team_id: team.teamId });
    setClock(start + 61_000);
    await requeueStuckExports(recording);
    expect(sent).toContainEqual({ report_id: view.id, team_id: team.teamId });
    expect(await processExport(env, { report_id: view.id, team_id: team.teamId })).toBe("exported");
  });

  it("a record that cannot be stored gives the unit back and answers 503", async () => {
    const { startExport } = await import("../../../src/products/audit/audit.service");
    const team = await setupTeam();
    vi.spyOn(console, "error").mockImplementation(() => {});
    const trigger = `fail_export_${team.teamId.replace(/-/g, "")}`;
    await env.DB.exec(
      `CREATE TRIGGER ${trigger} BEFORE INSERT ON audit_reports WHEN NEW.team_id = '${team.teamId}' BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`,
    );
    try {
      const owner = { teamId: team.teamId, plan: "pro", ownerEmail: null };
      const error = await startExport(env, owner, { teamId: team.teamId, projectId: "p1" }, { format: "json" }).catch((e) => e);
      expect({ status: error.status, message: error.message }).toEqual({ status: 503, message: "The export could not be stored; retry later" });
    } finally {
      await env.DB.exec(`DROP TRIGGER ${trigger}`);
    }
    expect(await getDb(env.DB).select().from(auditReports).where(eq(auditReports.teamId, team.teamId))).toEqual([]);
    expect(await usedOf(team.teamId, "ai")).toBe(0);
  });
});
