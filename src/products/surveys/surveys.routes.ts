// Authenticated Surveys routes: the surveys themselves (list, create, templates, read, update,
// delete, duplicate, activate, close), with the sections, questions and results routers mounted
// on the same router (survey-sections.routes.ts, survey-questions.routes.ts,
// survey-results.routes.ts). Literal paths (/templates) are registered before the parameterised
// ones they would otherwise collide with, and the sub-routers after these routes, in the order
// their operations appear in the OpenAPI document.
import { z } from "@hono/zod-openapi";
import { ssrfOptions } from "../../platform/ssrf";
import { assertSettingsUrls } from "./page/survey-settings";
import { dataResponse, jsonBody, jsonResponse } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { surveyQuestionsRouter } from "./survey-questions.routes";
import { surveyResultsRouter } from "./survey-results.routes";
import { surveySectionsRouter } from "./survey-sections.routes";
import { SURVEY_TEMPLATES } from "./survey-templates";
import { route, surveysErrorFormat } from "./surveys.openapi";
import {
  CreateSurveyBody,
  ListSurveysQuery,
  PaginationSchema,
  PatchSurveyBody,
  SurveyDetailSchema,
  SurveyIdParam,
  SurveySchema,
  TemplateSchema,
} from "./surveys.schemas";
import { createSurvey, deleteSurvey, duplicateSurvey, listSurveys, setStatus, surveyDetail, surveyView, updateSurvey } from "./surveys.service";

export const surveysRouter = createRouter({ errorFormat: surveysErrorFormat });

surveysRouter.openapi(
  route({
    method: "get",
    path: "/",
    operationId: "listSurveys",
    summary: "List surveys",
    description: "Newest first. `per_page` defaults to 20, at most 100; `status` filters.",
    scope: "surveys:read",
    request: { query: ListSurveysQuery },
    responses: { 200: jsonResponse("Surveys and pagination", z.object({ data: z.array(SurveySchema), pagination: PaginationSchema })) },
  }),
  async (c) => c.json(await listSurveys(c.env, c.get("principal").teamId, c.req.valid("query")), 200),
);

surveysRouter.openapi(
  route({
    method: "post",
    path: "/",
    operationId: "createSurvey",
    summary: "Create a survey",
    description:
      "Created as `draft`. `slug` is URL-safe and globally unique (so unique per team and resolvable from the public URL alone); a taken slug answers 422 `errors.slug: ['has already been taken']`. Mode `ai` requires `ai_config.goal`; manual surveys keep `ai_config` `{}`.",
    scope: "surveys:write",
    idempotent: true,
    request: { body: jsonBody(CreateSurveyBody, { name: "Customer pulse", slug: "customer-pulse", mode: "manual" }) },
    responses: { 201: dataResponse("The survey", SurveySchema) },
  }),
  async (c) => {
    const body = c.req.valid("json");
    assertSettingsUrls(body.settings, ssrfOptions(c.env));
    return c.json({ data: surveyView(await createSurvey(c.env, c.get("principal").teamId, body)) }, 201);
  },
);

surveysRouter.openapi(
  route({
    method: "get",
    path: "/templates",
    operationId: "listSurveyTemplates",
    summary: "Built-in survey templates",
    description:
      "Requires `surveys:read`. The built-in catalog (NPS, CSAT, CES, Product Feedback, Onboarding, Employee Engagement) as `{id, name, description}`; there is no endpoint to instantiate one.",
    scope: "surveys:read",
    responses: { 200: dataResponse("The catalog", z.array(TemplateSchema)) },
  }),
  (c) => c.json({ data: SURVEY_TEMPLATES.map((t) => ({ ...t })) }, 200),
);

