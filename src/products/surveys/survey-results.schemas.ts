// Request and response schemas of a survey's results: the response list (filters and records),
// the per-question summary, and the webhooks that receive completed responses.
import { z } from "@hono/zod-openapi";
import { JsonObject, PageQuery } from "./surveys.schemas";

const IsoInstant = z.string().refine((v) => !Number.isNaN(Date.parse(v)), "must be an ISO 8601 date or timestamp");

export const ListResponsesQuery = z.object({
  ...PageQuery,
  status: z.enum(["in_progress", "completed"]).optional(),
  since: IsoInstant.optional().openapi({ description: "Responses started at or after this instant" }),
  until: IsoInstant.optional().openapi({ description: "Responses started before this instant" }),
});

export const ResponseRecordSchema = z
  .object({
    id: z.string(),
    survey_id: z.string(),
    status: z.enum(["in_progress", "completed"]),
    respondent: JsonObject,
    answers: z.record(z.string(), z.object({ value: z.unknown(), version: z.number().int(), answered_at: z.string() }).passthrough()),
    path: z.array(z.string()),
    generated_questions: z.array(JsonObject),
    started_at: z.string(),
    updated_at: z.string(),
    completed_at: z.string().nullable(),
  })
  .openapi("SurveyResponse");

export const SummarySchema = z
  .object({
    survey_id: z.string(),
    response_count: z.number().int(),
    responses: z.object({ total: z.number().int(), completed: z.number().int(), in_progress: z.number().int() }),
    questions: z.array(JsonObject),
  })
  .openapi("SurveySummary");

// ---- webhooks ----

export const SURVEY_WEBHOOK_EVENTS = ["response.completed"] as const;

export const CreateWebhookBody = z
  .strictObject({
    url: z.string().url("must be a valid URL").max(2000),
    events: z.array(z.enum(SURVEY_WEBHOOK_EVENTS)).min(1).default(["response.completed"]),
  })
  .openapi("CreateSurveyWebhook");
export type CreateWebhookInput = z.infer<typeof CreateWebhookBody>;

export const WebhookSchema = z
  .object({ id: z.string(), survey_id: z.string(), url: z.string(), events: z.array(z.string()), created_at: z.string() })
  .openapi("SurveyWebhook");
export const CreatedWebhookSchema = WebhookSchema.extend({ secret: z.string() }).openapi("SurveyWebhookCreated");
