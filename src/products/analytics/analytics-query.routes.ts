// POST /api/v1/analytics/query: a subset of Plausible's Stats API v2, answered from the site's
// hourly rollup (analytics-query.service.ts).
import { jsonBody, jsonResponse } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { route } from "./analytics.openapi";
import { QueryBody, QueryResultSchema } from "./analytics.schemas";
import { runQuery } from "./analytics-query.service";

export const analyticsQueryRouter = createRouter();

analyticsQueryRouter.openapi(
  route({
    method: "post",
    path: "/query",
    operationId: "queryAnalytics",
    summary: "Query a site's stats (Plausible Stats API v2 subset)",
    description:
      "`metrics`: `visitors`, `pageviews`, `events`. `date_range`: `day`, `7d`, `30d` (UTC days, today included), `month`, or `[from, to]` (UTC dates, both included, at most 400 days). `dimensions`: `event:page`, `event:name`, `visit:source` (`Direct / None` when there is none), `visit:country` (ISO code, null when unknown), `time:hour`, `time:day`. `filters`: `[op, dimension, [values]]` with `is`, `is_not`, `contains` (case-sensitive) on the first four dimensions. `order_by`: `[[metric or dimension, 'asc' | 'desc']]` (default: time ascending, else the first metric descending). `limit`: at most 10,000 rows. Answered from the hourly rollup, which holds every counted event (visitors stay distinct across hours).",
    scope: "analytics:read",
    request: {
      body: jsonBody(QueryBody, {
        site_id: "SITE_ID",
        metrics: ["visitors", "pageviews"],
        date_range: "7d",
        dimensions: ["event:page"],
        filters: [["is_not", "event:page", ["/admin"]]],
        order_by: [["visitors", "desc"]],
        limit: 10,
      }),
    },
    responses: { 200: jsonResponse("Rows of dimensions and metrics, in the order asked", QueryResultSchema) },
  }),
  async (c) => c.json(await runQuery(c.env, c.get("principal").teamId, c.req.valid("json")), 200),
);
