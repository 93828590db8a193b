// Request and response schemas of the survey builder: surveys, sections, questions (with their
// branching), templates, and the path parameters and paging shared by every survey route. The
// public flow's schemas are survey-responses.schemas.ts, the results' and webhooks'
// survey-results.schemas.ts. Cross-field rules (options per type, scale bounds, branching targets)
// live in the services, which see the stored survey; these schemas check shapes only.
import { z } from "@hono/zod-openapi";
import { SurveySettingsSchema } from "./page/survey-settings";
import { cappedJsonObject, FREE_FORM_JSON_BYTES, jsonCapMessage, jsonFits } from "../../platform/sizes";

/** The byte cap of every stored free-form value of a survey (docs/ARCHITECTURE.md "Stored free-form JSON"). */
const fits = (value: unknown) => jsonFits(value, FREE_FORM_JSON_BYTES);
const capMessage = jsonCapMessage(FREE_FORM_JSON_BYTES);

export const QUESTION_TYPES = ["text", "email", "choice", "multi_choice", "rating", "nps", "scale", "slider", "matrix", "ranking", "yes_no", "date"] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

export const SURVEY_STATUSES = ["draft", "active", "closed"] as const;
export type SurveyStatus = (typeof SURVEY_STATUSES)[number];

export const JsonObject = z.record(z.string(), z.unknown());

export const SurveyErrorSchema = z.object({ error: z.string(), errors: z.record(z.string(), z.array(z.string())).optional() }).openapi("SurveyError");

export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9_-]{0,98}[a-z0-9])?$/;
const Slug = z.string().regex(SLUG_PATTERN, "must be 1 to 100 lowercase letters, digits, hyphens or underscores, starting and ending with a letter or digit");

export const AiConfigSchema = z
  .looseObject({
    goal: z.string().trim().min(1, "can't be blank").max(1000).optional(),
    target_questions: z.number().int().min(1).max(20).optional(),
    tone: z.string().trim().min(1).max(50).optional(),
  })
  .refine(fits, capMessage)
  .openapi("SurveyAiConfig", {
    description:
      "AI mode configuration: `goal` (required in AI mode), `target_questions` (1..20, default 5), `tone` (e.g. neutral, friendly, formal). At most 16 KB of JSON.",
  });

export const SurveySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    mode: z.enum(["manual", "ai"]),
    status: z.enum(SURVEY_STATUSES),
    settings: JsonObject,
    ai_config: JsonObject,
    response_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Survey");

export const SectionSchema = z
  .object({
    id: z.string(),
    survey_id: z.string(),
    title: z.string().nullable(),
    description: z.string().nullable(),
    position: z.number().int(),
    created_at: z.string(),
  })
  .openapi("SurveySection");

const BranchTarget = z.union([z.strictObject({ go_to_question_id: z.string().min(1) }), z.strictObject({ skip_to_end: z.literal(true) })]);

export const BRANCH_OPERATORS = ["equals", "less_than", "less_than_or_equal", "greater_than", "greater_than_or_equal", "includes"] as const;

/**
 * One operator per condition. Shapes are checked here; which question types take which operator
 * (numeric comparisons on rating / nps / scale / slider, `includes` of an option on multi_choice)
 * is checked by the service against the question (survey-rules.ts).
 */
export const BranchConditionSchema = z
  .strictObject({
    equals: z.unknown().optional(),
    less_than: z.number().optional(),
    less_than_or_equal: z.number().optional(),
    greater_than: z.number().optional(),
    greater_than_or_equal: z.number().optional(),
    includes: z.string().min(1).max(500).optional(),
  })
  .superRefine((condition, ctx) => {
    const operators = Object.keys(condition);
    if (operators.length !== 1) ctx.addIssue({ code: "custom", message: `must have exactly one operator: ${BRANCH_OPERATORS.join(", ")}` });
  })
  .openapi("SurveyBranchCondition", {
    description:
      "Exactly one operator. `equals`: the answer deep-equals the value (any type). `less_than`, `less_than_or_equal`, `greater_than`, `greater_than_or_equal`: a number, for rating, nps, scale and slider questions. `includes`: one of the options, for multi_choice questions.",
  });

export const BranchingSchema = z
  .strictObject({
    rules: z
      .array(z.strictObject({ if: BranchConditionSchema, then: BranchTarget }))
      .max(100)
      .default([]),
    default: z.union([z.strictObject({ go_to_next: z.literal(true) }), BranchTarget]).default({ go_to_next: true }),
  })
  .refine(fits, capMessage)
  .openapi("SurveyBranching", {
    description:
      "At most 16 KB of JSON. `rules` are tried in order; the first whose `if` condition holds for the answer decides (`equals`: deep equality; `less_than` / `less_than_or_equal` / `greater_than` / `greater_than_or_equal`: numeric answers; `includes`: a multi_choice answer containing the option). `then` is `{go_to_question_id}` or `{skip_to_end: true}`; `default` (`{go_to_next: true}` when omitted) applies when no rule matches.",
  });

