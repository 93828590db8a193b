// The audit API under /api/v1/orgs/{org_id}/projects/{project_id}/audit: findings, verifications,
// the live summary, export, reports and their download, share and revoke. Every response uses
// the audit envelope `{data, meta: {request_id}, error}`; the formatter below renders errors in it.
import { createRoute, z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../../env";
import { auth, requireScope } from "../../platform/auth";
import { ApiError, zodDetails, type ErrorFormatter } from "../../platform/errors";
import { authResponses, jsonBody, jsonResponse } from "../../platform/openapi";
import { rateLimit } from "../../platform/rate-limit/middleware";
import { bearerSecurity, createRouter } from "../../platform/router";
import {
  AuditErrorSchema,
  CreateFindingBody,
  CreateVerificationBody,
  envelope,
  ExportBody,
  Finding,
  FindingDetail,
  FindingParams,
  ListFindingsQuery,
  ListMeta,
  ListReportsQuery,
  PatchFindingBody,
  ProjectParams,
  Report,
  ReportParams,
  RevokeResult,
  ShareBody,
  ShareResult,
  Summary,
  SummaryQuery,
  Verification,
} from "./audit.schemas";
import {
  addVerification,
  computeSummary,
  createFinding,
  fileNameOf,
  getFinding,
  getReport,
  listFindings,
  listReports,
  readArtefact,
  reportView,
  revokeShares,
  shareReport,
  startExport,
  updateFinding,
  type Scope,
} from "./audit.service";

/** The envelope's error codes for the platform's ApiError codes; others keep their own code. */
const ERROR_CODES: Record<string, string> = {
  validation: "invalid_params",
  bad_request: "invalid_params",
  monthly_quota: "quota_exceeded",
  not_found: "not_found",
  internal: "internal_error",
};

/** The audit envelope: `{data: null, meta: {request_id}, error: {code, message[, details]}}`. */
const auditErrorFormat: ErrorFormatter = (error, requestId) => ({
  data: null,
  meta: { request_id: requestId },
  error: {
    code: ERROR_CODES[error.code] ?? error.code,
    message: error.message,
    ...(error.details ? { details: error.details } : {}),
  },
});

const BASE = "/{org_id}/projects/{project_id}/audit";

/** `org_id` must be the caller's own team: any other answers 404, so no other team is confirmed. */
const ownOrg: MiddlewareHandler<AppEnv> = async function ownOrg(c, next) {
  if (c.req.param("org_id") !== c.get("principal").teamId) throw ApiError.notFound();
  await next();
};

/**
 * Bodies must be JSON: a malformed or non-JSON body is `invalid_params` (422) in the envelope,
 * not the framework's bare 400/415. A blank body counts as `{}`.
 */
const jsonOnly: MiddlewareHandler<AppEnv> = async function jsonOnly(c, next) {
  if (c.req.method !== "POST" && c.req.method !== "PATCH") return next();
  const text = await c.req.text();
  if (text.trim() === "") {
    // Hono caches bodies as promises; json() parses the cached text.
    Object.assign(c.req.bodyCache, { text: Promise.resolve("{}") });
    return next();
  }
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/([\w.-]+\+)?json\s*(;|$)/i.test(type)) {
    throw ApiError.validation({ _body: ["must be JSON with content-type application/json"] });
  }
  try {
    JSON.parse(text);
  } catch {
    throw ApiError.validation({ _body: ["is not valid JSON"] });
  }
  await next();
};

export const auditRouter = createRouter({ errorFormat: auditErrorFormat });
auditRouter.use("/:org_id/projects/:project_id/audit/*", auth(), ownOrg, jsonOnly);

