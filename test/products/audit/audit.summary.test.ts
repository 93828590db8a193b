// The counter-based audit summary against the summary recomputed from the full findings, status
// history and verifications (the computation the service used before it kept counters, kept here
// as the oracle): random sequences of creates, PATCHes and verifications over several simulated
// days, parallel PATCHes, and the migration's backfill of projects written before the counters.
import { env } from "cloudflare:test";
import { and, asc, count, eq } from "drizzle-orm";
import fc from "fast-check";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../../src/db/client";
import {
  auditFindingHistory,
  auditFindings,
  auditRiskDays,
  auditSummaryCounters,
  auditVerifications,
  FINDING_STATUSES,
  type FindingStatus,
  type ReportSummary,
} from "../../../src/db/schema/audit";
import { nowIso, setClock } from "../../../src/platform/clock";
import { compactRiskSeries, computeSummary, lastSevenDays, RISK_SERIES_KEEP_DAYS, type Scope } from "../../../src/products/audit/audit-summary.service";
import { auditRiskSeriesCron } from "../../../src/products/audit/audit.cron";
import { addVerification, createFinding, listFindings, updateFinding } from "../../../src/products/audit/audit-findings.service";
import { call, json, setupTeam, type TestTeam } from "../../helpers/api";
import { auditBase } from "./audit-helpers";

afterEach(() => setClock(null));

const DAY_MS = 86_400_000;
const TERMINAL: readonly FindingStatus[] = ["resolved", "dismissed"];
const isTerminal = (status: FindingStatus) => TERMINAL.includes(status);
const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

/**
 * The oracle: the summary recomputed from every finding and the whole status history. For each of
 * the last 7 UTC days, each finding's state at the end of that day (today: now) is its last
 * history row written by then; the day's score sums priority_score over non-terminal states.
 */
async function recomputedSummary(scope: Scope): Promise<ReportSummary> {
  const db = getDb(env.DB);
  const nowAt = nowIso();
  const [findings, history, verdicts] = await db.batch([
    db
      .select({ id: auditFindings.id, status: auditFindings.status })
      .from(auditFindings)
      .where(and(eq(auditFindings.teamId, scope.teamId), eq(auditFindings.projectId, scope.projectId))),
    db
      .select({
        findingId: auditFindingHistory.findingId,
        status: auditFindingHistory.status,
        priority: auditFindingHistory.priorityScore,
        at: auditFindingHistory.at,
      })
      .from(auditFindingHistory)
      .where(and(eq(auditFindingHistory.teamId, scope.teamId), eq(auditFindingHistory.projectId, scope.projectId)))
      .orderBy(asc(auditFindingHistory.findingId), asc(auditFindingHistory.at), asc(auditFindingHistory.id)),
    db
      .select({ result: auditVerifications.result, n: count() })
      .from(auditVerifications)
      .where(and(eq(auditVerifications.teamId, scope.teamId), eq(auditVerifications.projectId, scope.projectId)))
      .groupBy(auditVerifications.result),
  ]);
  const days = lastSevenDays();
  const cutoffs = days.map((date, i) => (i === days.length - 1 ? nowAt : `${date}T23:59:59.999Z`));
  const scores = days.map(() => 0);
  const wasTerminal = new Set<string>();
  for (let start = 0; start < history.length; ) {
    let end = start;
    while (end < history.length && history[end].findingId === history[start].findingId) end++;
    for (let d = 0; d < days.length; d++) {
      let state: (typeof history)[number] | undefined;
      for (let i = start; i < end && history[i].at <= cutoffs[d]; i++) state = history[i];
      if (state && !isTerminal(state.status)) scores[d] += state.priority;
    }
    for (let i = start; i < end; i++) if (isTerminal(history[i].status) && history[i].at <= nowAt) wasTerminal.add(history[i].findingId);
    start = end;
  }
  const open = findings.filter((f) => !isTerminal(f.status));
  const terminal = findings.length - open.length;
  const openRegressions = open.filter((f) => wasTerminal.has(f.id)).length;
  const passed = verdicts.find((v) => v.result === "passed")?.n ?? 0;
  const allVerdicts = verdicts.reduce((sum, v) => sum + v.n, 0);
  return {
    risk_burn_down: days.map((date, i) => ({ date, open_risk_score: round6(scores[i]) })),
    verification_pass_rate: allVerdicts === 0 ? 0 : passed / allVerdicts,
    regression_rate: terminal === 0 ? 0 : Math.min(1, openRegressions / terminal),
    open_findings: open.length,
  };
}

