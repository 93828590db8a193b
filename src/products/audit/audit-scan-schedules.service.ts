// Scheduled scans of a target: create (at most 20 per project, held under parallel requests by one
// statement), list, delete; the hourly run that queues the due ones (safe to run twice: one scan
// per schedule and slot, a unique index); and the mail to the team's accepted members when a
// scheduled scan's grade is lower than the schedule's last one (platform mail, one unit of the
// team's mail quota per message as alert mail, the target and project as plain tenant text).
import { and, asc, eq, isNull, lte } from "drizzle-orm";
import type { Env } from "../../env";
import { getDb } from "../../db/client";
import { auditScanSchedules, auditScans, memberships, teams, users, type AuditScanSchedule, type ScanEvery } from "../../db/schema";
import { insertUnderCap } from "../../platform/caps";
import { nowIso, nowMs } from "../../platform/clock";
import { isUniqueViolation } from "../../platform/db-errors";
import { ApiError } from "../../platform/errors";
import { sendAll } from "../../platform/jobs/queues";
import { log } from "../../platform/log";
import { queuePlatformMail, tenantText, type MailContent } from "../../platform/platform-mail";
import { consumeQuota } from "../../platform/quota";
import { orNotFound } from "../../platform/tenancy";
import type { Scope } from "./audit-summary.service";
import type { ScanMessage } from "./audit-scan.messages";
import { gradeDropped } from "./audit-scan.results";
import { newScanRow, normalizeTarget } from "./audit-scan.service";

/** Schedules per project at most. */
export const MAX_SCHEDULES_PER_PROJECT = 20;
/** Due schedules queued per hourly run (oldest due first); the rest wait for the next run. */
export const SCHEDULES_PER_RUN = 200;
/** Members mailed about one grade drop at most. */
export const GRADE_DROP_RECIPIENTS_MAX = 50;

const EVERY_MS: Record<ScanEvery, number> = { day: 86_400_000, week: 7 * 86_400_000 };

export function scheduleView(row: AuditScanSchedule) {
  return {
    id: row.id,
    org_id: row.teamId,
    project_id: row.projectId,
    target_url: row.targetUrl,
    every: row.every,
    next_run_at: row.nextRunAt,
    last_grade: row.lastGrade,
    last_scan_id: row.lastScanId,
    created_at: row.createdAt,
  };
}
export type ScheduleView = ReturnType<typeof scheduleView>;

const ofProject = (scope: Scope) => and(eq(auditScanSchedules.teamId, scope.teamId), eq(auditScanSchedules.projectId, scope.projectId));

/** A schedule whose first scan is queued by the next hourly run, then one `every` day or week. */
export async function createSchedule(env: Env, scope: Scope, input: { target_url: string; every: ScanEvery }): Promise<ScheduleView> {
  const targetUrl = normalizeTarget(env, input.target_url);
  const at = nowIso();
  const row: AuditScanSchedule = {
    id: crypto.randomUUID(),
    teamId: scope.teamId,
    projectId: scope.projectId,
    targetUrl,
    every: input.every,
    nextRunAt: at,
    lastGrade: null,
    lastScanId: null,
    createdAt: at,
  };
  let stored: boolean;
  try {
    stored = await insertUnderCap(
      getDb(env.DB),
      auditScanSchedules,
      row,
      { column: auditScanSchedules.teamId, value: scope.teamId, where: eq(auditScanSchedules.projectId, scope.projectId) },
      MAX_SCHEDULES_PER_PROJECT,
    );
  } catch (error) {
    if (isUniqueViolation(error)) throw ApiError.validation({ target_url: ["already has a schedule in this project"] });
    throw error;
  }
  if (!stored) throw ApiError.validation({ target_url: [`a project can have at most ${MAX_SCHEDULES_PER_PROJECT} scan schedules`] });
  return scheduleView(row);
}

export async function listSchedules(env: Env, scope: Scope): Promise<ScheduleView[]> {
  const rows = await getDb(env.DB)
    .select()
    .from(auditScanSchedules)
    .where(ofProject(scope))
    .orderBy(asc(auditScanSchedules.createdAt), asc(auditScanSchedules.id));
  return rows.map(scheduleView);
}

export async function deleteSchedule(env: Env, scope: Scope, id: string): Promise<void> {
  const deleted = await getDb(env.DB)
    .delete(auditScanSchedules)
    .where(and(eq(auditScanSchedules.id, id), ofProject(scope)))
    .returning({ id: auditScanSchedules.id });
  orNotFound(deleted[0]);
}

/** The first slot after `slot` that is after `now` (a schedule left behind skips what it missed). */
export function nextSlot(slot: string, every: ScanEvery, now: number): string {
  let next = Date.parse(slot) + EVERY_MS[every];
  while (next <= now) next += EVERY_MS[every];
  return new Date(next).toISOString();
}

/**
 * Queues a scan for every due schedule: in one batch, each schedule's scan for its slot (a unique
 * index on schedule and slot makes a second run, or an overlapping one, store nothing) and the
 * schedule moved to its next slot (only from the slot read). Then queues what was stored; a
 * refused send is logged and the minute sweep queues those scans. Returns the scans queued.
 */
