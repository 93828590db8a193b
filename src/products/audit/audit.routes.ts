// The audit API under /api/v1/orgs/{org_id}/projects/{project_id}/audit: one router that runs
// auth(), the org check and the JSON-body check for every path under the prefix, and mounts the
// routers of each job: findings and verifications (audit-findings.routes.ts), the summary, export
// and reports (audit-reports.routes.ts), share and revoke (audit-share.routes.ts), in the order
// their operations appear in the OpenAPI document. Every response uses the audit envelope
// `{data, meta: {request_id}, error}`; the formatter below renders errors in it.
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../env";
import { auth } from "../../platform/auth";
import { ApiError, type ErrorFormatter } from "../../platform/errors";
import { createRouter } from "../../platform/router";
import { auditFindingsRouter } from "./audit-findings.routes";
import { auditReportsRouter } from "./audit-reports.routes";
import { auditShareRouter } from "./audit-share.routes";

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
auditRouter.route("/", auditFindingsRouter);
auditRouter.route("/", auditReportsRouter);
auditRouter.route("/", auditShareRouter);
