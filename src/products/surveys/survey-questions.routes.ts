// Authenticated routes of a survey's questions: list, reorder, create, update, delete. The literal
// /questions/reorder is registered before the parameterised /questions/{question_id}.
import { z } from "@hono/zod-openapi";
import { dataResponse, jsonBody, jsonResponse } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { createQuestion, deleteQuestion, listQuestions, reorderQuestions, updateQuestion } from "./survey-questions.service";
import { Ok, route } from "./surveys.openapi";
import { CreateQuestionBody, PatchQuestionBody, QuestionParams, QuestionSchema, ReorderBody, SurveyErrorSchema, SurveyIdParam2 } from "./surveys.schemas";

export const surveyQuestionsRouter = createRouter();

surveyQuestionsRouter.openapi(
  route({
    method: "get",
    path: "/{survey_id}/questions",
    operationId: "listSurveyQuestions",
    summary: "List questions",
    description: "Ordered by `position`.",
    scope: "surveys:read",
    request: { params: SurveyIdParam2 },
    responses: { 200: dataResponse("Questions", z.array(QuestionSchema)) },
  }),
  async (c) => c.json({ data: await listQuestions(c.env, c.get("principal").teamId, c.req.valid("param").survey_id) }, 200),
);

surveyQuestionsRouter.openapi(
  route({
    method: "post",
    path: "/{survey_id}/questions/reorder",
    operationId: "reorderSurveyQuestions",
    summary: "Reorder questions",
    description: "`question_ids` must list every question of the survey exactly once (else 400); positions 1..n are rewritten in one statement.",
    scope: "surveys:write",
    request: { params: SurveyIdParam2, body: jsonBody(ReorderBody, { question_ids: ["QUESTION_ID"] }) },
    responses: { 200: jsonResponse("Reordered", Ok), 400: jsonResponse("Partial or duplicated list", SurveyErrorSchema) },
  }),
  async (c) => {
    await reorderQuestions(c.env, c.get("principal").teamId, c.req.valid("param").survey_id, c.req.valid("json").question_ids);
    return c.json({ ok: true as const }, 200);
  },
);

surveyQuestionsRouter.openapi(
  route({
    method: "post",
    path: "/{survey_id}/questions",
    operationId: "createSurveyQuestion",
    summary: "Create a question",
    description:
      "`options` are required for `choice`, `multi_choice` and `ranking` (and must be empty otherwise); `scale` and `slider` need integer `settings.min` < `settings.max`; `matrix` needs `settings.rows` and `settings.columns`; branching targets must be questions of the same survey.",
    scope: "surveys:write",
    request: { params: SurveyIdParam2, body: jsonBody(CreateQuestionBody, { type: "nps", title: "How likely are you to recommend us?", position: 1 }) },
    responses: { 201: dataResponse("The question", QuestionSchema) },
  }),
  async (c) => c.json({ data: await createQuestion(c.env, c.get("principal").teamId, c.req.valid("param").survey_id, c.req.valid("json")) }, 201),
);

surveyQuestionsRouter.openapi(
  route({
    method: "patch",
    path: "/{survey_id}/questions/{question_id}",
    operationId: "updateSurveyQuestion",
    summary: "Update a question",
    description: "Any question field. Editing a question of an `active` survey increments its `version`.",
    scope: "surveys:write",
    request: { params: QuestionParams, body: jsonBody(PatchQuestionBody, { title: "How likely are you to recommend us to a friend?" }) },
    responses: { 200: dataResponse("The question", QuestionSchema) },
  }),
  async (c) => {
    const { survey_id, question_id } = c.req.valid("param");
    return c.json({ data: await updateQuestion(c.env, c.get("principal").teamId, survey_id, question_id, c.req.valid("json")) }, 200);
  },
);

surveyQuestionsRouter.openapi(
  route({
    method: "delete",
    path: "/{survey_id}/questions/{question_id}",
    operationId: "deleteSurveyQuestion",
    summary: "Delete a question",
    description: "Existing answers stay in the responses' answers maps but are no longer rendered (summary, flow).",
    scope: "surveys:write",
    request: { params: QuestionParams },
    responses: { 204: { description: "Deleted" } },
  }),
  async (c) => {
    const { survey_id, question_id } = c.req.valid("param");
    await deleteQuestion(c.env, c.get("principal").teamId, survey_id, question_id);
    return c.body(null, 204);
  },
);
