// Public (unauthenticated) Surveys routes: the survey definition for the hosted page, and the
// response flow (start, resume, answer, go back, complete). No auth() here. Every route counts in
// the per-IP `public` bucket before the slug is looked up (unknown slugs too); starting a response
// also counts per team and client network (at most 10 of a window's starts) and in the
// `survey_start` family of the survey team's `strict` bucket (spec: public surveys, 30 per 60 s). The definition, resume, answers, back and complete are not in the team's
// strict bucket, so respondents already answering are never cut off by traffic that the team does
// not control.
import { surveysErrorFormat } from "./surveys.openapi";
import type { Context } from "hono";
import { getDb } from "../../db/client";
import type { AppEnv } from "../../env";
import { dataResponse, jsonBody, jsonResponse, pathParamAs, productRoutes, RateLimitErrorSchema } from "../../platform/openapi";
import { clientIp, clientNetwork, enforceBucket, strictKey } from "../../platform/rate-limit/middleware";
import { createRouter } from "../../platform/router";
import { AnswerBody, BackBody, PublicSurveySchema, ResponseParams, ResponseStateSchema, SlugParam, StartResponseBody } from "./survey-responses.schemas";
import { SurveyErrorSchema } from "./surveys.schemas";
import {
  completeResponse,
  findPublicSurvey,
  goBack,
  publicDefinition,
  responseState,
  startResponse,
  submitAnswer,
  type PublicSurvey,
} from "./survey-responses.service";

const route = productRoutes({
  tags: ["Surveys (public)"],
  security: "public",
  bucket: "public",
  errorBody: SurveyErrorSchema,
  errors: {
    404: jsonResponse("Unknown slug, draft survey or unknown response", SurveyErrorSchema),
    429: jsonResponse(
      "Per-IP public bucket exceeded; on start also the team's strict bucket (survey starts), the per-IP share of it, or the monthly surveys quota",
      RateLimitErrorSchema,
    ),
  },
});
/** What the response flow (start, answer, back, complete) answers besides the shared errors. */
const flowErrors = {
  409: jsonResponse("Not the expected question, path finished, response completed, or survey closed", SurveyErrorSchema),
  422: jsonResponse("Invalid answer: `{error, errors: {value: [message]}}`", SurveyErrorSchema),
};

/**
 * The survey of a public slug. A start is also counted per team and client network
 * (`survey_start_ip`, 10 a window) and then in the team's `survey_start` strict family (30): a
 * network past its 10 is refused before it takes a place in the team's 30, so one machine cannot
 * lock the team's surveys (docs/ARCHITECTURE.md "Survey starts"). The strict family's headers are shown.
 */
async function publicSurvey(c: Context<AppEnv>, slug: string, { start = false } = {}): Promise<PublicSurvey> {
  const survey = await findPublicSurvey(getDb(c.env.DB), slug);
  if (start) {
    await enforceBucket(c, "survey_start_ip", `team:${survey.teamId}:net:${clientNetwork(clientIp(c))}`);
    await enforceBucket(c, "strict", strictKey(survey.teamId, "survey_start"));
  }
  return survey;
}

export const surveysPublicRouter = createRouter({ errorFormat: surveysErrorFormat });

surveysPublicRouter.openapi(
  route({
    method: "get",
    path: "/{slug}/public",
    operationId: "getPublicSurvey",
    summary: "Public survey definition",
    description:
      "What a hosted page or embed needs before starting: name, settings, mode, status, whether it accepts responses, the number of questions (AI mode: `target_questions`) and the first question. Drafts answer 404.",
    request: { params: SlugParam },
    responses: { 200: dataResponse("The public definition", PublicSurveySchema) },
  }),
  async (c) => {
    const survey = await publicSurvey(c, c.req.valid("param").slug);
    return c.json({ data: await publicDefinition(getDb(c.env.DB), survey) }, 200);
  },
);