/** The oracle's regression flag of every finding: non-terminal now, terminal somewhere in its history. */
async function recomputedRegressions(scope: Scope): Promise<Record<string, boolean>> {
  const db = getDb(env.DB);
  const [findings, history] = await db.batch([
    db
      .select()
      .from(auditFindings)
      .where(and(eq(auditFindings.teamId, scope.teamId), eq(auditFindings.projectId, scope.projectId))),
    db
      .select({ findingId: auditFindingHistory.findingId, status: auditFindingHistory.status })
      .from(auditFindingHistory)
      .where(and(eq(auditFindingHistory.teamId, scope.teamId), eq(auditFindingHistory.projectId, scope.projectId))),
  ]);
  const everTerminal = new Set(history.filter((h) => isTerminal(h.status)).map((h) => h.findingId));
  return Object.fromEntries(findings.map((f) => [f.id, !isTerminal(f.status) && everTerminal.has(f.id)]));
}

async function expectMatchesOracle(scope: Scope) {
  expect(await computeSummary(env, scope)).toEqual(await recomputedSummary(scope));
}

// Priorities with up to two decimals, as people type them; zero included (a finding without weight).
const priority = fc.integer({ min: 0, max: 100_000 }).map((n) => n / 100);
const status = fc.constantFrom(...FINDING_STATUSES);
const command = fc.oneof(
  fc.record({ kind: fc.constant("create" as const), priority, status }),
  fc.record({ kind: fc.constant("create" as const), priority, status: fc.constant<FindingStatus>("new") }),
  fc.record({ kind: fc.constant("patch" as const), pick: fc.nat(), status, priority, title: fc.boolean() }, { requiredKeys: ["kind", "pick"] }),
  fc.record({ kind: fc.constant("verify" as const), pick: fc.nat(), passed: fc.boolean() }),
  // Up to two and a half days: sequences span more than the 7-day window, so days fall out of it.
  fc.record({ kind: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 2.5 * DAY_MS }) }),
);

