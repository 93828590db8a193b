// Survey webhooks: registration (secret encrypted at rest, shown once), listing, deletion, and the
// body of a `response.completed` delivery. The delivery rows are written by the completion
// (survey-responses.service.ts); delivery itself is the queue consumer's job (surveys.consumer.ts).
import { insertUnderCap } from "../../platform/caps";
import { and, asc, eq } from "drizzle-orm";
import { getDb } from "../../db/client";
import { surveyWebhookDeliveries, surveyWebhooks } from "../../db/schema/surveys";
import type { Env } from "../../env";
import { nowIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { assertPublicUrl } from "../../platform/ssrf";
import { orNotFound, ownedRow } from "../../platform/tenancy";
import { newSealedWebhookSecret } from "../../platform/webhook-signature";
import type { CreateWebhookInput } from "./survey-results.schemas";
import { loadSurvey } from "./surveys.queries";

export const MAX_WEBHOOKS_PER_SURVEY = 10;

type WebhookRow = typeof surveyWebhooks.$inferSelect;

function webhookView(row: WebhookRow) {
  return { id: row.id, survey_id: row.surveyId, url: row.url, events: row.events, created_at: row.createdAt };
}

export async function createWebhook(env: Env, teamId: string, surveyId: string, input: CreateWebhookInput) {
  const db = getDb(env.DB);
  const survey = await loadSurvey(db, teamId, surveyId);
  assertPublicUrl(env, input.url);
  const { secret, sealed } = await newSealedWebhookSecret(env.ENCRYPTION_KEY);
  const row: WebhookRow = {
    id: crypto.randomUUID(),
    teamId,
    surveyId: survey.id,
    url: input.url,
    events: [...new Set(input.events)],
    secretEncrypted: sealed,
    createdAt: nowIso(),
  };
  if (!(await insertUnderCap(db, surveyWebhooks, row, { column: surveyWebhooks.surveyId, value: survey.id }, MAX_WEBHOOKS_PER_SURVEY))) {
    throw ApiError.validation({ url: [`a survey can have at most ${MAX_WEBHOOKS_PER_SURVEY} webhooks`] });
  }
  return { ...webhookView(row), secret };
}

export async function listWebhooks(env: Env, teamId: string, surveyId: string) {
  const db = getDb(env.DB);
  const survey = await loadSurvey(db, teamId, surveyId);
  const rows = await db
    .select()
    .from(surveyWebhooks)
    .where(and(eq(surveyWebhooks.surveyId, survey.id), eq(surveyWebhooks.teamId, teamId)))
    .orderBy(asc(surveyWebhooks.createdAt), asc(surveyWebhooks.id));
  return rows.map(webhookView);
}

export async function deleteWebhook(env: Env, teamId: string, surveyId: string, webhookId: string): Promise<void> {
  const db = getDb(env.DB);
  const survey = await loadSurvey(db, teamId, surveyId);
  const row = await db
    .select({ id: surveyWebhooks.id })
    .from(surveyWebhooks)
    .where(and(ownedRow(surveyWebhooks, teamId, webhookId), eq(surveyWebhooks.surveyId, survey.id)))
    .get();
  orNotFound(row, () => ApiError.notFound("Webhook not found"));
  // Pending deliveries go with it (the foreign key cascades too); queued messages then find nothing.
  await db.batch([
    db.delete(surveyWebhookDeliveries).where(eq(surveyWebhookDeliveries.webhookId, webhookId)),
    db.delete(surveyWebhooks).where(ownedRow(surveyWebhooks, teamId, webhookId)),
  ]);
}

/**
 * The body of a `response.completed` delivery, built from the stored survey and completed response
 * (deterministic, so every attempt signs the same bytes).
 */
export function completedPayload(
  survey: { id: string; slug: string; name: string },
  response: { id: string; respondent: unknown; answers: unknown; path: unknown; generatedQuestions: unknown; startedAt: string; completedAt: string | null },
): string {
  return JSON.stringify({
    type: "response.completed",
    timestamp: response.completedAt,
    data: {
      survey: { id: survey.id, slug: survey.slug, name: survey.name },
      response: {
        id: response.id,
        status: "completed",
        respondent: response.respondent,
        answers: response.answers,
        path: response.path,
        generated_questions: response.generatedQuestions,
        started_at: response.startedAt,
        completed_at: response.completedAt,
      },
    },
  });
}
