// The raw SQL of the survey builder and the response flow, kept apart from the services. Raw
// because Drizzle cannot say it: json_each over a bound JSON list (reorder), and the completion's
// statements, which share one D1 batch with the summary's json_each upserts
// (survey-summary.queries.ts) and are conditioned on the winning completion id with EXISTS. (Not
// named `*.sql.ts`: wrangler's bundler takes an import ending in `.sql` for a text module.)
import { sql, type SQL } from "drizzle-orm";
import { surveyQuestions } from "../../db/schema/surveys";
import { completionStatements } from "./survey-summary.queries";

/** A question's new position: its 1-based index in the list (reorder). */
export const listedPosition = (questionIds: string[]): SQL =>
  sql`(SELECT j.key + 1 FROM json_each(${JSON.stringify(questionIds)}) AS j WHERE j.value = ${surveyQuestions.id})`;

/** The question is one of the list (reorder). */
export const listedQuestion = (questionIds: string[]): SQL =>
  sql`${surveyQuestions.id} IN (SELECT value FROM json_each(${JSON.stringify(questionIds)}))`;

export interface Completion {
  surveyId: string;
  teamId: string;
  responseId: string;
  completionId: string;
  at: string;
  /** One delivery row per webhook subscribed to `response.completed`. */
  deliveries: Array<{ id: string; webhookId: string }>;
}

/**
 * The completion's batch. The first statement is the conditional UPDATE that only one call wins
 * (it writes the completion id); every later statement is conditioned on that id, so the
 * response_count, the summary counters and the delivery rows follow only the winner (who then
 * spends the team's `surveys` unit in its meter: survey-responses.service.ts).
 */
export function completionBatch(d1: D1Database, c: Completion): D1PreparedStatement[] {
  const won = "EXISTS (SELECT 1 FROM survey_responses WHERE id = ?1 AND completion_id = ?2)";
  return [
    d1
      .prepare(
        `UPDATE survey_responses SET status = 'completed', completion_id = ?2, completed_at = ?3, updated_at = ?3, next_question_id = NULL
       WHERE id = ?1 AND status = 'in_progress'`,
      )
      .bind(c.responseId, c.completionId, c.at),
    d1.prepare(`UPDATE surveys SET response_count = response_count + 1 WHERE id = ?3 AND ${won}`).bind(c.responseId, c.completionId, c.surveyId),
    // The summary counters take the completed answers in this same transaction, only for the winner.
    ...completionStatements(d1, c.surveyId, c.teamId, c.responseId, c.completionId),
    ...c.deliveries.map((d) =>
      d1
        .prepare(
          // The body is built from the stored response when sent: one copy, however many webhooks.
          `INSERT INTO survey_webhook_deliveries (id, team_id, survey_id, webhook_id, event, response_id, status, attempts, created_at, next_attempt_at)
         SELECT ?3, ?4, ?5, ?6, 'response.completed', ?1, 'pending', 0, ?7, ?7 WHERE ${won}`,
        )
        .bind(c.responseId, c.completionId, d.id, c.teamId, c.surveyId, d.webhookId, c.at),
    ),
  ];
}