describe("audit summary from counters", () => {
  let team: TestTeam;
  beforeAll(async () => {
    team = await setupTeam();
  });

  it("equals the summary recomputed from the history over random creates, PATCHes and verifications across days", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: Date.parse("2026-01-01T00:00:00Z"), max: Date.parse("2026-12-31T00:00:00Z") }),
        fc.array(command, { minLength: 1, maxLength: 30 }),
        async (start, commands) => {
          const scope: Scope = { teamId: team.teamId, projectId: `prop-${crypto.randomUUID()}` };
          let clock = start;
          setClock(clock);
          const ids: string[] = [];
          for (const c of commands) {
            if (c.kind === "create") {
              ids.push((await createFinding(env, scope, { title: "f", priority_score: c.priority, status: c.status })).id);
            } else if (c.kind === "patch" && ids.length) {
              const patch = { status: c.status, priority_score: c.priority, title: c.title ? `t${clock}` : undefined };
              if (patch.status === undefined && patch.priority_score === undefined) patch.title = `t${clock}`;
              await updateFinding(env, scope, ids[c.pick % ids.length], patch);
            } else if (c.kind === "verify" && ids.length) {
              await addVerification(env, scope, ids[c.pick % ids.length], { result: c.passed ? "passed" : "failed" });
            } else if (c.kind === "advance") {
              // Before the clock moves on, the day that ends must be right too.
              await expectMatchesOracle(scope);
              clock += c.ms;
              setClock(clock);
            }
          }
          await expectMatchesOracle(scope);
          // The summary also stays right when read days later, with nothing changed since.
          setClock(clock + 3 * DAY_MS + 1234);
          await expectMatchesOracle(scope);
          setClock(clock + 9 * DAY_MS);
          await expectMatchesOracle(scope);
          // Each finding's regression flag (now a stored flag) agrees with its history.
          setClock(clock);
          const listed = await listFindings(env, scope, { page: 1, per_page: 100 });
          expect(Object.fromEntries(listed.items.map((f) => [f.id, f.regression]))).toEqual(await recomputedRegressions(scope));
        },
      ),
      { numRuns: 25 },
    );
  });

  it("stays exact under parallel PATCHes of the same findings (one timestamp: the version decides)", async () => {
    const base = auditBase(team, "parallel");
    const scope: Scope = { teamId: team.teamId, projectId: "parallel" };
    setClock(Date.parse("2026-05-10T23:59:59.000Z"));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await call("POST", `${base}/findings`, { key: team.key, body: { title: `f${i}`, priority_score: i + 1.25 } });
      ids.push((await json(res)).data.id);
    }
    const statuses: FindingStatus[] = ["resolved", "triaged", "dismissed", "in_progress", "new", "ready_verify"];
    // The clock stays pinned: every PATCH carries the same updated_at, so only the version can tell
    // a stale read from a fresh one.
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          call("PATCH", `${base}/findings/${ids[i % ids.length]}`, {
            key: team.key,
            body: i % 3 === 0 ? { priority_score: round * 10 + i } : { status: statuses[(i + round) % statuses.length] },
          }),
        ),
      );
      const codes = answers.map((res) => res.status);
      expect(codes.every((code) => code === 200 || code === 409)).toBe(true);
      expect(codes.filter((code) => code === 200).length).toBeGreaterThanOrEqual(ids.length);
      for (const res of answers.filter((r) => r.status === 409)) expect((await json(res)).error.code).toBe("conflict");
      await expectMatchesOracle(scope);
      // Parallel verifications count once each.
      await Promise.all(
        ids.map((id, i) => call("POST", `${base}/findings/${id}/verifications`, { key: team.key, body: { result: i % 2 ? "passed" : "failed" } })),
      );
      await expectMatchesOracle(scope);
    }
    // Past midnight the series carries on from the day before.
    setClock(Date.parse("2026-05-11T00:00:00.500Z"));
    await Promise.all(ids.map((id) => call("PATCH", `${base}/findings/${id}`, { key: team.key, body: { status: "resolved" } })));
    await expectMatchesOracle(scope);
    const summary = (await json(await call("GET", `${base}/reports/summary`, { key: team.key }))).data;
    expect(summary.open_findings).toBe(0);
    expect(summary.risk_burn_down[6]).toEqual({ date: "2026-05-11", open_risk_score: 0 });
  });

  it("a summary read touches the counters and at most 8 series rows, never the findings", async () => {
    const scope: Scope = { teamId: team.teamId, projectId: "bounded" };
    setClock(Date.parse("2026-07-01T12:00:00Z"));
    for (let day = 0; day < 12; day++) {
      setClock(Date.parse("2026-07-01T12:00:00Z") + day * DAY_MS);
      await createFinding(env, scope, { title: `d${day}`, priority_score: 1, status: "new" });
    }
    const expected = await recomputedSummary(scope);
    // With the findings and their history gone from under it, the summary is unchanged: it reads
    // only the counters and the series (12 days of rows; 8 are read).
    const db = getDb(env.DB);
    await db.delete(auditFindings).where(and(eq(auditFindings.teamId, scope.teamId), eq(auditFindings.projectId, scope.projectId)));
    expect(await computeSummary(env, scope)).toEqual(expected);
    expect(expected.risk_burn_down.map((d) => d.open_risk_score)).toEqual([6, 7, 8, 9, 10, 11, 12]);
    expect(expected.open_findings).toBe(12);
  });
});

