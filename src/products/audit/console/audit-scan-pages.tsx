/** @jsxImportSource hono/jsx */
// The console pages of audit scans, mounted by the audit pages (audit.tsx):
// a project's scans with their grades, a form that starts a scan (counted in the team's strict
// `audit_share` family, as the API's POST /scans is; 303 to the scan's page), a scan's tests with
// what to fix (refreshing itself while the scan runs), and the scan schedules (add, delete). The
// same services as the API.
import { Hono } from "hono";
import { SCAN_EVERY, type ScanEvery } from "../../../db/schema/audit";
import { formText } from "../../../console/forms";
import { Time } from "../../../console/layout";
import { fragment, Live, pageNumber, Pager, StatusBadge, TableWrap, ColumnHeads } from "../../../console/pages/parts";
import { page, redirectTo, teamPath } from "../../../console/render";
import { requireRole, roleAtLeast, type ConsoleEnv } from "../../../console/session";
import { ApiError } from "../../../platform/errors";
import { getLimiter } from "../../../platform/rate-limit/limiter";
import { PLATFORM_BUCKET_LIMITS, teamObject } from "../../../platform/rate-limit/buckets";
import { strictCounter } from "../../../platform/rate-limit/middleware";
import type { Scope } from "../audit-summary.service";
import { createSchedule, deleteSchedule, listSchedules } from "../audit-scan-schedules.service";
import { getScan, listScans, startScan } from "../audit-scan.service";
import { scopeOf } from "./audit-findings";

export const auditScanPages = new Hono<ConsoleEnv>();

const scansPath = (scope: Scope) => `audit/projects/${encodeURIComponent(scope.projectId)}/scans`;
const STATUS_TONE = { queued: "gray", running: "warn", finished: "ok", failed: "danger" } as const;

/** A grade as a badge: A grades read as good, F as danger. */
function Grade(props: { grade: string | null }) {
  if (!props.grade) return <span class="muted">—</span>;
  const tone = props.grade.startsWith("A") ? "ok" : props.grade.startsWith("F") || props.grade.startsWith("D") ? "danger" : "warn";
  return <StatusBadge status={props.grade} tone={tone} />;
}

