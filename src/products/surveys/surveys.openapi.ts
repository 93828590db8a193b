// What every authenticated survey route shares: the route helper with the tag and the error
// responses in the survey body shape (each route declares its scope there, so its authentication
// is attached per route: the public response flow shares the /surveys prefix and never runs
// auth()), and the survey error body.
import { z } from "@hono/zod-openapi";
import type { ErrorFormatter } from "../../platform/errors";
import { jsonResponse, productRoutes } from "../../platform/openapi";
import { SurveyErrorSchema } from "./surveys.schemas";

/** `createRoute` of the authenticated survey routes. */
export const route = productRoutes({
  tags: ["Surveys"],
  security: "bearer",
  errorBody: SurveyErrorSchema,
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
