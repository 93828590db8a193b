// The summary is aggregated in SQL: here by the rebuild of its counters, which the first read of
// each survey runs (surveys.summary-counters.test.ts covers the incremental path). These tests pin
// it against the in-Worker aggregation it replaced (kept here as the reference), over thousands of
// generated responses with every question type, and cover the edge cases one by one: multi_choice
// elements, matrix rows, deleted and generated questions, options changed after answers, null
// answers, in-progress responses.
import { env } from "cloudflare:test";
import { migrateLegacyResponses, MIGRATE_MAX_ROWS } from "../../../src/products/surveys/surveys.migrate";
import { describe, expect, it } from "vitest";
import { call, json } from "../../helpers/api";
import { activeSurvey, answer, complete, startOk } from "./helpers";

interface Question {
  id: string;
  type: string;
  title: string;
  position: number;
  options: string[];
  settings: Record<string, unknown>;
}

interface StoredResponse {
  id: string;
  status: "in_progress" | "completed";
  answers: Record<string, { value: unknown; version: number; answered_at: string; generated?: boolean }>;
}

// ---- the reference: the aggregation the summary did in the Worker before it moved to SQL ----

const round2 = (n: number) => Math.round(n * 100) / 100;

function numericRange(q: Question): [number, number] {
  if (q.type === "rating") return [1, 5];
  if (q.type === "nps") return [0, 10];
  return [Number(q.settings.min), Number(q.settings.max)];
}

