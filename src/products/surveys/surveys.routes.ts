// Authenticated Surveys routes: the builder (surveys, status actions, duplicate, templates,
// sections, questions, reorder) and the results (responses, summary, webhooks). Authentication is
// attached per route, never with use("*"): the public response flow shares the /surveys prefix and
// must not run auth(). Literal paths (/templates, /questions/reorder) are registered before the
// parameterised ones they would otherwise collide with.
import { createRoute, z } from "@hono/zod-openapi";
import { ssrfOptions } from "../../platform/ssrf";
import { assertSettingsUrls } from "../survey-page/survey-settings";
import type { MiddlewareHandler } from "hono";
import { getDb } from "../../db/client";
import type { AppEnv } from "../../env";
import { auth, requireScope } from "../../platform/auth";
import { registerErrorFormat } from "../../platform/errors";
import { authResponses, dataResponse, jsonBody, jsonResponse, pathParamAs } from "../../platform/openapi";
import { bearerSecurity, createRouter } from "../../platform/router";
import { SURVEY_TEMPLATES } from "./survey-templates";
import {
  CreatedWebhookSchema,
  CreateQuestionBody,
  CreateSectionBody,
  CreateSurveyBody,
  CreateWebhookBody,
  ListResponsesQuery,
  ListSurveysQuery,
  PaginationSchema,
  PatchQuestionBody,
  PatchSectionBody,
  PatchSurveyBody,
  QuestionParams,
  QuestionSchema,
  ReorderBody,
  ResponseRecordSchema,
  SectionParams,
  SectionSchema,
  SummarySchema,
  SurveyDetailSchema,
  SurveyErrorSchema,
  SurveyIdParam,
  SurveyIdParam2,
  SurveySchema,
  TemplateSchema,
  WebhookParams,
  WebhookSchema,
} from "./surveys.schemas";
import {
  createQuestion,
  createSection,
  createSurvey,
  deleteQuestion,
  deleteSection,
  deleteSurvey,
  duplicateSurvey,
  listQuestions,
  listSections,
  listSurveys,
  loadSurvey,
  reorderQuestions,
  setStatus,
  surveyDetail,
  surveyView,
  updateQuestion,
  updateSection,
  updateSurvey,
} from "./surveys.service";
import { listResponses, surveySummary } from "./survey-results.service";
import { createWebhook, deleteWebhook, listWebhooks } from "./survey-webhooks.service";

// Survey errors: `{error}`, plus `errors: {field: [message]}` on validation failures (the spec's
// `errors.slug: ['has already been taken']`). 401/403/429-rate-limit keep the universal shapes.
registerErrorFormat("/api/v1/surveys", (error) =>
  error.details ? { error: error.message, errors: error.details } : { error: error.message, ...error.extra },
);

const read: MiddlewareHandler<AppEnv>[] = [auth(), requireScope("surveys:read")];
const write: MiddlewareHandler<AppEnv>[] = [auth(), requireScope("surveys:write")];
const tags = ["Surveys"];
const errors = {
  ...authResponses,
  404: jsonResponse("Survey, section or question not found (or another team's)", SurveyErrorSchema),
  422: jsonResponse("Validation failed: `{error, errors: {field: [message]}}`", SurveyErrorSchema),
};
const Ok = z.object({ ok: z.literal(true) });

export const surveysRouter = createRouter();

// ---- surveys ----

surveysRouter.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listSurveys",
    tags,
    summary: "List surveys",
    description: "Newest first. `per_page` defaults to 20, at most 100; `status` filters.",
    security: bearerSecurity,
    middleware: read,
    request: { query: ListSurveysQuery },
    responses: { 200: jsonResponse("Surveys and pagination", z.object({ data: z.array(SurveySchema), pagination: PaginationSchema })), ...errors },
  }),
  async (c) => c.json(await listSurveys(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("query")), 200),
);

surveysRouter.openapi(
  createRoute({
    method: "post",
    path: "/",
    operationId: "createSurvey",
    tags,
    summary: "Create a survey",
    description:
      "Created as `draft`. `slug` is URL-safe and globally unique (so unique per team and resolvable from the public URL alone); a taken slug answers 422 `errors.slug: ['has already been taken']`. Mode `ai` requires `ai_config.goal`; manual surveys keep `ai_config` `{}`.",
    security: bearerSecurity,
    middleware: write,
    request: { body: jsonBody(CreateSurveyBody) },
    responses: { 201: dataResponse("The survey", SurveySchema), ...errors },
  }),
  async (c) => {
    const body = c.req.valid("json");
    assertSettingsUrls(body.settings, ssrfOptions(c.env));
    return c.json({ data: surveyView(await createSurvey(getDb(c.env.DB), c.get("principal").teamId, body)) }, 201);
  },
);

