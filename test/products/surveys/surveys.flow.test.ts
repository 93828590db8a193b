// The public response flow: start, answers validated per type at their bounds, branching
// (rules, skip-to-end, default, jump attempts), closed surveys, exactly-once completion, quota,
// AI mode, the public definition and the results endpoints.
import { describe, expect, it } from "vitest";
import { setClock } from "../../../src/platform/clock";
import { admin, call, expectError, json, setupTeam } from "../../helpers/api";
import { setUsed, usedOf } from "../../helpers/usage";
import { activeSurvey, addQuestion, answer, complete, createSurvey, start, startOk } from "./helpers";

/** One active survey per type, a fresh team each (the strict bucket is per team). */
async function accepts(question: Record<string, unknown>, good: unknown[], bad: unknown[]) {
  const { survey, questions } = await activeSurvey([question, { type: "text", title: "Next" }]);
  for (const value of bad) {
    const r = await startOk(survey.slug);
    const res = await answer(survey.slug, r.id, questions[0].id, value);
    const body = await json(res);
    expect({ value, status: res.status, error: body.error, field: Object.keys(body.errors ?? {}) }).toEqual({
      value,
      status: 422,
      error: "Validation failed",
      field: ["value"],
    });
  }
  for (const value of good) {
    const r = await startOk(survey.slug);
    const res = await answer(survey.slug, r.id, questions[0].id, value);
    expect({ value, status: res.status }).toEqual({ value, status: 200 });
    expect((await json(res)).data.next_question.id).toBe(questions[1].id);
  }
}

describe("answer validation per type", () => {
  it("text", () => accepts({ type: "text", title: "T" }, ["hello", "x".repeat(10_000)], ["", "   ", 5, ["a"], "two\nlines", "x".repeat(10_001), null]));
  it("text multiline", () => accepts({ type: "text", title: "T", settings: { multiline: true } }, ["two\nlines"], [true]));
  it("email", () =>
    accepts(
      { type: "email", title: "E" },
      ["a@example.com", "first.last+tag@sub.example.co.uk", "o'brien@example.org"],
      ["plain", "a@b", "a@@example.com", "a@example..com", ".a@example.com", "a b@example.com", "a@-example.com", 42],
    ));
  it("choice", () => accepts({ type: "choice", title: "C", options: ["red", "blue"] }, ["red", "blue"], ["green", "RED", ["red"], 1]));
  it("multi_choice", () =>
    accepts({ type: "multi_choice", title: "M", options: ["a", "b", "c"] }, [["a"], ["c", "a"], ["a", "b", "c"]], [[], ["d"], ["a", "a"], "a", [1]]));
  it("rating", () => accepts({ type: "rating", title: "R" }, [1, 5], [0, 6, 3.5, "3", true]));
  it("nps", () => accepts({ type: "nps", title: "N" }, [0, 10], [-1, 11, 7.2, "9"]));
  it("scale", () => accepts({ type: "scale", title: "S", settings: { min: 2, max: 7 } }, [2, 7], [1, 8, 4.5, "4"]));
  it("slider", () => accepts({ type: "slider", title: "S", settings: { min: -10, max: 10 } }, [-10, 0, 10], [-11, 11, 0.1]));
  it("matrix", () =>
    accepts(
      { type: "matrix", title: "M", settings: { rows: ["speed", "price"], columns: ["bad", "ok", "good"] } },
      [{ speed: "good", price: "bad" }],
      [{ speed: "good" }, { speed: "good", price: "great" }, { speed: "good", price: "ok", colour: "ok" }, ["good", "bad"], "good"],
    ));
  it("ranking", () =>
    accepts(
      { type: "ranking", title: "R", options: ["x", "y", "z"] },
      [
        ["z", "x", "y"],
        ["x", "y", "z"],
      ],
      [["x", "y"], ["x", "y", "y"], ["x", "y", "w"], "x,y,z"],
    ));
  it("yes_no", () => accepts({ type: "yes_no", title: "Y" }, [true, false], ["yes", 1, 0]));
  it("date", () =>
    accepts(
      { type: "date", title: "D" },
      ["2024-02-29", "1999-12-31"],
      ["2023-02-29", "2024-13-01", "2024-1-01", "2024-01-01T00:00:00Z", "tomorrow", 20240101],
    ));
  it("optional question accepts null when settings.required is false", () =>
    accepts({ type: "rating", title: "R", settings: { required: false } }, [null, 3], [9]));
});

