// What every audit API route shares: the path prefix, the envelope of answers and paged lists, the
// caller's scope, the scope middleware (auth() and the org check run router-wide, see
// audit.routes.ts) and the route helper with the tag and the error responses in the audit envelope.
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { requireScope } from "../../platform/auth";
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

/** `createRoute` of the audit API: 401/403/429 keep the platform's bodies, 404/422 are enveloped. */
export const route = productRoutes({
  tags: ["Audit"],
  security: "bearer",
  errors: {
    404: jsonResponse("`not_found`: unknown id, another team's id, or `org_id` not the caller's team", AuditErrorSchema),
    422: jsonResponse("`invalid_params` (with `details` per field)", AuditErrorSchema),
  },
});
export const read = requireScope("audit:read");
export const write = requireScope("audit:write");