function referenceAggregate(q: Question, values: unknown[]): Record<string, unknown> {
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

function referenceQuestions(questions: Question[], responses: StoredResponse[]) {
  const valuesOf = new Map<string, unknown[]>(questions.map((q) => [q.id, []]));
  for (const { status, answers } of responses) {
    if (status !== "completed") continue;
    for (const [questionId, a] of Object.entries(answers)) if (a.value !== null && a.value !== undefined) valuesOf.get(questionId)?.push(a.value);
  }
  return questions.map((q) => referenceAggregate(q, valuesOf.get(q.id) ?? []));
}

// ---- generated data ----

/** A small seeded PRNG (mulberry32) so a failure reproduces. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(items: T[], rnd: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** A plausible answer for `q`, now and then one a later edit of the question made stale. */
function randomValue(q: Question, rnd: () => number): unknown {
  const int = (min: number, max: number) => min + Math.floor(rnd() * (max - min + 1));
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  switch (q.type) {
    case "choice":
      return rnd() < 0.05 ? "retired option" : pick(q.options);
    case "multi_choice":
      return shuffle([...q.options, ...(rnd() < 0.05 ? ["retired option"] : [])], rnd).slice(0, int(1, q.options.length));
    case "ranking":
      return shuffle(q.options, rnd);
    case "rating":
      return int(1, 5);
    case "nps":
      return int(0, 10);
    case "scale":
    case "slider":
      return int(Number(q.settings.min), Number(q.settings.max));
    case "yes_no":
      return rnd() < 0.6;
    case "matrix": {
      const value: Record<string, string> = {};
      for (const row of q.settings.rows as string[]) value[row] = rnd() < 0.05 ? "retired column" : pick(q.settings.columns as string[]);
      if (rnd() < 0.05) value["retired row"] = (q.settings.columns as string[])[0];
      return value;
    }
    case "date":
      return `2031-0${int(1, 9)}-1${int(0, 9)}`;
    default:
      return `text ${int(1, 1_000_000)}`;
  }
}

/**
 * Writes the responses into the former D1 table, ~1,000 rows per statement (one JSON parameter
 * each), then moves them into the survey's store with the operator's migration steps.
 */
async function insertResponses(teamId: string, surveyId: string, responses: StoredResponse[]) {
  const at = "2031-01-01T00:00:00.000Z";
  const statements = [];
  for (let i = 0; i < responses.length; i += 1000) {
    const chunk = responses.slice(i, i + 1000).map((r) => ({ id: r.id, status: r.status, answers: JSON.stringify(r.answers) }));
    statements.push(
      env.DB.prepare(
        `INSERT INTO survey_responses (id, team_id, survey_id, status, respondent, answers, path, generated_questions, started_at, updated_at, completed_at)
         SELECT value->>'id', ?1, ?2, value->>'status', '{}', value->>'answers', '[]', '[]', ?3, ?3,
                CASE WHEN value->>'status' = 'completed' THEN ?3 END
         FROM json_each(?4)`,
      ).bind(teamId, surveyId, at, JSON.stringify(chunk)),
    );
  }
  await env.DB.batch(statements);
  while ((await migrateLegacyResponses(env, MIGRATE_MAX_ROWS)).more);
}

async function summaryOf(key: string, surveyId: string) {
  const res = await call("GET", `surveys/${surveyId}/summary`, { key });
  expect(res.status).toBe(200);
  return (await json(res)).data;
}

async function questionsOf(key: string, surveyId: string): Promise<Question[]> {
  return (await json(await call("GET", `surveys/${surveyId}`, { key }))).data.questions;
}

const EVERY_TYPE = [
  { type: "nps", title: "NPS" },
  { type: "rating", title: "Rating" },
  { type: "choice", title: "Choice", options: ["a", "b", "c"] },
  { type: "choice", title: "Optional choice", options: ["1", "2"], settings: { required: false } },
  { type: "multi_choice", title: "Multi", options: ["x", "y", "z", "w"] },
  { type: "yes_no", title: "Yes/no" },
  { type: "scale", title: "Scale", settings: { min: -2, max: 2 } },
  { type: "slider", title: "Wide slider", settings: { min: 0, max: 500 } },
  { type: "matrix", title: "Matrix", settings: { rows: ["speed", "price", "support"], columns: ["bad", "ok", "good"] } },
  { type: "ranking", title: "Ranking", options: ["p", "q", "s", "t"] },
  { type: "text", title: "Text" },
  { type: "email", title: "Email" },
  { type: "date", title: "Date" },
  { type: "yes_no", title: "Deleted later" },
];

describe("survey summary (SQL aggregation)", () => {
  it("matches the reference aggregation over 3,000 generated responses of every question type", async () => {
    const { team, survey, questions: created } = await activeSurvey(EVERY_TYPE);
    const all: Question[] = await questionsOf(team.key, survey.id);
    const deleted = created[created.length - 1];
    const rnd = prng(20310505);
    const generatedId = crypto.randomUUID(); // an AI-generated question: in answers, never in the summary
    const responses: StoredResponse[] = [];
    for (let i = 0; i < 3000; i++) {
      const answers: StoredResponse["answers"] = {};
      for (const q of all) {
        if (rnd() < 0.1) continue; // not on this respondent's path
        const value = q.settings.required === false && rnd() < 0.3 ? null : randomValue(q, rnd);
        answers[q.id] = { value, version: 1, answered_at: "2031-01-01T00:00:00.000Z" };
      }
      answers[generatedId] = { value: rnd() < 0.5, version: 1, answered_at: "2031-01-01T00:00:00.000Z", generated: true };
      responses.push({ id: crypto.randomUUID(), status: rnd() < 0.85 ? "completed" : "in_progress", answers });
    }
    await insertResponses(team.teamId, survey.id, responses);
    // Edits after answers: a question deleted, an option and a matrix column dropped.
    expect((await call("DELETE", `surveys/${survey.id}/questions/${deleted.id}`, { key: team.key })).status).toBe(204);
    const choice = all.find((q) => q.title === "Choice")!;
    expect((await call("PATCH", `surveys/${survey.id}/questions/${choice.id}`, { key: team.key, body: { options: ["a", "c", "d"] } })).status).toBe(200);

    const summary = await summaryOf(team.key, survey.id);
    const current = await questionsOf(team.key, survey.id);
    const completed = responses.filter((r) => r.status === "completed").length;
    expect(summary.responses).toEqual({ total: 3000, completed, in_progress: 3000 - completed });
    expect(summary.questions).toEqual(referenceQuestions(current, responses));
    expect(summary.questions.map((q: { question_id: string }) => q.question_id)).not.toContain(deleted.id);
    // Sanity: the generated data did reach every aggregate.
    const byTitle = Object.fromEntries(summary.questions.map((q: { title: string }) => [q.title, q]));
    expect(byTitle.Choice.counts.d).toBe(0);
    expect(byTitle.Choice.counts.a).toBeGreaterThan(500);
    expect(byTitle["Optional choice"].answered).toBeLessThan(byTitle.Choice.answered);
    expect(byTitle["Wide slider"].average).toBeGreaterThan(150);
    expect(Object.values(byTitle.Matrix.counts.speed as Record<string, number>).every((n) => n > 100)).toBe(true);
    expect(byTitle.Text.answered).toBeGreaterThan(2000);
  });

  it("counts each element of multi_choice answers and every matrix row, only from completed responses", async () => {
    const {
      team,
      survey,
      questions: q,
    } = await activeSurvey([
      { type: "multi_choice", title: "Multi", options: ["x", "y", "z"] },
      { type: "matrix", title: "Matrix", settings: { rows: ["r1", "r2"], columns: ["c1", "c2", "c3"] } },
      { type: "ranking", title: "Rank", options: ["p", "q", "s"] },
      { type: "text", title: "Why", settings: { required: false } },
    ]);
    const given = [
      [["x", "y", "z"], { r1: "c1", r2: "c3" }, ["s", "p", "q"], "fast"],
      [["z"], { r1: "c1", r2: "c2" }, ["s", "q", "p"], null],
      [["y", "x"], { r1: "c3", r2: "c3" }, ["p", "q", "s"], "cheap"],
    ];
    for (const values of given) {
      const r = await startOk(survey.slug);
      for (const [i, v] of values.entries()) expect((await answer(survey.slug, r.id, q[i].id, v)).status).toBe(200);
      expect((await complete(survey.slug, r.id)).status).toBe(200);
    }
    const open = await startOk(survey.slug); // in progress: not summarised
    await answer(survey.slug, open.id, q[0].id, ["x"]);
    await answer(survey.slug, open.id, q[1].id, { r1: "c2", r2: "c2" });

    const s = await summaryOf(team.key, survey.id);
    expect(s.responses).toEqual({ total: 4, completed: 3, in_progress: 1 });
    const [multi, matrix, rank, text] = s.questions;
    expect(multi).toEqual({ question_id: q[0].id, type: "multi_choice", title: "Multi", position: 1, answered: 3, counts: { x: 2, y: 2, z: 2 } });
    expect(matrix).toEqual({
      question_id: q[1].id,
      type: "matrix",
      title: "Matrix",
      position: 2,
      answered: 3,
      counts: { r1: { c1: 2, c2: 0, c3: 1 }, r2: { c1: 0, c2: 1, c3: 2 } },
    });
    expect(rank).toMatchObject({ answered: 3, average_rank: { p: 2, q: 2.33, s: 1.67 }, first_choice_counts: { p: 1, q: 0, s: 2 } });
    // A null answer to an optional question is not an answer.
    expect(text).toEqual({ question_id: q[3].id, type: "text", title: "Why", position: 4, answered: 2 });
  });

  it("stops rendering a question deleted after it was answered, and keeps the others intact", async () => {
    const {
      team,
      survey,
      questions: q,
    } = await activeSurvey([
      { type: "nps", title: "Score" },
      { type: "choice", title: "Plan", options: ["free", "pro"] },
    ]);
    for (const [score, plan] of [
      [10, "pro"],
      [2, "free"],
    ] as const) {
      const r = await startOk(survey.slug);
      await answer(survey.slug, r.id, q[0].id, score);
      await answer(survey.slug, r.id, q[1].id, plan);
      await complete(survey.slug, r.id);
    }
    expect((await call("DELETE", `surveys/${survey.id}/questions/${q[0].id}`, { key: team.key })).status).toBe(204);
    const s = await summaryOf(team.key, survey.id);
    expect(s.questions).toEqual([{ question_id: q[1].id, type: "choice", title: "Plan", position: 2, answered: 2, counts: { free: 1, pro: 1 } }]);
  });

  it("answers zeros and nulls for a survey without responses", async () => {
    const {
      team,
      survey,
      questions: q,
    } = await activeSurvey([
      { type: "nps", title: "Score" },
      { type: "ranking", title: "Rank", options: ["p", "q"] },
      { type: "yes_no", title: "Again?" },
    ]);
    const s = await summaryOf(team.key, survey.id);
    expect(s).toEqual({
      survey_id: survey.id,
      response_count: 0,
      responses: { total: 0, completed: 0, in_progress: 0 },
      questions: [
        {
          question_id: q[0].id,
          type: "nps",
          title: "Score",
          position: 1,
          answered: 0,
          average: null,
          distribution: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [String(i), 0])),
          promoters: 0,
          passives: 0,
          detractors: 0,
          nps: null,
        },
        {
          question_id: q[1].id,
          type: "ranking",
          title: "Rank",
          position: 2,
          answered: 0,
          average_rank: { p: null, q: null },
          first_choice_counts: { p: 0, q: 0 },
        },
        { question_id: q[2].id, type: "yes_no", title: "Again?", position: 3, answered: 0, yes: 0, no: 0, yes_rate: null },
      ],
    });
  });

  it("ignores responses of another survey, even with the same question ids in their answers", async () => {
    const { team, survey, questions: q } = await activeSurvey([{ type: "yes_no", title: "A" }]);
    const other = await activeSurvey([{ type: "yes_no", title: "B" }]);
    const forged: StoredResponse = {
      id: crypto.randomUUID(),
      status: "completed",
      answers: { [q[0].id]: { value: true, version: 1, answered_at: "2031-01-01T00:00:00.000Z" } },
    };
    await insertResponses(other.team.teamId, other.survey.id, [forged]);
    const s = await summaryOf(team.key, survey.id);
    expect(s.questions[0]).toMatchObject({ answered: 0, yes: 0 });
  });
});
