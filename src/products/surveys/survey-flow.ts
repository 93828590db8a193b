// The respondent's path through a survey, as the response services walk it: the flow state of a
// response, the question that comes next in either mode (branching in manual mode, the question
// generator in AI mode), the question a stored response expects, and the state a respondent sees.
// No storage here: the services load and write the response (survey-responses.service.ts).
import type { surveyResponses, GeneratedQuestion, StoredAnswer } from "../../db/schema/surveys";
import type { Env } from "../../env";
import { nowIso } from "../../platform/clock";
import { effectiveAiConfig, questionGenerator } from "./survey-generator";
import { nextInOrder, nextManualQuestion, type QuestionShape } from "./survey-rules";
import type { QuestionRow, SurveyRow } from "./surveys.queries";
import type { QuestionType } from "./surveys.schemas";

export type ResponseRow = typeof surveyResponses.$inferSelect;
export type FlowQuestion = QuestionRow | GeneratedQuestion;

export interface FlowState {
  answers: Record<string, StoredAnswer>;
  path: string[];
  generated: GeneratedQuestion[];
}

/** A question as a respondent sees it: no branching (the server walks the path). */
export function publicQuestion(q: FlowQuestion) {
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

function questionIndex(ordered: QuestionRow[], generated: GeneratedQuestion[]): Map<string, FlowQuestion> {
  const map = new Map<string, FlowQuestion>();
  for (const q of ordered) map.set(q.id, q);
  for (const q of generated) map.set(q.id, q);
  return map;
}

/** The authored or generated question with this id (undefined when there is none). */
export function questionById(ordered: QuestionRow[], generated: GeneratedQuestion[], id: string): FlowQuestion | undefined {
  return questionIndex(ordered, generated).get(id);
}

/** The question a next-question id names (null: the path has ended). */
export function nextQuestion(ordered: QuestionRow[], state: FlowState, id: string | null): FlowQuestion | null {
  return id ? (questionById(ordered, state.generated, id) ?? null) : null;
}

/**
 * The question that comes after `after` (null: the start of the path) in either mode. AI mode
 * ignores branching: the survey's own questions are asked first, in order, then the generator
 * writes follow-ups until `target_questions` have been answered. Generated questions are appended
 * to `state.generated` so they are stored with the response.
 */
export async function nextQuestionId(
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

/**
 * The question the respondent must answer next, as stored; when that question has since been
 * deleted, the path continues with the first unanswered question (or ends).
 */
export async function expectedQuestion(env: Env, survey: SurveyRow, ordered: QuestionRow[], row: ResponseRow, state: FlowState) {
  if (row.nextQuestionId === null) return null;
  const stored = questionById(ordered, state.generated, row.nextQuestionId);
  if (stored) return stored;
  return nextQuestion(ordered, state, await nextQuestionId(env, survey, ordered, state, null));
}

export function stateView(survey: SurveyRow, row: ResponseRow, next: FlowQuestion | null) {
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