export async function runDueSchedules(env: Env, limit = SCHEDULES_PER_RUN): Promise<number> {
  const db = getDb(env.DB);
  const now = nowMs();
  const due = await db
    .select()
    .from(auditScanSchedules)
    .where(lte(auditScanSchedules.nextRunAt, new Date(now).toISOString()))
    .orderBy(asc(auditScanSchedules.nextRunAt))
    .limit(limit);
  if (due.length === 0) return 0;
  const statements = due.flatMap((s) => {
    const scan = newScanRow({ teamId: s.teamId, projectId: s.projectId }, s.targetUrl, { scheduleId: s.id, scheduleSlot: s.nextRunAt });
    return [
      db.insert(auditScans).values(scan).onConflictDoNothing().returning({ id: auditScans.id, teamId: auditScans.teamId }),
      db
        .update(auditScanSchedules)
        .set({ nextRunAt: nextSlot(s.nextRunAt, s.every, now) })
        .where(and(eq(auditScanSchedules.id, s.id), eq(auditScanSchedules.nextRunAt, s.nextRunAt))),
    ];
  });
  const results = (await db.batch(statements as [(typeof statements)[number], ...(typeof statements)[number][]])) as unknown[];
  const stored = results.filter((_, i) => i % 2 === 0).flatMap((rows) => rows as Array<{ id: string; teamId: string }>);
  try {
    await sendAll(
      env.SCAN_QUEUE,
      stored.map((s): ScanMessage => ({ scan_id: s.id, team_id: s.teamId })),
    );
  } catch (error) {
    log.error("audit scan schedules: queueing failed; the sweep queues them", { count: stored.length, error: String(error) });
  }
  return stored.length;
}

/**
 * Records a finished scheduled scan's grade on its schedule (compare-and-set on the last scan,
 * so a redelivery records and mails once) and mails the accepted members when it is lower than
 * the last one. Returns how many mails were queued.
 */
export async function recordScheduledGrade(
  env: Env,
  scan: { id: string; teamId: string; projectId: string; targetUrl: string; scheduleId: string },
  grade: string,
): Promise<number> {
  const db = getDb(env.DB);
  const [schedule] = await db
    .select()
    .from(auditScanSchedules)
    .where(and(eq(auditScanSchedules.id, scan.scheduleId), eq(auditScanSchedules.teamId, scan.teamId)))
    .limit(1);
  if (!schedule || schedule.lastScanId === scan.id) return 0;
  const moved = await db
    .update(auditScanSchedules)
    .set({ lastGrade: grade, lastScanId: scan.id })
    .where(
      and(
        eq(auditScanSchedules.id, schedule.id),
        schedule.lastScanId === null ? isNull(auditScanSchedules.lastScanId) : eq(auditScanSchedules.lastScanId, schedule.lastScanId),
      ),
    )
    .returning({ id: auditScanSchedules.id });
  if (moved.length === 0 || !gradeDropped(schedule.lastGrade, grade)) return 0;
  return mailGradeDrop(env, scan, schedule.lastGrade!, grade);
}

/** One platform mail per accepted member, each spending one unit of the team's mail quota; stops when it is used up. */
async function mailGradeDrop(
  env: Env,
  scan: { id: string; teamId: string; projectId: string; targetUrl: string },
  before: string,
  after: string,
): Promise<number> {
  const db = getDb(env.DB);
  const [team] = await db.select().from(teams).where(eq(teams.id, scan.teamId)).limit(1);
  if (!team) return 0;
  const members = await db
    .select({ email: users.email })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.teamId, scan.teamId))
    .orderBy(asc(users.email))
    .limit(GRADE_DROP_RECIPIENTS_MAX);
  const mail = gradeDropMail({ targetUrl: scan.targetUrl, projectId: scan.projectId, scanId: scan.id, before, after });
  let sent = 0;
  for (const { email } of members) {
    try {
      await consumeQuota(env, { teamId: team.id, plan: team.plan, ownerEmail: team.ownerEmail }, "mail", 1);
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== "monthly_quota") throw error;
      log.error("audit scan grade-drop mail skipped: mail quota used up", { team_id: team.id, scan_id: scan.id });
      break;
    }
    await queuePlatformMail(env, {
      teamId: team.id,
      kind: "scan_grade_drop",
      to: email,
      ...mail,
    });
    sent++;
  }
  return sent;
}

/** The grade-drop mail (platform mail kind `scan_grade_drop`): the target and project are tenant text. */
export function gradeDropMail(input: { targetUrl: string; projectId: string; scanId: string; before: string; after: string }): MailContent {
  const target = tenantText(input.targetUrl);
  const project = tenantText(input.projectId);
  return {
    subject: `[Audit scan] Grade dropped from ${input.before} to ${input.after}: ${target}`,
    text:
      `The scheduled scan of ${target} in audit project ${project} graded ${input.after}; its previous scan graded ${input.before}.\n\n` +
      `Open the project's scans in the console to see which tests fail and what to fix.\nScan id: ${input.scanId}\n`,
  };
}
