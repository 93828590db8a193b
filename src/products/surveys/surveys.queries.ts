// The raw SQL of the survey builder, kept apart from the services. Raw because Drizzle cannot say
// it: json_each over a bound JSON list (reorder). (Not named `*.sql.ts`: wrangler's bundler takes
// an import ending in `.sql` for a text module.) The response flow's SQL is the store's
// (store/survey-store.queries.ts) and the completion's D1 side is surveys.publish.ts.
import { sql, type SQL } from "drizzle-orm";
import { surveyQuestions } from "../../db/schema/surveys";

/** A question's new position: its 1-based index in the list (reorder). */
export const listedPosition = (questionIds: string[]): SQL =>
  sql`(SELECT j.key + 1 FROM json_each(${JSON.stringify(questionIds)}) AS j WHERE j.value = ${surveyQuestions.id})`;

/** The question is one of the list (reorder). */
export const listedQuestion = (questionIds: string[]): SQL =>
  sql`${surveyQuestions.id} IN (SELECT value FROM json_each(${JSON.stringify(questionIds)}))`;
