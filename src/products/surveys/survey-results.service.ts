// Results of a survey: the paginated response list and the per-question summary of completed
// responses, both read from the survey's store. The summary is read from grouped counters kept by
// every completion in the store's transaction (store/survey-store.queries.ts), so a read costs the
// same whatever the number of responses; this file turns those few grouped rows into the body
// (averages, NPS, rates).
import { getDb } from "../../db/client";
import type { Env } from "../../env";
import type { ResponseRow } from "./survey-flow";
import type { SummaryQuestion } from "./store/survey-rows";
import { fromStored, summaryQuestions, surveyStore } from "./surveys.store";
import { listQuestionRows, loadSurvey, pageWindow, paginated, type QuestionRow, type SurveyRow } from "./surveys.queries";

export function responseRecordView(row: ResponseRow) {
  return {
    id: row.id,
    survey_id: row.surveyId,
    status: row.status,
    respondent: row.respondent as Record<string, unknown>,
    answers: row.answers,
    path: row.path,
    generated_questions: row.generatedQuestions as unknown as Record<string, unknown>[],
    started_at: row.startedAt,
    updated_at: row.updatedAt,
    completed_at: row.completedAt,
  };
}

export interface ResponsesQuery {
  page: number;
  per_page: number;
  status?: "in_progress" | "completed";
  since?: string;
  until?: string;
}

export async function listResponses(env: Env, teamId: string, surveyId: string, q: ResponsesQuery) {
  return responsesPage(env, await loadSurvey(getDb(env.DB), teamId, surveyId), q);
}

/** A page of the responses of a survey already loaded for its team (listResponses, the console's survey page). */
export async function responsesPage(env: Env, survey: SurveyRow, q: ResponsesQuery) {
  const { limit, offset } = pageWindow(q);
  // Newest first, ties in insertion order, from the store's (status, started_at) or (started_at)
  // index; without a time filter the total is the store's kept count (no scan).
  const { rows, total } = await surveyStore(env, survey.id).page(
    {
      status: q.status,
      since: q.since === undefined ? undefined : new Date(q.since).toISOString(),
      until: q.until === undefined ? undefined : new Date(q.until).toISOString(),
    },
    limit,
    offset,
  );
  return paginated(
    rows.map((r) => responseRecordView(fromStored(survey, r))),
    total,
    q,
  );
}

const round2 = (n: number) => Math.round(n * 100) / 100;

function numericRange(q: QuestionRow): [number, number] {
  if (q.type === "rating") return [1, 5];
  if (q.type === "nps") return [0, 10];
  return [Number(q.settings.min), Number(q.settings.max)];
}

interface ValueGroup {
  question_id: string;
  kind: string;
  value: unknown;
  n: number;
}

interface ElementGroup {
  question_id: string;
  row_key: string | null;
  item: string;
  n: number;
  position_sum: number;
  first: number;
}

/** The grouped answers of one question, as the SQL statements returned them. */
interface Groups {
  values: ValueGroup[];
  elements: ElementGroup[];
}

const zeros = (keys: string[]): Record<string, number> => Object.fromEntries(keys.map((k) => [k, 0]));
const has = (o: object, k: string) => Object.hasOwn(o, k);

