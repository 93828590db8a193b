// Surveys themselves: list, create, read with their sections and questions, update, the status
// rules (activate, close), delete with everything they own, and duplicate. Plain inputs in, API
// views out; every query filters on the caller's team (surveys.queries.ts). Sections and
// questions are survey-sections.service.ts and survey-questions.service.ts.
import { insertUnderCap } from "../../platform/caps";
import { isUniqueViolation } from "../../platform/db-errors";
import { and, count, desc, eq, like, or } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { getDb, type Db } from "../../db/client";
import {
  surveyCompletions,
  surveyQuestions,
  surveyResponses,
  surveySections,
  surveyWebhookDeliveries,
  surveyWebhooks,
  surveys,
  type Branching,
  type JsonObject,
} from "../../db/schema/surveys";
import type { Env } from "../../env";
import { nowIso } from "../../platform/clock";
import { ApiError, type FieldErrors } from "../../platform/errors";
import { FREE_FORM_JSON_BYTES, jsonCapMessage, jsonFits } from "../../platform/sizes";
import { ownedBy, ownedRow } from "../../platform/tenancy";
import { MAX_QUESTIONS_PER_SURVEY, questionView } from "./survey-questions.service";
import { surveyStore } from "./surveys.store";
import { MAX_SECTIONS_PER_SURVEY, sectionView } from "./survey-sections.service";
import type { CreateSurveyInput, PatchSurveyInput, SurveyStatus } from "./surveys.schemas";
import { statementChunks } from "../../platform/d1-rows";
import {
  listQuestionRows,
  listSectionRows,
  loadSurvey,
  pageWindow,
  paginated,
  runBatch,
  type QuestionRow,
  type SectionRow,
  type SurveyRow,
} from "./surveys.queries";

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

/** Runs a write that may take a slug, answering a taken slug with the spec's 422. */
async function withSlug<T>(write: PromiseLike<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (isUniqueViolation(error, "surveys.slug")) throw ApiError.validation({ slug: ["has already been taken"] });
    throw error;
  }
}