const ok = <T>(c: Context<AppEnv>, data: T) => ({ data, meta: { request_id: c.get("requestId") }, error: null });
/** The envelope of a paginated list: `meta` adds the page numbers. */
const okPage = <T>(c: Context<AppEnv>, items: T[], total: number, query: { page: number; per_page: number }) => ({
  data: items,
  meta: {
    request_id: c.get("requestId"),
    pagination: { page: query.page, per_page: query.per_page, total, total_pages: Math.ceil(total / query.per_page) },
  },
  error: null,
});
const scopeOf = (c: Context<AppEnv>, projectId: string): Scope => ({ teamId: c.get("principal").teamId, projectId });

const errors = {
  ...authResponses,
  404: jsonResponse("`not_found`: unknown id, another team's id, or `org_id` not the caller's team", AuditErrorSchema),
  422: jsonResponse("`invalid_params` (with `details` per field)", AuditErrorSchema),
};
const tags = ["Audit"];
const read = requireScope("audit:read");
const write = requireScope("audit:write");

// ---- findings -------------------------------------------------------------------------------

auditRouter.openapi(
  createRoute({
    method: "post",
    path: `${BASE}/findings`,
    operationId: "createAuditFinding",
    tags,
    summary: "Create a finding",
    description: "A finding starts its status history with its initial status (default `new`). `priority_score` weighs it in the risk burn-down.",
    security: bearerSecurity,
    middleware: write,
    request: { params: ProjectParams, body: jsonBody(CreateFindingBody) },
    responses: { 201: jsonResponse("The finding", envelope(Finding)), ...errors },
  }),
  async (c) => {
    const { project_id } = c.req.valid("param");
    return c.json(ok(c, await createFinding(c.env, scopeOf(c, project_id), c.req.valid("json"))), 201);
  },
);

auditRouter.openapi(
  createRoute({
    method: "get",
    path: `${BASE}/findings`,
    operationId: "listAuditFindings",
    tags,
    summary: "List findings",
    description: "Newest first; optional `status` filter; `page` (1-based) and `per_page` (default 50, max 100). `meta.pagination` carries the totals.",
    security: bearerSecurity,
    middleware: read,
    request: { params: ProjectParams, query: ListFindingsQuery },
    responses: {
      200: jsonResponse("Findings", z.object({ data: z.array(Finding), meta: ListMeta, error: z.null() })),
      ...errors,
    },
  }),
  async (c) => {
    const { project_id } = c.req.valid("param");
    const query = c.req.valid("query");
    const { items, total } = await listFindings(c.env, scopeOf(c, project_id), query);
    return c.json(okPage(c, items, total, query), 200);
  },
);

auditRouter.openapi(
  createRoute({
    method: "get",
    path: `${BASE}/findings/{id}`,
    operationId: "getAuditFinding",
    tags,
    summary: "Get a finding with its status history and verifications",
    security: bearerSecurity,
    middleware: read,
    request: { params: FindingParams },
    responses: { 200: jsonResponse("The finding", envelope(FindingDetail)), ...errors },
  }),
  async (c) => {
    const { project_id, id } = c.req.valid("param");
    return c.json(ok(c, await getFinding(c.env, scopeOf(c, project_id), id)), 200);
  },
);

auditRouter.openapi(
  createRoute({
    method: "patch",
    path: `${BASE}/findings/{id}`,
    operationId: "updateAuditFinding",
    tags,
    summary: "Change a finding's status, priority or title",
    description:
      "Each change of `status` or `priority_score` appends to the status history, which the burn-down reads. Moving from `resolved` or `dismissed` back to a non-terminal status makes the finding a regression while it stays non-terminal. A concurrent change of the same finding answers 409 `conflict`.",
    security: bearerSecurity,
    middleware: write,
    request: { params: FindingParams, body: jsonBody(PatchFindingBody) },
    responses: {
      200: jsonResponse("The finding", envelope(FindingDetail)),
      409: jsonResponse("`conflict`: changed concurrently", AuditErrorSchema),
      ...errors,
    },
  }),
  async (c) => {
    const { project_id, id } = c.req.valid("param");
    return c.json(ok(c, await updateFinding(c.env, scopeOf(c, project_id), id, c.req.valid("json"))), 200);
  },
);

