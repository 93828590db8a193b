/** @jsxImportSource hono/jsx */
// The audit pages: the team's audit projects (the first finding's curl when there is none), and one
// project's live summary (open findings, pass and regression rates, the 7-day burn-down as an SVG
// chart), its reports with the export buttons (HTML, CSV, JSON), the artefacts to download, a
// share link made on demand (shown once, to writers) and the revocation of every share; its
// findings listed with a status filter, recorded (also from the empty audit page), changed and
// verified. The same
// services as /api/v1/orgs/{org_id}/projects/{project_id}/audit.
import { Hono, type Context } from "hono";
import { FINDING_STATUSES, REPORT_FORMATS, type FindingStatus, type ReportFormat } from "../../../db/schema/audit";
import { ApiError } from "../../../platform/errors";
import { listFindings } from "../audit-findings.service";
import { revokeShares, shareReport } from "../audit-share.service";
import { computeSummary } from "../audit-summary.service";
import { artefactHeaders, getReport, listProjects, listReports, readArtefact, startExport } from "../audit.service";
import { ColumnChart } from "../../../console/charts";
import { formText } from "../../../console/forms";
import { Time } from "../../../console/layout";
import { page, redirectTo, teamPath } from "../../../console/render";
import { redirectWithFlash, takeFlash } from "../../../console/flash";
import { requireRole, roleAtLeast, type ConsoleEnv } from "../../../console/session";
import { CopyBlock, pageNumber, Pager, quotaOwnerOf, StatusBadge, TableWrap } from "../../../console/pages/parts";
import { settings } from "../../../platform/config";
import { auditScanPages } from "./audit-scan-pages";
import { auditFindingPages, Findings, FINDINGS_PAGE, NewFindingForm, scopeOf } from "./audit-findings";

export const auditPages = new Hono<ConsoleEnv>();
// Scans of a project and their schedules (audit-scan-pages.tsx).
auditPages.route("/", auditScanPages);
// Findings: recorded, changed and verified (audit-findings.tsx).
auditPages.route("/", auditFindingPages);

const canWrite = (c: Context<ConsoleEnv>) => roleAtLeast(c.get("consoleTeam").role, "developer");

const FORMAT_LABELS: Record<ReportFormat, string> = { pdf: "HTML report", csv: "CSV", json: "JSON" };
const STATUS_TONE = { queued: "gray", exporting: "warn", exported: "ok", shared: "", failed: "danger" } as const;
const pct = (rate: number) => `${Math.round(rate * 1000) / 10}%`;

auditPages.get("/audit", async (c) => {
  const teamId = c.get("consoleTeam").id;
  const projects = await listProjects(c.env, teamId);
  const api = `${settings(c.env).appOrigin}/api/v1`;
  return page(
    c,
    { title: "Audit", active: "audit" },
    projects.length === 0 ? (
      <section class="section">
        <h2>Record your first finding</h2>
        <p>
          Audit projects appear here once they have a finding or a report. Record one with a key that has <code>audit:write</code>:
        </p>
        {canWrite(c) ? <NewFindingForm action={teamPath(c, "audit/findings")} withProject /> : null}
        <p class="muted">Or over the API:</p>
        <CopyBlock
          id="create-finding-curl"
          text={`curl -X POST ${api}/orgs/${teamId}/projects/my-app/audit/findings \\\n  -H "Authorization: Bearer $EDP_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '{"title": "Missing rate limit on login", "priority_score": 80}'`}
        />
      </section>
    ) : (
      <section class="section">
        <ul class="timeline">
          {projects.map((p) => (
            <li data-testid="audit-project">
              <a href={teamPath(c, `audit/projects/${encodeURIComponent(p)}`)}>{p}</a>
            </li>
          ))}
        </ul>
        {canWrite(c) ? (
          <details>
            <summary>Record a finding in a new project</summary>
            <NewFindingForm action={teamPath(c, "audit/findings")} withProject />
          </details>
        ) : null}
      </section>
    ),
  );
});

