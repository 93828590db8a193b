// The claim helper and the declared sweep (src/platform/jobs/claim.ts, sweep.ts) through the real
// D1 binding, over audit_reports (a table with the standard claim columns and no parent but its
// team): one winner of concurrent claims, leases that hold and then lapse, attempts counted, and a
// sweep that re-queues a lost row once, fails a row past its cap, leaves live leases alone and is
// bounded. Also the numbers CLAIMS holds against the products that rely on them.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import { getDb } from "../../src/db/client";
import { auditReports, teams } from "../../src/db/schema";
import type { Env } from "../../src/env";
import { isoSeconds, setClock } from "../../src/platform/clock";
import { claim, claimSpec, secondsLeft } from "../../src/platform/jobs/claim";
import { declaredQueues, defineQueue } from "../../src/platform/jobs/queues";
import { declareSweep, sweep } from "../../src/platform/jobs/sweep";
import { insertReport } from "../products/audit/audit-helpers";

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

const T0 = Date.parse("2026-05-01T12:00:00Z");
const MINUTE = 60_000;
/** A claiming queue of the test's own (the lease and cap of audit exports): claimSpec reads the declaration. */
const TEST_QUEUE = defineQueue({ name: "claim-test", binding: null, maxRetries: 5, claim: { leaseMs: 2 * 60_000, maxAttempts: null } });
const SPEC = claimSpec(TEST_QUEUE, { from: ["queued"], inFlight: "exporting" });
/** A product whose waiting status is also its in-flight one (mail, surveys). */
const SAME_STATUS = claimSpec(TEST_QUEUE, { from: ["queued"], inFlight: "queued" });
const db = () => getDb(env.DB);

async function newTeam(): Promise<string> {
  const id = crypto.randomUUID();
  await db()
    .insert(teams)
    .values({ id, name: "claims", createdAt: isoSeconds(T0), updatedAt: isoSeconds(T0) });
  return id;
}

/** A report row written directly (audit's test helper): `queued`, no attempt, no lease, unless `fields` say so. */
const insertRow = insertReport;

const load = async (id: string) => (await db().select().from(auditReports).where(eq(auditReports.id, id)))[0]!;
const claimOne = (id: string, spec = SPEC) => claim(db(), auditReports, spec, eq(auditReports.id, id)).returning();

describe("claim", () => {
  it("of two concurrent claims of one row exactly one wins, and it counts one attempt", async () => {
    const row = await insertRow(await newTeam(), T0);
    setClock(T0);
    const results = await Promise.all(Array.from({ length: 5 }, () => claimOne(row.id)));
    expect(results.filter((rows) => rows.length === 1)).toHaveLength(1);
    expect(results.filter((rows) => rows.length === 0)).toHaveLength(4);
    expect(await load(row.id)).toMatchObject({ status: "exporting", attempts: 1, leaseUntil: T0 + SPEC.leaseMs });
  });

  it("a live lease cannot be claimed; once it has ended the row is claimed again, attempts counted", async () => {
    const row = await insertRow(await newTeam(), T0);
    setClock(T0);
    expect(await claimOne(row.id)).toHaveLength(1);
    // Up to and including the lease's last millisecond the row belongs to its consumer.
    setClock(T0 + SPEC.leaseMs);
    expect(await claimOne(row.id)).toEqual([]);
    expect(secondsLeft((await load(row.id)).leaseUntil)).toBe(1);
    setClock(T0 + SPEC.leaseMs + 1);
    const [taken] = await claimOne(row.id);
    expect(taken).toMatchObject({ status: "exporting", attempts: 2, leaseUntil: T0 + 2 * SPEC.leaseMs + 1 });
  });

  it("a finished row, another row and a row of another status are not claimed", async () => {
    const team = await newTeam();
    const done = await insertRow(team, T0, { status: "exported" });
    const other = await insertRow(team, T0);
    setClock(T0);
    expect(await claimOne(done.id)).toEqual([]);
    expect(await load(done.id)).toMatchObject({ status: "exported", attempts: 0, leaseUntil: null });
    expect(await load(other.id)).toMatchObject({ status: "queued", attempts: 0, leaseUntil: null });
  });

  it("where the waiting status is the in-flight one, only the lease keeps a second consumer out", async () => {
    const row = await insertRow(await newTeam(), T0);
    setClock(T0);
    expect(await claimOne(row.id, SAME_STATUS)).toHaveLength(1);
    expect(await claimOne(row.id, SAME_STATUS)).toEqual([]);
    expect(await load(row.id)).toMatchObject({ status: "queued", attempts: 1, leaseUntil: T0 + SAME_STATUS.leaseMs });
    setClock(T0 + SAME_STATUS.leaseMs + 1);
    expect(await claimOne(row.id, SAME_STATUS)).toMatchObject([{ status: "queued", attempts: 2 }]);
  });

  it("secondsLeft: the delay until a lease ends, at least one second", () => {
    setClock(T0);
    expect(secondsLeft(T0 + 29_001)).toBe(30);
    expect(secondsLeft(T0 - 5_000)).toBe(1);
    expect(secondsLeft(null)).toBe(1);
  });
});

