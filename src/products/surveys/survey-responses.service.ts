// The public response flow: resolve a survey by slug, start a response, take answers one at a
// time along the respondent's path (branching in manual mode, the question generator in AI mode),
// and complete it exactly once: one conditional UPDATE wins, and in the same D1 batch the survey's
// response_count and the webhook deliveries follow only that winner.
import { and, eq, sql } from "drizzle-orm";
import { getDb, type Db } from "../../db/client";
import { teams } from "../../db/schema/platform";
import {
  surveyResponses,
  surveys,
  surveySummaryState,
  surveyWebhooks,
  type GeneratedQuestion,
  type Respondent,
  type StoredAnswer,
} from "../../db/schema/surveys";
import type { Env } from "../../env";
import { nowIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { consumeQuota, releaseQuota } from "../../platform/quota";
import { orNotFound } from "../../platform/tenancy";
import { effectiveAiConfig, questionGenerator } from "./survey-generator";
import { completionStatements } from "./survey-summary.queries";
import { answerError, canonical, isEmail, nextInOrder, nextManualQuestion, type QuestionShape } from "./survey-rules";
import type { AnswerInput, BackInput, QuestionType, StartResponseInput } from "./surveys.schemas";
import { listQuestionRows, surveyNotFound, type QuestionRow, type SurveyRow } from "./surveys.service";

type ResponseRow = typeof surveyResponses.$inferSelect;

export interface PublicSurvey extends SurveyRow {
  plan: string;
  ownerEmail: string | null;
}

const responseNotFound = () => ApiError.notFound("Response not found");

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

/** A question as a respondent sees it: no branching (the server walks the path). */
function publicQuestion(q: QuestionRow | GeneratedQuestion) {
  const generated = !("surveyId" in q);
  return {
    id: q.id,
    section_id: generated ? null : (q as QuestionRow).sectionId,
    type: q.type as QuestionType,
    title: q.title,
    description: q.description,
    options: q.options,
    settings: q.settings,
    position: generated ? null : (q as QuestionRow).position,
    version: q.version,
    generated,
  };
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

interface FlowState {
  answers: Record<string, StoredAnswer>;
  path: string[];
  generated: GeneratedQuestion[];
}

/**
 * The question that comes after `after` (null: the start of the path) in either mode. AI mode
 * ignores branching: the survey's own questions are asked first, in order, then the generator
 * writes follow-ups until `target_questions` have been answered. Generated questions are appended
 * to `state.generated` so they are stored with the response.
 */
async function nextQuestionId(
  env: Env,
  survey: SurveyRow,
  ordered: QuestionRow[],
  state: FlowState,
  after: { question: QuestionShape; value: unknown } | null,
): Promise<string | null> {
  const answered = new Set(state.path);
  if (survey.mode === "manual") {
    if (!after) return nextInOrder(ordered, null, answered);
    const current = ordered.find((q) => q.id === after.question.id);
    return current ? nextManualQuestion(ordered, current, after.value, answered) : nextInOrder(ordered, null, answered);
  }
  const config = effectiveAiConfig(survey.aiConfig);
  if (state.path.length >= config.target_questions) return null;
  const authored = ordered.find((q) => !answered.has(q.id));
  if (authored) return authored.id;
  const byId = questionIndex(ordered, state.generated);
  const generator = questionGenerator(env);
  const draft = await generator.next({
    surveyName: survey.name,
    aiConfig: config,
    history: state.path.map((id) => {
      const q = byId.get(id);
      return { type: q?.type ?? "text", title: q?.title ?? "", options: q?.options ?? [], value: state.answers[id]?.value };
    }),
  });
  const generated: GeneratedQuestion = {
    id: crypto.randomUUID(),
    ...draft,
    version: 1,
    generated_by: generator.name,
    created_at: nowIso(),
  };
  state.generated.push(generated);
  return generated.id;
}

function questionIndex(ordered: QuestionRow[], generated: GeneratedQuestion[]): Map<string, QuestionRow | GeneratedQuestion> {
  const map = new Map<string, QuestionRow | GeneratedQuestion>();
  for (const q of ordered) map.set(q.id, q);
  for (const q of generated) map.set(q.id, q);
  return map;
}

function stateView(survey: SurveyRow, row: ResponseRow, next: QuestionRow | GeneratedQuestion | null) {
  // After going back, the question the respondent returned to keeps its earlier answer until it
  // is answered again: shown so a client can pre-fill its control.
  const earlier = next && !row.path.includes(next.id) ? row.answers[next.id] : undefined;
  return {
    id: row.id,
    survey_slug: survey.slug,
    status: row.status,
    answered_count: row.path.length,
    next_question: next ? publicQuestion(next) : null,
    previous_answer: earlier ? { value: earlier.value, answered_at: earlier.answered_at } : null,
    can_go_back: row.status === "in_progress" && row.path.length > 0,
    finished: next === null,
    started_at: row.startedAt,
    completed_at: row.completedAt,
  };
}

/** Starts a response on an active survey; one unit of the team's `surveys` quota per start. */
export async function startResponse(env: Env, survey: PublicSurvey, input: StartResponseInput) {
  if (survey.status !== "active") throw new ApiError("survey_closed", "Survey is not accepting responses", { status: 409 });
  const respondent: Respondent = input.respondent ?? {};
  if (respondent.email !== undefined && !isEmail(respondent.email)) {
    throw ApiError.validation({ "respondent.email": ["must be a valid email address"] });
  }
  const db = getDb(env.DB);
  const ordered = await listQuestionRows(db, survey);
  await consumeQuota(env, { teamId: survey.teamId, plan: survey.plan, ownerEmail: survey.ownerEmail }, "surveys", 1);
  try {
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
    // The summary's in-progress count moves in the same batch (survey-summary.queries.ts).
    // (A no-op while the counters are not built: the rebuild counts this response then.)
    await db.batch([
      db.insert(surveyResponses).values(row),
      db
        .update(surveySummaryState)
        .set({ inProgress: sql`${surveySummaryState.inProgress} + 1` })
        .where(and(eq(surveySummaryState.surveyId, survey.id), eq(surveySummaryState.teamId, survey.teamId))),
    ]);
    return stateView(survey, row, next ? (questionIndex(ordered, state.generated).get(next) ?? null) : null);
  } catch (error) {
    await releaseQuota(env, survey.teamId, "surveys", 1);
    throw error;
  }
}

async function loadResponse(db: Db, survey: SurveyRow, responseId: string): Promise<ResponseRow> {
  const row = await db
    .select()
    .from(surveyResponses)
    .where(and(eq(surveyResponses.id, responseId), eq(surveyResponses.surveyId, survey.id), eq(surveyResponses.teamId, survey.teamId)))
    .get();
  return orNotFound(row, responseNotFound());
}

/**
 * The question the respondent must answer next, as stored; when that question has since been
 * deleted, the path continues with the first unanswered question (or ends).
 */
async function expectedQuestion(env: Env, survey: SurveyRow, ordered: QuestionRow[], row: ResponseRow, state: FlowState) {
  if (row.nextQuestionId === null) return null;
  const byId = questionIndex(ordered, state.generated);
  const stored = byId.get(row.nextQuestionId);
  if (stored) return stored;
  const repaired = await nextQuestionId(env, survey, ordered, state, null);
  return repaired ? (questionIndex(ordered, state.generated).get(repaired) ?? null) : null;
}

/** The current state of a response (resume). */
export async function responseState(env: Env, survey: SurveyRow, responseId: string) {
  const db = getDb(env.DB);
  const row = await loadResponse(db, survey, responseId);
  if (row.status === "completed") return stateView(survey, row, null);
  const ordered = await listQuestionRows(db, survey);
  const state: FlowState = { answers: row.answers, path: row.path, generated: [...row.generatedQuestions] };
  return stateView(survey, row, await expectedQuestion(env, survey, ordered, row, state));
}

/**
 * Records one answer. Only the expected next question may be answered (409 otherwise, with
 * `expected_question_id`); repeating the last accepted answer unchanged is an idempotent retry.
 */
export async function submitAnswer(env: Env, survey: SurveyRow, responseId: string, input: AnswerInput) {
  const db = getDb(env.DB);
  const row = await loadResponse(db, survey, responseId);
  if (row.status === "completed") throw new ApiError("response_completed", "Response is already completed", { status: 409 });
  const ordered = await listQuestionRows(db, survey);
  const state: FlowState = { answers: { ...row.answers }, path: [...row.path], generated: [...row.generatedQuestions] };
  const expected = await expectedQuestion(env, survey, ordered, row, state);

  if (!expected || expected.id !== input.question_id) {
    const previous = row.answers[input.question_id];
    if (previous && row.path[row.path.length - 1] === input.question_id && canonical(previous.value) === canonical(input.value ?? null)) {
      return stateView(survey, row, expected);
    }
    if (!expected) {
      throw new ApiError("path_finished", "The survey has no more questions for this response; complete it", { status: 409, extra: { finished: true } });
    }
    throw new ApiError("unexpected_question", "Question is not the next one on this response's path", {
      status: 409,
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
  const result = await db
    .update(surveyResponses)
    .set({ answers: state.answers, path: state.path, nextQuestionId: next, generatedQuestions: state.generated, updatedAt })
    .where(
      and(
        eq(surveyResponses.id, row.id),
        eq(surveyResponses.status, "in_progress"),
        eq(surveyResponses.nextQuestionId, row.nextQuestionId as string),
        eq(surveyResponses.updatedAt, row.updatedAt),
      ),
    )
    .run();
  if (result.meta.changes !== 1) {
    throw new ApiError("conflict", "The response changed while this answer was recorded; fetch its state and retry", { status: 409 });
  }
  const saved: ResponseRow = { ...row, answers: state.answers, path: state.path, nextQuestionId: next, generatedQuestions: state.generated, updatedAt };
  return stateView(survey, saved, next ? (questionIndex(ordered, state.generated).get(next) ?? null) : null);
}

/**
 * Goes back to an earlier question of the path (`question_id`, or the last answered one when
 * omitted): the path is cut before it, the answers after it are discarded, and it becomes the
 * expected question again, keeping its earlier answer until it is answered anew. Answering it then
 * walks the branching from there, so the path is recomputed on the server. A completed response
 * cannot go back (409); a question that is not on the path, or no longer exists, answers 409.
 */
export async function goBack(env: Env, survey: SurveyRow, responseId: string, input: BackInput) {
  const db = getDb(env.DB);
  const row = await loadResponse(db, survey, responseId);
  if (row.status === "completed") throw new ApiError("response_completed", "Response is already completed", { status: 409 });
  if (row.path.length === 0) throw new ApiError("nothing_to_go_back_to", "No question has been answered yet; there is nothing to go back to", { status: 409 });
  const targetId = input.question_id ?? row.path[row.path.length - 1];
  const index = row.path.indexOf(targetId);
  const ordered = await listQuestionRows(db, survey);
  const target = index === -1 ? undefined : questionIndex(ordered, row.generatedQuestions).get(targetId);
  if (!target) {
    throw new ApiError("not_on_path", "Question is not an earlier question of this response's path", { status: 409, extra: { path: row.path } });
  }
  const path = row.path.slice(0, index);
  const kept = new Set([...path, targetId]);
  // Answers off the new path are discarded; generated follow-ups after it are dropped as well
  // (the generator writes new ones from the changed history).
  const answers = Object.fromEntries(Object.entries(row.answers).filter(([id]) => kept.has(id)));
  const generatedQuestions = row.generatedQuestions.filter((q) => kept.has(q.id));
  const updatedAt = nowIso();
  const result = await db
    .update(surveyResponses)
    .set({ answers, path, nextQuestionId: targetId, generatedQuestions, updatedAt })
    .where(
      and(
        eq(surveyResponses.id, row.id),
        eq(surveyResponses.status, "in_progress"),
        eq(surveyResponses.updatedAt, row.updatedAt),
        sql`${surveyResponses.nextQuestionId} IS ${row.nextQuestionId}`,
        sql`${surveyResponses.path} = ${JSON.stringify(row.path)}`,
      ),
    )
    .run();
  if (result.meta.changes !== 1) {
    throw new ApiError("conflict", "The response changed while going back; fetch its state and retry", { status: 409 });
  }
  return stateView(survey, { ...row, answers, path, nextQuestionId: targetId, generatedQuestions, updatedAt }, target);
}

/**
 * Completes a response whose path has ended. Exactly one call wins the conditional UPDATE; the
 * counter increment and the webhook delivery rows are conditioned on that winner's completion id
 * inside the same batch, so repeated or concurrent calls count once and notify once.
 */
export async function completeResponse(env: Env, survey: SurveyRow, responseId: string) {
  const db = getDb(env.DB);
  const row = await loadResponse(db, survey, responseId);
  if (row.status === "completed") return stateView(survey, row, null);
  const ordered = await listQuestionRows(db, survey);
  const state: FlowState = { answers: row.answers, path: row.path, generated: [...row.generatedQuestions] };
  const expected = await expectedQuestion(env, survey, ordered, row, state);
  if (expected) {
    throw new ApiError("unanswered_questions", "Response has unanswered questions", { status: 409, extra: { next_question_id: expected.id } });
  }

  const completionId = crypto.randomUUID();
  const at = nowIso();
  const hooks = await db
    .select({ id: surveyWebhooks.id, events: surveyWebhooks.events })
    .from(surveyWebhooks)
    .where(and(eq(surveyWebhooks.surveyId, survey.id), eq(surveyWebhooks.teamId, survey.teamId)));
  const subscribed = hooks.filter((h) => h.events.includes("response.completed"));
  const deliveries = subscribed.map((h) => ({ id: crypto.randomUUID(), webhookId: h.id }));
  const won = "EXISTS (SELECT 1 FROM survey_responses WHERE id = ?1 AND completion_id = ?2)";
  const results = await env.DB.batch([
    env.DB.prepare(
      `UPDATE survey_responses SET status = 'completed', completion_id = ?2, completed_at = ?3, updated_at = ?3, next_question_id = NULL
       WHERE id = ?1 AND status = 'in_progress'`,
    ).bind(row.id, completionId, at),
    env.DB.prepare(`UPDATE surveys SET response_count = response_count + 1 WHERE id = ?3 AND ${won}`).bind(row.id, completionId, survey.id),
    // The summary counters take the completed answers in this same transaction, only for the winner.
    ...completionStatements(env.DB, survey.id, survey.teamId, row.id, completionId),
    ...deliveries.map((d) =>
      env.DB.prepare(
        // The body is built from the stored response when sent: one copy, however many webhooks.
        `INSERT INTO survey_webhook_deliveries (id, team_id, survey_id, webhook_id, event, response_id, status, attempts, created_at, next_attempt_at)
         SELECT ?3, ?4, ?5, ?6, 'response.completed', ?1, 'pending', 0, ?7, ?7 WHERE ${won}`,
      ).bind(row.id, completionId, d.id, survey.teamId, survey.id, d.webhookId, at),
    ),
  ]);
  if (results[0].meta.changes === 1 && deliveries.length) {
    try {
      await env.SURVEY_QUEUE.sendBatch(deliveries.map((d) => ({ body: { delivery_id: d.id } })));
    } catch (error) {
      // The completion is committed; the respondent must not see a failure for it. The rows stay
      // pending and the hourly sweep (surveys.cron.ts) queues them again.
      console.error(JSON.stringify({ msg: "survey webhook enqueue failed", response_id: row.id, error: String(error) }));
    }
  }
  return stateView(survey, await loadResponse(db, survey, responseId), null);
}

/**
 * The body of a `response.completed` delivery, built from the stored survey and completed response
 * (deterministic, so every attempt signs the same bytes).
 */
export function completedPayload(
  survey: { id: string; slug: string; name: string },
  response: { id: string; respondent: unknown; answers: unknown; path: unknown; generatedQuestions: unknown; startedAt: string; completedAt: string | null },
): string {
  return JSON.stringify({
    type: "response.completed",
    timestamp: response.completedAt,
    data: {
      survey: { id: survey.id, slug: survey.slug, name: survey.name },
      response: {
        id: response.id,
        status: "completed",
        respondent: response.respondent,
        answers: response.answers,
        path: response.path,
        generated_questions: response.generatedQuestions,
        started_at: response.startedAt,
        completed_at: response.completedAt,
      },
    },
  });
}
