// Audit routes of sharing: share a report by email, team chat or link (also in the `strict`
// bucket), and revoke every share of the project.
import { jsonBody, jsonResponse } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { revokeShares, shareReport } from "./audit-share.service";
import { BASE, ok, route, scopeOf } from "./audit.openapi";
import { AuditErrorSchema, envelope, ProjectParams, RevokeResult, ShareBody, ShareResult } from "./audit.schemas";

export const auditShareRouter = createRouter();

auditShareRouter.openapi(
  route({
    method: "post",
    path: `${BASE}/reports/share`,
    operationId: "shareAuditReport",
    summary: "Share a report by email, team chat or link",
    description:
      "Runs under the `strict` bucket as well as `default` (its 429 is the platform rate-limit body). `channel` other than `email`, `chat`, `link` (or missing) → 422 `invalid_channel`. `email` needs 1 to 10 `recipients` (else 422 `invalid_params`); malformed addresses land in `rejected`, the rest are queued as platform mail carrying `share_url`. `chat` posts to `webhook_url` (SSRF-checked, 10 s timeout; delivery failures are logged only). `report_id` defaults to the most recent report (`created_at`, then id); a project with no report gets an empty placeholder JSON report first. Only an `exported` or `shared` report can be shared, else 422 `request_failed`. `share_url` is valid 48 hours and only while the report stays shared.",
    scope: "audit:write",
    idempotent: true,
    strict: "audit_share",
    request: { params: ProjectParams, body: jsonBody(ShareBody, { channel: "link" }) },
    responses: {
      200: jsonResponse("The share result", envelope(ShareResult)),
      422: jsonResponse("`invalid_channel`, `invalid_params` or `request_failed`", AuditErrorSchema),
    },
  }),
  async (c) => {
    const { project_id } = c.req.valid("param");
    return c.json(ok(c, await shareReport(c.env, scopeOf(c, project_id), c.get("principal"), c.req.valid("json"))), 200);
  },
);

auditShareRouter.openapi(
  route({
    method: "delete",
    path: `${BASE}/reports/share`,
    operationId: "revokeAuditReportShare",
    summary: "Revoke every share of the project",
    description:
      "Every `shared` report of the project goes back to `exported` and its links stop resolving. `ids` lists them; `id` is the most recently shared of them. Nothing shared → 404 `not_found`.",
    scope: "audit:write",
    request: { params: ProjectParams },
    responses: { 200: jsonResponse("The revoke result", envelope(RevokeResult)) },
  }),
  async (c) => {
    const { project_id } = c.req.valid("param");
    return c.json(ok(c, await revokeShares(c.env, scopeOf(c, project_id))), 200);
  },
);
