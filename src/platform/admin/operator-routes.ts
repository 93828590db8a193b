// What a product needs to declare operator routes (the operator API's routes it owns, such as a
// one-time migration): the route helper with the operator's security and errors, and the router
// factory. A product exports its router (`logsAdminRoutes`) and admin.routes.ts mounts it in one
// line; every route declared with `operatorRoute` checks the operator's token, and admin.routes.ts
// gives a path no route serves the same check before its 404.
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { jsonResponse, productRoutes, RateLimitErrorSchema } from "../openapi";
import { adminAuth } from "../auth";
import { createRouter } from "../router";
import { AdminError } from "./admin.schemas";

/** `createRoute` of the operator API: the operator's token, and the errors every route can answer. */
export const operatorRoute = productRoutes({
  tags: ["Operator"],
  security: [{ adminToken: [] }],
  authenticate: adminAuth(),
  errorBody: AdminError,
  errors: {
    401: jsonResponse("Invalid or missing admin token", AdminError),
    404: jsonResponse("Not found", AdminError),
    422: jsonResponse("Validation failed", AdminError),
    // adminAuth counts failed token attempts per IP in the `anonymous` bucket.
    429: jsonResponse("Too many failed admin-token attempts from this IP", RateLimitErrorSchema),
  },
});

/** A product's operator routes, mounted by admin.routes.ts under /api/v1/admin/<product>. */
export function createOperatorRouter(): OpenAPIHono<AppEnv> {
  return createRouter();
}
