// Results of a survey: the paginated response list and the per-question summary of completed
// responses. The summary is read from grouped counters kept by every completion (see
// survey-summary.queries.ts), so a read costs the same whatever the number of responses; this file
// turns those few grouped rows into the body (averages, NPS, rates).
import { and, count, desc, eq, gte, lt, sql, type SQL } from "drizzle-orm";
import { getDb } from "../../db/client";
import { surveyResponses } from "../../db/schema/surveys";
import type { Env } from "../../env";
import { nowIso } from "../../platform/clock";
import { readStatements, rebuildStatements, type ElementRow, type StateRow, type ValueRow } from "./survey-summary.queries";
import { listQuestionRows, loadSurvey, pageWindow, paginated, type QuestionRow, type SurveyRow } from "./surveys.repository";

type ResponseRow = typeof surveyResponses.$inferSelect;

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

export async function listResponses(
  env: Env,
  teamId: string,
  surveyId: string,
  q: ResponsesQuery,
) {
  return responsesPage(env, await loadSurvey(getDb(env.DB), teamId, surveyId), q);
}

/** A page of the responses of a survey already loaded for its team (listResponses, the console's survey page). */
export async function responsesPage(env: Env, survey: SurveyRow, q: ResponsesQuery) {
  const db = getDb(env.DB);
  const teamId = survey.teamId;
  const filters: SQL[] = [eq(surveyResponses.surveyId, survey.id)];
  if (q.status) filters.push(eq(surveyResponses.status, q.status));
  if (q.since) filters.push(gte(surveyResponses.startedAt, new Date(q.since).toISOString()));
  if (q.until) filters.push(lt(surveyResponses.startedAt, new Date(q.until).toISOString()));
  const where = and(...filters);
  const { limit, offset } = pageWindow(q);
  // Newest first, ties in insertion order (rowid): both come from the (survey_id, started_at)
  // index, so a page never sorts the survey's responses (a tie-break on `id` sorted 100,000 rows
  // per page, ~150 ms). The survey is the team's (loadSurvey above) and its responses carry its
  // team id; the rows still filter on it, while the count reads the index alone (team_id is not
  // in it: filtering on it read every row, ~100 ms at 100,000 responses).
  const [rows, [{ total }]] = await Promise.all([
    db
      .select()
      .from(surveyResponses)
      .where(and(where, eq(surveyResponses.teamId, teamId)))
      .orderBy(desc(surveyResponses.startedAt), desc(sql`${surveyResponses}.rowid`))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(surveyResponses).where(where),
  ]);
  return paginated(rows.map(responseRecordView), total, q);
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
 * updates in its own batch (survey-summary.queries.ts): three small reads in one D1 batch, whatever the
 * number of responses. When the counters are not built yet (a survey from before they existed, or
 * one whose question changed type) the same batch first rebuilds them from the stored responses.
 * Answers of deleted questions are not rendered.
 */
export async function surveySummary(env: Env, teamId: string, surveyId: string) {
  const db = getDb(env.DB);
  const survey = await loadSurvey(db, teamId, surveyId);
  return summaryOf(env, survey, listQuestionRows(db, survey));
}

/**
 * The summary of a survey already loaded for its team, over its current questions (read by the
 * caller, possibly still on their way): surveySummary, and the console's survey page, which shows
 * the same questions.
 */
export async function summaryOf(env: Env, survey: SurveyRow, currentQuestions: QuestionRow[] | Promise<QuestionRow[]>) {
  const teamId = survey.teamId;
  const [questions, counters] = await Promise.all([currentQuestions, readCounters(env.DB, survey.id, teamId)]);
  const { state, values, elements } = counters;
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
  const completed = state?.completed ?? 0;
  const inProgress = state?.in_progress ?? 0;
  return {
    survey_id: survey.id,
    response_count: survey.responseCount,
    responses: { total: completed + inProgress, completed, in_progress: inProgress },
    questions: questions.map((q) => aggregate(q, groups.get(q.id) ?? { values: [], elements: [] })),
  };
}

/** The survey's counters in one consistent snapshot, rebuilt first when they are not built. */
async function readCounters(d1: D1Database, surveyId: string, teamId: string) {
  let results = await d1.batch(readStatements(d1, surveyId, teamId));
  if (results[0].results.length === 0) results = (await d1.batch(rebuildStatements(d1, surveyId, teamId, nowIso()))).slice(-3);
  const [state, values, elements] = results;
  return {
    state: state.results[0] as StateRow | undefined,
    values: values.results as unknown as ValueRow[],
    elements: elements.results as unknown as ElementRow[],
  };
}
