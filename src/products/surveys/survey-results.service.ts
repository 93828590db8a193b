// Results of a survey: the paginated response list and the live per-question summary of
// completed responses. Summaries are computed on read (no stored summary rows to keep in sync),
// aggregated in SQL so their cost in the Worker does not grow with the number of responses.
import { and, asc, count, desc, eq, gte, lt, type SQL } from "drizzle-orm";
import { type Db, getDb } from "../../db/client";
import { surveyResponses } from "../../db/schema/surveys";
import type { Env } from "../../env";
import { listQuestionRows, loadSurvey, type QuestionRow } from "./surveys.service";

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

export async function listResponses(
  db: Db,
  teamId: string,
  surveyId: string,
  q: { page: number; per_page: number; status?: "in_progress" | "completed"; since?: string; until?: string },
) {
  const survey = await loadSurvey(db, teamId, surveyId);
  const filters: SQL[] = [eq(surveyResponses.surveyId, survey.id), eq(surveyResponses.teamId, teamId)];
  if (q.status) filters.push(eq(surveyResponses.status, q.status));
  if (q.since) filters.push(gte(surveyResponses.startedAt, new Date(q.since).toISOString()));
  if (q.until) filters.push(lt(surveyResponses.startedAt, new Date(q.until).toISOString()));
  const where = and(...filters);
  const [rows, [{ total }]] = await Promise.all([
    db
      .select()
      .from(surveyResponses)
      .where(where)
      .orderBy(desc(surveyResponses.startedAt), asc(surveyResponses.id))
      .limit(q.per_page)
      .offset((q.page - 1) * q.per_page),
    db.select({ total: count() }).from(surveyResponses).where(where),
  ]);
  return {
    data: rows.map(responseRecordView),
    pagination: { page: q.page, per_page: q.per_page, total, total_pages: Math.ceil(total / q.per_page) },
  };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

function numericRange(q: QuestionRow): [number, number] {
  if (q.type === "rating") return [1, 5];
  if (q.type === "nps") return [0, 10];
  return [Number(q.settings.min), Number(q.settings.max)];
}

/** Question types whose scalar answer values are grouped (the others only count as answered). */
const VALUE_TYPES = ["choice", "rating", "scale", "slider", "nps", "yes_no"];
/** Question types whose array / object answers are expanded element by element. */
const ELEMENT_TYPES = ["choice", "multi_choice", "ranking", "matrix"];
const sqlList = (types: string[]) => types.map((t) => `'${t}'`).join(", ");

/** The ids of the survey's current questions of the given types, as an SQL subquery (?1 survey, ?2 team). */
const questionIds = (types?: string[]) =>
  `SELECT id FROM survey_questions WHERE survey_id = ?1 AND team_id = ?2${types ? ` AND type IN (${sqlList(types)})` : ""}`;

// Both statements walk each completed response's answers once: json_each over the answers map
// (a: one row per question id), json_each over that answer (v: the row whose key is 'value'),
// and for array / object values json_each over the value (e: its elements). Only the survey's
// current questions count (answers of deleted or generated questions are skipped) and null
// answers are not answers. The question-id subqueries do not depend on the row, so SQLite
// evaluates each once.

/**
 * One row per (question, JSON type of the value, value). Values are kept only where the summary
 * groups by them, so a text question is one row however many distinct texts it got.
 */
const VALUE_GROUPS_SQL = `
SELECT a.key AS question_id,
       v.type AS kind,
       CASE WHEN v.type NOT IN ('array', 'object') AND a.key IN (${questionIds(VALUE_TYPES)}) THEN v.atom END AS value,
       COUNT(*) AS n
FROM survey_responses r
JOIN json_each(r.answers) a
JOIN json_each(a.value) v
WHERE r.survey_id = ?1 AND r.team_id = ?2 AND r.status = 'completed'
  AND a.type = 'object' AND a.key IN (${questionIds()})
  AND v.key = 'value' AND v.type <> 'null'
GROUP BY 1, 2, 3`;

/**
 * The string elements of array and object values (multi_choice, ranking, matrix), grouped: per
 * (question, object key, element) the count and, for arrays, the sum of 1-based positions and how
 * often the element came first.
 */
const ELEMENT_GROUPS_SQL = `
SELECT a.key AS question_id,
       CASE WHEN v.type = 'object' THEN e.key END AS row_key,
       e.atom AS item,
       COUNT(*) AS n,
       SUM(CASE WHEN v.type = 'array' THEN e.key + 1 ELSE 0 END) AS position_sum,
       SUM(CASE WHEN v.type = 'array' AND e.key = 0 THEN 1 ELSE 0 END) AS first
FROM survey_responses r
JOIN json_each(r.answers) a
JOIN json_each(a.value) v
JOIN json_each(v.value) e
WHERE r.survey_id = ?1 AND r.team_id = ?2 AND r.status = 'completed'
  AND a.type = 'object' AND a.key IN (${questionIds(ELEMENT_TYPES)})
  AND v.key = 'value' AND v.type IN ('array', 'object')
  AND e.type = 'text'
GROUP BY 1, 2, 3`;

const STATUS_COUNTS_SQL = `
SELECT status, COUNT(*) AS n FROM survey_responses WHERE survey_id = ?1 AND team_id = ?2 GROUP BY status`;

interface ValueGroup {
  question_id: string;
  kind: string;
  value: string | number | null;
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
 * Per-question aggregates over completed responses, computed in SQL: three grouped statements in
 * one D1 batch, whatever the number of questions or responses. The Worker only sees one row per
 * (question, distinct value), never a response; answers of deleted questions are not rendered.
 */
export async function surveySummary(env: Env, teamId: string, surveyId: string) {
  const db = getDb(env.DB);
  const survey = await loadSurvey(db, teamId, surveyId);
  const [questions, [statusRows, valueRows, elementRows]] = await Promise.all([
    listQuestionRows(db, survey),
    env.DB.batch([
      env.DB.prepare(STATUS_COUNTS_SQL).bind(survey.id, teamId),
      env.DB.prepare(VALUE_GROUPS_SQL).bind(survey.id, teamId),
      env.DB.prepare(ELEMENT_GROUPS_SQL).bind(survey.id, teamId),
    ]),
  ]);
  const byStatus = Object.fromEntries((statusRows.results as Array<{ status: string; n: number }>).map((r) => [r.status, r.n]));
  const groups = new Map<string, Groups>(questions.map((q) => [q.id, { values: [], elements: [] }]));
  for (const g of valueRows.results as unknown as ValueGroup[]) groups.get(g.question_id)?.values.push(g);
  for (const g of elementRows.results as unknown as ElementGroup[]) groups.get(g.question_id)?.elements.push(g);
  return {
    survey_id: survey.id,
    response_count: survey.responseCount,
    responses: {
      total: (byStatus.completed ?? 0) + (byStatus.in_progress ?? 0),
      completed: byStatus.completed ?? 0,
      in_progress: byStatus.in_progress ?? 0,
    },
    questions: questions.map((q) => aggregate(q, groups.get(q.id) ?? { values: [], elements: [] })),
  };
}
