// Results of a survey: the paginated response list and the live per-question summary of
// completed responses. Summaries are computed on read (no stored summary rows to keep in sync).
import { and, asc, count, desc, eq, gte, lt, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { surveyResponses } from "../../db/schema/surveys";
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

/** The aggregate of one question over the values its completed responses gave. */
function aggregate(q: QuestionRow, values: unknown[]): Record<string, unknown> {
  const base = { question_id: q.id, type: q.type, title: q.title, position: q.position, answered: values.length };
  switch (q.type) {
    case "choice":
    case "multi_choice": {
      const counts: Record<string, number> = Object.fromEntries(q.options.map((o) => [o, 0]));
      for (const v of values) for (const o of Array.isArray(v) ? v : [v]) if (typeof o === "string" && o in counts) counts[o]++;
      return { ...base, counts };
    }
    case "ranking": {
      const sums: Record<string, number> = Object.fromEntries(q.options.map((o) => [o, 0]));
      const first: Record<string, number> = Object.fromEntries(q.options.map((o) => [o, 0]));
      let n = 0;
      for (const v of values) {
        if (!Array.isArray(v)) continue;
        n++;
        v.forEach((o, i) => {
          if (typeof o === "string" && o in sums) sums[o] += i + 1;
        });
        if (typeof v[0] === "string" && v[0] in first) first[v[0]]++;
      }
      const average_rank = Object.fromEntries(q.options.map((o) => [o, n ? round2(sums[o] / n) : null]));
      return { ...base, average_rank, first_choice_counts: first };
    }
    case "rating":
    case "scale":
    case "slider":
    case "nps": {
      const [min, max] = numericRange(q);
      const nums = values.filter((v): v is number => typeof v === "number" && Number.isInteger(v));
      const distribution: Record<string, number> = {};
      if (max - min <= 100) for (let i = min; i <= max; i++) distribution[String(i)] = 0;
      for (const v of nums) distribution[String(v)] = (distribution[String(v)] ?? 0) + 1;
      const average = nums.length ? round2(nums.reduce((a, b) => a + b, 0) / nums.length) : null;
      const result: Record<string, unknown> = { ...base, average, distribution };
      if (q.type === "nps") {
        const promoters = nums.filter((v) => v >= 9).length;
        const detractors = nums.filter((v) => v <= 6).length;
        Object.assign(result, {
          promoters,
          passives: nums.length - promoters - detractors,
          detractors,
          nps: nums.length ? Math.round(((promoters - detractors) / nums.length) * 100) : null,
        });
      }
      return result;
    }
    case "yes_no": {
      const yes = values.filter((v) => v === true).length;
      const no = values.filter((v) => v === false).length;
      return { ...base, yes, no, yes_rate: yes + no ? round2(yes / (yes + no)) : null };
    }
    case "matrix": {
      const rows = (q.settings.rows as string[]) ?? [];
      const columns = (q.settings.columns as string[]) ?? [];
      const counts: Record<string, Record<string, number>> = Object.fromEntries(rows.map((r) => [r, Object.fromEntries(columns.map((c) => [c, 0]))]));
      for (const v of values) {
        if (!v || typeof v !== "object") continue;
        for (const [row, col] of Object.entries(v as Record<string, unknown>)) {
          if (counts[row] && typeof col === "string" && col in counts[row]) counts[row][col]++;
        }
      }
      return { ...base, counts };
    }
    default:
      return base;
  }
}

/** Per-question aggregates over completed responses; answers of deleted questions are not rendered. */
export async function surveySummary(db: Db, teamId: string, surveyId: string) {
  const survey = await loadSurvey(db, teamId, surveyId);
  const [questions, statusCounts, completed] = await Promise.all([
    listQuestionRows(db, survey),
    db
      .select({ status: surveyResponses.status, n: count() })
      .from(surveyResponses)
      .where(and(eq(surveyResponses.surveyId, survey.id), eq(surveyResponses.teamId, teamId)))
      .groupBy(surveyResponses.status),
    db
      .select({ answers: surveyResponses.answers })
      .from(surveyResponses)
      .where(and(eq(surveyResponses.surveyId, survey.id), eq(surveyResponses.teamId, teamId), eq(surveyResponses.status, "completed"))),
  ]);
  const byStatus = Object.fromEntries(statusCounts.map((r) => [r.status, r.n]));
  const valuesOf = new Map<string, unknown[]>(questions.map((q) => [q.id, []]));
  for (const { answers } of completed) {
    for (const [questionId, answer] of Object.entries(answers)) {
      if (answer.value !== null && answer.value !== undefined) valuesOf.get(questionId)?.push(answer.value);
    }
  }
  return {
    survey_id: survey.id,
    response_count: survey.responseCount,
    responses: {
      total: (byStatus.completed ?? 0) + (byStatus.in_progress ?? 0),
      completed: byStatus.completed ?? 0,
      in_progress: byStatus.in_progress ?? 0,
    },
    questions: questions.map((q) => aggregate(q, valuesOf.get(q.id) ?? [])),
  };
}