surveysRouter.openapi(
  createRoute({
    method: "get",
    path: "/templates",
    operationId: "listSurveyTemplates",
    tags,
    summary: "Built-in survey templates",
    security: bearerSecurity,
    middleware: read,
    responses: { 200: dataResponse("The catalog", z.array(TemplateSchema)), ...errors },
  }),
  (c) => c.json({ data: SURVEY_TEMPLATES.map((t) => ({ ...t })) }, 200),
);

surveysRouter.openapi(
  createRoute({
    method: "get",
    path: "/{id}",
    operationId: "getSurvey",
    tags,
    summary: "Get a survey with its sections and questions",
    security: bearerSecurity,
    middleware: read,
    request: { params: SurveyIdParam },
    responses: { 200: dataResponse("The survey", SurveyDetailSchema), ...errors },
  }),
  async (c) => {
    const db = getDb(c.env.DB);
    const survey = await loadSurvey(db, c.get("principal").teamId, c.req.valid("param").id);
    return c.json({ data: await surveyDetail(db, survey) }, 200);
  },
);

surveysRouter.openapi(
  createRoute({
    method: "patch",
    path: "/{id}",
    operationId: "updateSurvey",
    tags,
    summary: "Update a survey",
    description:
      "Any of `name`, `slug`, `mode`, `status`, `settings`, `ai_config`. `status` follows the action endpoints' rules. Changing `slug` invalidates existing embed configurations and invitation URLs.",
    security: bearerSecurity,
    middleware: write,
    request: { params: SurveyIdParam, body: jsonBody(PatchSurveyBody) },
    responses: { 200: dataResponse("The updated survey", SurveySchema), ...errors },
  }),
  async (c) => {
    const body = c.req.valid("json");
    assertSettingsUrls(body.settings, ssrfOptions(c.env));
    const row = await updateSurvey(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").id, body);
    return c.json({ data: surveyView(row) }, 200);
  },
);

surveysRouter.openapi(
  createRoute({
    method: "delete",
    path: "/{id}",
    operationId: "deleteSurvey",
    tags,
    summary: "Delete a survey",
    description: "Permanently deletes the survey with its sections, questions, responses (and their respondents), webhooks and deliveries.",
    security: bearerSecurity,
    middleware: write,
    request: { params: SurveyIdParam },
    responses: { 204: { description: "Deleted" }, ...errors },
  }),
  async (c) => {
    await deleteSurvey(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").id);
    return c.body(null, 204);
  },
);

surveysRouter.openapi(
  createRoute({
    method: "post",
    path: "/{id}/duplicate",
    operationId: "duplicateSurvey",
    tags,
    summary: "Duplicate a survey",
    description:
      "A new `draft` survey with copies of the sections and questions (new ids; `section_id` and branching targets remapped to the copies), settings and ai_config; `response_count` 0 and a new slug (`<slug>-copy`, `<slug>-copy-2`, ...). Responses and webhooks are not copied.",
    security: bearerSecurity,
    middleware: write,
    request: { params: SurveyIdParam },
    responses: { 201: dataResponse("The copy", SurveyDetailSchema), ...errors },
  }),
  async (c) => c.json({ data: await duplicateSurvey(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").id) }, 201),
);

surveysRouter.openapi(
  createRoute({
    method: "post",
    path: "/{id}/activate",
    operationId: "activateSurvey",
    tags,
    summary: "Activate (or reopen) a survey",
    description: "draft or closed → active; needs at least one question (else 422). Activating an active survey is a no-op answering 200.",
    security: bearerSecurity,
    middleware: write,
    request: { params: SurveyIdParam },
    responses: { 200: dataResponse("The survey", SurveySchema), ...errors },
  }),
  async (c) => c.json({ data: surveyView(await setStatus(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").id, "active")) }, 200),
);

surveysRouter.openapi(
  createRoute({
    method: "post",
    path: "/{id}/close",
    operationId: "closeSurvey",
    tags,
    summary: "Close a survey",
    description:
      "active → closed: new responses cannot start; in-progress responses can still answer and complete. Closing a closed survey is a no-op (200); closing a draft answers 422. The body is `{data: Survey}`.",
    security: bearerSecurity,
    middleware: write,
    request: { params: SurveyIdParam },
    responses: { 200: dataResponse("The survey", SurveySchema), ...errors },
  }),
  async (c) => c.json({ data: surveyView(await setStatus(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").id, "closed")) }, 200),
);

// ---- sections ----

surveysRouter.openapi(
  createRoute({
    method: "get",
    path: "/{survey_id}/sections",
    operationId: "listSurveySections",
    tags,
    summary: "List sections",
    description: "Ordered by `position`.",
    security: bearerSecurity,
    middleware: read,
    request: { params: SurveyIdParam2 },
    responses: { 200: dataResponse("Sections", z.array(SectionSchema)), ...errors },
  }),
  async (c) => c.json({ data: await listSections(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").survey_id) }, 200),
);

surveysRouter.openapi(
  createRoute({
    method: "post",
    path: "/{survey_id}/sections",
    operationId: "createSurveySection",
    tags,
    summary: "Create a section",
    security: bearerSecurity,
    middleware: write,
    request: { params: SurveyIdParam2, body: jsonBody(CreateSectionBody) },
    responses: { 201: dataResponse("The section", SectionSchema), ...errors },
  }),
  async (c) => c.json({ data: await createSection(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").survey_id, c.req.valid("json")) }, 201),
);

surveysRouter.openapi(
  createRoute({
    method: "patch",
    path: "/{survey_id}/sections/{section_id}",
    operationId: "updateSurveySection",
    tags,
    summary: "Update a section",
    security: bearerSecurity,
    middleware: write,
    request: { params: SectionParams, body: jsonBody(PatchSectionBody) },
    responses: { 200: dataResponse("The section", SectionSchema), ...errors },
  }),
  async (c) => {
    const { survey_id, section_id } = c.req.valid("param");
    return c.json({ data: await updateSection(getDb(c.env.DB), c.get("principal").teamId, survey_id, section_id, c.req.valid("json")) }, 200);
  },
);

surveysRouter.openapi(
  createRoute({
    method: "delete",
    path: "/{survey_id}/sections/{section_id}",
    operationId: "deleteSurveySection",
    tags,
    summary: "Delete a section",
    description: "The section's questions are kept with `section_id` null.",
    security: bearerSecurity,
    middleware: write,
    request: { params: SectionParams },
    responses: { 204: { description: "Deleted" }, ...errors },
  }),
  async (c) => {
    const { survey_id, section_id } = c.req.valid("param");
    await deleteSection(getDb(c.env.DB), c.get("principal").teamId, survey_id, section_id);
    return c.body(null, 204);
  },
);

// ---- questions ----

surveysRouter.openapi(
  createRoute({
    method: "get",
    path: "/{survey_id}/questions",
    operationId: "listSurveyQuestions",
    tags,
    summary: "List questions",
    description: "Ordered by `position`.",
    security: bearerSecurity,
    middleware: read,
    request: { params: SurveyIdParam2 },
    responses: { 200: dataResponse("Questions", z.array(QuestionSchema)), ...errors },
  }),
  async (c) => c.json({ data: await listQuestions(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").survey_id) }, 200),
);

surveysRouter.openapi(
  createRoute({
    method: "post",
    path: "/{survey_id}/questions/reorder",
    operationId: "reorderSurveyQuestions",
    tags,
    summary: "Reorder questions",
    description: "`question_ids` must list every question of the survey exactly once (else 400); positions 1..n are rewritten in one statement.",
    security: bearerSecurity,
    middleware: write,
    request: { params: SurveyIdParam2, body: jsonBody(ReorderBody) },
    responses: { 200: jsonResponse("Reordered", Ok), 400: jsonResponse("Partial or duplicated list", SurveyErrorSchema), ...errors },
  }),
  async (c) => {
    await reorderQuestions(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").survey_id, c.req.valid("json").question_ids);
    return c.json({ ok: true as const }, 200);
  },
);

surveysRouter.openapi(
  createRoute({
    method: "post",
    path: "/{survey_id}/questions",
    operationId: "createSurveyQuestion",
    tags,
    summary: "Create a question",
    description:
      "`options` are required for `choice`, `multi_choice` and `ranking` (and must be empty otherwise); `scale` and `slider` need integer `settings.min` < `settings.max`; `matrix` needs `settings.rows` and `settings.columns`; branching targets must be questions of the same survey.",
    security: bearerSecurity,
    middleware: write,
    request: { params: SurveyIdParam2, body: jsonBody(CreateQuestionBody) },
    responses: { 201: dataResponse("The question", QuestionSchema), ...errors },
  }),
  async (c) => c.json({ data: await createQuestion(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").survey_id, c.req.valid("json")) }, 201),
);

surveysRouter.openapi(
  createRoute({
    method: "patch",
    path: "/{survey_id}/questions/{question_id}",
    operationId: "updateSurveyQuestion",
    tags,
    summary: "Update a question",
    description: "Any question field. Editing a question of an `active` survey increments its `version`.",
    security: bearerSecurity,
    middleware: write,
    request: { params: QuestionParams, body: jsonBody(PatchQuestionBody) },
    responses: { 200: dataResponse("The question", QuestionSchema), ...errors },
  }),
  async (c) => {
    const { survey_id, question_id } = c.req.valid("param");
    return c.json({ data: await updateQuestion(getDb(c.env.DB), c.get("principal").teamId, survey_id, question_id, c.req.valid("json")) }, 200);
  },
);

surveysRouter.openapi(
  createRoute({
    method: "delete",
    path: "/{survey_id}/questions/{question_id}",
    operationId: "deleteSurveyQuestion",
    tags,
    summary: "Delete a question",
    description: "Existing answers stay in the responses' answers maps but are no longer rendered (summary, flow).",
    security: bearerSecurity,
    middleware: write,
    request: { params: QuestionParams },
    responses: { 204: { description: "Deleted" }, ...errors },
  }),
  async (c) => {
    const { survey_id, question_id } = c.req.valid("param");
    await deleteQuestion(getDb(c.env.DB), c.get("principal").teamId, survey_id, question_id);
    return c.body(null, 204);
  },
);

// ---- results ----

surveysRouter.openapi(
  createRoute({
    method: "get",
    // `{survey}`, not `{id}`: the same path template as the public POST (see pathParamAs).
    path: "/{survey}/responses",
    operationId: "listSurveyResponses",
    tags,
    summary: "List responses",
    description:
      "Completed and in-progress responses, newest first; filter by `status` and by start time (`since` inclusive, `until` exclusive). `answers` maps question id → `{value, version, answered_at}` and keeps answers of deleted questions.",
    security: bearerSecurity,
    middleware: read,
    request: { params: pathParamAs("survey", "id", "The survey id."), query: ListResponsesQuery },
    responses: {
      200: jsonResponse("Responses and pagination", z.object({ data: z.array(ResponseRecordSchema), pagination: PaginationSchema })),
      ...errors,
    },
  }),
  async (c) => c.json(await listResponses(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").id, c.req.valid("query")), 200),
);

surveysRouter.openapi(
  createRoute({
    method: "get",
    path: "/{id}/summary",
    operationId: "getSurveySummary",
    tags,
    summary: "Per-question aggregates of completed responses",
    description:
      "Read from counters kept by every completion (the cost does not grow with the number of responses), over completed responses, for the survey's current questions: counts per option (choice, multi_choice, ranking average rank), average and distribution (rating, scale, slider, nps), the NPS score, the yes/no split, per-row counts for matrix, and answer counts for free-text types.",
    security: bearerSecurity,
    middleware: read,
    request: { params: SurveyIdParam },
    responses: { 200: dataResponse("The summary", SummarySchema), ...errors },
  }),
  async (c) => c.json({ data: await surveySummary(c.env, c.get("principal").teamId, c.req.valid("param").id) }, 200),
);

surveysRouter.openapi(
  createRoute({
    method: "post",
    path: "/{id}/webhooks",
    operationId: "createSurveyWebhook",
    tags,
    summary: "Create a survey webhook",
    description:
      "Receives `response.completed` events through the survey-webhooks queue, signed with Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`). The `secret` is shown only in this answer.",
    security: bearerSecurity,
    middleware: write,
    request: { params: SurveyIdParam, body: jsonBody(CreateWebhookBody) },
    responses: { 201: dataResponse("The webhook with its secret", CreatedWebhookSchema), ...errors },
  }),
  async (c) => c.json({ data: await createWebhook(c.env, c.get("principal").teamId, c.req.valid("param").id, c.req.valid("json")) }, 201),
);

surveysRouter.openapi(
  createRoute({
    method: "get",
    path: "/{id}/webhooks",
    operationId: "listSurveyWebhooks",
    tags,
    summary: "List a survey's webhooks",
    security: bearerSecurity,
    middleware: read,
    request: { params: SurveyIdParam },
    responses: { 200: dataResponse("Webhooks (without secrets)", z.array(WebhookSchema)), ...errors },
  }),
  async (c) => c.json({ data: await listWebhooks(getDb(c.env.DB), c.get("principal").teamId, c.req.valid("param").id) }, 200),
);

surveysRouter.openapi(
  createRoute({
    method: "delete",
    path: "/{id}/webhooks/{webhook_id}",
    operationId: "deleteSurveyWebhook",
    tags,
    summary: "Delete a survey webhook",
    security: bearerSecurity,
    middleware: write,
    request: { params: WebhookParams },
    responses: { 204: { description: "Deleted" }, ...errors },
  }),
  async (c) => {
    const { id, webhook_id } = c.req.valid("param");
    await deleteWebhook(getDb(c.env.DB), c.get("principal").teamId, id, webhook_id);
    return c.body(null, 204);
  },
);
