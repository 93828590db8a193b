// The public response flow: resolve a survey by slug, start a response, take answers one at a
// time along the respondent's path (survey-flow.ts walks it), go back, and complete it exactly
// once. Responses live in the survey's store (store/survey-store.ts): there one conditional UPDATE
// wins the completion and, in the same transaction, the summary counters follow only that winner;
// the store then writes the D1 side (response_count, webhook deliveries: surveys.publish.ts),
// retried by its alarm until it succeeds. A store that fails answers 500 with nothing half-stored.
import { log } from "../../platform/log";
import { eq } from "drizzle-orm";
import { getDb, type Db } from "../../db/client";
import { teams } from "../../db/schema/platform";
import { surveys, type Respondent } from "../../db/schema/surveys";
import type { Env } from "../../env";
import { nowIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { requireQuotaLeft, spendQuota } from "../../platform/quota";
import { orNotFound } from "../../platform/tenancy";
import { adoptLegacyResponse } from "./surveys.migrate";
import { fromStored, ownerOf, summaryQuestions, surveyStore, toStored } from "./surveys.store";
import { effectiveAiConfig } from "./survey-generator";
import { expectedQuestion, nextQuestion, nextQuestionId, publicQuestion, questionById, stateView, type FlowState, type ResponseRow } from "./survey-flow";
import { answerError, canonical, isEmail, type QuestionShape } from "./survey-rules";
import type { AnswerInput, BackInput, StartResponseInput } from "./survey-responses.schemas";
import { listQuestionRows, surveyNotFound, type QuestionRow, type SurveyRow } from "./surveys.queries";

export interface PublicSurvey extends SurveyRow {
  plan: string;
  ownerEmail: string | null;
}

const responseNotFound = () => ApiError.notFound("Response not found");
const responseCompleted = () => new ApiError("response_completed", "Response is already completed");

/**
 * The survey behind a public slug. Slugs are globally unique, so the slug alone names one survey.
 * Drafts are not public: they answer 404 like an unknown slug.
 */
export async function findPublicSurvey(db: Db, slug: string): Promise<PublicSurvey> {
  const row = await db
    .select({ survey: surveys, plan: teams.plan, ownerEmail: teams.ownerEmail })
    .from(surveys)
    .innerJoin(teams, eq(teams.id, surveys.teamId))
    .where(eq(surveys.slug, slug))
    .get();
  if (!row || row.survey.status === "draft") throw surveyNotFound();
  return { ...row.survey, plan: row.plan, ownerEmail: row.ownerEmail };
}

export async function publicDefinition(db: Db, survey: PublicSurvey) {
  const questions = await listQuestionRows(db, survey);
  const target = survey.mode === "ai" ? effectiveAiConfig(survey.aiConfig).target_questions : questions.length;
  return {
    name: survey.name,
    slug: survey.slug,
    mode: survey.mode,
    status: survey.status,
    accepting_responses: survey.status === "active",
    settings: survey.settings,
    question_count: survey.mode === "ai" ? target : questions.length,
    first_question: questions[0] ? publicQuestion(questions[0]) : null,
  };
}

/**
 * Starts a response on an active survey. The team's `surveys` unit is spent when the response
 * completes (docs/ARCHITECTURE.md "Survey starts"), so anonymous starts cannot burn the quota; a start is
 * refused with the monthly-quota 429 once no unit is left.
 */
export async function startResponse(env: Env, survey: PublicSurvey, input: StartResponseInput) {
  if (survey.status !== "active") throw new ApiError("survey_closed", "Survey is not accepting responses");
  const respondent: Respondent = input.respondent ?? {};
  if (respondent.email !== undefined && !isEmail(respondent.email)) {
    throw ApiError.validation({ "respondent.email": ["must be a valid email address"] });
  }
  const db = getDb(env.DB);
  const ordered = await listQuestionRows(db, survey);
  await requireQuotaLeft(env, { teamId: survey.teamId, plan: survey.plan }, "surveys");
  const state: FlowState = { answers: {}, path: [], generated: [] };
  const next = await nextQuestionId(env, survey, ordered, state, null);
  const at = nowIso();
  const row: ResponseRow = {
    id: crypto.randomUUID(),
    teamId: survey.teamId,
    surveyId: survey.id,
    status: "in_progress",
    respondent,
    answers: {},
    path: [],
    nextQuestionId: next,
    generatedQuestions: state.generated,
    completionId: null,
    startedAt: at,
    updatedAt: at,
    completedAt: null,
  };
  // The row and the summary's in-progress count, in one transaction of the store.
  await surveyStore(env, survey.id).start(ownerOf(survey), toStored(row));
  return stateView(survey, row, nextQuestion(ordered, state, next));
}

/** A response of the survey, from its store (or moved there first from the former D1 table, see surveys.migrate.ts). */
async function loadResponse(env: Env, survey: SurveyRow, responseId: string): Promise<ResponseRow> {
  const stored = (await surveyStore(env, survey.id).get(responseId)) ?? (await adoptLegacyResponse(env, survey, responseId));
  return fromStored(survey, orNotFound(stored, responseNotFound));
}

/** Writes an answer or a step back, only while the response still holds what was read. */
async function saveFlow(
  env: Env,
  survey: SurveyRow,
  row: ResponseRow,
  set: Pick<ResponseRow, "answers" | "path" | "nextQuestionId" | "generatedQuestions" | "updatedAt">,
) {
  return surveyStore(env, survey.id).update(row.id, {
    expect: { updatedAt: row.updatedAt, nextQuestionId: row.nextQuestionId, path: JSON.stringify(row.path) },
    set: {
      answers: JSON.stringify(set.answers),
      path: JSON.stringify(set.path),
      nextQuestionId: set.nextQuestionId,
      generatedQuestions: JSON.stringify(set.generatedQuestions),
      updatedAt: set.updatedAt,
    },
  });
}

/**
 * Where an in-progress response stands: the survey's questions, a working copy of its flow state
 * (the caller may extend it) and the question it expects next.
 */
async function resumeFlow(env: Env, survey: SurveyRow, row: ResponseRow) {
  const ordered = await listQuestionRows(getDb(env.DB), survey);
  const state: FlowState = { answers: { ...row.answers }, path: [...row.path], generated: [...row.generatedQuestions] };
  return { ordered, state, expected: await expectedQuestion(env, survey, ordered, row, state) };
}

/** The current state of a response (resume). */
export async function responseState(env: Env, survey: SurveyRow, responseId: string) {
  const row = await loadResponse(env, survey, responseId);
  if (row.status === "completed") return stateView(survey, row, null);
  return stateView(survey, row, (await resumeFlow(env, survey, row)).expected);
}

/**
 * Records one answer. Only the expected next question may be answered (409 otherwise, with
 * `expected_question_id`); repeating the last accepted answer unchanged is an idempotent retry.
 */
export async function submitAnswer(env: Env, survey: SurveyRow, responseId: string, input: AnswerInput) {
  const row = await loadResponse(env, survey, responseId);
  if (row.status === "completed") throw responseCompleted();
  const { ordered, state, expected } = await resumeFlow(env, survey, row);

  if (!expected || expected.id !== input.question_id) {
    const previous = row.answers[input.question_id];
    if (previous && row.path[row.path.length - 1] === input.question_id && canonical(previous.value) === canonical(input.value ?? null)) {
      return stateView(survey, row, expected);
    }
    if (!expected) {
      throw new ApiError("path_finished", "The survey has no more questions for this response; complete it", { extra: { finished: true } });
    }
    throw new ApiError("unexpected_question", "Question is not the next one on this response's path", {
      extra: { expected_question_id: expected.id },
    });
  }

  const shape: QuestionShape = { id: expected.id, type: expected.type, options: expected.options, settings: expected.settings };
  const problem = answerError(shape, input.value);
  if (problem) throw ApiError.validation({ value: [problem] });

  const value = input.value ?? null;
  const generated = !("surveyId" in expected);
  state.answers[expected.id] = { value, version: expected.version, answered_at: nowIso(), ...(generated ? { generated: true } : {}) };
  state.path.push(expected.id);
  const branching = generated ? undefined : (expected as QuestionRow).branching;
  const next = await nextQuestionId(env, survey, ordered, state, { question: { ...shape, branching }, value });
  const updatedAt = nowIso();
  // Optimistic: the write applies only if nobody else moved this response on meanwhile.
  if (!(await saveFlow(env, survey, row, { answers: state.answers, path: state.path, nextQuestionId: next, generatedQuestions: state.generated, updatedAt }))) {
    throw new ApiError("conflict", "The response changed while this answer was recorded; fetch its state and retry");
  }
  const saved: ResponseRow = { ...row, answers: state.answers, path: state.path, nextQuestionId: next, generatedQuestions: state.generated, updatedAt };
  return stateView(survey, saved, nextQuestion(ordered, state, next));
}

/**
 * Goes back to an earlier question of the path (`question_id`, or the last answered one when
 * omitted): the path is cut before it, the answers after it are discarded, and it becomes the
 * expected question again, keeping its earlier answer until it is answered anew. Answering it then
 * walks the branching from there, so the path is recomputed on the server. A completed response
 * cannot go back (409); a question that is not on the path, or no longer exists, answers 409.
 */
export async function goBack(env: Env, survey: SurveyRow, responseId: string, input: BackInput) {
  const row = await loadResponse(env, survey, responseId);
  if (row.status === "completed") throw responseCompleted();
  if (row.path.length === 0) throw new ApiError("nothing_to_go_back_to", "No question has been answered yet; there is nothing to go back to");
  const targetId = input.question_id ?? row.path[row.path.length - 1];
  const index = row.path.indexOf(targetId);
  const ordered = await listQuestionRows(getDb(env.DB), survey);
  const target = index === -1 ? undefined : questionById(ordered, row.generatedQuestions, targetId);
  if (!target) {
    throw new ApiError("not_on_path", "Question is not an earlier question of this response's path", { extra: { path: row.path } });
  }
  const path = row.path.slice(0, index);
  const kept = new Set([...path, targetId]);
  // Answers off the new path are discarded; generated follow-ups after it are dropped as well
  // (the generator writes new ones from the changed history).
  const answers = Object.fromEntries(Object.entries(row.answers).filter(([id]) => kept.has(id)));
  const generatedQuestions = row.generatedQuestions.filter((q) => kept.has(q.id));
  const updatedAt = nowIso();
  if (!(await saveFlow(env, survey, row, { answers, path, nextQuestionId: targetId, generatedQuestions, updatedAt }))) {
    throw new ApiError("conflict", "The response changed while going back; fetch its state and retry");
  }
  return stateView(survey, { ...row, answers, path, nextQuestionId: targetId, generatedQuestions, updatedAt }, target);
}

/**
 * Completes a response whose path has ended. Exactly one call wins the store's conditional UPDATE;
 * the counters and the pending D1 side (response_count, webhook delivery rows) follow only that
 * winner in the same transaction, so repeated or concurrent calls count once and notify once.
 */
export async function completeResponse(env: Env, survey: PublicSurvey, responseId: string) {
  const row = await loadResponse(env, survey, responseId);
  if (row.status === "completed") return stateView(survey, row, null);
  const { ordered, expected } = await resumeFlow(env, survey, row);
  if (expected) {
    throw new ApiError("unanswered_questions", "Response has unanswered questions", { extra: { next_question_id: expected.id } });
  }

  const { won } = await surveyStore(env, survey.id).complete(
    ownerOf(survey),
    row.id,
    { completionId: crypto.randomUUID(), at: nowIso() },
    summaryQuestions(ordered),
  );
  if (won) {
    // The winner spends the team's `surveys` unit, never refused: a start was refused while no
    // unit was left, so at most the responses in flight go over. The completion is committed: a
    // meter that cannot be reached costs the team nothing rather than failing the respondent.
    try {
      await spendQuota(env, { teamId: survey.teamId, plan: survey.plan, ownerEmail: survey.ownerEmail }, "surveys", 1);
    } catch (error) {
      log.error("survey completion: usage meter unavailable, unit not counted", { response_id: row.id, error: String(error) });
    }
  }
  return stateView(survey, await loadResponse(env, survey, responseId), null);
}
