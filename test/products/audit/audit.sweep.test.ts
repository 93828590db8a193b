// The sweep (every minute) of exports whose queue message was lost: a record `queued` for more than
// 15 minutes (1 minute when it was never attempted: its accept's enqueue failed), or `exporting`
// under a claim older than the consumer's lease, is re-queued (oldest
// first, bounded per run); the consumer's claim keeps the late original message and the swept one
// from rendering twice; a re-queued record waits a stale period before it is sent again, whether
// the queue took the batch or refused it.
import { createScheduledController, env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../../src/index";
import type { Env } from "../../../src/env";
import { isoSeconds, setClock } from "../../../src/platform/clock";
import { insertReport, loadReport } from "./audit-helpers";
import { CLAIM_LEASE_MS, processExport, reportExportConsumer } from "../../../src/products/audit/audit.consumer";
import type { ExportMessage } from "../../../src/products/audit/audit.messages";
import { QUEUED_STUCK_AFTER_MS, requeueStuckExports } from "../../../src/products/audit/audit.cron";
import { setupTeam } from "../../helpers/api";
import { playedQueue } from "../../helpers/queues";
import { newTeam, waitForStatus } from "./audit-helpers";

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

const T0 = Date.parse("2026-03-01T12:00:00Z");
const MINUTE = 60_000;

const load = loadReport;

/** An EXPORT_QUEUE that records what is sent (or refuses everything), and an env using it. */
function queueEnv(fail = false) {
  const sent: ExportMessage[] = [];
  const queue = {
    send: vi.fn(async () => {
      throw new Error("not used");
    }),
    sendBatch: vi.fn(async (messages: Array<{ body: ExportMessage }>) => {
      if (fail) throw new Error("queue down");
      sent.push(...messages.map((m) => m.body));
    }),
  };
  return { env: { ...env, EXPORT_QUEUE: queue } as unknown as Env, queue, sent };
}

/** The env with an R2 binding whose put() is counted. */
function countingEnv(): { env: Env; puts: string[] } {
  const puts: string[] = [];
  const reports = {
    put: async (key: string, value: string, options?: R2PutOptions) => {
      puts.push(key);
      return env.REPORTS.put(key, value, options);
    },
    get: (key: string) => env.REPORTS.get(key),
  } as unknown as R2Bucket;
  return { env: { ...env, REPORTS: reports } as Env, puts };
}

function fakeBatch(body: unknown, attempts = 1) {
  const message = { id: crypto.randomUUID(), timestamp: new Date(), body, attempts, ack: vi.fn(), retry: vi.fn() };
  return { batch: { queue: "report-export", messages: [message] } as unknown as MessageBatch<unknown>, message };
}

const everyMinute = (at: number) => createScheduledController({ cron: "* * * * *", scheduledTime: at });
const ofTeam = (sent: ExportMessage[], teamId: string) => sent.filter((m) => m.team_id === teamId).map((m) => m.report_id);

describe("audit export sweep", () => {
  it("the minute cron re-queues only queued records older than 15 minutes (1 minute when never attempted) and exporting ones with a dead claim", async () => {
    const team = await setupTeam();
    // Queued again after an attempt (attempts 1): lost after 15 minutes.
    const queuedOld = await insertReport(team.teamId, T0, { attempts: 1 });
    const queuedYoung = await insertReport(team.teamId, T0 + 2 * MINUTE, { attempts: 1 });
    // Never attempted (its accept's enqueue failed): lost after 1 minute.
    const unattempted = await insertReport(team.teamId, T0 + 13.5 * MINUTE);
    const deadClaim = await insertReport(team.teamId, T0, {
      status: "exporting",
      leaseUntil: T0 + 13 * MINUTE + CLAIM_LEASE_MS,
      updatedAt: isoSeconds(T0 + 13 * MINUTE),
    });
    const liveClaim = await insertReport(team.teamId, T0, {
      status: "exporting",
      leaseUntil: T0 + 15 * MINUTE + CLAIM_LEASE_MS,
      updatedAt: isoSeconds(T0 + 15 * MINUTE),
    });
    const settled = await Promise.all((["exported", "shared", "failed"] as const).map((status) => insertReport(team.teamId, T0 - 60 * MINUTE, { status })));

    // At T0 + 14 min nothing is stale yet: queued for 14 minutes, the claim 1 minute old, the
    // never-attempted record 30 seconds old.
    const early = queueEnv();
    setClock(T0 + 14 * MINUTE);
    await worker.scheduled(everyMinute(T0 + 14 * MINUTE), early.env);
    expect(ofTeam(early.sent, team.teamId)).toEqual([]);

    // At T0 + 16 min: the 16-minute-old queued record, the 3-minute-old claim and the 2.5-minute-old
    // never-attempted record (which are picked first when a run is bounded: the next test).
    const recorder = queueEnv();
    setClock(T0 + 16 * MINUTE);
    await worker.scheduled(everyMinute(T0 + 16 * MINUTE), recorder.env);
    const byId = (a: ExportMessage, b: ExportMessage) => a.report_id.localeCompare(b.report_id);
    expect(recorder.sent.filter((m) => m.team_id === team.teamId).sort(byId)).toEqual(
      [queuedOld, deadClaim, unattempted].map((row) => ({ report_id: row.id, team_id: team.teamId })).sort(byId),
    );
    // Each re-queued record waits `queued` again from now, its dead claim given up (the consumer's
    // claim still decides who renders); the others are untouched.
    const now = isoSeconds(T0 + 16 * MINUTE);
    expect(await load(queuedOld.id)).toMatchObject({ status: "queued", updatedAt: now, leaseUntil: null, attempts: 1 });
    expect(await load(deadClaim.id)).toMatchObject({ status: "queued", updatedAt: now, leaseUntil: null });
    expect(await load(unattempted.id)).toMatchObject({ status: "queued", updatedAt: now, attempts: 0 });
    for (const row of [queuedYoung, liveClaim, ...settled]) {
      expect(ofTeam(recorder.sent, team.teamId)).not.toContain(row.id);
      expect(await load(row.id)).toMatchObject({ status: row.status, updatedAt: row.updatedAt, leaseUntil: row.leaseUntil });
    }

    // The next minute sends none of them again (no copy of every lost record every minute); a
    // record tried before is lost again a stale period later if no consumer came.
    const next = queueEnv();
    setClock(T0 + 17 * MINUTE);
    await worker.scheduled(everyMinute(T0 + 17 * MINUTE), next.env);
    for (const row of [queuedOld, deadClaim, unattempted]) expect(ofTeam(next.sent, team.teamId)).not.toContain(row.id);
    const [beforeStale, afterStale] = [queueEnv(), queueEnv()];
    setClock(T0 + 16 * MINUTE + QUEUED_STUCK_AFTER_MS);
    await requeueStuckExports(beforeStale.env);
    expect(ofTeam(beforeStale.sent, team.teamId)).not.toContain(queuedOld.id);
    setClock(T0 + 16 * MINUTE + QUEUED_STUCK_AFTER_MS + 1000);
    await requeueStuckExports(afterStale.env);
    expect(ofTeam(afterStale.sent, team.teamId)).toContain(queuedOld.id);
  });

  it("a swept message and the late original render once, one after the other or at the same time", async () => {
    const team = await setupTeam();
    const sequential = await insertReport(team.teamId, T0);
    const concurrent = await insertReport(team.teamId, T0);
    setClock(T0 + 20 * MINUTE);
    const recorder = queueEnv();
    await requeueStuckExports(recorder.env);
    expect(ofTeam(recorder.sent, team.teamId).sort()).toEqual([sequential.id, concurrent.id].sort());

    const counting = countingEnv();
    const message = { report_id: sequential.id, team_id: team.teamId };
    const swept = fakeBatch(message);
    await reportExportConsumer.consume(swept.batch, counting.env);
    expect(swept.message.ack).toHaveBeenCalledOnce();
    expect(await load(sequential.id)).toMatchObject({ status: "exported", exportedAt: isoSeconds(T0 + 20 * MINUTE) });
    // The original message was only late: it is acknowledged without rendering.
    const late = fakeBatch(message);
    await reportExportConsumer.consume(late.batch, counting.env);
    expect(late.message.ack).toHaveBeenCalledOnce();
    expect(late.message.retry).not.toHaveBeenCalled();
    expect(counting.puts).toEqual([`audit/${team.teamId}/web-app/${sequential.id}.csv`]);

    // Both copies delivered at once: the conditional claim lets exactly one render.
    const both = await Promise.all([
      processExport(counting.env, { report_id: concurrent.id, team_id: team.teamId }),
      processExport(counting.env, { report_id: concurrent.id, team_id: team.teamId }),
    ]);
    expect(both.filter((outcome) => outcome === "exported")).toHaveLength(1);
    expect(both.filter((outcome) => outcome !== "exported")[0]).toMatch(/^(busy|already_done)$/);
    expect(counting.puts.filter((key) => key.includes(concurrent.id))).toHaveLength(1);
    expect((await load(concurrent.id)).status).toBe("exported");

    // Settled records are never swept again.
    setClock(T0 + 3 * 60 * MINUTE);
    const later = queueEnv();
    await requeueStuckExports(later.env);
    expect(ofTeam(later.sent, team.teamId)).toEqual([]);
  });

  it("a dead claim is taken over by the swept message; the late original then renders nothing", async () => {
    const team = await setupTeam();
    const row = await insertReport(team.teamId, T0, { status: "exporting", leaseUntil: T0 + CLAIM_LEASE_MS, updatedAt: isoSeconds(T0) });
    // Just inside the lease the claim is still live: not swept.
    setClock(T0 + CLAIM_LEASE_MS);
    const early = queueEnv();
    await requeueStuckExports(early.env);
    expect(ofTeam(early.sent, team.teamId)).toEqual([]);

    setClock(T0 + CLAIM_LEASE_MS + 1000);
    const recorder = queueEnv();
    await requeueStuckExports(recorder.env);
    expect(ofTeam(recorder.sent, team.teamId)).toEqual([row.id]);
    const counting = countingEnv();
    expect(await processExport(counting.env, recorder.sent.find((m) => m.report_id === row.id)!)).toBe("exported");
    expect(await load(row.id)).toMatchObject({ status: "exported", attempts: 1, leaseUntil: null, updatedAt: isoSeconds(T0 + CLAIM_LEASE_MS + 1000) });
    expect(await processExport(counting.env, { report_id: row.id, team_id: team.teamId })).toBe("already_done");
    expect(counting.puts).toHaveLength(1);
  });

  it("is bounded per run and takes the oldest first; the rest go on the next run", async () => {
    const team = await setupTeam();
    // Older than anything else in this file's database, so they are the oldest overall.
    const past = Date.parse("2020-01-01T00:00:00Z");
    const c = await insertReport(team.teamId, past + 2 * MINUTE);
    const a = await insertReport(team.teamId, past);
    const b = await insertReport(team.teamId, past + MINUTE, {
      status: "exporting",
      leaseUntil: past + MINUTE + CLAIM_LEASE_MS,
      updatedAt: isoSeconds(past + MINUTE),
    });
    setClock(T0);
    const first = queueEnv();
    expect(await requeueStuckExports(first.env, 2)).toEqual({ requeued: 2, failed: 0 });
    expect(first.sent.map((m) => m.report_id)).toEqual([a.id, b.id]);
    // Messages go in batches (one sendBatch per 100 records), never one send per record.
    expect(first.queue.sendBatch).toHaveBeenCalledOnce();
    expect(first.queue.send).not.toHaveBeenCalled();

    // The first two are consumed; the next run picks up the third.
    await processExport(env, first.sent[0]);
    await processExport(env, first.sent[1]);
    const second = queueEnv();
    await requeueStuckExports(second.env, 2);
    expect(ofTeam(second.sent, team.teamId)[0]).toBe(c.id);
    expect(ofTeam(second.sent, team.teamId)).not.toContain(a.id);
  });

  it("a queue that refuses the batch is logged, changes nothing, and the next run re-queues", async () => {
    const team = await setupTeam();
    const row = await insertReport(team.teamId, T0);
    setClock(T0 + QUEUED_STUCK_AFTER_MS + MINUTE);
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const broken = queueEnv(true);
    const result = await requeueStuckExports(broken.env);
    expect(result.requeued).toBe(0);
    expect(result.failed).toBeGreaterThanOrEqual(1);
    expect(broken.queue.sendBatch).toHaveBeenCalled();
    expect(errors.mock.calls.some(([line]) => String(line).includes("audit export re-queue failed"))).toBe(true);
    // Marked like a sent one: the record waits a stale period before a run sends it again.
    expect(await load(row.id)).toMatchObject({ status: "queued", updatedAt: isoSeconds(T0 + QUEUED_STUCK_AFTER_MS + MINUTE), leaseUntil: null });

    // Through the cron, the failure does not escape the scheduled handler either.
    await expect(worker.scheduled(everyMinute(T0 + QUEUED_STUCK_AFTER_MS + MINUTE), broken.env)).resolves.toBeUndefined();

    // One hour later the queue is back: the record goes out.
    setClock(T0 + QUEUED_STUCK_AFTER_MS + 61 * MINUTE);
    const recorder = queueEnv();
    await requeueStuckExports(recorder.env);
    expect(ofTeam(recorder.sent, team.teamId)).toEqual([row.id]);
  });

  // The queue is played (test/helpers/queues.ts): the swept message goes to the Worker's own queue
  // handler at once; audit.queue.test.ts goes through the real queue end to end.
  it("a swept record is exported through the Worker's cron, queue handler and consumer", async () => {
    const team = await newTeam();
    const start = Date.now();
    const row = await insertReport(team.teamId, start, { format: "json" });
    setClock(start + QUEUED_STUCK_AFTER_MS + MINUTE);
    const queue = playedQueue("report-export");
    await worker.scheduled(everyMinute(start + QUEUED_STUCK_AFTER_MS + MINUTE), queue.env);
    await queue.deliver();
    const done = await waitForStatus(team.key, team.base, row.id, "exported");
    expect(done.exported_at).toBe(isoSeconds(start + QUEUED_STUCK_AFTER_MS + MINUTE));
    const file = await env.REPORTS.get(`audit/${team.teamId}/web-app/${row.id}.json`);
    expect(file).not.toBeNull();
    expect((await file!.json<{ report: { id: string; status: string } }>()).report).toMatchObject({ id: row.id, status: "exported" });
  });
});