auditRouter.openapi(
  createRoute({
    method: "post",
    path: `${BASE}/findings/{id}/verifications`,
    operationId: "createAuditFindingVerification",
    tags,
    summary: "Record a verification of a finding",
    description: "`result` is `passed` or `failed`; the summary's `verification_pass_rate` is passed over all verifications of the project.",
    security: bearerSecurity,
    middleware: write,
    request: { params: FindingParams, body: jsonBody(CreateVerificationBody) },
    responses: { 201: jsonResponse("The verification", envelope(Verification)), ...errors },
  }),
  async (c) => {
    const { project_id, id } = c.req.valid("param");
    return c.json(ok(c, await addVerification(c.env, scopeOf(c, project_id), id, c.req.valid("json"))), 201);
  },
);

// ---- summary and export ---------------------------------------------------------------------

auditRouter.openapi(
  createRoute({
    method: "get",
    path: `${BASE}/reports/summary`,
    operationId: "getAuditReportSummary",
    tags,
    summary: "Live report summary",
    description:
      "Computed from current data. `risk_burn_down` has 7 entries, today and the previous 6 UTC days, each the sum of `priority_score` of findings non-terminal at the end of that day (today: now). `date_from` and `date_to` are accepted and ignored.",
    security: bearerSecurity,
    middleware: read,
    request: { params: ProjectParams, query: SummaryQuery },
    responses: { 200: jsonResponse("The summary", envelope(Summary)), ...errors },
  }),
  async (c) => {
    const { project_id } = c.req.valid("param");
    return c.json(ok(c, await computeSummary(c.env, scopeOf(c, project_id))), 200);
  },
);