describe("risk series compaction (hourly audit job)", () => {
  it("deletes the rows no read needs, keeps the one carried into the window, and the summary does not change", async () => {
    const team = await setupTeam();
    const scope: Scope = { teamId: team.teamId, projectId: "compact" };
    const lone: Scope = { teamId: team.teamId, projectId: "compact-lone" };
    const start = Date.parse("2026-09-01T12:00:00Z");
    setClock(start);
    await createFinding(env, lone, { title: "old", priority_score: 2, status: "new" });
    const f = await createFinding(env, scope, { title: "a", priority_score: 1, status: "new" });
    for (const day of [5, 8, 9, 17]) {
      setClock(start + day * DAY_MS);
      await updateFinding(env, scope, f.id, { priority_score: day });
    }
    setClock(start + 20 * DAY_MS); // cutoff: day 10
    const days = async (s: Scope) =>
      (
        await getDb(env.DB)
          .select()
          .from(auditRiskDays)
          .where(and(eq(auditRiskDays.teamId, s.teamId), eq(auditRiskDays.projectId, s.projectId)))
      )
        .map((r) => r.day)
        .sort();
    expect(await days(scope)).toEqual(["2026-09-01", "2026-09-06", "2026-09-09", "2026-09-10", "2026-09-18"]);
    const before = await computeSummary(env, scope);
    const beforeLone = await computeSummary(env, lone);

    await auditRiskSeriesCron.run(env);
    expect(await days(scope)).toEqual(["2026-09-10", "2026-09-18"]);
    expect(await days(lone)).toEqual(["2026-09-01"]);
    expect(await computeSummary(env, scope)).toEqual(before);
    expect(await computeSummary(env, lone)).toEqual(beforeLone);
    await expectMatchesOracle(scope);
    expect(await compactRiskSeries(env)).toBe(0); // nothing left to do
    expect(RISK_SERIES_KEEP_DAYS).toBeGreaterThan(7);
    // A week later the kept rows still give the right carried-in value.
    setClock(start + 27 * DAY_MS);
    await expectMatchesOracle(scope);
  });
});