describe("response flow", () => {
  it("starts with the first question and walks to the end; answers record the question version", async () => {
    const { team, survey, questions } = await activeSurvey([
      { type: "nps", title: "Recommend?" },
      { type: "text", title: "Why?" },
    ]);
    const res = await start(survey.slug, { respondent: { email: "r@example.com", external_id: "u1" } });
    expect(res.status).toBe(201);
    const started = (await json(res)).data;
    expect(started).toMatchObject({ status: "in_progress", answered_count: 0, finished: false, completed_at: null, survey_slug: survey.slug });
    expect(started.next_question).toEqual({
      id: questions[0].id,
      section_id: null,
      type: "nps",
      title: "Recommend?",
      description: null,
      options: [],
      settings: {},
      position: 1,
      version: 1,
      generated: false,
    });
    let step = (await json(await answer(survey.slug, started.id, questions[0].id, 9))).data;
    expect(step).toMatchObject({ answered_count: 1, finished: false, next_question: { id: questions[1].id, type: "text", title: "Why?" } });
    step = (await json(await answer(survey.slug, started.id, questions[1].id, "great"))).data;
    expect(step).toMatchObject({ answered_count: 2, finished: true, next_question: null });
    const resumed = (await json(await call("GET", `surveys/${survey.slug}/responses/${started.id}`))).data;
    expect(resumed).toMatchObject({ finished: true, answered_count: 2 });
    const done = await complete(survey.slug, started.id);
    expect(done.status).toBe(200);
    expect((await json(done)).data).toMatchObject({ status: "completed", finished: true, completed_at: expect.any(String) });

    const list = await json(await call("GET", `surveys/${survey.id}/responses`, { key: team.key }));
    expect(list.pagination).toEqual({ page: 1, per_page: 20, total: 1, total_pages: 1 });
    expect(list.data[0]).toMatchObject({
      id: started.id,
      survey_id: survey.id,
      status: "completed",
      respondent: { email: "r@example.com", external_id: "u1" },
      path: [questions[0].id, questions[1].id],
      answers: { [questions[0].id]: { value: 9, version: 1 }, [questions[1].id]: { value: "great", version: 1 } },
    });
  });

  it("follows equals rules, go_to_question_id, skip_to_end and the default", async () => {
    const questions = [
      { type: "choice", title: "Plan?", options: ["free", "paid", "none"] },
      { type: "text", title: "Why free?" },
      { type: "text", title: "Why paid?" },
      { type: "text", title: "Last" },
    ];
    const { team, survey, questions: q } = await activeSurvey(questions);
    await call("PATCH", `surveys/${survey.id}/questions/${q[0].id}`, {
      key: team.key,
      body: {
        branching: {
          rules: [
            { if: { equals: "paid" }, then: { go_to_question_id: q[2].id } },
            { if: { equals: "none" }, then: { skip_to_end: true } },
          ],
          default: { go_to_next: true },
        },
      },
    });
    await call("PATCH", `surveys/${survey.id}/questions/${q[1].id}`, {
      key: team.key,
      body: { branching: { rules: [], default: { go_to_question_id: q[3].id } } },
    });

    // paid → Why paid? → Last
    let r = await startOk(survey.slug);
    let step = (await json(await answer(survey.slug, r.id, q[0].id, "paid"))).data;
    expect(step.next_question.id).toBe(q[2].id);
    step = (await json(await answer(survey.slug, r.id, q[2].id, "value"))).data;
    expect(step.next_question.id).toBe(q[3].id);

    // free → (default go_to_next) Why free? → (default go_to) Last
    r = await startOk(survey.slug);
    step = (await json(await answer(survey.slug, r.id, q[0].id, "free"))).data;
    expect(step.next_question.id).toBe(q[1].id);
    step = (await json(await answer(survey.slug, r.id, q[1].id, "cheap"))).data;
    expect(step.next_question.id).toBe(q[3].id);

    // none → skip to end; completing is allowed at once, and no other answer is accepted.
    r = await startOk(survey.slug);
    step = (await json(await answer(survey.slug, r.id, q[0].id, "none"))).data;
    expect(step).toMatchObject({ finished: true, next_question: null, answered_count: 1 });
    await expectError(await answer(survey.slug, r.id, q[3].id, "sneaky"), 409, {
      error: "The survey has no more questions for this response; complete it",
      finished: true,
    });
    expect((await complete(survey.slug, r.id)).status).toBe(200);
  });

  it("refuses an answer that jumps the path, and accepts an identical retry of the last answer", async () => {
    const { survey, questions: q } = await activeSurvey([
      { type: "yes_no", title: "A" },
      { type: "yes_no", title: "B" },
      { type: "yes_no", title: "C" },
    ]);
    const r = await startOk(survey.slug);
    await expectError(await answer(survey.slug, r.id, q[2].id, true), 409, {
      error: "Question is not the next one on this response's path",
      expected_question_id: q[0].id,
    });
    await expectError(await answer(survey.slug, r.id, crypto.randomUUID(), true), 409, {
      error: "Question is not the next one on this response's path",
      expected_question_id: q[0].id,
    });
    expect((await answer(survey.slug, r.id, q[0].id, true)).status).toBe(200);
    // Same answer again (a client retry): 200 with the same next question, nothing recorded twice.
    const retry = await answer(survey.slug, r.id, q[0].id, true);
    expect(retry.status).toBe(200);
    expect((await json(retry)).data).toMatchObject({ answered_count: 1, next_question: { id: q[1].id } });
    // Changing an earlier answer is a jump too.
    await expectError(await answer(survey.slug, r.id, q[0].id, false), 409, {
      error: "Question is not the next one on this response's path",
      expected_question_id: q[1].id,
    });
  });

  it("refuses to complete before the path has ended", async () => {
    const { survey, questions: q } = await activeSurvey([{ type: "yes_no", title: "A" }]);
    const r = await startOk(survey.slug);
    await expectError(await complete(survey.slug, r.id), 409, { error: "Response has unanswered questions", next_question_id: q[0].id });
  });

  it("counts a completion exactly once under repeated and concurrent calls", async () => {
    const { team, survey, questions: q } = await activeSurvey([{ type: "yes_no", title: "A" }]);
    const r = await startOk(survey.slug);
    await answer(survey.slug, r.id, q[0].id, true);
    const results = await Promise.all(Array.from({ length: 6 }, () => complete(survey.slug, r.id)));
    expect(results.map((x) => x.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect((await complete(survey.slug, r.id)).status).toBe(200);
    const data = (await json(await call("GET", `surveys/${survey.id}`, { key: team.key }))).data;
    expect(data.response_count).toBe(1);
    await expectError(await answer(survey.slug, r.id, q[0].id, true), 409, { error: "Response is already completed" });
  });

  it("rejects new starts after close while in-progress responses still answer and complete", async () => {
    const {
      team,
      survey,
      questions: q,
    } = await activeSurvey([
      { type: "yes_no", title: "A" },
      { type: "yes_no", title: "B" },
    ]);
    const r = await startOk(survey.slug);
    await call("POST", `surveys/${survey.id}/close`, { key: team.key });
    await expectError(await start(survey.slug), 409, { error: "Survey is not accepting responses" });
    expect((await answer(survey.slug, r.id, q[0].id, true)).status).toBe(200);
    expect((await answer(survey.slug, r.id, q[1].id, false)).status).toBe(200);
    expect((await complete(survey.slug, r.id)).status).toBe(200);
    expect((await json(await call("GET", `surveys/${survey.id}`, { key: team.key }))).data.response_count).toBe(1);
    // The public definition says it is closed.
    const def = (await json(await call("GET", `surveys/${survey.slug}/public`))).data;
    expect(def).toMatchObject({ status: "closed", accepting_responses: false });
  });

  it("hides drafts and unknown slugs and responses from the public", async () => {
    const team = await setupTeam();
    const draft = await createSurvey(team.key);
    await addQuestion(team.key, draft.id, { type: "text", title: "Q", position: 1 });
    await expectError(await start(draft.slug), 404, { error: "Survey not found" });
    await expectError(await call("GET", `surveys/${draft.slug}/public`), 404, { error: "Survey not found" });
    await expectError(await start("no-such-slug-anywhere"), 404, { error: "Survey not found" });
    const { survey } = await activeSurvey([{ type: "text", title: "Q" }]);
    await expectError(await answer(survey.slug, crypto.randomUUID(), crypto.randomUUID(), "x"), 404, { error: "Response not found" });
    await expectError(await complete(survey.slug, crypto.randomUUID()), 404, { error: "Response not found" });
    // A response id only works under its own survey's slug.
    const other = await activeSurvey([{ type: "text", title: "Q" }]);
    const r = await startOk(other.survey.slug);
    await expectError(await complete(survey.slug, r.id), 404, { error: "Response not found" });
  });

  it("serves the public definition", async () => {
    const { survey, questions } = await activeSurvey(
      [
        { type: "rating", title: "Rate" },
        { type: "text", title: "Why" },
      ],
      { settings: { theme: "dark", submit_label: "Send" } },
    );
    const res = await call("GET", `surveys/${survey.slug}/public`);
    expect(res.status).toBe(200);
    expect((await json(res)).data).toEqual({
      name: survey.name,
      slug: survey.slug,
      mode: "manual",
      status: "active",
      accepting_responses: true,
      settings: { theme: "dark", submit_label: "Send" },
      question_count: 2,
      first_question: expect.objectContaining({ id: questions[0].id, type: "rating", generated: false }),
    });
  });

  it("validates the start body", async () => {
    const { survey } = await activeSurvey([{ type: "text", title: "Q" }]);
    await expectError(await start(survey.slug, { respondent: { email: "nope" } }), 422, {
      error: "Validation failed",
      errors: { "respondent.email": ["must be a valid email address"] },
    });
    const res = await start(survey.slug, { extra: 1 });
    expect(res.status).toBe(422);
  });

  it("regression: respondent metadata is capped at 8 KB of JSON (bytes, not characters); nothing is started above it", async () => {
    const { team, survey } = await activeSurvey([{ type: "text", title: "Q" }]);
    const cap = { error: "Validation failed", errors: { "respondent.metadata": ["must be at most 8 KB of JSON"] } };
    await expectError(await start(survey.slug, { respondent: { metadata: { blob: "x".repeat(9000) } } }), 422, cap);
    // 5,000 two-byte characters: about 10,000 bytes of JSON, over the cap in bytes though under it in characters.
    await expectError(await start(survey.slug, { respondent: { metadata: { a: "é".repeat(3000), b: "é".repeat(2000) } } }), 422, cap);
    // The 1.5 MB anonymous metadata never reaches the parser (the 1 MB body limit).
    expect((await start(survey.slug, { respondent: { metadata: { blob: "x".repeat(1_500_000) } } })).status).toBe(413);
    expect((await json(await call("GET", `surveys/${survey.id}/responses`, { key: team.key }))).data).toEqual([]);
    const ok = await start(survey.slug, { respondent: { metadata: { plan: "pro", tags: ["a", "b"], note: "é".repeat(3000) } } });
    expect(ok.status).toBe(201);
  });

  it("keeps answers of a deleted question but no longer renders them, and continues the path", async () => {
    const {
      team,
      survey,
      questions: q,
    } = await activeSurvey([
      { type: "yes_no", title: "A" },
      { type: "yes_no", title: "B" },
      { type: "yes_no", title: "C" },
    ]);
    const r = await startOk(survey.slug);
    await answer(survey.slug, r.id, q[0].id, true);
    // B is expected next; deleting it moves the path on to C.
    await call("DELETE", `surveys/${survey.id}/questions/${q[1].id}`, { key: team.key });
    await call("DELETE", `surveys/${survey.id}/questions/${q[0].id}`, { key: team.key });
    const state = (await json(await call("GET", `surveys/${survey.slug}/responses/${r.id}`))).data;
    expect(state.next_question.id).toBe(q[2].id);
    expect((await answer(survey.slug, r.id, q[2].id, false)).status).toBe(200);
    expect((await complete(survey.slug, r.id)).status).toBe(200);
    const list = (await json(await call("GET", `surveys/${survey.id}/responses`, { key: team.key }))).data;
    expect(Object.keys(list[0].answers).sort()).toEqual([q[0].id, q[2].id].sort());
    const summary = (await json(await call("GET", `surveys/${survey.id}/summary`, { key: team.key }))).data;
    expect(summary.questions.map((x: { question_id: string }) => x.question_id)).toEqual([q[2].id]);
  });

  it("records the version an answer was given against", async () => {
    const {
      team,
      survey,
      questions: q,
    } = await activeSurvey([
      { type: "choice", title: "A", options: ["x", "y"] },
      { type: "text", title: "B" },
    ]);
    await call("PATCH", `surveys/${survey.id}/questions/${q[0].id}`, { key: team.key, body: { options: ["x", "y", "z"] } });
    const r = await startOk(survey.slug);
    const step = (await json(await answer(survey.slug, r.id, q[0].id, "z"))).data;
    expect(step.next_question.version).toBe(1);
    const list = (await json(await call("GET", `surveys/${survey.id}/responses`, { key: team.key }))).data;
    expect(list[0].answers[q[0].id]).toMatchObject({ value: "z", version: 2 });
  });

  it("regression (issue 23, finding 5): the surveys unit is spent on completion; a start is refused when none is left, a completion never", async () => {
    const { team, survey, questions } = await activeSurvey([{ type: "text", title: "Q" }]);
    await admin("PATCH", `teams/${team.teamId}`, { plan: "free" });
    await setUsed(team.teamId, "surveys", 999);
    const used = () => usedOf(team.teamId, "surveys");
    // Anonymous starts spend nothing, however many.
    const started = [];
    for (let i = 0; i < 3; i++) started.push(await startOk(survey.slug));
    expect(await used()).toBe(999);
    // The first completion spends the last unit (once, however often it is called).
    const finish = async (id: string) => {
      expect((await answer(survey.slug, id, questions[0].id, "a")).status).toBe(200);
      expect((await complete(survey.slug, id)).status).toBe(200);
    };
    await finish(started[0].id);
    expect((await complete(survey.slug, started[0].id)).status).toBe(200);
    expect(await used()).toBe(1000);
    // No unit left: a start answers the monthly-quota 429 ...
    await expectError(await start(survey.slug), 429, { error: "Monthly usage limit exceeded. Upgrade your plan." });
    // ... and the responses already in flight still complete (they go over, and only they).
    await finish(started[1].id);
    await finish(started[2].id);
    expect(await used()).toBe(1002);
    await expectError(await start(survey.slug), 429, { error: "Monthly usage limit exceeded. Upgrade your plan." });
  });
});

describe("AI mode", () => {
  it("asks the authored questions, then generated ones stored with the response, ignoring branching", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key, { mode: "ai", ai_config: { goal: "Understand onboarding", target_questions: 3, tone: "friendly" } });
    const second = await addQuestion(team.key, survey.id, { type: "text", title: "Anything else?", position: 2 });
    const first = await addQuestion(team.key, survey.id, {
      type: "rating",
      title: "How was onboarding?",
      position: 1,
      branching: { rules: [{ if: { equals: 2 }, then: { skip_to_end: true } }] },
    });
    await call("POST", `surveys/${survey.id}/activate`, { key: team.key });
    const def = (await json(await call("GET", `surveys/${survey.slug}/public`))).data;
    expect(def).toMatchObject({ mode: "ai", question_count: 3, first_question: { id: first.id } });

    const r = await startOk(survey.slug);
    expect(r.next_question.id).toBe(first.id);
    let step = (await json(await answer(survey.slug, r.id, first.id, 2))).data;
    // Branching would have skipped to the end; AI mode ignores it.
    expect(step.next_question.id).toBe(second.id);
    step = (await json(await answer(survey.slug, r.id, second.id, "no"))).data;
    const generated = step.next_question;
    // The built-in generator's first probe after a free-text answer.
    expect(generated).toMatchObject({ type: "rating", generated: true, position: null, version: 1, options: [] });
    expect(generated.title).toBe("On a scale of 1 to 5, how well are we doing on this: Understand onboarding?");
    // The same state is served on resume: the question was stored, not regenerated.
    const resumed = (await json(await call("GET", `surveys/${survey.slug}/responses/${r.id}`))).data;
    expect(resumed.next_question).toEqual(generated);
    const bad = await answer(survey.slug, r.id, generated.id, 42);
    expect(bad.status).toBe(422);
    step = (await json(await answer(survey.slug, r.id, generated.id, 4))).data;
    expect(step).toMatchObject({ finished: true, answered_count: 3 });
    expect((await complete(survey.slug, r.id)).status).toBe(200);
    const list = (await json(await call("GET", `surveys/${survey.id}/responses`, { key: team.key }))).data;
    expect(list[0].generated_questions).toHaveLength(1);
    expect(list[0].generated_questions[0]).toMatchObject({ id: generated.id, generated_by: "built-in", title: generated.title });
    expect(list[0].answers[generated.id]).toMatchObject({ value: 4, generated: true });
  });

  it("the built-in generator is deterministic and reacts to a low score", async () => {
    const results: string[] = [];
    for (let i = 0; i < 2; i++) {
      const team = await setupTeam();
      const survey = await createSurvey(team.key, { mode: "ai", ai_config: { goal: "Improve support", target_questions: 2 } });
      const q = await addQuestion(team.key, survey.id, { type: "nps", title: "Recommend?", position: 1 });
      await call("POST", `surveys/${survey.id}/activate`, { key: team.key });
      const r = await startOk(survey.slug);
      const step = (await json(await answer(survey.slug, r.id, q.id, 3))).data;
      results.push(step.next_question.title);
    }
    expect(results[0]).toBe("What is the main reason for your score of 3?");
    expect(results[1]).toBe(results[0]);
  });
});

