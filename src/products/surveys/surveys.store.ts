// The Worker's side of the per-survey store (store/survey-store.ts): the stub of a survey's object
// and the conversions between a response row as the services use it and as the store keeps it.
// The survey passed in is always a row loaded for the caller's team (loadSurvey, findPublicSurvey,
// a delivery's or migration's D1 row): another team's ids never reach or create a store.
import { namedObject } from "../../platform/durable-objects";
import type { Env } from "../../env";
import type { ResponseRow } from "./survey-flow";
import type { QuestionRow, SurveyRow } from "./surveys.queries";
import type { StoredResponse, StoreOwner, SummaryQuestion } from "./store/survey-rows";
import type { SurveyStore } from "./store/survey-store";

/** The store of one survey: one object per survey id. */
export function surveyStore(env: Env, surveyId: string): DurableObjectStub<SurveyStore> {
  return namedObject(env.SURVEY_STORE, surveyId);
}

export const ownerOf = (survey: Pick<SurveyRow, "id" | "teamId">): StoreOwner => ({ surveyId: survey.id, teamId: survey.teamId });

/** The current questions as the counters need them. */
export const summaryQuestions = (questions: Pick<QuestionRow, "id" | "type">[]): SummaryQuestion[] => questions.map((q) => ({ id: q.id, type: q.type }));

export function toStored(row: ResponseRow): StoredResponse {
  return {
    id: row.id,
    status: row.status,
    respondent: JSON.stringify(row.respondent),
    answers: JSON.stringify(row.answers),
    path: JSON.stringify(row.path),
    next_question_id: row.nextQuestionId,
    generated_questions: JSON.stringify(row.generatedQuestions),
    completion_id: row.completionId,
    started_at: row.startedAt,
    updated_at: row.updatedAt,
    completed_at: row.completedAt,
  };
}

export function fromStored(survey: Pick<SurveyRow, "id" | "teamId">, s: StoredResponse): ResponseRow {
  return {
    id: s.id,
    teamId: survey.teamId,
    surveyId: survey.id,
    status: s.status,
    respondent: JSON.parse(s.respondent),
    answers: JSON.parse(s.answers),
    path: JSON.parse(s.path),
    nextQuestionId: s.next_question_id,
    generatedQuestions: JSON.parse(s.generated_questions),
    completionId: s.completion_id,
    startedAt: s.started_at,
    updatedAt: s.updated_at,
    completedAt: s.completed_at,
  };
}
