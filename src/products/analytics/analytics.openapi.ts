// What every analytics route shares: the helper of the authenticated routes (each declares its
// scope there), and of the public ingest, with the tag and the error responses in the product's
// `{error}` shape (`details` on validation failures).
import type { ErrorFormatter } from "../../platform/errors";
import { jsonResponse, productRoutes } from "../../platform/openapi";
import { AnalyticsErrorSchema } from "./analytics.schemas";

export const ANALYTICS_TAGS = ["Analytics"];

/** `createRoute` of the authenticated analytics routes. */
export const route = productRoutes({
  tags: ANALYTICS_TAGS,
  security: "bearer",
  errorBody: AnalyticsErrorSchema,
  errors: {
    404: jsonResponse("Site not found (also for another team's ids)", AnalyticsErrorSchema),
    422: jsonResponse("Validation failed", AnalyticsErrorSchema),
  },
});

/** `createRoute` of the public ingest and tracker: no credential, every error response its own. */
export const publicRoute = productRoutes({ tags: ANALYTICS_TAGS, security: "public" });

/** `{error}`, and `details` on validation failures. */
export const analyticsErrorFormat: ErrorFormatter = (error) => (error.details ? { error: error.message, details: error.details } : { error: error.message });
