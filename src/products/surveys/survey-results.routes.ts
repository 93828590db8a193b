// Authenticated routes of a survey's results: the response list, the CSV export of completed
// responses, the per-question summary, and the webhooks that receive completed responses.
import { z } from "@hono/zod-openapi";
import { dataResponse, jsonBody, jsonResponse, pathParamAs } from "../../platform/openapi";
import { csvAttachment } from "../../platform/csv";
import { createRouter } from "../../platform/router";
import { exportResponsesCsv } from "./survey-export.service";
import { listResponses, surveySummary } from "./survey-results.service";
import { CreatedWebhookSchema, CreateWebhookBody, ListResponsesQuery, ResponseRecordSchema, SummarySchema, WebhookSchema } from "./survey-results.schemas";
import { createWebhook, deleteWebhook, listWebhooks } from "./survey-webhooks.service";
import { route } from "./surveys.openapi";
import { PaginationSchema, SurveyIdParam, WebhookParams } from "./surveys.schemas";

export const surveyResultsRouter = createRouter();

surveyResultsRouter.openapi(
  route({
    method: "get",
    // `{survey}`, not `{id}`: the same path template as the public POST (see pathParamAs).
    path: "/{survey}/responses",
    operationId: "listSurveyResponses",
    summary: "List responses",
    description:
      "Completed and in-progress responses, newest first; filter by `status` and by start time (`since` inclusive, `until` exclusive). `answers` maps question id → `{value, version, answered_at}` and keeps answers of deleted questions.",
    scope: "surveys:read",
    request: { params: pathParamAs("survey", "id", "The survey id."), query: ListResponsesQuery },
    responses: {
      200: jsonResponse("Responses and pagination", z.object({ data: z.array(ResponseRecordSchema), pagination: PaginationSchema })),
    },
  }),
  async (c) => c.json(await listResponses(c.env, c.get("principal").teamId, c.req.valid("param").id, c.req.valid("query")), 200),
);

surveyResultsRouter.openapi(
  route({
    method: "get",
    // Before the public GET /{slug}/responses/{response_id} (this router is mounted first), which
    // could otherwise take `export` for a response id; response ids are UUIDs, never `export`.
    path: "/{id}/responses/export",
    operationId: "exportSurveyResponses",
    summary: "Export completed responses as CSV",
    description:
      "Streamed `text/csv` (RFC 4180, CRLF line ends, UTF-8) as an attachment: a header row, then one row per completed response in the order they were started. Columns: `response_id`, `started_at`, `completed_at`, then one per current question of the survey in position order, headed by its title (answers of deleted questions are not exported); an AI-mode survey adds `generated_questions` (each generated question as a `title: answer` line). Numbers are written as numbers, booleans as `true`/`false`, lists joined with `; `, matrix answers as `row: column; ...`, unanswered cells empty. Text cells that start with `=`, `+`, `-`, `@`, a tab or a carriage return are prefixed with a single quote, so spreadsheets show them as text instead of running them as formulas.",
    scope: "surveys:read",
    request: { params: SurveyIdParam },
    responses: { 200: { description: "The CSV file", content: { "text/csv": { schema: z.string() } } } },
  }),
  async (c) => {
    const csv = await exportResponsesCsv(c.env, c.get("principal").teamId, c.req.valid("param").id);
    return csvAttachment(csv.filename, csv.body);
  },
);

surveyResultsRouter.openapi(
  route({
    method: "get",
    path: "/{id}/summary",
    operationId: "getSurveySummary",
    summary: "Per-question aggregates of completed responses",
    description:
      "Read from counters kept by every completion (the cost does not grow with the number of responses), over completed responses, for the survey's current questions: counts per option (choice, multi_choice, ranking average rank), average and distribution (rating, scale, slider, nps), the NPS score, the yes/no split, per-row counts for matrix, and answer counts for free-text types.",
    scope: "surveys:read",
    request: { params: SurveyIdParam },
    responses: { 200: dataResponse("The summary", SummarySchema) },
  }),
  async (c) => c.json({ data: await surveySummary(c.env, c.get("principal").teamId, c.req.valid("param").id) }, 200),
);

surveyResultsRouter.openapi(
  route({
    method: "post",
    path: "/{id}/webhooks",
    operationId: "createSurveyWebhook",
    summary: "Create a survey webhook",
    description:
      "Receives `response.completed` events through the survey-webhooks queue, signed with Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`). The `secret` is shown only in this answer.",
    scope: "surveys:write",
    idempotent: true,
    request: { params: SurveyIdParam, body: jsonBody(CreateWebhookBody, { url: "https://hooks.example.com/surveys", events: ["response.completed"] }) },
    responses: { 201: dataResponse("The webhook with its secret", CreatedWebhookSchema) },
  }),
  async (c) => c.json({ data: await createWebhook(c.env, c.get("principal").teamId, c.req.valid("param").id, c.req.valid("json")) }, 201),
);

surveyResultsRouter.openapi(
  route({
    method: "get",
    path: "/{id}/webhooks",
    operationId: "listSurveyWebhooks",
    summary: "List a survey's webhooks",
    description: "Requires `surveys:read`. The survey's webhooks (URL and events); their signing secrets are shown only at creation.",
    scope: "surveys:read",
    request: { params: SurveyIdParam },
    responses: { 200: dataResponse("Webhooks (without secrets)", z.array(WebhookSchema)) },
  }),
  async (c) => c.json({ data: await listWebhooks(c.env, c.get("principal").teamId, c.req.valid("param").id) }, 200),
);

surveyResultsRouter.openapi(
  route({
    method: "delete",
    path: "/{id}/webhooks/{webhook_id}",
    operationId: "deleteSurveyWebhook",
    summary: "Delete a survey webhook",
    description: "Requires `surveys:write`. Deletes the webhook; deliveries already queued for it are dropped.",
    scope: "surveys:write",
    request: { params: WebhookParams },
    responses: { 204: { description: "Deleted" } },
  }),
  async (c) => {
    const { id, webhook_id } = c.req.valid("param");
    await deleteWebhook(c.env, c.get("principal").teamId, id, webhook_id);
    return c.body(null, 204);
  },
);
