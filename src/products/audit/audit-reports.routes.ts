// Audit routes of reports: the live summary, starting an export, and the export records with
// their artefact's download.
import { z } from "@hono/zod-openapi";
import { ApiError, zodDetails } from "../../platform/errors";
import { authResponses, jsonResponse } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { computeSummary } from "./audit-summary.service";
import { BASE, ok, okPage, route, scopeOf } from "./audit.openapi";
import {
  AuditErrorSchema,
  envelope,
  ExportBody,
  ListMeta,
  ListReportsQuery,
  ProjectParams,
  Report,
  ReportParams,
  Summary,
  SummaryQuery,
} from "./audit.schemas";
import { artefactHeaders, getReport, listReports, readArtefact, reportView, startExport } from "./audit.service";

export const auditReportsRouter = createRouter();

auditReportsRouter.openapi(
  route({
    method: "get",
    path: `${BASE}/reports/summary`,
    operationId: "getAuditReportSummary",
    summary: "Live report summary",
    description:
      "Computed from current data. `risk_burn_down` has 7 entries, today and the previous 6 UTC days, each the sum of `priority_score` of findings non-terminal at the end of that day (today: now). `date_from` and `date_to` are accepted and ignored.",
    scope: "audit:read",
    request: { params: ProjectParams, query: SummaryQuery },
    responses: { 200: jsonResponse("The summary", envelope(Summary)) },
  }),
  async (c) => {
    const { project_id } = c.req.valid("param");
    return c.json(ok(c, await computeSummary(c.env, scopeOf(c, project_id))), 200);
  },
);

auditReportsRouter.openapi(
  route({
    method: "post",
    path: `${BASE}/reports/export`,
    operationId: "exportAuditReport",
    summary: "Export the summary as an artefact",
    description:
      "Consumes one AI quota unit (429 `quota_exceeded` when exhausted), records the live summary as the snapshot and answers 202 with the record in `queued`. The export worker moves it to `exporting`, writes the artefact to storage and sets `exported` and `exported_at` (or `failed`). `pdf` yields a self-contained HTML page (`text/html`). Dates are `YYYY-MM-DD`; `period_start` defaults to 6 days ago, `period_end` to today; start must not be after end. The period is recorded on the report; the snapshot is always the live summary.",
    scope: "audit:write",
    idempotent: true,
    request: { params: ProjectParams, body: { required: false, content: { "application/json": { schema: ExportBody, example: { format: "json" } } } } },
    responses: {
      202: jsonResponse("The report record, `queued`", envelope(Report)),
      429: jsonResponse(
        "`quota_exceeded` (enveloped), or the platform rate-limit body",
        z.union([AuditErrorSchema, authResponses[429].content["application/json"].schema]),
      ),
    },
  }),
  async (c) => {
    const { project_id } = c.req.valid("param");
    // Without a content-type the framework hands over `{}` unparsed: parse here so defaults apply.
    const parsed = ExportBody.safeParse(c.req.valid("json") ?? {});
    if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
    const report = await startExport(c.env, c.get("principal"), scopeOf(c, project_id), parsed.data);
    return c.json(ok(c, report), 202);
  },
);

auditReportsRouter.openapi(
  route({
    method: "get",
    path: `${BASE}/reports`,
    operationId: "listAuditReports",
    summary: "List report export records",
    description: "Newest first (`created_at`, then id); optional `status`; `page` and `per_page` (default 20, max 100).",
    scope: "audit:read",
    request: { params: ProjectParams, query: ListReportsQuery },
    responses: { 200: jsonResponse("Reports", z.object({ data: z.array(Report), meta: ListMeta, error: z.null() })) },
  }),
  async (c) => {
    const { project_id } = c.req.valid("param");
    const query = c.req.valid("query");
    const { items, total } = await listReports(c.env, scopeOf(c, project_id), query);
    return c.json(okPage(c, items, total, query), 200);
  },
);

auditReportsRouter.openapi(
  route({
    method: "get",
    path: `${BASE}/reports/{id}`,
    operationId: "getAuditReport",
    summary: "Get a report export record",
    description:
      "Requires `audit:read`. An export record: its status (`queued`, `exporting`, `exported`, `shared`, `failed`), format, period and the summary snapshot taken at export time. Download the artefact with `downloadAuditReport` once it is `exported`.",
    scope: "audit:read",
    request: { params: ReportParams },
    responses: { 200: jsonResponse("The report", envelope(Report)) },
  }),
  async (c) => {
    const { project_id, id } = c.req.valid("param");
    return c.json(ok(c, reportView(await getReport(c.env, scopeOf(c, project_id), id))), 200);
  },
);

auditReportsRouter.openapi(
  route({
    method: "get",
    path: `${BASE}/reports/{id}/download`,
    operationId: "downloadAuditReport",
    summary: "Download a report's artefact",
    description:
      "Streams the artefact with its content type (`application/json`, `text/csv`, or `text/html` for `pdf`) as an attachment. A report whose artefact is not written yet (`queued`, `exporting`, `failed`) answers 409 `report_not_ready`.",
    scope: "audit:read",
    request: { params: ReportParams },
    responses: {
      200: {
        description: "The artefact",
        content: {
          "application/json": { schema: z.object({}).passthrough() },
          "text/csv": { schema: z.string() },
          "text/html": { schema: z.string() },
        },
      },
      409: jsonResponse("`report_not_ready`", AuditErrorSchema),
    },
  }),
  async (c) => {
    const { project_id, id } = c.req.valid("param");
    const row = await getReport(c.env, scopeOf(c, project_id), id);
    const object = await readArtefact(c.env, row);
    if (!object) throw new ApiError("report_not_ready", `Report ${row.id} has no artefact yet (status ${row.status})`);
    return new Response(object.body, {
      headers: {
        ...artefactHeaders(row, object),
        "cache-control": "private, no-store",
        "x-content-type-options": "nosniff",
      },
    });
  },
);