describe("audit summary backfill (migration 0017)", () => {
  const backfill = () => {
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0017_"));
    if (!migration) throw new Error("migration 0017 not found");
    // Its UPDATE and INSERT statements (the backfill), not the ALTER/CREATE that already ran.
    return migration.queries.filter((q) => /^\s*(UPDATE|INSERT)\b/i.test(q.replace(/^\s*--.*$/gm, "")));
  };

  it("fills the counters and the series of projects written before the counters existed, and leaves others alone", async () => {
    const team = await setupTeam();
    const legacy: Scope = { teamId: team.teamId, projectId: "legacy" };
    const current: Scope = { teamId: team.teamId, projectId: "current" };
    const statements = backfill();
    expect(statements).toHaveLength(3);

    // A project kept by the service (counters written as it went).
    setClock(Date.parse("2026-08-01T08:00:00Z"));
    const kept = await createFinding(env, current, { title: "kept", priority_score: 3, status: "new" });
    await updateFinding(env, current, kept.id, { status: "resolved" });
    await updateFinding(env, current, kept.id, { status: "triaged" });
    const currentBefore = await computeSummary(env, current);

    // A legacy project: rows as the service wrote them before migration 0017, without flags,
    // counters or series. History over several days: created, resolved, reopened, re-weighted.
    const db = getDb(env.DB);
    const finding = (id: string, status: FindingStatus, priorityScore: number, at: string) => ({
      id,
      teamId: legacy.teamId,
      projectId: legacy.projectId,
      title: id,
      priorityScore,
      status,
      createdAt: at,
      updatedAt: at,
    });
    const ids = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const history = (findingId: string, fromStatus: FindingStatus | null, status: FindingStatus, priorityScore: number, at: string) => ({
      teamId: legacy.teamId,
      projectId: legacy.projectId,
      findingId,
      fromStatus,
      status,
      priorityScore,
      at,
    });
    await db.batch([
      db
        .insert(auditFindings)
        .values([
          finding(ids[0], "triaged", 7.5, "2026-07-25T10:00:00.000Z"),
          finding(ids[1], "resolved", 2, "2026-07-27T10:00:00.000Z"),
          finding(ids[2], "new", 4, "2026-07-30T10:00:00.000Z"),
          finding(ids[3], "dismissed", 9, "2026-07-31T10:00:00.000Z"),
        ]),
      db
        .insert(auditFindingHistory)
        .values([
          history(ids[0], null, "new", 5, "2026-07-25T10:00:00.000Z"),
          history(ids[0], "new", "resolved", 5, "2026-07-28T23:59:59.999Z"),
          history(ids[0], "resolved", "triaged", 5, "2026-07-30T00:00:00.000Z"),
          history(ids[0], "triaged", "triaged", 7.5, "2026-07-30T09:00:00.000Z"),
          history(ids[1], null, "new", 2, "2026-07-27T10:00:00.000Z"),
          history(ids[1], "new", "resolved", 2, "2026-07-29T10:00:00.000Z"),
          history(ids[2], null, "new", 4, "2026-07-30T10:00:00.000Z"),
          history(ids[3], null, "dismissed", 9, "2026-07-31T10:00:00.000Z"),
        ]),
      db.insert(auditVerifications).values([
        {
          id: crypto.randomUUID(),
          teamId: legacy.teamId,
          projectId: legacy.projectId,
          findingId: ids[0],
          result: "passed",
          note: null,
          createdAt: "2026-07-29T00:00:00.000Z",
        },
        {
          id: crypto.randomUUID(),
          teamId: legacy.teamId,
          projectId: legacy.projectId,
          findingId: ids[1],
          result: "failed",
          note: null,
          createdAt: "2026-07-29T00:00:00.000Z",
        },
        {
          id: crypto.randomUUID(),
          teamId: legacy.teamId,
          projectId: legacy.projectId,
          findingId: ids[1],
          result: "passed",
          note: null,
          createdAt: "2026-07-29T00:00:00.000Z",
        },
      ]),
    ]);
    expect((await computeSummary(env, legacy)).open_findings).toBe(0); // nothing counted yet

    await env.DB.batch(statements.map((q) => env.DB.prepare(q)));

    const expected = await recomputedSummary(legacy);
    expect(await computeSummary(env, legacy)).toEqual(expected);
    expect(expected).toEqual({
      risk_burn_down: [
        { date: "2026-07-26", open_risk_score: 5 },
        { date: "2026-07-27", open_risk_score: 7 },
        { date: "2026-07-28", open_risk_score: 2 },
        { date: "2026-07-29", open_risk_score: 0 },
        { date: "2026-07-30", open_risk_score: 11.5 },
        { date: "2026-07-31", open_risk_score: 11.5 },
        { date: "2026-08-01", open_risk_score: 11.5 },
      ],
      verification_pass_rate: 2 / 3,
      regression_rate: 1 / 2,
      open_findings: 2,
    });
    // The reopened finding is flagged, and later writes carry on from the backfilled counters.
    const listed = await listFindings(env, legacy, { page: 1, per_page: 10 });
    expect(listed.items.find((f) => f.id === ids[0])?.regression).toBe(true);
    await updateFinding(env, legacy, ids[2], { status: "resolved" });
    await expectMatchesOracle(legacy);

    // The project that already had counters kept them (no double count).
    expect(await computeSummary(env, current)).toEqual(currentBefore);
    const [counters] = await db
      .select()
      .from(auditSummaryCounters)
      .where(and(eq(auditSummaryCounters.teamId, current.teamId), eq(auditSummaryCounters.projectId, current.projectId)));
    expect(counters).toMatchObject({ openFindings: 1, terminalFindings: 0, openRegressions: 1 });
    const series = await db.select().from(auditRiskDays).where(eq(auditRiskDays.projectId, current.projectId));
    expect(series.filter((r) => r.teamId === current.teamId)).toEqual([
      { teamId: current.teamId, projectId: current.projectId, day: "2026-08-01", openRiskMicros: 3_000_000 },
    ]);
  });
});
