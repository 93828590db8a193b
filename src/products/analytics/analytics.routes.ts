// HTTP surface of analytics: the authenticated API under /api/v1/analytics (sites and realtime,
// the query), and the public ingest and tracker (analytics-ingest.routes.ts), all in the product's
// `{error}` shape.
import { createRouter } from "../../platform/router";
import { analyticsErrorFormat, route } from "./analytics.openapi";
import { analyticsQueryRouter } from "./analytics-query.routes";
import { analyticsSitesRouter } from "./analytics-sites.routes";

export { analyticsEventRouter, analyticsScriptRouter } from "./analytics-ingest.routes";

export const analyticsRouter = createRouter({ errorFormat: analyticsErrorFormat });
analyticsRouter.route("/sites", analyticsSitesRouter);
analyticsRouter.route("/", analyticsQueryRouter);
// A path no route serves is authenticated like the routes before its 404 or 405.
analyticsRouter.use("*", ...route.unmatched("analytics:read"));
