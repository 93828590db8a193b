// The survey builder's data access: the team-scoped reads every survey service shares (a survey, its
// sections, its questions), the row types and 404s they answer with, the small write and paging
// helpers the services have in common, and the raw SQL Drizzle cannot say: json_each over a bound
// JSON list (reorder). Every query filters on the team, so another team's survey answers the same
// 404 as a missing one. (Not named `*.sql.ts`: wrangler's bundler takes an import ending in `.sql`
// for a text module.) Also the raw SQL of the completion's D1 side (surveys.publish.ts) and of the
// operator's move of the former response table (surveys.migrate.ts). The response flow's SQL is
// the store's (store/survey-store.queries.ts).
import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../../db/client";
import { surveyQuestions, surveySections, surveys } from "../../db/schema/surveys";
import { ApiError } from "../../platform/errors";
import { orNotFound, ownedRow } from "../../platform/tenancy";

export type SurveyRow = typeof surveys.$inferSelect;
export type SectionRow = typeof surveySections.$inferSelect;
export type QuestionRow = typeof surveyQuestions.$inferSelect;

export const surveyNotFound = () => ApiError.notFound("Survey not found");
export const sectionNotFound = () => ApiError.notFound("Section not found");
export const questionNotFound = () => ApiError.notFound("Question not found");

export async function loadSurvey(db: Db, teamId: string, id: string): Promise<SurveyRow> {
  return foundSurvey(await selectSurvey(db, teamId, id));
}

/** The read of a team's survey by id (a batch item; `foundSurvey` of its rows). */
export function selectSurvey(db: Db, teamId: string, id: string) {
  return db
    .select()
    .from(surveys)
    .where(ownedRow(surveys, teamId, id))
    .limit(1);
}

/** The survey of `selectSurvey`'s rows, or the product's 404. */
export function foundSurvey(rows: SurveyRow[]): SurveyRow {
  return orNotFound(rows[0], surveyNotFound);
}

/** Sections and questions: the parts of a survey, with the same columns for ownership and order. */
type SurveyPart = typeof surveySections | typeof surveyQuestions;

/** The read of a survey's parts in position order (ties by creation, then id): a batch item. */
function partsOf(db: Db, table: SurveyPart, survey: Pick<SurveyRow, "id" | "teamId">) {
  return db
    .select()
    .from(table)
    .where(and(eq(table.surveyId, survey.id), eq(table.teamId, survey.teamId)))
    .orderBy(asc(table.position), asc(table.createdAt), asc(table.id));
}

/** A survey's parts in position order. */
async function listParts<T extends SurveyPart>(db: Db, table: T, survey: Pick<SurveyRow, "id" | "teamId">): Promise<T["$inferSelect"][]> {
  return (await partsOf(db, table, survey)) as T["$inferSelect"][];
}

/** The reads of a survey's sections and questions, as batch items (their rows: SectionRow[], QuestionRow[]). */
export const sectionRowsOf = (db: Db, survey: Pick<SurveyRow, "id" | "teamId">) => partsOf(db, surveySections, survey);
export const questionRowsOf = (db: Db, survey: Pick<SurveyRow, "id" | "teamId">) => partsOf(db, surveyQuestions, survey);

/** One part of the survey, or the part's 404 when it is missing, another survey's or another team's. */
async function loadPart<T extends SurveyPart>(db: Db, table: T, survey: SurveyRow, id: string, notFound: () => ApiError): Promise<T["$inferSelect"]> {
  const part = table as SurveyPart;
  const row = await db
    .select()
    .from(part)
    .where(and(ownedRow(part, survey.teamId, id), eq(part.surveyId, survey.id)))
    .get();
  return orNotFound(row as T["$inferSelect"] | undefined, notFound);
}

export const listSectionRows = (db: Db, survey: SurveyRow): Promise<SectionRow[]> => listParts(db, surveySections, survey);
export const listQuestionRows = (db: Db, survey: SurveyRow): Promise<QuestionRow[]> => listParts(db, surveyQuestions, survey);
export const loadSection = (db: Db, survey: SurveyRow, id: string): Promise<SectionRow> => loadPart(db, surveySections, survey, id, sectionNotFound);
export const loadQuestion = (db: Db, survey: SurveyRow, id: string): Promise<QuestionRow> => loadPart(db, surveyQuestions, survey, id, questionNotFound);

