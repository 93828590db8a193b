// Scan schedules (create, list, delete, the cap under parallel requests), the hourly run that
// queues due scans (safe to run twice), the grade-drop mail to accepted members (metered), the
// sweep of lost scan messages and the retention of scans.
import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { getDb } from "../../../src/db/client";
import { auditScans, platformOutbox } from "../../../src/db/schema";
import { nowMs, setClock } from "../../../src/platform/clock";
import { processScan } from "../../../src/products/audit/audit-scan.consumer";
import { auditScanRetentionCron, requeueLostScans, SCAN_RETENTION_DAYS } from "../../../src/products/audit/audit-scan.cron";
import { MAX_SCHEDULES_PER_PROJECT, runDueSchedules } from "../../../src/products/audit/audit-scan-schedules.service";
import { newScanRow } from "../../../src/products/audit/audit-scan.service";
import { admin, call, json } from "../../helpers/api";
import { playedQueue } from "../../helpers/queues";
import { usedOf } from "../../helpers/usage";
import { newTeam } from "./audit-helpers";
import { answer, GOOD_HEADERS, interceptTargets } from "./audit-scan-helpers";

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

const SITE = "https://site.example";

async function createSchedule(key: string, base: string, body: Record<string, unknown>) {
  return call("POST", `${base}/scan-schedules`, { key, body });
}

