// Authenticated routes of analytics sites: create, list, read, change, delete, and the realtime
// count of a site (visitors in the last 5 minutes).
import { z } from "@hono/zod-openapi";
import { dataResponse, jsonBody } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { route } from "./analytics.openapi";
import { CreateSiteBody, PatchSiteBody, RealtimeSchema, SiteParam, SiteSchema } from "./analytics.schemas";
import { createSite, deleteSite, getSite, listSites, patchSite } from "./analytics-sites.service";
import { realtimeVisitors } from "./analytics-query.service";

export const analyticsSitesRouter = createRouter();

analyticsSitesRouter.openapi(
  route({
    method: "post",
    path: "/",
    operationId: "createAnalyticsSite",
    summary: "Create a site",
    description:
      "Answers the site with its `id` (what the tracker sends as `domain`) and its `snippet`. A team holds at most 50 sites (422 past it). Events whose URL is neither on `domain` nor under it are answered 202 and not counted.",
    scope: "analytics:write",
    idempotent: true,
    request: { body: jsonBody(CreateSiteBody, { domain: "example.com" }) },
    responses: { 201: dataResponse("The site", SiteSchema) },
  }),
  async (c) => c.json({ data: await createSite(c.env, c.get("principal").teamId, c.req.valid("json")) }, 201),
);

analyticsSitesRouter.openapi(
  route({
    method: "get",
    path: "/",
    operationId: "listAnalyticsSites",
    summary: "List sites",
    description: "Every site of the team, newest first.",
    scope: "analytics:read",
    responses: { 200: dataResponse("The sites", z.array(SiteSchema)) },
  }),
  async (c) => c.json({ data: await listSites(c.env, c.get("principal").teamId) }, 200),
);

analyticsSitesRouter.openapi(
  route({
    method: "get",
    path: "/{id}",
    operationId: "getAnalyticsSite",
    summary: "Get a site",
    description: "The site with its snippet.",
    scope: "analytics:read",
    request: { params: SiteParam },
    responses: { 200: dataResponse("The site", SiteSchema) },
  }),
  async (c) => c.json({ data: await getSite(c.env, c.get("principal").teamId, c.req.valid("param").id) }, 200),
);

analyticsSitesRouter.openapi(
  route({
    method: "patch",
    path: "/{id}",
    operationId: "updateAnalyticsSite",
    summary: "Change a site",
    description: "`domain` and `keep_query_string`; events already counted keep what they were counted with.",
    scope: "analytics:write",
    request: { params: SiteParam, body: jsonBody(PatchSiteBody, { keep_query_string: true }) },
    responses: { 200: dataResponse("The site", SiteSchema) },
  }),
  async (c) => c.json({ data: await patchSite(c.env, c.get("principal").teamId, c.req.valid("param").id, c.req.valid("json")) }, 200),
);

analyticsSitesRouter.openapi(
  route({
    method: "delete",
    path: "/{id}",
    operationId: "deleteAnalyticsSite",
    summary: "Delete a site",
    description: "Deletes the site and every event and rollup of its store; its events answer 404 from then on.",
    scope: "analytics:write",
    request: { params: SiteParam },
    responses: { 204: { description: "Deleted" } },
  }),
  async (c) => {
    await deleteSite(c.env, c.get("principal").teamId, c.req.valid("param").id);
    return c.body(null, 204);
  },
);

analyticsSitesRouter.openapi(
  route({
    method: "get",
    path: "/{id}/realtime",
    operationId: "getAnalyticsRealtime",
    summary: "Visitors right now",
    description: "Distinct visitors of the site in the last 5 minutes (from its raw events).",
    scope: "analytics:read",
    request: { params: SiteParam },
    responses: { 200: dataResponse("The count", RealtimeSchema) },
  }),
  async (c) => c.json({ data: await realtimeVisitors(c.env, c.get("principal").teamId, c.req.valid("param").id) }, 200),
);
