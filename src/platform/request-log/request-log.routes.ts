// GET /api/v1/requests: the team's request log over the API, the same service the console's
// `requests` page reads. Scope `billing:read`, the scope of account-level reads (it already sees
// every service's usage): the log shows what every key of the team did, not one product's data.
import { z } from "@hono/zod-openapi";
import { jsonResponse, productRoutes } from "../openapi";
import { createRouter } from "../router";
import { listRequests, REQUESTS_PAGE_DEFAULT, REQUESTS_PAGE_MAX, STATUS_CLASSES } from "./request-log.service";

const ValidationError = z.object({ error: z.string(), details: z.record(z.string(), z.array(z.string())) }).openapi("RequestLogValidationError");

const RequestsQuery = z.object({
  status: z.enum(STATUS_CLASSES).optional().openapi({ description: "Only requests answered with this status class" }),
  limit: z.coerce.number().int().min(1).max(REQUESTS_PAGE_MAX).default(REQUESTS_PAGE_DEFAULT),
  cursor: z.string().max(200).optional().openapi({ description: "`pagination.next_cursor` of the previous page" }),
});

const LoggedRequestSchema = z
  .object({
    id: z.string(),
    created_at: z.string().openapi({ description: "When the request arrived" }),
    method: z.string(),
    path: z.string().openapi({ description: "The path, without its query string" }),
    status: z.number().int(),
    latency_ms: z.number().int().openapi({ description: "Milliseconds from the request's arrival to its answer" }),
    key_id: z.string(),
    key_prefix: z.string(),
    request_id: z.string().openapi({ description: "The answer's `x-request-id`" }),
    error: z.string().nullable().openapi({ description: "The error body the platform answered (4xx and 5xx), its first 4 KB; request bodies are never kept" }),
  })
  .openapi("LoggedRequest");

const RequestsPage = z
  .object({
    data: z.array(LoggedRequestSchema),
    pagination: z.object({ limit: z.number().int(), next_cursor: z.string().nullable() }),
  })
  .openapi("LoggedRequestsPage");

const route = productRoutes({ tags: ["Request log"], security: "bearer", errors: { 422: jsonResponse("Validation failed", ValidationError) } });

export const requestLogRouter = createRouter();

requestLogRouter.openapi(
  route({
    method: "get",
    path: "/",
    operationId: "listRequests",
    scope: "billing:read",
    summary: "The team's API requests of the last 7 days",
    description:
      "Every request made with one of the team's API keys in the last 7 days (at most the newest 10,000), newest first: log ingest (ingest tokens), public routes and the operator API are not in it. Written after each answer, so a request appears within moments of its answer. Scope `billing:read`.",
    request: { query: RequestsQuery },
    responses: { 200: jsonResponse("A page of requests, newest first", RequestsPage) },
  }),
  async (c) => {
    const page = await listRequests(c.env, c.get("principal").teamId, c.req.valid("query"));
    return c.json(page, 200);
  },
);

// A path no route serves gets the same check as the routes before its 404 or 405.
requestLogRouter.use("*", ...route.unmatched("billing:read"));
