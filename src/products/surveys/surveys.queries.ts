// The survey builder's data access: the team-scoped reads every survey service shares (a survey, its
// sections, its questions), the row types and 404s they answer with, the small write and paging
// helpers the services have in common, and the raw SQL Drizzle cannot say: json_each over a bound
// JSON list (reorder). Every query filters on the team, so another team's survey answers the same
// 404 as a missing one. (Not named `*.sql.ts`: wrangler's bundler takes an import ending in `.sql`
// for a text module.) The response flow's SQL is the store's (store/survey-store.queries.ts) and
// the completion's D1 side is surveys.publish.ts.
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
  const row = await db
    .select()
    .from(surveys)
    .where(ownedRow(surveys, teamId, id))
    .get();
  return orNotFound(row, surveyNotFound);
}

/** Sections and questions: the parts of a survey, with the same columns for ownership and order. */
type SurveyPart = typeof surveySections | typeof surveyQuestions;

/** A survey's parts in position order (ties by creation, then id). */
async function listParts<T extends SurveyPart>(db: Db, table: T, survey: SurveyRow): Promise<T["$inferSelect"][]> {
  const part = table as SurveyPart;
  return db
    .select()
    .from(part)
    .where(and(eq(part.surveyId, survey.id), eq(part.teamId, survey.teamId)))
    .orderBy(asc(part.position), asc(part.createdAt), asc(part.id));
}

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