auditScanPages.get("/audit/projects/:project_id/scans", async (c) => {
  const scope = scopeOf(c);
  const query = { page: pageNumber(c), per_page: 20 };
  const [scans, schedules] = await Promise.all([listScans(c.env, scope, query), listSchedules(c.env, scope)]);
  const base = teamPath(c, scansPath(scope));
  const writer = roleAtLeast(c.get("consoleTeam").role, "developer");
  return page(
    c,
    {
      title: `Scans · ${scope.projectId}`,
      active: "audit",
      notices: { "schedule-added": "Schedule added: the next hourly run queues its first scan.", "schedule-deleted": "Schedule deleted." },
    },
    <>
      <div class="row-actions">
        <a href={teamPath(c, `audit/projects/${encodeURIComponent(scope.projectId)}`)}>← Project</a>
      </div>
      {writer ? (
        <section class="section" aria-labelledby="scan-title">
          <h2 id="scan-title">Scan a site</h2>
          <p class="muted">Grades the security headers of the page as the MDN HTTP Observatory does. Failing tests open findings in this project.</p>
          <form method="post" action={base} class="row-actions" data-testid="start-scan">
            <label for="scan-target">Address</label>
            <input id="scan-target" name="target_url" type="url" required placeholder="https://example.com/" maxlength={2048} />
            <button type="submit">Scan</button>
          </form>
        </section>
      ) : null}
      <section class="section" aria-labelledby="scans-title">
        <h2 id="scans-title">Scans</h2>
        {scans.items.length === 0 ? (
          <p class="empty">No scan yet.</p>
        ) : (
          <>
            <TableWrap label="Scans, newest first">
              <table>
                <caption class="skip">Scans, newest first</caption>
                <ColumnHeads names={["Started", "Target", "Status", "Grade", "Score"]} />
                <tbody>
                  {scans.items.map((s) => (
                    <tr data-testid="scan-row" data-status={s.status} data-grade={s.grade ?? ""}>
                      <td>
                        <a href={`${base}/${s.id}`}>
                          <Time iso={s.created_at} />
                        </a>
                      </td>
                      <td class="break">{s.target_url}</td>
                      <td>
                        <StatusBadge status={s.status} tone={STATUS_TONE[s.status]} />
                      </td>
                      <td>
                        <Grade grade={s.grade} />
                      </td>
                      <td>{s.score ?? "—"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
            <Pager base={base} page={query.page} pages={Math.ceil(scans.total / query.per_page)} />
          </>
        )}
      </section>
      <section class="section" aria-labelledby="schedules-title">
        <h2 id="schedules-title">Schedules</h2>
        {schedules.length === 0 ? <p class="empty">No schedule.</p> : null}
        <ul class="timeline">
          {schedules.map((s) => (
            <li data-testid="scan-schedule-row">
              <span class="break">{s.target_url}</span> every {s.every}, next <Time iso={s.next_run_at} />
              {s.last_grade ? <> · last grade {s.last_grade}</> : null}
              {writer ? (
                <form
                  method="post"
                  action={`${teamPath(c, `audit/projects/${encodeURIComponent(scope.projectId)}/scan-schedules`)}/${s.id}/delete`}
                  class="inline"
                >
                  <button type="submit" class="danger small">
                    Delete
                  </button>
                </form>
              ) : null}
            </li>
          ))}
        </ul>
        {writer ? (
          <form
            method="post"
            action={teamPath(c, `audit/projects/${encodeURIComponent(scope.projectId)}/scan-schedules`)}
            class="row-actions"
            data-testid="add-scan-schedule"
          >
            <label for="schedule-target">Address</label>
            <input id="schedule-target" name="target_url" type="url" required placeholder="https://example.com/" maxlength={2048} />
            <label for="schedule-every">Every</label>
            <select id="schedule-every" name="every">
              {SCAN_EVERY.map((every) => (
                <option value={every}>{every}</option>
              ))}
            </select>
            <button type="submit" class="secondary">
              Add schedule
            </button>
          </form>
        ) : null}
      </section>
    </>,
  );
});

auditScanPages.post("/audit/projects/:project_id/scans", async (c) => {
  requireRole(c, "developer");
  const scope = scopeOf(c);
  const target = await formText(c, "target_url");
  // The console's start counts in the same strict family as the API's (shared with report share).
  const [counted] = await getLimiter(c.env).hitAll(teamObject(scope.teamId), [{ name: strictCounter("audit_share"), limit: PLATFORM_BUCKET_LIMITS.strict }]);
  if (counted && !counted.allowed) throw ApiError.rateLimited(counted.retryAfter);
  const { scan } = await startScan(c.env, scope, target);
  return redirectTo(c, `${scansPath(scope)}/${scan.id}`);
});

type Scan = Awaited<ReturnType<typeof getScan>>;

const scanDone = (scan: Scan) => scan.status === "finished" || scan.status === "failed";

/** A scan's status, grade and tests: the part of its page that refreshes while the scan runs. */
function ScanBody(props: { scan: Scan }) {
  const { scan } = props;
  const done = scanDone(scan);
  return (
    <>
      <div class="stats">
        <div class="stat">
          <span class="label">Status</span>
          <span class="value" data-testid="scan-status">
            {scan.status}
          </span>
        </div>
        <div class="stat">
          <span class="label">Grade</span>
          <span class="value" data-testid="scan-grade">
            {scan.grade ?? "—"}
          </span>
        </div>
        <div class="stat">
          <span class="label">Score</span>
          <span class="value">{scan.score ?? "—"}</span>
        </div>
      </div>
      <p class="break">
        {scan.target_url}
        {scan.final_url && scan.final_url !== scan.target_url ? <> → {scan.final_url}</> : null}
        {scan.status_code ? <> · HTTP {scan.status_code}</> : null}
      </p>
      {done ? null : <p class="muted">The scan is {scan.status}: this page refreshes itself when it ends (or reload).</p>}
      {scan.error ? <p class="warning">The scan failed: {scan.error}</p> : null}
      {scan.tests.length > 0 ? (
        <TableWrap label="Tests">
          <table>
            <caption class="skip">Tests</caption>
            <ColumnHeads names={["Test", "Result", "Score", "What it means, what to fix"]} />
            <tbody>
              {scan.tests.map((t) => (
                <tr data-testid="scan-test-row" data-pass={String(t.pass)}>
                  <td>{t.name}</td>
                  <td>
                    <StatusBadge status={t.pass ? "pass" : "fail"} tone={t.pass ? "ok" : "danger"} /> <code>{t.result}</code>
                  </td>
                  <td>{t.score_modifier > 0 ? `+${t.score_modifier}` : t.score_modifier}</td>
                  <td>{t.description}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      ) : null}
    </>
  );
}

auditScanPages.get("/audit/projects/:project_id/scans/:scan_id", async (c) => {
  const scope = scopeOf(c);
  const scan = await getScan(c.env, scope, c.req.param("scan_id"));
  return page(
    c,
    { title: `Scan · ${scan.target_url}`, active: "audit" },
    <>
      <div class="row-actions">
        <a href={teamPath(c, scansPath(scope))}>← Scans</a>
      </div>
      <Live url={`${teamPath(c, `${scansPath(scope)}/${scan.id}`)}/live`} pending={!scanDone(scan)} testid="scan-live">
        <ScanBody scan={scan} />
      </Live>
    </>,
  );
});

auditScanPages.post("/audit/projects/:project_id/scan-schedules", async (c) => {
  requireRole(c, "developer");
  const scope = scopeOf(c);
  const every = await formText(c, "every");
  if (!(SCAN_EVERY as readonly string[]).includes(every)) throw ApiError.validation({ every: ["must be day or week"] });
  await createSchedule(c.env, scope, { target_url: await formText(c, "target_url"), every: every as ScanEvery });
  return redirectTo(c, scansPath(scope), "schedule-added");
});

auditScanPages.post("/audit/projects/:project_id/scan-schedules/:schedule_id/delete", async (c) => {
  requireRole(c, "developer");
  const scope = scopeOf(c);
  await deleteSchedule(c.env, scope, c.req.param("schedule_id"));
  return redirectTo(c, scansPath(scope), "schedule-deleted");
});

// The scan's part alone, refreshed by its page while the scan is queued or running (client/live.ts).
auditScanPages.get("/audit/projects/:project_id/scans/:scan_id/live", async (c) => {
  const scope = scopeOf(c);
  const scan = await getScan(c.env, scope, c.req.param("scan_id"));
  return fragment(
    c,
    <Live url={`${teamPath(c, `${scansPath(scope)}/${scan.id}`)}/live`} pending={!scanDone(scan)} testid="scan-live">
      <ScanBody scan={scan} />
    </Live>,
  );
});
