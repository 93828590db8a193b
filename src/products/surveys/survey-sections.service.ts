// Sections of a survey: list, create, update, and delete (its questions stay, with section_id
// null). Every query filters on the caller's team; a section of another survey or team answers
// the same 404 as a missing one.
import { eq } from "drizzle-orm";
import { insertUnderCap } from "../../platform/caps";
import { ApiError } from "../../platform/errors";
import { getDb } from "../../db/client";
import { surveyQuestions, surveySections } from "../../db/schema/surveys";
import type { Env } from "../../env";
import { nowIso } from "../../platform/clock";
import { ownedRow } from "../../platform/tenancy";
import type { CreateSectionInput, PatchSectionInput } from "./surveys.schemas";
import { listSectionRows, loadSection, loadSurvey, runBatch, type SectionRow } from "./surveys.queries";

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

export async function listSections(env: Env, teamId: string, surveyId: string) {
  const db = getDb(env.DB);
  return (await listSectionRows(db, await loadSurvey(db, teamId, surveyId))).map(sectionView);
}

export async function createSection(env: Env, teamId: string, surveyId: string, input: CreateSectionInput) {
  const db = getDb(env.DB);
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
  // The cap is part of the insert, so parallel creates cannot pass it together.
  if (!(await insertUnderCap(db, surveySections, row, { column: surveySections.surveyId, value: survey.id }, MAX_SECTIONS_PER_SURVEY))) {
    throw ApiError.validation({ survey_id: [`a survey can have at most ${MAX_SECTIONS_PER_SURVEY} sections`] });
  }
  return sectionView(row);
}

/** Sections one survey may hold. */
export const MAX_SECTIONS_PER_SURVEY = 50;

export async function updateSection(env: Env, teamId: string, surveyId: string, sectionId: string, patch: PatchSectionInput) {
  const db = getDb(env.DB);
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
export async function deleteSection(env: Env, teamId: string, surveyId: string, sectionId: string): Promise<void> {
  const db = getDb(env.DB);
  const survey = await loadSurvey(db, teamId, surveyId);
  const section = await loadSection(db, survey, sectionId);
  await runBatch(db, [
    db.update(surveyQuestions).set({ sectionId: null, updatedAt: nowIso() }).where(eq(surveyQuestions.sectionId, section.id)),
    db.delete(surveySections).where(ownedRow(surveySections, teamId, section.id)),
  ]);
}