describe("schedules over the API", () => {
  it("create, list, delete; one per target; every day or week", async () => {
    const team = await newTeam();
    const res = await createSchedule(team.key, team.base, { target_url: SITE, every: "week" });
    expect(res.status).toBe(201);
    const schedule = (await json(res)).data;
    expect(schedule).toMatchObject({ target_url: `${SITE}/`, every: "week", last_grade: null, project_id: "web-app", org_id: team.teamId });
    expect((await createSchedule(team.key, team.base, { target_url: `${SITE}/`, every: "day" })).status).toBe(422);
    expect((await createSchedule(team.key, team.base, { target_url: SITE, every: "hour" })).status).toBe(422);
    expect((await createSchedule(team.key, team.base, { target_url: "https://10.1.2.3/", every: "day" })).status).toBe(422);
    const list = await json(await call("GET", `${team.base}/scan-schedules`, { key: team.key }));
    expect(list.data.map((s: { id: string }) => s.id)).toEqual([schedule.id]);
    const deleted = await call("DELETE", `${team.base}/scan-schedules/${schedule.id}`, { key: team.key });
    expect(deleted.status).toBe(200);
    expect((await call("DELETE", `${team.base}/scan-schedules/${schedule.id}`, { key: team.key })).status).toBe(404);
    expect((await json(await call("GET", `${team.base}/scan-schedules`, { key: team.key }))).data).toEqual([]);
  });

  it(`holds at most ${MAX_SCHEDULES_PER_PROJECT} per project under parallel requests`, async () => {
    const team = await newTeam();
    const answers = await Promise.all(
      Array.from({ length: 26 }, (_, i) => createSchedule(team.key, team.base, { target_url: `https://s${i}.example/`, every: "day" })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(MAX_SCHEDULES_PER_PROJECT);
    expect(answers.filter((r) => r.status === 422)).toHaveLength(26 - MAX_SCHEDULES_PER_PROJECT);
    expect((await json(await call("GET", `${team.base}/scan-schedules`, { key: team.key }))).data).toHaveLength(MAX_SCHEDULES_PER_PROJECT);
    // Another project has its own 20.
    expect((await createSchedule(team.key, team.base.replace("web-app", "other"), { target_url: SITE, every: "day" })).status).toBe(201);
  });
});

describe("the hourly run", () => {
  it("queues a scan per due schedule once, even when run twice, then every `every`", async () => {
    const team = await newTeam();
    const start = Date.parse("2031-05-01T10:00:00Z");
    setClock(new Date(start));
    const schedule = (await json(await createSchedule(team.key, team.base, { target_url: SITE, every: "day" }))).data;
    setClock(new Date(start + 30 * 60_000));
    const queue = playedQueue("audit-scans");
    // Other tests' schedules of this file are due as well: count this team's.
    const mine = () => queue.pending.filter((m) => (m.body as { team_id: string }).team_id === team.teamId).length;
    await runDueSchedules(queue.env);
    await runDueSchedules(queue.env);
    expect(mine()).toBe(1);
    const scans = await json(await call("GET", `${team.base}/scans`, { key: team.key }));
    expect(scans.data).toHaveLength(1);
    expect(scans.data[0]).toMatchObject({ status: "queued", target_url: `${SITE}/`, schedule_id: schedule.id });
    const [row] = (await json(await call("GET", `${team.base}/scan-schedules`, { key: team.key }))).data;
    expect(row.next_run_at).toBe(new Date(start + 86_400_000).toISOString());
    // Not due again before a day has passed.
    setClock(new Date(start + 86_400_000 - 1000));
    await runDueSchedules(queue.env);
    expect(mine()).toBe(1);
    setClock(new Date(start + 86_400_000 + 1000));
    await runDueSchedules(queue.env);
    expect(mine()).toBe(2);
  });

  it("mails the team's accepted members when a scheduled scan's grade drops, metered as alert mail", async () => {
    const team = await newTeam();
    expect((await admin("POST", `teams/${team.teamId}/members`, { email: "dev@example.com", role: "developer" })).status).toBe(201);
    const targets = interceptTargets({ [SITE]: answer(GOOD_HEADERS) });
    const start = Date.parse("2031-06-01T10:00:00Z");
    setClock(new Date(start));
    await createSchedule(team.key, team.base, { target_url: SITE, every: "day" });
    const runAll = async () => {
      const queue = playedQueue("audit-scans");
      expect(await runDueSchedules(queue.env)).toBeGreaterThanOrEqual(1);
      expect(queue.pending.filter((m) => (m.body as { team_id: string }).team_id === team.teamId)).toHaveLength(1);
      for (const d of await queue.deliver()) expect(d.outcome).toBe("acked");
    };
    const gradeMails = () =>
      getDb(env.DB)
        .select()
        .from(platformOutbox)
        .where(and(eq(platformOutbox.teamId, team.teamId), eq(platformOutbox.kind, "scan_grade_drop")));
    await runAll();
    expect(await gradeMails()).toEqual([]);
    const usedBefore = (await usedOf(team.teamId, "mail")) ?? 0;

    // The next day the site lost its HSTS and CSP: A+ → a lower grade, one mail per member.
    setClock(new Date(start + 86_400_000 + 60_000));
    const { "strict-transport-security": _, "content-security-policy": __, ...weaker } = GOOD_HEADERS;
    targets.set(SITE, answer(weaker));
    await runAll();
    const mails = await gradeMails();
    // The owner (a member since the team was made) and the developer who joined; never anyone else.
    expect(mails.map((m) => m.to).sort()).toEqual(["dev@example.com", "owner@example.com"]);
    expect(mails[0].subject).toMatch(/^\[Audit scan\] Grade dropped from A\+ to [A-F][+-]?: site\[\.\]example\/$/);
    expect(mails[0].text).not.toMatch(/https:\/\//);
    expect(((await usedOf(team.teamId, "mail")) ?? 0) - usedBefore).toBe(2);
    const [schedule] = (await json(await call("GET", `${team.base}/scan-schedules`, { key: team.key }))).data;
    expect(schedule.last_grade).not.toBe("A+");

    // The same grade again: no mail.
    setClock(new Date(start + 2 * 86_400_000 + 120_000));
    await runAll();
    expect(await gradeMails()).toHaveLength(2);
  });
});

describe("jobs", () => {
  it("the sweep re-queues a scan whose message was lost and fails one that used every attempt", async () => {
    const team = await newTeam();
    const db = getDb(env.DB);
    const at = nowMs();
    setClock(new Date(at - 6 * 60_000));
    const lost = newScanRow({ teamId: team.teamId, projectId: "web-app" }, `${SITE}/`);
    const spent = newScanRow({ teamId: team.teamId, projectId: "web-app" }, "https://other.example/", { attempts: 5 });
    await db.insert(auditScans).values([lost, spent]);
    setClock(new Date(at));
    const queue = playedQueue("audit-scans");
    const result = await requeueLostScans(queue.env);
    expect(result.requeued).toBeGreaterThanOrEqual(1);
    expect(result.exhausted).toBeGreaterThanOrEqual(1);
    expect(queue.pending.map((m) => m.body)).toContainEqual({ scan_id: lost.id, team_id: team.teamId });
    expect(queue.pending.map((m) => m.body)).not.toContainEqual({ scan_id: spent.id, team_id: team.teamId });
    const failed = await json(await call("GET", `${team.base}/scans/${spent.id}`, { key: team.key }));
    expect(failed.data).toMatchObject({ status: "failed", error: expect.stringContaining("every attempt") });
    // Marked: not sent again by the next run.
    expect((await requeueLostScans(queue.env)).requeued).toBe(0);
  });

  it("a message for another team's scan does nothing", async () => {
    const team = await newTeam();
    const other = await newTeam();
    const row = newScanRow({ teamId: team.teamId, projectId: "web-app" }, `${SITE}/`);
    await getDb(env.DB).insert(auditScans).values(row);
    expect(await processScan(env, { scan_id: row.id, team_id: other.teamId })).toBe("missing");
    expect((await json(await call("GET", `${team.base}/scans/${row.id}`, { key: team.key }))).data.status).toBe("queued");
  });

  it(`deletes scans older than ${SCAN_RETENTION_DAYS} days`, async () => {
    const team = await newTeam();
    const now = nowMs();
    setClock(new Date(now - (SCAN_RETENTION_DAYS + 1) * 86_400_000));
    const old = newScanRow({ teamId: team.teamId, projectId: "web-app" }, `${SITE}/`);
    setClock(new Date(now));
    const recent = newScanRow({ teamId: team.teamId, projectId: "web-app" }, `${SITE}/`);
    await getDb(env.DB).insert(auditScans).values([old, recent]);
    expect(await auditScanRetentionCron.run(env)).toBeGreaterThanOrEqual(1);
    const left = await json(await call("GET", `${team.base}/scans`, { key: team.key }));
    expect(left.data.map((s: { id: string }) => s.id)).toEqual([recent.id]);
  });
});