export const QuestionSchema = z
  .object({
    id: z.string(),
    survey_id: z.string(),
    section_id: z.string().nullable(),
    type: z.enum(QUESTION_TYPES),
    title: z.string(),
    description: z.string().nullable(),
    options: z.array(z.string()),
    settings: JsonObject,
    position: z.number().int(),
    branching: JsonObject,
    version: z.number().int(),
    created_at: z.string(),
  })
  .openapi("SurveyQuestion");

export const SurveyDetailSchema = SurveySchema.extend({
  sections: z.array(SectionSchema),
  questions: z.array(QuestionSchema),
}).openapi("SurveyDetail");

export const PaginationSchema = z.object({
  page: z.number().int(),
  per_page: z.number().int(),
  total: z.number().int(),
  total_pages: z.number().int(),
});

// ---- parameters ----

export const SurveyIdParam = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });
export const SurveyIdParam2 = z.object({ survey_id: z.string().openapi({ param: { name: "survey_id", in: "path" } }) });
export const SectionParams = SurveyIdParam2.extend({
  section_id: z.string().openapi({ param: { name: "section_id", in: "path" } }),
});
export const QuestionParams = SurveyIdParam2.extend({
  question_id: z.string().openapi({ param: { name: "question_id", in: "path" } }),
});
export const WebhookParams = SurveyIdParam.extend({
  webhook_id: z.string().openapi({ param: { name: "webhook_id", in: "path" } }),
});

export const PageQuery = {
  page: z.coerce.number().int("must be an integer").min(1, "must be at least 1").default(1),
  per_page: z.coerce.number().int("must be an integer").min(1, "must be at least 1").max(100, "must be at most 100").default(20),
};

export const ListSurveysQuery = z.object({ ...PageQuery, status: z.enum(SURVEY_STATUSES).optional() });

// ---- builder bodies ----

export const CreateSurveyBody = z
  .strictObject({
    name: z.string().trim().min(1, "can't be blank").max(200),
    slug: Slug,
    mode: z.enum(["manual", "ai"]).default("manual"),
    settings: SurveySettingsSchema.default({}),
    ai_config: AiConfigSchema.optional(),
  })
  .openapi("CreateSurvey");
export type CreateSurveyInput = z.infer<typeof CreateSurveyBody>;

export const PatchSurveyBody = z
  .strictObject({
    name: z.string().trim().min(1, "can't be blank").max(200).optional(),
    slug: Slug.optional(),
    mode: z.enum(["manual", "ai"]).optional(),
    status: z.enum(SURVEY_STATUSES).optional(),
    settings: SurveySettingsSchema.optional(),
    ai_config: AiConfigSchema.optional(),
  })
  .openapi("PatchSurvey");
export type PatchSurveyInput = z.infer<typeof PatchSurveyBody>;

const Position = z.number().int("must be an integer").min(1, "must be at least 1").max(100_000);

export const CreateSectionBody = z
  .strictObject({
    title: z.string().max(500).nullable().optional(),
    description: z.string().max(5000).nullable().optional(),
    position: Position,
  })
  .openapi("CreateSection");
export type CreateSectionInput = z.infer<typeof CreateSectionBody>;

export const PatchSectionBody = z
  .strictObject({
    title: z.string().max(500).nullable().optional(),
    description: z.string().max(5000).nullable().optional(),
    position: Position.optional(),
  })
  .openapi("PatchSection");
export type PatchSectionInput = z.infer<typeof PatchSectionBody>;

const QuestionFields = {
  type: z.enum(QUESTION_TYPES),
  title: z.string().trim().min(1, "can't be blank").max(1000),
  position: Position,
  section_id: z.string().nullable().optional(),
  description: z.string().max(5000).nullable().optional(),
  options: z.array(z.string().trim().min(1, "can't be blank").max(500)).max(100).refine(fits, capMessage).optional(),
  settings: cappedJsonObject(FREE_FORM_JSON_BYTES).optional(),
  branching: BranchingSchema.optional(),
};

export const CreateQuestionBody = z.strictObject(QuestionFields).openapi("CreateQuestion");
export type CreateQuestionInput = z.infer<typeof CreateQuestionBody>;

export const PatchQuestionBody = z
  .strictObject({
    type: QuestionFields.type.optional(),
    title: QuestionFields.title.optional(),
    position: Position.optional(),
    section_id: QuestionFields.section_id,
    description: QuestionFields.description,
    options: QuestionFields.options,
    settings: QuestionFields.settings,
    branching: QuestionFields.branching,
  })
  .openapi("PatchQuestion");
export type PatchQuestionInput = z.infer<typeof PatchQuestionBody>;

export const ReorderBody = z.strictObject({ question_ids: z.array(z.string()).max(1000) }).openapi("ReorderQuestions");

export const TemplateSchema = z.object({ id: z.string(), name: z.string(), description: z.string() }).openapi("SurveyTemplate");