/** A queue that records what it is sent (or refuses it), and an env using it as EXPORT_QUEUE. */
function queueEnv(fail = false) {
  const sent: Array<{ id: string }> = [];
  const queue = {
    send: vi.fn(),
    sendBatch: vi.fn(async (messages: Array<{ body: { id: string } }>) => {
      if (fail) throw new Error("queue down");
      sent.push(...messages.map((m) => m.body));
    }),
  };
  return { env: { ...env, EXPORT_QUEUE: queue } as unknown as Env, queue, sent };
}

/** A declared sweep over the test rows: marks what it re-queues (updated_at = now), fails at 3 attempts. */
function testSweep(teamId: string, limit: number, batch?: number) {
  return declareSweep({
    name: "claim test",
    table: auditReports,
    key: { id: auditReports.id, teamId: auditReports.teamId },
    waiting: ["queued"],
    due: auditReports.updatedAt,
    dueText: isoSeconds,
    staleMs: 15 * MINUTE,
    inFlight: { status: "exporting", afterMs: 0 },
    limit,
    batch,
    mark: (at) => ({ updatedAt: isoSeconds(at) }),
    exhausted: { maxAttempts: 3, set: { status: "failed" } },
    queue: (e) => e.EXPORT_QUEUE as unknown as Queue<{ id: string }>,
    // Rows of other tests of this file share the table: only this team's are sent.
    messages: (rows) => rows.filter((row) => row.teamId === teamId).map((row) => ({ id: row.id })),
  });
}