interface Shared {
  url: string;
  reportId: string;
}

async function projectPage(c: Context<ConsoleEnv>) {
  const scope = scopeOf(c);
  const query = { page: pageNumber(c), per_page: 20 };
  const status = c.req.query("status");
  const filter = (FINDING_STATUSES as readonly string[]).includes(status ?? "") ? (status as FindingStatus) : undefined;
  const findingsQuery = { status: filter, page: pageNumber(c, "findings_page"), per_page: FINDINGS_PAGE };
  const [summary, reports, shared, findings] = await Promise.all([
    computeSummary(c.env, scope),
    listReports(c.env, scope, query),
    takeFlash<Shared>(c, "shared"),
    listFindings(c.env, scope, findingsQuery),
  ]);
  const base = teamPath(c, `audit/projects/${encodeURIComponent(scope.projectId)}`);
  const writer = canWrite(c);
  const anyShared = reports.items.some((r) => r.status === "shared");
  return page(
    c,
    {
      title: `Audit · ${scope.projectId}`,
      active: "audit",
      notices: {
        "export-queued": "Export queued. The report is ready to download in a few seconds: reload this page.",
        revoked: "Every share link of this project is revoked.",
        shared: "Share link created.",
        "finding-created": "Finding recorded.",
        "finding-saved": "Finding saved.",
        "finding-verified": "Verification recorded.",
      },
    },
    <>
      <div class="row-actions">
        <a href={teamPath(c, "audit")}>← Projects</a>
        <a href={`${base}/scans`} data-testid="audit-scans-link">
          Scans and schedules
        </a>
      </div>
      <div class="stats">
        <div class="stat">
          <span class="label">Open findings</span>
          <span class="value" data-testid="open-findings">
            {summary.open_findings}
          </span>
        </div>
        <div class="stat">
          <span class="label">Verification pass rate</span>
          <span class="value">{pct(summary.verification_pass_rate)}</span>
        </div>
        <div class="stat">
          <span class="label">Regression rate</span>
          <span class="value">{pct(summary.regression_rate)}</span>
        </div>
      </div>
      <section class="section question-card" aria-labelledby="burn-title">
        <h2 id="burn-title">Open risk, last 7 days</h2>
        <ColumnChart
          id="burn-down"
          title={`Open risk score per day, ${summary.risk_burn_down[0].date} to ${summary.risk_burn_down[6].date}`}
          data={summary.risk_burn_down.map((d) => ({ label: d.date.slice(5), value: Math.round(d.open_risk_score * 100) / 100 }))}
        />
      </section>

      <Findings base={base} findings={findings} query={findingsQuery} writer={writer} />

      <section class="section" aria-labelledby="reports-title">
        <h2 id="reports-title">Reports</h2>
        {writer ? (
          <form method="post" action={`${base}/export`} class="row-actions" data-testid="export-report">
            <span>Export the summary as</span>
            {REPORT_FORMATS.map((format) => (
              <button type="submit" name="format" value={format} class="secondary small">
                {FORMAT_LABELS[format]}
              </button>
            ))}
          </form>
        ) : null}
        {shared && writer ? (
          <div data-testid="share-link">
            <p class="warning">Anyone with this link can read the report for 48 hours, until you revoke it. It is shown only now.</p>
            <CopyBlock id="share-url" text={shared.url} label="Copy link" />
          </div>
        ) : c.req.query("notice") === "shared" ? (
          <p class="muted">The share link was shown once and is not shown again; revoke the shares if you did not copy it.</p>
        ) : null}
        {reports.items.length === 0 ? (
          <p class="empty">No report yet.{writer ? " Export one above." : ""}</p>
        ) : (
          <>
            <TableWrap label="Reports, newest first">
              <table>
                <caption class="skip">Reports, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Created</th>
                    <th scope="col">Period</th>
                    <th scope="col">Format</th>
                    <th scope="col">Status</th>
                    <th scope="col">
                      <span class="skip">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {reports.items.map((r) => {
                    const ready = r.status === "exported" || r.status === "shared";
                    return (
                      <tr data-testid="report-row" data-status={r.status}>
                        <td>
                          <Time iso={r.created_at} />
                        </td>
                        <td>
                          {r.period_start} – {r.period_end}
                        </td>
                        <td>{FORMAT_LABELS[r.format]}</td>
                        <td>
                          <StatusBadge status={r.status} tone={STATUS_TONE[r.status]} />
                          {r.shared_at && r.status === "shared" ? (
                            <span class="muted small">
                              {" "}
                              since <Time iso={r.shared_at} />
                            </span>
                          ) : null}
                        </td>
                        <td>
                          <div class="row-actions">
                            {ready ? (
                              <a class="button secondary small" href={`${base}/reports/${r.id}/download`} data-testid="download-report" download>
                                Download
                              </a>
                            ) : null}
                            {ready && writer ? (
                              <form method="post" action={`${base}/share`}>
                                <input type="hidden" name="report_id" value={r.id} />
                                <button type="submit" class="secondary small" data-testid="share-report">
                                  Create share link
                                </button>
                              </form>
                            ) : null}
                          </div>
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </TableWrap>
            <Pager base={base} page={query.page} pages={Math.ceil(reports.total / query.per_page)} />
          </>
        )}
        {anyShared && writer ? (
          <form method="post" action={`${base}/share/revoke`} class="row-actions">
            <button type="submit" class="danger small" data-testid="revoke-shares">
              Revoke every share link
            </button>
          </form>
        ) : null}
      </section>
    </>,
  );
}

auditPages.get("/audit/projects/:project_id", (c) => projectPage(c));

auditPages.post("/audit/projects/:project_id/export", async (c) => {
  requireRole(c, "developer");
  const scope = scopeOf(c);
  const format = await formText(c, "format");
  if (!(REPORT_FORMATS as readonly string[]).includes(format)) throw ApiError.validation({ format: ["must be pdf, csv or json"] });
  await startExport(c.env, await quotaOwnerOf(c), scope, { format: format as ReportFormat });
  return redirectTo(c, `audit/projects/${encodeURIComponent(scope.projectId)}`, "export-queued");
});

auditPages.post("/audit/projects/:project_id/share", async (c) => {
  requireRole(c, "developer");
  const scope = scopeOf(c);
  const reportId = await formText(c, "report_id");
  if (!reportId) throw ApiError.validation({ report_id: ["choose a report"] });
  const result = await shareReport(c.env, scope, await quotaOwnerOf(c), { channel: "link", report_id: reportId });
  return redirectWithFlash(c, `audit/projects/${encodeURIComponent(scope.projectId)}`, "shared", {
    url: result.share_url,
    reportId: result.id,
  } satisfies Shared);
});

// The share form's own address opened (a bookmark, the address bar of an older console): the project's page.
auditPages.get("/audit/projects/:project_id/share", (c) => c.redirect(teamPath(c, `audit/projects/${encodeURIComponent(scopeOf(c).projectId)}`), 303));

auditPages.post("/audit/projects/:project_id/share/revoke", async (c) => {
  requireRole(c, "developer");
  const scope = scopeOf(c);
  await revokeShares(c.env, scope);
  return redirectTo(c, `audit/projects/${encodeURIComponent(scope.projectId)}`, "revoked");
});

auditPages.get("/audit/projects/:project_id/reports/:report_id/download", async (c) => {
  const row = await getReport(c.env, scopeOf(c), c.req.param("report_id"));
  const object = await readArtefact(c.env, row);
  if (!object) throw new ApiError("report_not_ready", "This report has no file yet: its export has not finished.");
  return new Response(object.body, { headers: { ...artefactHeaders(row, object), "cache-control": "private, no-store" } });
});