surveysPublicRouter.openapi(
  route({
    method: "post",
    // `{survey}`, not `{slug}`: the same path template as the authenticated GET (see pathParamAs).
    path: "/{survey}/responses",
    operationId: "startSurveyResponse",
    summary: "Start a response",
    description:
      "Only `active` surveys start responses (a closed survey answers 409). The team's `surveys` monthly unit is spent when the response completes; a start answers the monthly-quota 429 when no unit is left. At most 10 of the team's 30 starts a minute may come from one client IP (IPv6: one /64); past it 429. The body is optional: `respondent` (`email`, `name`, `external_id`, `metadata`). Answers 201 with the response id and the first question.",
    request: {
      params: pathParamAs("survey", "slug", "The survey's public slug."),
      body: { required: false, content: { "application/json": { schema: StartResponseBody, example: {} } } },
    },
    responses: { 201: dataResponse("The started response", ResponseStateSchema), ...flowErrors },
  }),
  async (c) => {
    const survey = await publicSurvey(c, c.req.valid("param").slug, { start: true });
    const body = (c.req.header("content-type") ?? "").includes("json") ? c.req.valid("json") : {};
    return c.json({ data: await startResponse(c.env, survey, body ?? {}) }, 201);
  },
);

surveysPublicRouter.openapi(
  route({
    method: "get",
    path: "/{slug}/responses/{response_id}",
    operationId: "getSurveyResponseState",
    summary: "Resume a response",
    description: "The response's state: answered count, the next question (or `finished: true`). The response id is the respondent's capability.",
    request: { params: ResponseParams },
    responses: { 200: dataResponse("The response state", ResponseStateSchema) },
  }),
  async (c) => {
    const { slug, response_id } = c.req.valid("param");
    const survey = await publicSurvey(c, slug);
    return c.json({ data: await responseState(c.env, survey, response_id) }, 200);
  },
);

surveysPublicRouter.openapi(
  route({
    method: "post",
    path: "/{slug}/responses/{response_id}/answers",
    operationId: "answerSurveyQuestion",
    summary: "Answer the next question",
    description:
      "Body `{question_id, value}`. Only the expected next question may be answered: any other answers 409 with `expected_question_id`. The value is checked against the question type (422 `errors.value`). Branching (manual mode) or the generator (AI mode) picks the next question, returned in full, or `finished: true`. Works on closed surveys for responses already in progress.",
    request: { params: ResponseParams, body: jsonBody(AnswerBody, { question_id: "QUESTION_ID", value: 9 }) },
    responses: { 200: dataResponse("The response state with the next question", ResponseStateSchema), ...flowErrors },
  }),
  async (c) => {
    const { slug, response_id } = c.req.valid("param");
    const survey = await publicSurvey(c, slug);
    return c.json({ data: await submitAnswer(c.env, survey, response_id, c.req.valid("json")) }, 200);
  },
);

surveysPublicRouter.openapi(
  route({
    method: "post",
    path: "/{slug}/responses/{response_id}/back",
    operationId: "goBackInSurveyResponse",
    summary: "Go back to an earlier question",
    description:
      "Body optional: `{question_id}`, an earlier question of the response's path (omitted: the last answered one). The path is cut before that question and the answers after it are discarded; the question becomes `next_question` again with its earlier answer in `previous_answer`, and answering it walks the branching from there. A completed response cannot go back (409 `Response is already completed`); nothing answered yet, or a question not on the path (or since deleted), answers 409.",
    request: { params: ResponseParams, body: { required: false, content: { "application/json": { schema: BackBody, example: {} } } } },
    responses: { 200: dataResponse("The response state, back at that question", ResponseStateSchema), ...flowErrors },
  }),
  async (c) => {
    const { slug, response_id } = c.req.valid("param");
    const survey = await publicSurvey(c, slug);
    const body = (c.req.header("content-type") ?? "").includes("json") ? c.req.valid("json") : {};
    return c.json({ data: await goBack(c.env, survey, response_id, body ?? {}) }, 200);
  },
);

surveysPublicRouter.openapi(
  route({
    method: "post",
    path: "/{slug}/responses/{response_id}/complete",
    operationId: "completeSurveyResponse",
    summary: "Complete a response",
    description:
      "Allowed once the path has finished (else 409 with `next_question_id`). Increments the survey's `response_count` exactly once and queues `response.completed` webhooks; repeating the call answers 200 with the completed response and changes nothing.",
    request: { params: ResponseParams },
    responses: { 200: dataResponse("The completed response", ResponseStateSchema), ...flowErrors },
  }),
  async (c) => {
    const { slug, response_id } = c.req.valid("param");
    const survey = await publicSurvey(c, slug);
    return c.json({ data: await completeResponse(c.env, survey, response_id) }, 200);
  },
);
