// Questions of a survey: list, create and update (checked against their survey: type rules,
// section, branching conditions and targets), delete, and reorder. Every query filters on the
// caller's team; a question of another survey or team answers the same 404 as a missing one.
import { and, eq, inArray, sql } from "drizzle-orm";
import { insertUnderCap } from "../../platform/caps";
import { getDb, type Db } from "../../db/client";
import { surveyQuestions, surveySections, type Branching, type JsonObject } from "../../db/schema/surveys";
import type { Env } from "../../env";
import { nowIso } from "../../platform/clock";
import { ApiError, type FieldErrors } from "../../platform/errors";
import { ownedRow } from "../../platform/tenancy";
import { branchingConditionErrors, questionDefinitionErrors } from "./survey-rules";
import type { CreateQuestionInput, PatchQuestionInput, QuestionType } from "./surveys.schemas";
import { listedPosition, listedQuestion, listQuestionRows, loadQuestion, loadSurvey, type QuestionRow, type SurveyRow } from "./surveys.queries";

const DEFAULT_BRANCHING: Branching = { rules: [], default: { go_to_next: true } };

export function questionView(row: QuestionRow) {
  return {
    id: row.id,
    survey_id: row.surveyId,
    section_id: row.sectionId,
    type: row.type as QuestionType,
    title: row.title,
    description: row.description,
    options: row.options,
    settings: row.settings,
    position: row.position,
    branching: row.branching as unknown as JsonObject,
    version: row.version,
    created_at: row.createdAt,
  };
}

export async function listQuestions(env: Env, teamId: string, surveyId: string) {
  const db = getDb(env.DB);
  return (await listQuestionRows(db, await loadSurvey(db, teamId, surveyId))).map(questionView);
}

/** Checks a question definition against its survey: type rules, section, branching conditions and targets. */
async function checkQuestion(
  db: Db,
  survey: SurveyRow,
  q: { id?: string; type: QuestionType; options: string[]; settings: JsonObject; sectionId: string | null; branching: Branching },
): Promise<void> {
  const errors: FieldErrors = { ...questionDefinitionErrors(q), ...branchingConditionErrors(q) };
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  const targets = [...q.branching.rules.map((r) => r.then), q.branching.default]
    .filter((t): t is { go_to_question_id: string } => "go_to_question_id" in t)
    .map((t) => t.go_to_question_id);
  const [section, found] = await Promise.all([
    q.sectionId
      ? db
          .select({ id: surveySections.id })
          .from(surveySections)
          .where(and(ownedRow(surveySections, survey.teamId, q.sectionId), eq(surveySections.surveyId, survey.id)))
          .get()
      : Promise.resolve({ id: null }),
    targets.length
      ? db
          .select({ id: surveyQuestions.id })
          .from(surveyQuestions)
          .where(and(eq(surveyQuestions.surveyId, survey.id), eq(surveyQuestions.teamId, survey.teamId), inArray(surveyQuestions.id, [...new Set(targets)])))
      : Promise.resolve([]),
  ]);
  if (!section) add("section_id", "must be a section of this survey");
  const known = new Set(found.map((r) => r.id));
  for (const target of targets) {
    if (target === q.id) add("branching", "must not jump to the question itself");
    else if (!known.has(target)) add("branching", `go_to_question_id ${target} is not a question of this survey`);
  }
  if (Object.keys(errors).length) throw ApiError.validation(errors);
}

export async function createQuestion(env: Env, teamId: string, surveyId: string, input: CreateQuestionInput) {
  const db = getDb(env.DB);
  const survey = await loadSurvey(db, teamId, surveyId);
  const at = nowIso();
  const row: QuestionRow = {
    id: crypto.randomUUID(),
    teamId,
    surveyId: survey.id,
    sectionId: input.section_id ?? null,
    type: input.type,
    title: input.title,
    description: input.description ?? null,
    options: input.options ?? [],
    settings: input.settings ?? {},
    position: input.position,
    branching: (input.branching as Branching | undefined) ?? DEFAULT_BRANCHING,
    version: 1,
    createdAt: at,
    updatedAt: at,
  };
  await checkQuestion(db, survey, { ...row, type: input.type });
  // The cap is part of the insert, so parallel creates cannot pass it together.
  if (!(await insertUnderCap(db, surveyQuestions, row, { column: surveyQuestions.surveyId, value: survey.id }, MAX_QUESTIONS_PER_SURVEY))) {
    throw ApiError.validation({ survey_id: [`a survey can have at most ${MAX_QUESTIONS_PER_SURVEY} questions`] });
  }
  return questionView(row);
}

