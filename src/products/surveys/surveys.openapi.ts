// What every authenticated survey route declares: the scope middleware (attached per route, never
// with use("*"): the public response flow shares the /surveys prefix and must not run auth()),
// and the route helper with the tag and the error responses in the survey body shape.
import { z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../env";
import type { ErrorFormatter } from "../../platform/errors";
import { auth, requireScope } from "../../platform/auth";
import { jsonResponse, productRoutes } from "../../platform/openapi";
import { SurveyErrorSchema } from "./surveys.schemas";

export const read: MiddlewareHandler<AppEnv>[] = [auth(), requireScope("surveys:read")];
export const write: MiddlewareHandler<AppEnv>[] = [auth(), requireScope("surveys:write")];
/** `createRoute` of the authenticated survey routes. */
export const route = productRoutes({
  tags: ["Surveys"],
  security: "bearer",
  errors: {
    404: jsonResponse("Survey, section or question not found (or another team's)", SurveyErrorSchema),
    422: jsonResponse("Validation failed: `{error, errors: {field: [message]}}`", SurveyErrorSchema),
  },
});
export const Ok = z.object({ ok: z.literal(true) });

/**
 * Survey errors: `{error}`, plus `errors: {field: [message]}` on validation failures (the spec's
 * `errors.slug: ['has already been taken']`). 401/403/429-rate-limit keep the universal shapes.
 */
export const surveysErrorFormat: ErrorFormatter = (error) =>
  error.details ? { error: error.message, errors: error.details } : { error: error.message, ...error.extra };
