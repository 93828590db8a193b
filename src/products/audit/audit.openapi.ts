// What every audit API route shares: the path prefix, the envelope of answers and paged lists, the
// caller's scope, the checks every route runs after authentication and before its scope (the org
// is the caller's team, bodies are JSON) and the route helper with the tag, those checks and the
// error responses in the audit envelope.
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../../env";
import { ApiError } from "../../platform/errors";
import { jsonResponse, productRoutes } from "../../platform/openapi";
import { pagination, type PageQuery } from "../../platform/pagination";
import type { Scope } from "./audit-summary.service";
import { AuditErrorSchema } from "./audit.schemas";

export const BASE = "/{org_id}/projects/{project_id}/audit";

export const ok = <T>(c: Context<AppEnv>, data: T) => ({ data, meta: { request_id: c.get("requestId") }, error: null });
/** The envelope of a paginated list: `meta` adds the page numbers. */
export const okPage = <T>(c: Context<AppEnv>, items: T[], total: number, query: PageQuery) => ({
  data: items,
  meta: { request_id: c.get("requestId"), pagination: pagination(query, total) },
  error: null,
});
export const scopeOf = (c: Context<AppEnv>, projectId: string): Scope => ({ teamId: c.get("principal").teamId, projectId });

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

/** `createRoute` of the audit API: 401/403/429 keep the platform's bodies, 404/422 are enveloped. */
export const route = productRoutes({
  tags: ["Audit"],
  security: "bearer",
  guards: [ownOrg, jsonOnly],
  errorBody: AuditErrorSchema,
  errors: {
    404: jsonResponse("`not_found`: unknown id, another team's id, or `org_id` not the caller's team", AuditErrorSchema),
    422: jsonResponse("`invalid_params` (with `details` per field)", AuditErrorSchema),
  },
});