export async function listSurveys(env: Env, teamId: string, q: { page: number; per_page: number; status?: SurveyStatus }) {
  const db = getDb(env.DB);
  const where = q.status ? and(ownedBy(surveys, teamId), eq(surveys.status, q.status)) : ownedBy(surveys, teamId);
  const { limit, offset } = pageWindow(q);
  const [rows, [{ total }]] = await Promise.all([
    db.select().from(surveys).where(where).orderBy(desc(surveys.createdAt), desc(surveys.id)).limit(limit).offset(offset),
    db.select({ total: count() }).from(surveys).where(where),
  ]);
  return paginated(rows.map(surveyView), total, q);
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

export async function createSurvey(env: Env, teamId: string, input: CreateSurveyInput): Promise<SurveyRow> {
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
  if (!(await withSlug(insertUnderCap(getDb(env.DB), surveys, row, { column: surveys.teamId, value: teamId }, MAX_SURVEYS_PER_TEAM)))) {
    throw surveyCapError();
  }
  return row;
}

/** Surveys per team (held under parallel creates and duplicates). */
export const MAX_SURVEYS_PER_TEAM = 1_000;
const surveyCapError = () => ApiError.validation({ name: [`a team can have at most ${MAX_SURVEYS_PER_TEAM} surveys`] });

/** A survey with its sections and questions, each ordered by position. */
export async function surveyDetail(env: Env, teamId: string, id: string) {
  const db = getDb(env.DB);
  const survey = await loadSurvey(db, teamId, id);
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

export async function setStatus(env: Env, teamId: string, id: string, target: SurveyStatus): Promise<SurveyRow> {
  const db = getDb(env.DB);
  const survey = await loadSurvey(db, teamId, id);
  await checkTransition(db, survey, target);
  if (target === survey.status) return survey;
  const updated = { ...survey, status: target, updatedAt: nowIso() };
  await db
    .update(surveys)
    .set({ status: target, updatedAt: updated.updatedAt })
    .where(ownedRow(surveys, teamId, id));
  return updated;
}

export async function updateSurvey(env: Env, teamId: string, id: string, patch: PatchSurveyInput): Promise<SurveyRow> {
  const db = getDb(env.DB);
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
  await withSlug(
    db
      .update(surveys)
      .set({
        name: next.name,
        slug: next.slug,
        mode: next.mode,
        status: next.status,
        settings: next.settings,
        aiConfig: next.aiConfig,
        updatedAt: next.updatedAt,
      })
      .where(ownedRow(surveys, teamId, id)),
  );
  return next;
}

/**
 * Deletes a survey and everything it owns: its store first (responses, respondents, summaries;
 * a store that fails leaves the survey whole, 500, and a retry deletes it), then the D1 rows in one
 * batch (the foreign keys cascade as well). Rows not yet moved from the former D1 tables go with it.
 */
export async function deleteSurvey(env: Env, teamId: string, id: string): Promise<void> {
  const db = getDb(env.DB);
  const survey = await loadSurvey(db, teamId, id);
  await surveyStore(env, survey.id).destroy();
  await runBatch(db, [
    db.delete(surveyWebhookDeliveries).where(eq(surveyWebhookDeliveries.surveyId, survey.id)),
    db.delete(surveyWebhooks).where(eq(surveyWebhooks.surveyId, survey.id)),
    db.delete(surveyResponses).where(eq(surveyResponses.surveyId, survey.id)),
    db.delete(surveyCompletions).where(eq(surveyCompletions.surveyId, survey.id)),
    db.delete(surveyQuestions).where(eq(surveyQuestions.surveyId, survey.id)),
    db.delete(surveySections).where(eq(surveySections.surveyId, survey.id)),
    db.delete(surveys).where(ownedRow(surveys, teamId, survey.id)),
  ]);
}

/** A free slug for a copy: `<slug>-copy`, then `<slug>-copy-2`, `-copy-3`, ... */
async function copySlug(db: Db, slug: string): Promise<string> {
  const base = `${slug.slice(0, 84).replace(/[-_]+$/, "")}-copy`;
  const taken = new Set(
    (
      await db
        .select({ slug: surveys.slug })
        .from(surveys)
        .where(or(eq(surveys.slug, base), like(surveys.slug, `${base}-%`)))
    ).map((r) => r.slug),
  );
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/** Copies a survey with its sections and questions under new ids, remapping every reference. */
export async function duplicateSurvey(env: Env, teamId: string, id: string) {
  const db = getDb(env.DB);
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
  // A duplicate is a create (docs/ARCHITECTURE.md "Stored free-form JSON"): refused before anything is written
  // when a copy would pass a cap a create is held to (rows stored before a cap existed).
  const overCaps = duplicateCapErrors(source, sections.length, questions);
  if (overCaps) throw ApiError.validation(overCaps);
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
  // The copy first, under the team's cap (one statement, so parallel duplicates cannot pass it);
  // then its sections and questions in one batch. Should that batch fail, the copy is deleted
  // again, so no survey is left without the questions it was copied with.
  if (!(await withSlug(insertUnderCap(db, surveys, copy, { column: surveys.teamId, value: teamId }, MAX_SURVEYS_PER_TEAM)))) {
    throw surveyCapError();
  }
  const items: BatchItem<"sqlite">[] = [];
  for (const rows of statementChunks(sectionCopies)) items.push(db.insert(surveySections).values(rows));
  for (const rows of statementChunks(questionCopies)) items.push(db.insert(surveyQuestions).values(rows));
  try {
    await runBatch(db, items);
  } catch (error) {
    await db.delete(surveys).where(eq(surveys.id, copy.id));
    throw error;
  }
  return { ...surveyView(copy), sections: sectionCopies.map(sectionView), questions: questionCopies.map(questionView) };
}

/**
 * The caps a duplicate's copies would pass, by field (`questions.<i>.settings`, ...), or null: the
 * count caps of sections and questions and the byte cap of every copied free-form value.
 */
function duplicateCapErrors(source: SurveyRow, sectionCount: number, questions: QuestionRow[]): FieldErrors | null {
  const errors: FieldErrors = {};
  if (sectionCount > MAX_SECTIONS_PER_SURVEY) errors.sections = [`a survey can have at most ${MAX_SECTIONS_PER_SURVEY} sections`];
  if (questions.length > MAX_QUESTIONS_PER_SURVEY) errors.questions = [`a survey can have at most ${MAX_QUESTIONS_PER_SURVEY} questions`];
  const check = (field: string, value: unknown) => {
    if (!jsonFits(value, FREE_FORM_JSON_BYTES)) errors[field] = [jsonCapMessage(FREE_FORM_JSON_BYTES)];
  };
  check("settings", source.settings);
  check("ai_config", source.aiConfig);
  questions.forEach((q, i) => {
    check(`questions.${i}.settings`, q.settings);
    check(`questions.${i}.options`, q.options);
    check(`questions.${i}.branching`, q.branching);
  });
  return Object.keys(errors).length > 0 ? errors : null;
}