surveysRouter.openapi(
  route({
    method: "get",
    path: "/{id}",
    operationId: "getSurvey",
    summary: "Get a survey with its sections and questions",
    description: "Requires `surveys:read`. The survey with its `sections` and `questions` in position order; another team's survey answers 404.",
    scope: "surveys:read",
    request: { params: SurveyIdParam },
    responses: { 200: dataResponse("The survey", SurveyDetailSchema) },
  }),
  async (c) => c.json({ data: await surveyDetail(c.env, c.get("principal").teamId, c.req.valid("param").id) }, 200),
);

surveysRouter.openapi(
  route({
    method: "patch",
    path: "/{id}",
    operationId: "updateSurvey",
    summary: "Update a survey",
    description:
      "Any of `name`, `slug`, `mode`, `status`, `settings`, `ai_config`. `status` follows the action endpoints' rules. Changing `slug` invalidates existing embed configurations and invitation URLs.",
    scope: "surveys:write",
    request: { params: SurveyIdParam, body: jsonBody(PatchSurveyBody, { name: "Customer pulse (Q3)" }) },
    responses: { 200: dataResponse("The updated survey", SurveySchema) },
  }),
  async (c) => {
    const body = c.req.valid("json");
    assertSettingsUrls(body.settings, ssrfOptions(c.env));
    const row = await updateSurvey(c.env, c.get("principal").teamId, c.req.valid("param").id, body);
    return c.json({ data: surveyView(row) }, 200);
  },
);

surveysRouter.openapi(
  route({
    method: "delete",
    path: "/{id}",
    operationId: "deleteSurvey",
    summary: "Delete a survey",
    description: "Permanently deletes the survey with its sections, questions, responses (and their respondents), webhooks and deliveries.",
    scope: "surveys:write",
    request: { params: SurveyIdParam },
    responses: { 204: { description: "Deleted" } },
  }),
  async (c) => {
    await deleteSurvey(c.env, c.get("principal").teamId, c.req.valid("param").id);
    return c.body(null, 204);
  },
);

surveysRouter.openapi(
  route({
    method: "post",
    path: "/{id}/duplicate",
    operationId: "duplicateSurvey",
    summary: "Duplicate a survey",
    description:
      "A new `draft` survey with copies of the sections and questions (new ids; `section_id` and branching targets remapped to the copies), settings and ai_config; `response_count` 0 and a new slug (`<slug>-copy`, `<slug>-copy-2`, ...). Responses and webhooks are not copied.",
    scope: "surveys:write",
    idempotent: true,
    request: { params: SurveyIdParam },
    responses: { 201: dataResponse("The copy", SurveyDetailSchema) },
  }),
  async (c) => c.json({ data: await duplicateSurvey(c.env, c.get("principal").teamId, c.req.valid("param").id) }, 201),
);

surveysRouter.openapi(
  route({
    method: "post",
    path: "/{id}/activate",
    operationId: "activateSurvey",
    summary: "Activate (or reopen) a survey",
    description: "draft or closed → active; needs at least one question (else 422). Activating an active survey is a no-op answering 200.",
    scope: "surveys:write",
    request: { params: SurveyIdParam },
    responses: { 200: dataResponse("The survey", SurveySchema) },
  }),
  async (c) => c.json({ data: surveyView(await setStatus(c.env, c.get("principal").teamId, c.req.valid("param").id, "active")) }, 200),
);

surveysRouter.openapi(
  route({
    method: "post",
    path: "/{id}/close",
    operationId: "closeSurvey",
    summary: "Close a survey",
    description:
      "active → closed: new responses cannot start; in-progress responses can still answer and complete. Closing a closed survey is a no-op (200); closing a draft answers 422. The body is `{data: Survey}`.",
    scope: "surveys:write",
    request: { params: SurveyIdParam },
    responses: { 200: dataResponse("The survey", SurveySchema) },
  }),
  async (c) => c.json({ data: surveyView(await setStatus(c.env, c.get("principal").teamId, c.req.valid("param").id, "closed")) }, 200),
);

surveysRouter.route("/", surveySectionsRouter);
surveysRouter.route("/", surveyQuestionsRouter);
surveysRouter.route("/", surveyResultsRouter);