/** Questions one survey may hold (a respondent answers them one by one; a copy carries them all). */
export const MAX_QUESTIONS_PER_SURVEY = 200;

export async function updateQuestion(env: Env, teamId: string, surveyId: string, questionId: string, patch: PatchQuestionInput) {
  const db = getDb(env.DB);
  const survey = await loadSurvey(db, teamId, surveyId);
  const question = await loadQuestion(db, survey, questionId);
  const type = (patch.type ?? question.type) as QuestionType;
  const next: QuestionRow = {
    ...question,
    type,
    title: patch.title ?? question.title,
    description: patch.description === undefined ? question.description : patch.description,
    // A type change to one without options clears them unless the caller sent new ones.
    options: patch.options ?? (patch.type && !["choice", "multi_choice", "ranking"].includes(type) ? [] : question.options),
    settings: patch.settings ?? question.settings,
    position: patch.position ?? question.position,
    sectionId: patch.section_id === undefined ? question.sectionId : patch.section_id,
    branching: (patch.branching as Branching | undefined) ?? question.branching,
    // Edits of a live survey get a new version, so answers keep the shape they were given against.
    version: survey.status === "active" ? question.version + 1 : question.version,
    updatedAt: nowIso(),
  };
  await checkQuestion(db, survey, { ...next, type });
  const update = db
    .update(surveyQuestions)
    .set({
      type: next.type,
      title: next.title,
      description: next.description,
      options: next.options,
      settings: next.settings,
      position: next.position,
      sectionId: next.sectionId,
      branching: next.branching,
      version: survey.status === "active" ? sql`${surveyQuestions.version} + 1` : next.version,
      updatedAt: next.updatedAt,
    })
    .where(ownedRow(surveyQuestions, teamId, question.id));
  // A new type changes what the summary counters group: the survey's store sees the new type at
  // the next completion or summary read and rebuilds them from its responses (store/survey-store.ts).
  await update;
  return questionView(next);
}

export async function deleteQuestion(env: Env, teamId: string, surveyId: string, questionId: string): Promise<void> {
  const db = getDb(env.DB);
  const survey = await loadSurvey(db, teamId, surveyId);
  const question = await loadQuestion(db, survey, questionId);
  await db.delete(surveyQuestions).where(ownedRow(surveyQuestions, teamId, question.id));
}

/**
 * Rewrites every position from the list in one statement (atomic). The list must name each
 * question of the survey exactly once; anything else answers 400 and changes nothing.
 */
export async function reorderQuestions(env: Env, teamId: string, surveyId: string, questionIds: string[]): Promise<void> {
  const db = getDb(env.DB);
  const survey = await loadSurvey(db, teamId, surveyId);
  const current = await db
    .select({ id: surveyQuestions.id })
    .from(surveyQuestions)
    .where(and(eq(surveyQuestions.surveyId, survey.id), eq(surveyQuestions.teamId, teamId)));
  const known = new Set(current.map((r) => r.id));
  const listed = new Set(questionIds);
  const complete = listed.size === questionIds.length && listed.size === known.size && questionIds.every((id) => known.has(id));
  if (!complete) throw ApiError.badRequest("question_ids must list every question of the survey exactly once");
  if (questionIds.length === 0) return;
  await db
    .update(surveyQuestions)
    .set({ position: listedPosition(questionIds), updatedAt: nowIso() })
    .where(and(eq(surveyQuestions.surveyId, survey.id), eq(surveyQuestions.teamId, teamId), listedQuestion(questionIds)));
}
