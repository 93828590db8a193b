// Request and response schemas of the public response flow: the slug and response parameters,
// start (with the respondent), answer, go back, the respondent's view of a question, the response
// state and the public survey definition.
import { cappedJsonObject } from "../../platform/sizes";
import { z } from "@hono/zod-openapi";
import { JsonObject, QuestionSchema, SURVEY_STATUSES } from "./surveys.schemas";

/** Respondent metadata is stored with every response: at most 8 KB of JSON (anonymous callers write it). */
export const RESPONDENT_METADATA_BYTES = 8 * 1024;

export const SlugParam = z.object({ slug: z.string().openapi({ param: { name: "slug", in: "path" } }) });
export const ResponseParams = SlugParam.extend({
  response_id: z.string().openapi({ param: { name: "response_id", in: "path" } }),
});

export const StartResponseBody = z
  .strictObject({
    respondent: z
      .strictObject({
        email: z.string().max(254).optional(),
        name: z.string().max(200).optional(),
        external_id: z.string().max(200).optional(),
        metadata: cappedJsonObject(RESPONDENT_METADATA_BYTES).optional(),
      })
      .optional(),
  })
  .openapi("StartSurveyResponse");
export type StartResponseInput = z.infer<typeof StartResponseBody>;

export const AnswerBody = z
  .strictObject({
    question_id: z.string().min(1),
    value: z.unknown().openapi({ description: "The answer, shaped per the question type (see the README's table)" }),
  })
  .openapi("SubmitSurveyAnswer");
export type AnswerInput = z.infer<typeof AnswerBody>;

export const BackBody = z
  .strictObject({
    question_id: z
      .string()
      .min(1)
      .optional()
      .openapi({ description: "An earlier question of the response's path; omitted: the last answered question (one step back)" }),
  })
  .openapi("SurveyResponseBack");
export type BackInput = z.infer<typeof BackBody>;

/** A question as a respondent sees it: the stored question's fields, or a generated follow-up's (no position, no branching). */
export const PublicQuestionSchema = QuestionSchema.pick({
  id: true,
  section_id: true,
  type: true,
  title: true,
  description: true,
  options: true,
  settings: true,
  version: true,
})
  .extend({
    position: z.number().int().nullable(),
    branching: JsonObject.optional(),
    generated: z.boolean(),
  })
  .openapi("SurveyPublicQuestion");

export const ResponseStateSchema = z
  .object({
    id: z.string(),
    survey_slug: z.string(),
    status: z.enum(["in_progress", "completed"]),
    answered_count: z.number().int(),
    next_question: PublicQuestionSchema.nullable(),
    previous_answer: z.object({ value: z.unknown(), answered_at: z.string() }).nullable().openapi({
      description: "After going back: the answer the response gave `next_question` before, until it is answered again (to pre-fill a control); else null",
    }),
    can_go_back: z.boolean().openapi({ description: "True while the response is in progress and has answered at least one question" }),
    finished: z.boolean(),
    started_at: z.string(),
    completed_at: z.string().nullable(),
  })
  .openapi("SurveyResponseState");

export const PublicSurveySchema = z
  .object({
    name: z.string(),
    slug: z.string(),
    mode: z.enum(["manual", "ai"]),
    status: z.enum(SURVEY_STATUSES),
    accepting_responses: z.boolean(),
    settings: JsonObject,
    question_count: z.number().int(),
    first_question: PublicQuestionSchema.nullable(),
  })
  .openapi("SurveyPublicDefinition");
