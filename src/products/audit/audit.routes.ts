// The audit API under /api/v1/orgs/{org_id}/projects/{project_id}/audit: one router that mounts the
// routers of each job: findings and verifications (audit-findings.routes.ts), the summary, export
// and reports (audit-reports.routes.ts), share and revoke (audit-share.routes.ts), scans and their
// schedules (audit-scan.routes.ts), in the order
// their operations appear in the OpenAPI document. Each route declares its scope; the org check
// and the JSON-body check run on every route after authentication (audit.openapi.ts), and on a
// path under the prefix that no route serves. Every response uses the audit envelope
// `{data, meta: {request_id}, error}`; the formatter below renders errors in it.
import type { ErrorFormatter } from "../../platform/errors";
import { createRouter } from "../../platform/router";
import { route } from "./audit.openapi";
import { auditFindingsRouter } from "./audit-findings.routes";
import { auditReportsRouter } from "./audit-reports.routes";
import { auditShareRouter } from "./audit-share.routes";
import { auditScanRouter } from "./audit-scan.routes";

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

export const auditRouter = createRouter({ errorFormat: auditErrorFormat });
auditRouter.route("/", auditFindingsRouter);
auditRouter.route("/", auditReportsRouter);
auditRouter.route("/", auditShareRouter);
auditRouter.route("/", auditScanRouter);
// A path under the audit prefix that no route serves runs the same checks before its 404 or 405.
auditRouter.use("/:org_id/projects/:project_id/audit/*", ...route.unmatched());