describe("results", () => {
  it("filters responses by status and start time and paginates", async () => {
    const { team, survey, questions: q } = await activeSurvey([{ type: "yes_no", title: "A" }]);
    setClock(Date.parse("2030-01-01T10:00:00Z"));
    try {
      const early = await startOk(survey.slug);
      await answer(survey.slug, early.id, q[0].id, true);
      await complete(survey.slug, early.id);
      setClock(Date.parse("2030-01-03T10:00:00Z"));
      const late = await startOk(survey.slug);
      let res = await call("GET", `surveys/${survey.id}/responses?status=completed`, { key: team.key });
      expect((await json(res)).data.map((x: { id: string }) => x.id)).toEqual([early.id]);
      res = await call("GET", `surveys/${survey.id}/responses?status=in_progress`, { key: team.key });
      expect((await json(res)).data.map((x: { id: string }) => x.id)).toEqual([late.id]);
      res = await call("GET", `surveys/${survey.id}/responses?since=2030-01-02`, { key: team.key });
      expect((await json(res)).data.map((x: { id: string }) => x.id)).toEqual([late.id]);
      res = await call("GET", `surveys/${survey.id}/responses?until=2030-01-02T00:00:00Z`, { key: team.key });
      expect((await json(res)).data.map((x: { id: string }) => x.id)).toEqual([early.id]);
      res = await call("GET", `surveys/${survey.id}/responses?per_page=1&page=2`, { key: team.key });
      const body = await json(res);
      expect(body.data.map((x: { id: string }) => x.id)).toEqual([early.id]);
      expect(body.pagination).toEqual({ page: 2, per_page: 1, total: 2, total_pages: 2 });
      res = await call("GET", `surveys/${survey.id}/responses?since=yesterday`, { key: team.key });
      expect(res.status).toBe(422);
    } finally {
      setClock(null);
    }
  });

  it("summarises completed responses per question type", async () => {
    const {
      team,
      survey,
      questions: q,
    } = await activeSurvey([
      { type: "nps", title: "NPS" },
      { type: "rating", title: "Rating" },
      { type: "choice", title: "Choice", options: ["a", "b"] },
      { type: "multi_choice", title: "Multi", options: ["x", "y"] },
      { type: "yes_no", title: "YN" },
      { type: "scale", title: "Scale", settings: { min: 1, max: 3 } },
      { type: "matrix", title: "Matrix", settings: { rows: ["r1"], columns: ["c1", "c2"] } },
      { type: "ranking", title: "Rank", options: ["p", "q"] },
    ]);
    const rows = [
      [10, 5, "a", ["x", "y"], true, 3, { r1: "c1" }, ["p", "q"]],
      [9, 4, "a", ["x"], true, 2, { r1: "c2" }, ["q", "p"]],
      [3, 1, "b", ["y"], false, 1, { r1: "c1" }, ["p", "q"]],
    ];
    // More public calls than one strict window holds: each respondent comes a minute later.
    const base = Date.parse("2031-05-05T10:00:00Z");
    try {
      for (const [n, values] of rows.entries()) {
        setClock(base + n * 60_000);
        const r = await startOk(survey.slug);
        for (const [i, v] of values.entries()) expect((await answer(survey.slug, r.id, q[i].id, v)).status).toBe(200);
        await complete(survey.slug, r.id);
      }
      setClock(base + 10 * 60_000);
      const r = await startOk(survey.slug); // in progress: not summarised
      await answer(survey.slug, r.id, q[0].id, 0);
    } finally {
      setClock(null);
    }
    const res = await call("GET", `surveys/${survey.id}/summary`, { key: team.key });
    expect(res.status).toBe(200);
    const s = (await json(res)).data;
    expect(s).toMatchObject({ survey_id: survey.id, response_count: 3, responses: { total: 4, completed: 3, in_progress: 1 } });
    const [nps, rating, choice, multi, yn, scale, matrix, rank] = s.questions;
    expect(nps).toMatchObject({ answered: 3, promoters: 2, passives: 0, detractors: 1, nps: 33, average: 7.33 });
    expect(rating).toMatchObject({ average: 3.33, distribution: { "1": 1, "2": 0, "3": 0, "4": 1, "5": 1 } });
    expect(choice.counts).toEqual({ a: 2, b: 1 });
    expect(multi.counts).toEqual({ x: 2, y: 2 });
    expect(yn).toMatchObject({ yes: 2, no: 1, yes_rate: 0.67 });
    expect(scale).toMatchObject({ average: 2, distribution: { "1": 1, "2": 1, "3": 1 } });
    expect(matrix.counts).toEqual({ r1: { c1: 2, c2: 1 } });
    expect(rank).toMatchObject({ average_rank: { p: 1.33, q: 1.67 }, first_choice_counts: { p: 2, q: 1 } });
  });
});
