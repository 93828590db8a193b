// The incrementally kept summary (issue 15): after any mix of responses driven through the public
// flow (completed or left in progress, with going back), under parallel answers and completions,
// and after edits, the counters read by GET /summary equal a recomputation from the stored
// responses (the rebuild, itself pinned against a reference aggregation in surveys.summary.test.ts).
import { env, runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { surveyStore } from "../../../src/products/surveys/surveys.store";
import { call, json } from "../../helpers/api";
import { activeSurvey, answer, back, complete, startOk } from "./helpers";

const QUESTIONS = [
  { type: "nps", title: "Score" },
  { type: "choice", title: "Plan", options: ["a", "b", "c"] },
  { type: "multi_choice", title: "Uses", options: ["x", "y", "z"] },
  { type: "ranking", title: "Rank", options: ["p", "q", "s"] },
  { type: "matrix", title: "Grid", settings: { rows: ["r1", "r2"], columns: ["c1", "c2"] } },
  { type: "yes_no", title: "Again?" },
  { type: "text", title: "Why", settings: { required: false } },
  { type: "scale", title: "Effort", settings: { min: -2, max: 2 } },
];

/** One answer per question of QUESTIONS, in order. */
const answersArb = fc.tuple(
  fc.integer({ min: 0, max: 10 }),
  fc.constantFrom("a", "b", "c"),
  fc.shuffledSubarray(["x", "y", "z"], { minLength: 1 }),
  fc.shuffledSubarray(["p", "q", "s"], { minLength: 3, maxLength: 3 }),
  fc.record({ r1: fc.constantFrom("c1", "c2"), r2: fc.constantFrom("c1", "c2") }),
  fc.boolean(),
  fc.option(fc.constantFrom("fast", "cheap", "a"), { nil: null }),
  fc.integer({ min: -2, max: 2 }),
);

const responseArb = fc.record({
  first: answersArb,
  /** Go back to this question index once everything is answered, and answer again from there. */
  backTo: fc.option(fc.integer({ min: 0, max: QUESTIONS.length - 1 }), { nil: null }),
  second: answersArb,
  /** How many questions are answered (all of them when the response completes). */
  answered: fc.integer({ min: 0, max: QUESTIONS.length }),
  completes: fc.boolean(),
});

async function summaryOf(key: string, surveyId: string) {
  const res = await call("GET", `surveys/${surveyId}/summary`, { key });
  expect(res.status).toBe(200);
  return (await json(res)).data;
}

/** SQL run inside the survey's store (its tables, as the object holds them). */
function inStore<T extends Record<string, SqlStorageValue>>(surveyId: string, query: string, ...params: SqlStorageValue[]): Promise<T[]> {
  return runInDurableObject(surveyStore(env, surveyId), async (_store, state) => state.storage.sql.exec<T>(query, ...params).toArray());
}

/**
 * The summary recomputed from the stored responses: the store's record of the question types is
 * spoiled, so the next read takes every question as retyped and rebuilds counters and counts.
 */
async function recomputed(key: string, surveyId: string) {
  await inStore(surveyId, "UPDATE summary_questions SET type = ''");
  return summaryOf(key, surveyId);
}

describe("incremental survey summary", () => {
  it("equals the recomputed summary after any mix of responses, back steps and completions", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(responseArb, { minLength: 1, maxLength: 5 }), async (plans) => {
        const { team, survey, questions } = await activeSurvey(QUESTIONS);
        await summaryOf(team.key, survey.id); // builds the (empty) counters: from here on only completions add
        for (const plan of plans) {
          const r = await startOk(survey.slug);
          const count = plan.completes ? questions.length : plan.answered;
          for (let i = 0; i < count; i++) expect((await answer(survey.slug, r.id, questions[i].id, plan.first[i])).status).toBe(200);
          if (plan.backTo !== null && plan.backTo < count) {
            expect((await back(survey.slug, r.id, questions[plan.backTo].id)).status).toBe(200);
            for (let i = plan.backTo; i < count; i++) expect((await answer(survey.slug, r.id, questions[i].id, plan.second[i])).status).toBe(200);
          }
          if (plan.completes) expect((await complete(survey.slug, r.id)).status).toBe(200);
        }
        const incremental = await summaryOf(team.key, survey.id);
        const completed = plans.filter((p) => p.completes).length;
        expect(incremental.responses).toEqual({ total: plans.length, completed, in_progress: plans.length - completed });
        expect(incremental).toEqual(await recomputed(team.key, survey.id));
      }),
      { numRuns: 6 },
    );
  });

  it("stays exact under parallel answers and repeated parallel completions", async () => {
    const {
      team,
      survey,
      questions: q,
    } = await activeSurvey([
      { type: "nps", title: "Score" },
      { type: "multi_choice", title: "Uses", options: ["x", "y", "z"] },
      { type: "yes_no", title: "Again?" },
    ]);
    await summaryOf(team.key, survey.id);
    const n = 12;
    const responses = await Promise.all(Array.from({ length: n }, () => startOk(survey.slug)));
    const scores = responses.map((_, i) => i % 11);
    const uses = responses.map((_, i) => (i % 2 ? ["x", "y"] : ["z"]));
    const again = responses.map((_, i) => i % 3 === 0);
    const statuses = await Promise.all(
      responses.map(async (r, i) => {
        const out = [];
        out.push((await answer(survey.slug, r.id, q[0].id, scores[i])).status);
        out.push((await answer(survey.slug, r.id, q[1].id, uses[i])).status);
        out.push((await answer(survey.slug, r.id, q[2].id, again[i])).status);
        return out;
      }),
    );
    expect(statuses.flat().every((s) => s === 200)).toBe(true);
    // Every response is completed by three calls at once: exactly one of them adds to the counters.
    const completions = await Promise.all(responses.flatMap((r) => [complete(survey.slug, r.id), complete(survey.slug, r.id), complete(survey.slug, r.id)]));
    expect(completions.every((res) => res.status === 200)).toBe(true);

    const s = await summaryOf(team.key, survey.id);
    expect(s.response_count).toBe(n);
    expect(s.responses).toEqual({ total: n, completed: n, in_progress: 0 });
    const [score, use, yes] = s.questions;
    expect(score.answered).toBe(n);
    expect(score.average).toBe(Math.round((scores.reduce((a, b) => a + b, 0) / n) * 100) / 100);
    expect(score.promoters).toBe(scores.filter((v) => v >= 9).length);
    expect(score.detractors).toBe(scores.filter((v) => v <= 6).length);
    expect(use.counts).toEqual({ x: n / 2, y: n / 2, z: n / 2 });
    expect(yes).toMatchObject({ yes: again.filter(Boolean).length, no: again.filter((v) => !v).length });
    expect(s).toEqual(await recomputed(team.key, survey.id));
  });

  it("reads the counters without scanning responses; a survey without built counters is rebuilt from its stored responses", async () => {
    const { team, survey, questions: q } = await activeSurvey([{ type: "yes_no", title: "Again?" }]);
    const r = await startOk(survey.slug);
    await answer(survey.slug, r.id, q[0].id, true);
    await complete(survey.slug, r.id);
    expect((await summaryOf(team.key, survey.id)).questions[0]).toMatchObject({ answered: 1, yes: 1 });
    // A row written into the store behind the counters' back is not seen by a read, which proves
    // the read does not recompute...
    await inStore(
      survey.id,
      `INSERT INTO responses (id, status, respondent, answers, path, generated_questions, started_at, updated_at, completed_at, completion_id)
       VALUES (?, 'completed', '{}', ?, '[]', '[]', ?, ?, ?, 'legacy')`,
      crypto.randomUUID(),
      JSON.stringify({ [q[0].id]: { value: false, version: 1, answered_at: "2031-01-01T00:00:00.000Z" } }),
      "2031-01-01T00:00:00.000Z",
      "2031-01-01T00:00:00.000Z",
      "2031-01-01T00:00:00.000Z",
    );
    expect((await summaryOf(team.key, survey.id)).questions[0]).toMatchObject({ answered: 1, no: 0 });
    // ...and a rebuild (a question changed type) counts every stored response.
    const rebuilt = await recomputed(team.key, survey.id);
    expect(rebuilt.responses).toEqual({ total: 2, completed: 2, in_progress: 0 });
    expect(rebuilt.questions[0]).toMatchObject({ answered: 2, yes: 1, no: 1, yes_rate: 0.5 });
  });

  it("rebuilds after a question changes type, so the new type's grouping covers earlier answers", async () => {
    const { team, survey, questions: q } = await activeSurvey([{ type: "text", title: "Plan" }]);
    for (const value of ["pro", "free", "pro", "something else"]) {
      const r = await startOk(survey.slug);
      await answer(survey.slug, r.id, q[0].id, value);
      await complete(survey.slug, r.id);
    }
    expect((await summaryOf(team.key, survey.id)).questions[0]).toEqual({ question_id: q[0].id, type: "text", title: "Plan", position: 1, answered: 4 });
    const patched = await call("PATCH", `surveys/${survey.id}/questions/${q[0].id}`, { key: team.key, body: { type: "choice", options: ["free", "pro"] } });
    expect(patched.status).toBe(200);
    const s = await summaryOf(team.key, survey.id);
    expect(s.questions[0]).toMatchObject({ type: "choice", answered: 4, counts: { free: 1, pro: 2 } });
    expect(s).toEqual(await recomputed(team.key, survey.id));
  });

  it("drops a deleted question's counters and everything with the survey", async () => {
    const {
      team,
      survey,
      questions: q,
    } = await activeSurvey([
      { type: "choice", title: "Plan", options: ["a", "b"] },
      { type: "ranking", title: "Rank", options: ["p", "q"] },
    ]);
    await summaryOf(team.key, survey.id);
    const r = await startOk(survey.slug);
    await answer(survey.slug, r.id, q[0].id, "a");
    await answer(survey.slug, r.id, q[1].id, ["q", "p"]);
    await complete(survey.slug, r.id);
    const rows = async (table: string, where = "") => (await inStore<{ n: number }>(survey.id, `SELECT COUNT(*) AS n FROM ${table} ${where}`))[0].n;
    expect(await rows("summary_values", `WHERE question_id = '${q[1].id}'`)).toBeGreaterThan(0);
    expect(await rows("summary_elements", `WHERE question_id = '${q[1].id}'`)).toBe(2);
    expect((await call("DELETE", `surveys/${survey.id}/questions/${q[1].id}`, { key: team.key })).status).toBe(204);
    // The store learns of the deletion at the next read (or completion), which drops its counters.
    expect((await summaryOf(team.key, survey.id)).questions).toHaveLength(1);
    expect(await rows("summary_values", `WHERE question_id = '${q[1].id}'`)).toBe(0);
    expect(await rows("summary_elements", `WHERE question_id = '${q[1].id}'`)).toBe(0);
    expect((await call("DELETE", `surveys/${survey.id}`, { key: team.key })).status).toBe(204);
    // The store is wiped with the survey: its tables are there again, empty.
    for (const table of ["responses", "summary_values", "summary_elements", "summary_questions", "pending_publish", "state"]) expect(await rows(table)).toBe(0);
  });

  it("answers 404 for another team's survey summary", async () => {
    const { survey } = await activeSurvey([{ type: "yes_no", title: "A" }]);
    const other = await activeSurvey([{ type: "yes_no", title: "B" }]);
    const res = await call("GET", `surveys/${survey.id}/summary`, { key: other.team.key });
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({ error: "Survey not found" });
  });
});