auditRouter.openapi(
  createRoute({
    method: "post",
    path: `${BASE}/reports/export`,
    operationId: "exportAuditReport",
    tags,
    summary: "Export the summary as an artefact",
    description:
      "Consumes one AI quota unit (429 `quota_exceeded` when exhausted), records the live summary as the snapshot and answers 202 with the record in `queued`. The export worker moves it to `exporting`, writes the artefact to storage and sets `exported` and `exported_at` (or `failed`). `pdf` yields a self-contained HTML page (`text/html`). Dates are `YYYY-MM-DD`; `period_start` defaults to 6 days ago, `period_end` to today; start must not be after end. The period is recorded on the report; the snapshot is always the live summary.",
    security: bearerSecurity,
    middleware: write,
    request: { params: ProjectParams, body: { required: false, content: { "application/json": { schema: ExportBody } } } },
    responses: {
      202: jsonResponse("The report record, `queued`", envelope(Report)),
      ...errors,
      429: jsonResponse("`quota_exceeded` (enveloped), or the platform rate-limit body", z.union([AuditErrorSchema, authResponses[429].content["application/json"].schema])),
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

// ---- reports --------------------------------------------------------------------------------

auditRouter.openapi(
  createRoute({
    method: "get",
    path: `${BASE}/reports`,
    operationId: "listAuditReports",
    tags,
    summary: "List report export records",
    description: "Newest first (`created_at`, then id); optional `status`; `page` and `per_page` (default 20, max 100).",
    security: bearerSecurity,
    middleware: read,
    request: { params: ProjectParams, query: ListReportsQuery },
    responses: { 200: jsonResponse("Reports", z.object({ data: z.array(Report), meta: ListMeta, error: z.null() })), ...errors },
  }),
  async (c) => {
    const { project_id } = c.req.valid("param");
    const query = c.req.valid("query");
    const { items, total } = await listReports(c.env, scopeOf(c, project_id), query);
    return c.json(okPage(c, items, total, query), 200);
  },
);

auditRouter.openapi(
  createRoute({
    method: "get",
    path: `${BASE}/reports/{id}`,
    operationId: "getAuditReport",
    tags,
    summary: "Get a report export record",
    security: bearerSecurity,
    middleware: read,
    request: { params: ReportParams },
    responses: { 200: jsonResponse("The report", envelope(Report)), ...errors },
  }),
  async (c) => {
    const { project_id, id } = c.req.valid("param");
    return c.json(ok(c, reportView(await getReport(c.env, scopeOf(c, project_id), id))), 200);
  },
);

auditRouter.openapi(
  createRoute({
    method: "get",
    path: `${BASE}/reports/{id}/download`,
    operationId: "downloadAuditReport",
    tags,
    summary: "Download a report's artefact",
    description:
      "Streams the artefact with its content type (`application/json`, `text/csv`, or `text/html` for `pdf`) as an attachment. A report whose artefact is not written yet (`queued`, `exporting`, `failed`) answers 409 `report_not_ready`.",
    security: bearerSecurity,
    middleware: read,
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
      ...errors,
    },
  }),
  async (c) => {
    const { project_id, id } = c.req.valid("param");
    const row = await getReport(c.env, scopeOf(c, project_id), id);
    const object = await readArtefact(c.env, row);
    if (!object) throw new ApiError("report_not_ready", `Report ${row.id} has no artefact yet (status ${row.status})`, { status: 409 });
    return new Response(object.body, {
      headers: {
        "content-type": object.httpMetadata?.contentType ?? "application/octet-stream",
        "content-length": String(object.size),
        "content-disposition": `attachment; filename="${fileNameOf(row)}"`,
        "cache-control": "private, no-store",
        "x-content-type-options": "nosniff",
      },
    });
  },
);

// ---- share and revoke -----------------------------------------------------------------------

auditRouter.openapi(
  createRoute({
    method: "post",
    path: `${BASE}/reports/share`,
    operationId: "shareAuditReport",
    tags,
    summary: "Share a report by email, team chat or link",
    description:
      "Runs under the `strict` bucket as well as `default` (its 429 is the platform rate-limit body). `channel` other than `email`, `chat`, `link` (or missing) → 422 `invalid_channel`. `email` needs 1 to 10 `recipients` (else 422 `invalid_params`); malformed addresses land in `rejected`, the rest are queued as platform mail carrying `share_url`. `chat` posts to `webhook_url` (SSRF-checked, 10 s timeout; delivery failures are logged only). `report_id` defaults to the most recent report (`created_at`, then id); a project with no report gets an empty placeholder JSON report first. Only an `exported` or `shared` report can be shared, else 422 `request_failed`. `share_url` is valid 48 hours and only while the report stays shared.",
    security: bearerSecurity,
    middleware: [requireScope("audit:write"), rateLimit({ bucket: "strict", family: "audit_share" })],
    request: { params: ProjectParams, body: jsonBody(ShareBody) },
    responses: {
      200: jsonResponse("The share result", envelope(ShareResult)),
      ...errors,
      422: jsonResponse("`invalid_channel`, `invalid_params` or `request_failed`", AuditErrorSchema),
    },
  }),
  async (c) => {
    const { project_id } = c.req.valid("param");
    return c.json(ok(c, await shareReport(c.env, scopeOf(c, project_id), c.get("principal"), c.req.valid("json"))), 200);
  },
);

auditRouter.openapi(
  createRoute({
    method: "delete",
    path: `${BASE}/reports/share`,
    operationId: "revokeAuditReportShare",
    tags,
    summary: "Revoke every share of the project",
    description:
      "Every `shared` report of the project goes back to `exported` and its links stop resolving. `ids` lists them; `id` is the most recently shared of them. Nothing shared → 404 `not_found`.",
    security: bearerSecurity,
    middleware: write,
    request: { params: ProjectParams },
    responses: { 200: jsonResponse("The revoke result", envelope(RevokeResult)), ...errors },
  }),
  async (c) => {
    const { project_id } = c.req.valid("param");
    return c.json(ok(c, await revokeShares(c.env, scopeOf(c, project_id))), 200);
  },
);