describe("sweep", () => {
  it("re-queues a lost row once, fails a row past its cap, and leaves young rows and live leases alone", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const team = await newTeam();
    const lost = await insertRow(team, T0);
    const young = await insertRow(team, T0 + 10 * MINUTE);
    const exhausted = await insertRow(team, T0, { attempts: 3 });
    const live = await insertRow(team, T0, { status: "exporting", attempts: 1, leaseUntil: T0 + 20 * MINUTE });
    const dead = await insertRow(team, T0, { status: "exporting", attempts: 1, leaseUntil: T0 + 15 * MINUTE });
    const leasedWaiting = await insertRow(team, T0, { leaseUntil: T0 + 20 * MINUTE });
    const done = await insertRow(team, T0 - 60 * MINUTE, { status: "exported" });

    setClock(T0 + 16 * MINUTE);
    const first = queueEnv();
    const result = await sweep(first.env, testSweep(team, 100));
    expect(first.sent.map((m) => m.id).sort()).toEqual([lost.id, dead.id].sort());
    expect(result.exhausted).toBeGreaterThanOrEqual(1);
    expect(await load(exhausted.id)).toMatchObject({ status: "failed", leaseUntil: null });
    expect(await load(lost.id)).toMatchObject({ status: "queued", updatedAt: isoSeconds(T0 + 16 * MINUTE) });
    for (const row of [young, live, leasedWaiting, done]) expect(await load(row.id)).toEqual(row);

    // The next run finds the re-queued rows no longer lost: each was sent once.
    const second = queueEnv();
    await sweep(second.env, testSweep(team, 100));
    expect(second.sent).toEqual([]);
    // Lost again a stale period later if no consumer came.
    setClock(T0 + 32 * MINUTE);
    const third = queueEnv();
    await sweep(third.env, testSweep(team, 100));
    expect(third.sent.map((m) => m.id)).toContain(lost.id);
  });

  it("is bounded per run, oldest first, in statements of `batch` rows; the rest go on the next run", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const team = await newTeam();
    // Older than any other row of this file, so they are the oldest overall.
    const past = Date.parse("2020-01-01T00:00:00Z");
    const rows = [];
    for (let i = 0; i < 5; i++) rows.push(await insertRow(team, past + i * MINUTE));
    setClock(T0);
    const first = queueEnv();
    const result = await sweep(first.env, testSweep(team, 3, 2));
    expect(result.requeued).toBe(3);
    expect(first.sent.map((m) => m.id)).toEqual(rows.slice(0, 3).map((r) => r.id));
    // Two statements (2 rows, then 1), one sendBatch each.
    expect(first.queue.sendBatch).toHaveBeenCalledTimes(2);
    const second = queueEnv();
    await sweep(second.env, testSweep(team, 3, 2));
    expect(second.sent.map((m) => m.id).slice(0, 2)).toEqual(rows.slice(3).map((r) => r.id));
  });

  it("a refused send is thrown by default and counted as unsent when the product logs it", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const team = await newTeam();
    const row = await insertRow(team, Date.parse("2019-01-01T00:00:00Z"));
    setClock(T0);
    await expect(sweep(queueEnv(true).env, testSweep(team, 100))).rejects.toThrow("queue down");
    // The marked row waits a stale period, then the next run sends it.
    setClock(T0 + 16 * MINUTE);
    const logged = await sweep(queueEnv(true).env, { ...testSweep(team, 100), onSendError: "log" });
    expect(logged).toMatchObject({ requeued: 0 });
    expect(logged.unsent).toBeGreaterThanOrEqual(1);
    expect(errors.mock.calls.some(([line]) => String(line).includes("claim test re-queue failed"))).toBe(true);
    setClock(T0 + 32 * MINUTE);
    const recorder = queueEnv();
    await sweep(recorder.env, testSweep(team, 100));
    expect(recorder.sent.map((m) => m.id)).toContain(row.id);
    expect((await load(row.id)).status).toBe("queued");
  });
});

describe("claims declared with their queues", () => {
  it("claimSpec takes the lease from the queue's declaration; every registered claiming queue has a lease and a cap of at least one attempt (or none)", () => {
    expect(SPEC.leaseMs).toBe(TEST_QUEUE.claim.leaseMs);
    const claiming = [...declaredQueues().values()].filter((queue) => queue.claim);
    expect(claiming.length).toBeGreaterThan(0);
    for (const queue of claiming) {
      expect(queue.claim!.leaseMs, queue.name).toBeGreaterThan(0);
      if (queue.claim!.maxAttempts !== null) expect(queue.claim!.maxAttempts, queue.name).toBeGreaterThanOrEqual(1);
    }
  });

  it("migration 0018's conversion of ISO leases gives the clock's milliseconds", async () => {
    // The expression of migrations/0018_standard_claim_columns.sql, over both ISO forms the tables held.
    for (const iso of ["2026-05-01T12:00:00.123Z", "2026-05-01T12:00:00Z", "1999-12-31T23:59:59.999Z"]) {
      const row = await env.DB.prepare("SELECT CAST(ROUND((julianday(?1) - 2440587.5) * 86400000) AS INTEGER) AS ms").bind(iso).first<{ ms: number }>();
      expect(row!.ms).toBe(Date.parse(iso));
    }
  });
});
