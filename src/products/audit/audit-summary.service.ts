// The audit summary from counters: what each finding and verification write changes in a
// project's summary counters and daily open-risk series (the deltas; the statements applying them
// in the same D1 batch as that write are summaryStatements in audit.queries.ts), the read, which is
// three indexed look-ups of at most 9 rows whatever the number of findings, and the hourly
// compaction of series rows no read needs any more.
import { and, asc, desc, eq, gte, lt, lte } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { auditRiskDays, auditSummaryCounters, type FindingStatus, type ReportSummary } from "../../db/schema/audit";
import { nowMs } from "../../platform/clock";
import { deleteInSteps } from "../../platform/retention";
import { COMPACT_RISK_SERIES_STEP } from "./audit.queries";

export const TERMINAL: readonly FindingStatus[] = ["resolved", "dismissed"];
export const isTerminal = (status: FindingStatus) => TERMINAL.includes(status);

/** Where a request points: the caller's team and a project of it. */
export interface Scope {
  teamId: string;
  projectId: string;
}

const DAY_MS = 86_400_000;
const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The last 7 UTC dates, oldest first, ending today. */
export function lastSevenDays(ms: number = nowMs()): string[] {
  return Array.from({ length: 7 }, (_, i) => utcDate(ms - (6 - i) * DAY_MS));
}

/** A summary with nothing in it: 7 zero days and zero rates (the placeholder report's snapshot). */
export function emptySummary(): ReportSummary {
  return {
    risk_burn_down: lastSevenDays().map((date) => ({ date, open_risk_score: 0 })),
    verification_pass_rate: 0,
    regression_rate: 0,
    open_findings: 0,
  };
}

/** What a finding contributes to the summary in one state of it. */
export interface FindingState {
  status: FindingStatus;
  priorityScore: number;
  everTerminal: boolean;
}

/**
 * The open risk of a finding, in millionths of a priority point. Integers, so the series adds
 * deltas exactly whatever order concurrent batches commit in (floats would drift with the order);
 * the migration's backfill rounds the same way (`round(priority_score * 1000000)`).
 */
export const riskMicros = (state: FindingState) => (isTerminal(state.status) ? 0 : Math.round(state.priorityScore * 1e6));

/** Changes to a project's summary counters; all zero but the ones a write moves. */
export interface SummaryDelta {
  open: number;
  terminal: number;
  regressions: number;
  verifications: number;
  passed: number;
  /** Change of the project's open risk, in millionths, as of `at`. */
  riskMicros: number;
  /** ISO timestamp of the write: its UTC day is the day the risk change belongs to. */
  at: string;
}

const NO_DELTA: Omit<SummaryDelta, "at"> = { open: 0, terminal: 0, regressions: 0, verifications: 0, passed: 0, riskMicros: 0 };

/** The summary delta of a finding going from `before` (null: it did not exist) to `after`. */
export function findingDelta(before: FindingState | null, after: FindingState, at: string): SummaryDelta {
  const counts = (s: FindingState | null) => ({
    open: s && !isTerminal(s.status) ? 1 : 0,
    terminal: s && isTerminal(s.status) ? 1 : 0,
    regressions: s && !isTerminal(s.status) && s.everTerminal ? 1 : 0,
    risk: s ? riskMicros(s) : 0,
  });
  const from = counts(before);
  const to = counts(after);
  return {
    ...NO_DELTA,
    open: to.open - from.open,
    terminal: to.terminal - from.terminal,
    regressions: to.regressions - from.regressions,
    riskMicros: to.risk - from.risk,
    at,
  };
}

/** The summary delta of one verification. */
export const verificationDelta = (result: "passed" | "failed", at: string): SummaryDelta => ({
  ...NO_DELTA,
  verifications: 1,
  passed: result === "passed" ? 1 : 0,
  at,
});

/**
 * The live summary, from the counters: one counters row, the series rows of the last 7 days and
 * the latest row before them (the value carried into the window), in one batch. Burn-down: each
 * day's value is that of the latest series row on or before it; today's row holds every change
 * made so far today, so today's entry is "now".
 */
export async function computeSummary(env: Env, scope: Scope): Promise<ReportSummary> {
  const db = getDb(env.DB);
  const days = lastSevenDays();
  const project = and(eq(auditRiskDays.teamId, scope.teamId), eq(auditRiskDays.projectId, scope.projectId));
  const [counters, window, before] = await db.batch([
    db
      .select()
      .from(auditSummaryCounters)
      .where(and(eq(auditSummaryCounters.teamId, scope.teamId), eq(auditSummaryCounters.projectId, scope.projectId)))
      .limit(1),
    db
      .select({ day: auditRiskDays.day, micros: auditRiskDays.openRiskMicros })
      .from(auditRiskDays)
      .where(and(project, gte(auditRiskDays.day, days[0]), lte(auditRiskDays.day, days[6])))
      .orderBy(asc(auditRiskDays.day)),
    db
      .select({ micros: auditRiskDays.openRiskMicros })
      .from(auditRiskDays)
      .where(and(project, lt(auditRiskDays.day, days[0])))
      .orderBy(desc(auditRiskDays.day))
      .limit(1),
  ]);

  let micros = before[0]?.micros ?? 0;
  let next = 0;
  const burnDown = days.map((date) => {
    while (next < window.length && window[next].day <= date) micros = window[next++].micros;
    return { date, open_risk_score: micros / 1e6 };
  });
  const c = counters[0];
  if (!c) return { ...emptySummary(), risk_burn_down: burnDown };
  return {
    risk_burn_down: burnDown,
    verification_pass_rate: c.verificationsTotal === 0 ? 0 : c.verificationsPassed / c.verificationsTotal,
    // Capped at 1: more reopened than closed findings would pass the spec's 0..1 range.
    regression_rate: c.terminalFindings === 0 ? 0 : Math.min(1, c.openRegressions / c.terminalFindings),
    open_findings: c.openFindings,
  };
}

/** Series rows older than this many days are compacted (the read needs 7 days and the row before). */
export const RISK_SERIES_KEEP_DAYS = 10;

/**
 * Deletes the series rows no summary will read again: those older than RISK_SERIES_KEEP_DAYS that
 * have a later row also older than that (the latest of them is kept: it carries the value into the
 * window). In bounded steps; safe to run at any time and twice. Returns the rows deleted.
 */
export async function compactRiskSeries(env: Env): Promise<number> {
  const cutoff = utcDate(nowMs() - RISK_SERIES_KEEP_DAYS * DAY_MS);
  return deleteInSteps(env.DB, COMPACT_RISK_SERIES_STEP, [cutoff]);
}