/** The aggregate of one question from its grouped answers. */
function aggregate(q: QuestionRow, { values, elements }: Groups): Record<string, unknown> {
  const answered = values.reduce((sum, g) => sum + g.n, 0);
  const base = { question_id: q.id, type: q.type, title: q.title, position: q.position, answered };
  switch (q.type) {
    case "choice":
    case "multi_choice": {
      const counts = zeros(q.options);
      for (const g of values) if (g.kind === "text" && typeof g.value === "string" && has(counts, g.value)) counts[g.value] += g.n;
      for (const g of elements) if (g.row_key === null && has(counts, g.item)) counts[g.item] += g.n;
      return { ...base, counts };
    }
    case "ranking": {
      const sums = zeros(q.options);
      const first = zeros(q.options);
      const n = values.filter((g) => g.kind === "array").reduce((sum, g) => sum + g.n, 0);
      for (const g of elements) {
        if (g.row_key !== null || !has(sums, g.item)) continue;
        sums[g.item] += g.position_sum;
        first[g.item] += g.first;
      }
      const average_rank = Object.fromEntries(q.options.map((o) => [o, n ? round2(sums[o] / n) : null]));
      return { ...base, average_rank, first_choice_counts: first };
    }
    case "rating":
    case "scale":
    case "slider":
    case "nps": {
      const [min, max] = numericRange(q);
      const nums = values
        .filter((g) => (g.kind === "integer" || g.kind === "real") && Number.isInteger(g.value))
        .map((g) => ({ v: g.value as number, n: g.n }))
        .sort((a, b) => a.v - b.v);
      const distribution: Record<string, number> = {};
      if (max - min <= 100) for (let i = min; i <= max; i++) distribution[String(i)] = 0;
      for (const { v, n } of nums) distribution[String(v)] = (distribution[String(v)] ?? 0) + n;
      const total = nums.reduce((sum, g) => sum + g.n, 0);
      const sum = nums.reduce((acc, g) => acc + g.v * g.n, 0);
      const result: Record<string, unknown> = { ...base, average: total ? round2(sum / total) : null, distribution };
      if (q.type === "nps") {
        const promoters = nums.filter((g) => g.v >= 9).reduce((acc, g) => acc + g.n, 0);
        const detractors = nums.filter((g) => g.v <= 6).reduce((acc, g) => acc + g.n, 0);
        Object.assign(result, {
          promoters,
          passives: total - promoters - detractors,
          detractors,
          nps: total ? Math.round(((promoters - detractors) / total) * 100) : null,
        });
      }
      return result;
    }
    case "yes_no": {
      const yes = values.filter((g) => g.kind === "true").reduce((acc, g) => acc + g.n, 0);
      const no = values.filter((g) => g.kind === "false").reduce((acc, g) => acc + g.n, 0);
      return { ...base, yes, no, yes_rate: yes + no ? round2(yes / (yes + no)) : null };
    }
    case "matrix": {
      const rows = (q.settings.rows as string[]) ?? [];
      const columns = (q.settings.columns as string[]) ?? [];
      const counts: Record<string, Record<string, number>> = Object.fromEntries(rows.map((r) => [r, zeros(columns)]));
      for (const g of elements) {
        if (g.row_key !== null && has(counts, g.row_key) && has(counts[g.row_key], g.item)) counts[g.row_key][g.item] += g.n;
      }
      return { ...base, counts };
    }
    default:
      return base;
  }
}

/**
 * Per-question aggregates over completed responses, read from the counters that every completion
 * updates in the store's transaction: one store call, whatever the number of responses. When a
 * question changed type since the counters were kept, the store first rebuilds them from its
 * responses. Answers of deleted questions are not rendered.
 */
export async function surveySummary(env: Env, teamId: string, surveyId: string) {
  const db = getDb(env.DB);
  const survey = await loadSurvey(db, teamId, surveyId);
  return summaryOf(env, survey, listQuestionRows(db, survey));
}

/** Whether two question lists name the same ids with the same types (in any order). */
function sameQuestions(a: SummaryQuestion[], b: SummaryQuestion[]): boolean {
  const types = new Map(a.map((q) => [q.id, q.type]));
  return a.length === b.length && b.every((q) => types.get(q.id) === q.type);
}

/**
 * The summary of a survey already loaded for its team, over its current questions (read by the
 * caller, possibly still on their way): surveySummary, and the console's survey page, which shows
 * the same questions.
 */
export async function summaryOf(env: Env, survey: SurveyRow, currentQuestions: QuestionRow[] | Promise<QuestionRow[]>) {
  const store = surveyStore(env, survey.id);
  // The kept counters are read while the questions are: asked again with the questions only when
  // the list the counters follow is not the current one (a question added, deleted or retyped).
  const [questions, kept] = await Promise.all([currentQuestions, store.summary()]);
  const current = summaryQuestions(questions);
  const { inProgress, completed, values, elements } = sameQuestions(kept.questions, current) ? kept : await store.summary(current);
  const groups = new Map<string, Groups>(questions.map((q) => [q.id, { values: [], elements: [] }]));
  for (const g of values) {
    // '' marks a value the summary does not group by (free text); the others are stored as JSON.
    groups.get(g.question_id)?.values.push({ question_id: g.question_id, kind: g.kind, value: g.value === "" ? null : JSON.parse(g.value), n: g.n });
  }
  for (const g of elements) {
    groups.get(g.question_id)?.elements.push({
      question_id: g.question_id,
      row_key: g.kind === "object" ? g.row_key : null,
      item: g.item,
      n: g.n,
      position_sum: g.position_sum,
      first: g.first_count,
    });
  }
  return {
    survey_id: survey.id,
    response_count: survey.responseCount,
    responses: { total: completed + inProgress, completed, in_progress: inProgress },
    questions: questions.map((q) => aggregate(q, groups.get(q.id) ?? { values: [], elements: [] })),
  };
}