/** Runs writes as one D1 batch (one transaction). */
export async function runBatch(db: Db, items: BatchItem<"sqlite">[]): Promise<void> {
  if (items.length === 0) return;
  await db.batch(items as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
}

export interface PageQuery {
  page: number;
  per_page: number;
}

/** LIMIT and OFFSET of a 1-based page. */
export const pageWindow = (q: PageQuery) => ({ limit: q.per_page, offset: (q.page - 1) * q.per_page });

/** The `{data, pagination}` body of the paginated survey lists (surveys, responses). */
export function paginated<T>(data: T[], total: number, q: PageQuery) {
  return { data, pagination: { page: q.page, per_page: q.per_page, total, total_pages: Math.ceil(total / q.per_page) } };
}

/** A question's new position: its 1-based index in the list (reorder). */
export const listedPosition = (questionIds: string[]): SQL =>
  sql`(SELECT j.key + 1 FROM json_each(${JSON.stringify(questionIds)}) AS j WHERE j.value = ${surveyQuestions.id})`;

/** The question is one of the list (reorder). */
export const listedQuestion = (questionIds: string[]): SQL => sql`${surveyQuestions.id} IN (SELECT value FROM json_each(${JSON.stringify(questionIds)}))`;

// The D1 side of a completion (surveys.publish.ts), raw because each statement is conditioned on
// the completion's key row by a subquery (INSERT … SELECT … WHERE EXISTS): parameters ?1 response
// id, ?2 this attempt's token, ?3 survey id, ?4 team id.

/** The completion's key, with this attempt's token (?5 the time); nothing when the key exists or the survey is gone. */
export const INSERT_COMPLETION_KEY = `INSERT INTO survey_completions (response_id, survey_id, team_id, token, created_at)
           SELECT ?1, id, team_id, ?2, ?5 FROM surveys WHERE id = ?3 AND team_id = ?4
           ON CONFLICT (response_id) DO NOTHING`;

/** The key holds this attempt's token: the condition of every later statement of the completion. */
const COMPLETION_WON = "EXISTS (SELECT 1 FROM survey_completions WHERE response_id = ?1 AND token = ?2)";

/** One more response on the survey, when this attempt won the key. */
export const COUNT_COMPLETION = `UPDATE surveys SET response_count = response_count + 1 WHERE id = ?3 AND team_id = ?4 AND ${COMPLETION_WON}`;

/**
 * One pending delivery (?5 its id) to a webhook (?6) that still exists, at ?7, when this attempt won
 * the key. The body is built from the stored response when sent: one copy, however many webhooks.
 */
export const INSERT_COMPLETION_DELIVERY = `INSERT INTO survey_webhook_deliveries (id, team_id, survey_id, webhook_id, event, response_id, status, attempts, created_at, next_attempt_at)
             SELECT ?5, ?4, ?3, ?6, 'response.completed', ?1, 'pending', 0, ?7, ?7 WHERE ${COMPLETION_WON} AND EXISTS (SELECT 1 FROM survey_webhooks WHERE id = ?6)`;

// The operator's one-time move of the former `survey_responses` rows into the survey stores
// (surveys.migrate.ts): the former tables read and deleted by rowid, ids as one bound JSON array.

const LEGACY_COLUMNS =
  "r.rowid, r.id, r.survey_id, r.team_id, r.status, r.respondent, r.answers, r.path, r.next_question_id, r.generated_questions, r.completion_id, r.started_at, r.updated_at, r.completed_at";

/** A survey's questions, id and type (?1 survey, ?2 team): the summary counters are rebuilt over them. */
export const QUESTION_TYPES = "SELECT id, type FROM survey_questions WHERE survey_id = ?1 AND team_id = ?2";

/** Deletes legacy responses (?1 a JSON array of rowids). */
export const DELETE_LEGACY_RESPONSES = "DELETE FROM survey_responses WHERE rowid IN (SELECT value FROM json_each(?1))";

/** One legacy response (?1 id) of a survey (?2) and team (?3). */
export const LEGACY_RESPONSE = `SELECT ${LEGACY_COLUMNS} FROM survey_responses r WHERE r.id = ?1 AND r.survey_id = ?2 AND r.team_id = ?3`;

/** Up to ?1 of the oldest legacy responses, each with its survey's id when the survey still exists (`live`). */
export const OLDEST_LEGACY_RESPONSES = `SELECT ${LEGACY_COLUMNS}, s.id AS live FROM survey_responses r LEFT JOIN surveys s ON s.id = r.survey_id AND s.team_id = r.team_id ORDER BY r.rowid LIMIT ?1`;

/** The former summary tables, emptied once no legacy response is left. */
export const LEGACY_SUMMARY_TABLES = ["survey_summary_values", "survey_summary_elements", "survey_summary_state"] as const;

/** Deletes up to ?1 rows of a former summary table. */
export function deleteLegacySummarySql(table: (typeof LEGACY_SUMMARY_TABLES)[number]): string {
  return `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} LIMIT ?1)`;
}

// Retention's steps (surveys.cron.ts, deleteInSteps): ?1 the cutoff, ?2 the step's rows.

/** Finished webhook deliveries made before ?1. */
export const DELETE_OLD_DELIVERIES =
  "DELETE FROM survey_webhook_deliveries WHERE id IN (SELECT id FROM survey_webhook_deliveries WHERE created_at < ?1 AND status <> 'pending' LIMIT ?2)";

/** Completion keys made before ?1. */
export const DELETE_OLD_COMPLETION_KEYS =
  "DELETE FROM survey_completions WHERE response_id IN (SELECT response_id FROM survey_completions WHERE created_at < ?1 LIMIT ?2)";
