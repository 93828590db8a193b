// The survey builder: surveys, their status, duplication, sections, questions and reorder. Plain
// inputs in, API views out; every query filters on the caller's team, and a survey, section or
// question of another team answers the same 404 as a missing one.
import { and, asc, count, desc, eq, inArray, like, or, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../../db/client";
import {
  surveyQuestions,
  surveyResponses,
  surveySections,
  surveySummaryState,
  surveyWebhookDeliveries,
  surveyWebhooks,
  surveys,
  type Branching,
  type JsonObject,
} from "../../db/schema/surveys";
import { nowIso } from "../../platform/clock";
import { ApiError, type FieldErrors } from "../../platform/errors";
import { orNotFound, ownedBy, ownedRow } from "../../platform/tenancy";
import { branchingConditionErrors, questionDefinitionErrors } from "./survey-rules";
import type {
  CreateQuestionInput,
  CreateSectionInput,
  CreateSurveyInput,
  PatchQuestionInput,
  PatchSectionInput,
  PatchSurveyInput,
  QuestionType,
  SurveyStatus,
} from "./surveys.schemas";

export type SurveyRow = typeof surveys.$inferSelect;
export type SectionRow = typeof surveySections.$inferSelect;
export type QuestionRow = typeof surveyQuestions.$inferSelect;

export const surveyNotFound = () => ApiError.notFound("Survey not found");
export const sectionNotFound = () => ApiError.notFound("Section not found");
export const questionNotFound = () => ApiError.notFound("Question not found");

const DEFAULT_BRANCHING: Branching = { rules: [], default: { go_to_next: true } };

// ---- views ----

export function surveyView(row: SurveyRow) {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    mode: row.mode,
    status: row.status,
    settings: row.settings,
    ai_config: row.aiConfig,
    response_count: row.responseCount,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export function sectionView(row: SectionRow) {
  return {
    id: row.id,
    survey_id: row.surveyId,
    title: row.title,
    description: row.description,
    position: row.position,
    created_at: row.createdAt,
  };
}

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

/** Runs writes as one D1 batch (one transaction). */
export async function runBatch(db: Db, items: BatchItem<"sqlite">[]): Promise<void> {
  if (items.length === 0) return;
  await db.batch(items as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
}

function chunk<T>(rows: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/** True when a D1 error is the unique index on slugs. */
function isSlugCollision(error: unknown): boolean {
  for (let e: unknown = error; e; e = (e as { cause?: unknown }).cause) {
    if (/UNIQUE constraint failed: surveys\.slug/.test(String((e as Error).message ?? e))) return true;
  }
  return false;
}

const slugTaken = () => ApiError.validation({ slug: ["has already been taken"] });

// ---- surveys ----

export async function loadSurvey(db: Db, teamId: string, id: string): Promise<SurveyRow> {
  const row = await db.select().from(surveys).where(ownedRow(surveys, teamId, id)).get();
  return orNotFound(row, surveyNotFound());
}

export async function listSurveys(db: Db, teamId: string, q: { page: number; per_page: number; status?: SurveyStatus }) {
  const where = q.status ? and(ownedBy(surveys, teamId), eq(surveys.status, q.status)) : ownedBy(surveys, teamId);
  const [rows, [{ total }]] = await Promise.all([
    db
      .select()
      .from(surveys)
      .where(where)
      .orderBy(desc(surveys.createdAt), desc(surveys.id))
      .limit(q.per_page)
      .offset((q.page - 1) * q.per_page),
    db.select({ total: count() }).from(surveys).where(where),
  ]);
  return {
    data: rows.map(surveyView),
    pagination: { page: q.page, per_page: q.per_page, total, total_pages: Math.ceil(total / q.per_page) },
  };
}

/** The ai_config to store for a mode: `{}` for manual, a config with a goal for ai. */
function aiConfigFor(mode: "manual" | "ai", config: JsonObject | undefined, provided: boolean): JsonObject {
  if (mode === "manual") {
    if (provided && config && Object.keys(config).length > 0) {
      throw ApiError.validation({ ai_config: ["must be empty when mode is manual"] });
    }
    return {};
  }
  if (!config || typeof config.goal !== "string" || config.goal.trim() === "") {
    throw ApiError.validation({ "ai_config.goal": ["is required when mode is ai"] });
  }
  return config;
}

export async function createSurvey(db: Db, teamId: string, input: CreateSurveyInput): Promise<SurveyRow> {
  const at = nowIso();
  const row: SurveyRow = {
    id: crypto.randomUUID(),
    teamId,
    name: input.name,
    slug: input.slug,
    mode: input.mode,
    status: "draft",
    settings: input.settings,
    aiConfig: aiConfigFor(input.mode, input.ai_config, input.ai_config !== undefined),
    responseCount: 0,
    createdAt: at,
    updatedAt: at,
  };
  try {
    await db.insert(surveys).values(row);
  } catch (error) {
    if (isSlugCollision(error)) throw slugTaken();
    throw error;
  }
  return row;
}

export async function surveyDetail(db: Db, survey: SurveyRow) {
  const [sections, questions] = await Promise.all([listSectionRows(db, survey), listQuestionRows(db, survey)]);
  return { ...surveyView(survey), sections: sections.map(sectionView), questions: questions.map(questionView) };
}

/**
 * The status rules shared by the action endpoints and PATCH: activate needs a question (draft or
 * closed → active, and active stays active); close moves active → closed (closed stays closed, a
 * draft cannot be closed); nothing returns to draft.
 */
async function checkTransition(db: Db, survey: SurveyRow, target: SurveyStatus): Promise<void> {
  if (target === survey.status) return;
  if (target === "draft") throw ApiError.validation({ status: [`cannot change from ${survey.status} back to draft`] });
  if (target === "closed" && survey.status === "draft") {
    throw ApiError.validation({ status: ["a draft survey cannot be closed; activate it first"] });
  }
  if (target === "active") {
    const [{ n }] = await db.select({ n: count() }).from(surveyQuestions).where(eq(surveyQuestions.surveyId, survey.id));
    if (n === 0) throw ApiError.validation({ questions: ["a survey needs at least one question to be activated"] });
  }
}

export async function setStatus(db: Db, teamId: string, id: string, target: SurveyStatus): Promise<SurveyRow> {
  const survey = await loadSurvey(db, teamId, id);
  await checkTransition(db, survey, target);
  if (target === survey.status) return survey;
  const updated = { ...survey, status: target, updatedAt: nowIso() };
  await db.update(surveys).set({ status: target, updatedAt: updated.updatedAt }).where(ownedRow(surveys, teamId, id));
  return updated;
}

export async function updateSurvey(db: Db, teamId: string, id: string, patch: PatchSurveyInput): Promise<SurveyRow> {
  const survey = await loadSurvey(db, teamId, id);
  if (patch.status !== undefined) await checkTransition(db, survey, patch.status);
  const mode = patch.mode ?? survey.mode;
  const aiConfig =
    patch.mode === undefined && patch.ai_config === undefined
      ? survey.aiConfig
      : aiConfigFor(mode, patch.ai_config ?? (mode === "ai" ? survey.aiConfig : undefined), patch.ai_config !== undefined);
  const next: SurveyRow = {
    ...survey,
    name: patch.name ?? survey.name,
    slug: patch.slug ?? survey.slug,
    mode,
    status: patch.status ?? survey.status,
    settings: patch.settings ?? survey.settings,
    aiConfig,
    updatedAt: nowIso(),
  };
  try {
    await db
      .update(surveys)
      .set({ name: next.name, slug: next.slug, mode: next.mode, status: next.status, settings: next.settings, aiConfig: next.aiConfig, updatedAt: next.updatedAt })
      .where(ownedRow(surveys, teamId, id));
  } catch (error) {
    if (isSlugCollision(error)) throw slugTaken();
    throw error;
  }
  return next;
}

/** Deletes a survey and everything it owns in one batch (the foreign keys cascade as well). */
export async function deleteSurvey(db: Db, teamId: string, id: string): Promise<void> {
  const survey = await loadSurvey(db, teamId, id);
  await runBatch(db, [
    db.delete(surveyWebhookDeliveries).where(eq(surveyWebhookDeliveries.surveyId, survey.id)),
    db.delete(surveyWebhooks).where(eq(surveyWebhooks.surveyId, survey.id)),
    db.delete(surveyResponses).where(eq(surveyResponses.surveyId, survey.id)),
    db.delete(surveyQuestions).where(eq(surveyQuestions.surveyId, survey.id)),
    db.delete(surveySections).where(eq(surveySections.surveyId, survey.id)),
    db.delete(surveys).where(ownedRow(surveys, teamId, survey.id)),
  ]);
}

/** A free slug for a copy: `<slug>-copy`, then `<slug>-copy-2`, `-copy-3`, ... */
async function copySlug(db: Db, slug: string): Promise<string> {
  const base = `${slug.slice(0, 84).replace(/[-_]+$/, "")}-copy`;
  const taken = new Set(
    (await db.select({ slug: surveys.slug }).from(surveys).where(or(eq(surveys.slug, base), like(surveys.slug, `${base}-%`)))).map((r) => r.slug),
  );
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/** Copies a survey with its sections and questions under new ids, remapping every reference. */
export async function duplicateSurvey(db: Db, teamId: string, id: string) {
  const source = await loadSurvey(db, teamId, id);
  const [sections, questions] = await Promise.all([listSectionRows(db, source), listQuestionRows(db, source)]);
  const at = nowIso();
  const copy: SurveyRow = {
    ...source,
    id: crypto.randomUUID(),
    slug: await copySlug(db, source.slug),
    status: "draft",
    responseCount: 0,
    createdAt: at,
    updatedAt: at,
  };
  const sectionIds = new Map(sections.map((s) => [s.id, crypto.randomUUID()]));
  const questionIds = new Map(questions.map((q) => [q.id, crypto.randomUUID()]));
  const remap = (target: { go_to_question_id: string } | { skip_to_end: true } | { go_to_next: true }) =>
    "go_to_question_id" in target ? { go_to_question_id: questionIds.get(target.go_to_question_id) ?? target.go_to_question_id } : target;
  const sectionCopies: SectionRow[] = sections.map((s) => ({ ...s, id: sectionIds.get(s.id)!, surveyId: copy.id, createdAt: at }));
  const questionCopies: QuestionRow[] = questions.map((q) => ({
    ...q,
    id: questionIds.get(q.id)!,
    surveyId: copy.id,
    sectionId: q.sectionId ? (sectionIds.get(q.sectionId) ?? null) : null,
    branching: {
      rules: q.branching.rules.map((r) => ({ if: r.if, then: remap(r.then) as Branching["rules"][number]["then"] })),
      default: remap(q.branching.default) as Branching["default"],
    },
    version: 1,
    createdAt: at,
    updatedAt: at,
  }));
  // Multi-row inserts stay under D1's 100 bound parameters per statement.
  const items: BatchItem<"sqlite">[] = [db.insert(surveys).values(copy)];
  for (const rows of chunk(sectionCopies, 14)) items.push(db.insert(surveySections).values(rows));
  for (const rows of chunk(questionCopies, 7)) items.push(db.insert(surveyQuestions).values(rows));
  try {
    await runBatch(db, items);
  } catch (error) {
    if (isSlugCollision(error)) throw slugTaken();
    throw error;
  }
  return { ...surveyView(copy), sections: sectionCopies.map(sectionView), questions: questionCopies.map(questionView) };
}

// ---- sections ----

async function listSectionRows(db: Db, survey: SurveyRow): Promise<SectionRow[]> {
  return db
    .select()
    .from(surveySections)
    .where(and(eq(surveySections.surveyId, survey.id), eq(surveySections.teamId, survey.teamId)))
    .orderBy(asc(surveySections.position), asc(surveySections.createdAt), asc(surveySections.id));
}

export async function listSections(db: Db, teamId: string, surveyId: string) {
  return (await listSectionRows(db, await loadSurvey(db, teamId, surveyId))).map(sectionView);
}

async function loadSection(db: Db, survey: SurveyRow, sectionId: string): Promise<SectionRow> {
  const row = await db
    .select()
    .from(surveySections)
    .where(and(ownedRow(surveySections, survey.teamId, sectionId), eq(surveySections.surveyId, survey.id)))
    .get();
  return orNotFound(row, sectionNotFound());
}

export async function createSection(db: Db, teamId: string, surveyId: string, input: CreateSectionInput) {
  const survey = await loadSurvey(db, teamId, surveyId);
  const row: SectionRow = {
    id: crypto.randomUUID(),
    teamId,
    surveyId: survey.id,
    title: input.title ?? null,
    description: input.description ?? null,
    position: input.position,
    createdAt: nowIso(),
  };
  await db.insert(surveySections).values(row);
  return sectionView(row);
}

export async function updateSection(db: Db, teamId: string, surveyId: string, sectionId: string, patch: PatchSectionInput) {
  const survey = await loadSurvey(db, teamId, surveyId);
  const section = await loadSection(db, survey, sectionId);
  const next: SectionRow = {
    ...section,
    title: patch.title === undefined ? section.title : patch.title,
    description: patch.description === undefined ? section.description : patch.description,
    position: patch.position ?? section.position,
  };
  await db
    .update(surveySections)
    .set({ title: next.title, description: next.description, position: next.position })
    .where(ownedRow(surveySections, teamId, section.id));
  return sectionView(next);
}

/** Deletes a section; its questions stay, with section_id null (explicitly, and by the foreign key). */
export async function deleteSection(db: Db, teamId: string, surveyId: string, sectionId: string): Promise<void> {
  const survey = await loadSurvey(db, teamId, surveyId);
  const section = await loadSection(db, survey, sectionId);
  await runBatch(db, [
    db.update(surveyQuestions).set({ sectionId: null, updatedAt: nowIso() }).where(eq(surveyQuestions.sectionId, section.id)),
    db.delete(surveySections).where(ownedRow(surveySections, teamId, section.id)),
  ]);
}

// ---- questions ----

export async function listQuestionRows(db: Db, survey: SurveyRow): Promise<QuestionRow[]> {
  return db
    .select()
    .from(surveyQuestions)
    .where(and(eq(surveyQuestions.surveyId, survey.id), eq(surveyQuestions.teamId, survey.teamId)))
    .orderBy(asc(surveyQuestions.position), asc(surveyQuestions.createdAt), asc(surveyQuestions.id));
}

export async function listQuestions(db: Db, teamId: string, surveyId: string) {
  return (await listQuestionRows(db, await loadSurvey(db, teamId, surveyId))).map(questionView);
}

async function loadQuestion(db: Db, survey: SurveyRow, questionId: string): Promise<QuestionRow> {
  const row = await db
    .select()
    .from(surveyQuestions)
    .where(and(ownedRow(surveyQuestions, survey.teamId, questionId), eq(surveyQuestions.surveyId, survey.id)))
    .get();
  return orNotFound(row, questionNotFound());
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
      ? db.select({ id: surveySections.id }).from(surveySections).where(and(ownedRow(surveySections, survey.teamId, q.sectionId), eq(surveySections.surveyId, survey.id))).get()
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

export async function createQuestion(db: Db, teamId: string, surveyId: string, input: CreateQuestionInput) {
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
  await db.insert(surveyQuestions).values(row);
  return questionView(row);
}

export async function updateQuestion(db: Db, teamId: string, surveyId: string, questionId: string, patch: PatchQuestionInput) {
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
  if (type === question.type) await update;
  // The summary counters group answers by what the question's type summarises: a new type drops
  // them, in the same transaction, and the next summary read rebuilds them from the responses.
  else await runBatch(db, [update, db.delete(surveySummaryState).where(and(eq(surveySummaryState.surveyId, survey.id), eq(surveySummaryState.teamId, teamId)))]);
  return questionView(next);
}

export async function deleteQuestion(db: Db, teamId: string, surveyId: string, questionId: string): Promise<void> {
  const survey = await loadSurvey(db, teamId, surveyId);
  const question = await loadQuestion(db, survey, questionId);
  await db.delete(surveyQuestions).where(ownedRow(surveyQuestions, teamId, question.id));
}

/**
 * Rewrites every position from the list in one statement (atomic). The list must name each
 * question of the survey exactly once; anything else answers 400 and changes nothing.
 */
export async function reorderQuestions(db: Db, teamId: string, surveyId: string, questionIds: string[]): Promise<void> {
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
  const position: SQL = sql`(SELECT j.key + 1 FROM json_each(${JSON.stringify(questionIds)}) AS j WHERE j.value = ${surveyQuestions.id})`;
  await db
    .update(surveyQuestions)
    .set({ position, updatedAt: nowIso() })
    .where(
      and(
        eq(surveyQuestions.surveyId, survey.id),
        eq(surveyQuestions.teamId, teamId),
        sql`${surveyQuestions.id} IN (SELECT value FROM json_each(${JSON.stringify(questionIds)}))`,
      ),
    );
}
