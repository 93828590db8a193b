// Going back in the public flow (issue 18): POST /surveys/:slug/responses/:id/back cuts the path
// before an earlier question, discards the answers after it, and lets the respondent answer it
// again with the branching walked anew on the server; the summary counts only what a response
// holds when it completes. Unhappy paths: completed responses, nothing answered, questions off
// the path or deleted, bad bodies, unknown and foreign responses.
import { describe, expect, it } from "vitest";
import { call, expectError, json, setupTeam } from "../../helpers/api";
import { activeSurvey, addQuestion, answer, back, complete, createSurvey, startOk } from "./helpers";

async function ok(res: Response) {
  expect(res.status).toBe(200);
  return (await json(res)).data;
}

async function storedResponse(key: string, surveyId: string, responseId: string) {
  const list = (await json(await call("GET", `surveys/${surveyId}/responses`, { key }))).data;
  return list.find((r: { id: string }) => r.id === responseId);
}

describe("going back", () => {
  it("one step back, then to any earlier question: the path is cut and later answers are discarded", async () => {
    const {
      team,
      survey,
      questions: q,
    } = await activeSurvey([
      { type: "nps", title: "Score" },
      { type: "choice", title: "Plan", options: ["free", "pro"] },
      { type: "text", title: "Why" },
    ]);
    const r = await startOk(survey.slug);
    expect(r).toMatchObject({ can_go_back: false, previous_answer: null });
    await ok(await answer(survey.slug, r.id, q[0].id, 9));
    await ok(await answer(survey.slug, r.id, q[1].id, "pro"));
    const last = await ok(await answer(survey.slug, r.id, q[2].id, "speed"));
    expect(last).toMatchObject({ finished: true, answered_count: 3, can_go_back: true });

    // No body: one step back, to the last answered question, with its answer to pre-fill.
    const stepBack = await ok(await back(survey.slug, r.id));
    expect(stepBack).toMatchObject({ finished: false, answered_count: 2, can_go_back: true, next_question: { id: q[2].id } });
    expect(stepBack.previous_answer).toMatchObject({ value: "speed" });

    const toFirst = await ok(await back(survey.slug, r.id, q[0].id));
    expect(toFirst).toMatchObject({ answered_count: 0, can_go_back: false, next_question: { id: q[0].id } });
    expect(toFirst.previous_answer).toMatchObject({ value: 9 });
    const stored = await storedResponse(team.key, survey.id, r.id);
    expect(stored.path).toEqual([]);
    expect(Object.keys(stored.answers)).toEqual([q[0].id]);
    // Resume shows the same state.
    expect(await ok(await call("GET", `surveys/${survey.slug}/responses/${r.id}`))).toEqual(toFirst);

    // Only the question gone back to may be answered now.
    const skip = await answer(survey.slug, r.id, q[1].id, "free");
    await expectError(skip, 409, { error: "Question is not the next one on this response's path", expected_question_id: q[0].id });
    const again = await ok(await answer(survey.slug, r.id, q[0].id, 3));
    // The later answers were discarded: nothing to pre-fill for the question after it.
    expect(again).toMatchObject({ answered_count: 1, next_question: { id: q[1].id }, previous_answer: null });
    await ok(await answer(survey.slug, r.id, q[1].id, "free"));
    await ok(await answer(survey.slug, r.id, q[2].id, "price"));
    await ok(await complete(survey.slug, r.id));
    const done = await storedResponse(team.key, survey.id, r.id);
    expect(done.path).toEqual([q[0].id, q[1].id, q[2].id]);
    expect(done.answers[q[0].id].value).toBe(3);
    expect(done.answers[q[1].id].value).toBe("free");
  });

  it("recomputes the branch from the changed answer, and the summary reflects only the final path", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    const end = await addQuestion(team.key, survey.id, { type: "yes_no", title: "Recommend us?", position: 3 });
    const why = await addQuestion(team.key, survey.id, { type: "text", title: "What went wrong?", position: 2 });
    const score = await addQuestion(team.key, survey.id, {
      type: "nps",
      title: "Score",
      position: 1,
      branching: { rules: [{ if: { equals: 10 }, then: { go_to_question_id: end.id } }] },
    });
    expect((await call("POST", `surveys/${survey.id}/activate`, { key: team.key })).status).toBe(200);
    await ok(await call("GET", `surveys/${survey.id}/summary`, { key: team.key })); // counters built

    const r = await startOk(survey.slug);
    expect((await ok(await answer(survey.slug, r.id, score.id, 2))).next_question.id).toBe(why.id);
    await ok(await answer(survey.slug, r.id, why.id, "slow"));
    await ok(await answer(survey.slug, r.id, end.id, false));
    await ok(await back(survey.slug, r.id, score.id));
    // The new answer takes the other branch: the text question is no longer on the path.
    const branched = await ok(await answer(survey.slug, r.id, score.id, 10));
    expect(branched.next_question.id).toBe(end.id);
    expect((await ok(await answer(survey.slug, r.id, end.id, true))).finished).toBe(true);
    await ok(await complete(survey.slug, r.id));

    const stored = await storedResponse(team.key, survey.id, r.id);
    expect(stored.path).toEqual([score.id, end.id]);
    expect(stored.answers[why.id]).toBeUndefined();
    const s = await ok(await call("GET", `surveys/${survey.id}/summary`, { key: team.key }));
    const [nps, text, yes] = s.questions;
    expect(nps).toMatchObject({ answered: 1, average: 10, promoters: 1, detractors: 0 });
    expect(text).toMatchObject({ answered: 0 });
    expect(yes).toMatchObject({ yes: 1, no: 0 });
  });

  it("in AI mode drops the follow-ups generated after the question gone back to", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key, { mode: "ai", ai_config: { goal: "Improve support", target_questions: 3 } });
    const first = await addQuestion(team.key, survey.id, { type: "text", title: "What do you use?", position: 1 });
    await call("POST", `surveys/${survey.id}/activate`, { key: team.key });
    const r = await startOk(survey.slug);
    const g1 = (await ok(await answer(survey.slug, r.id, first.id, "logs"))).next_question;
    const g2 = (await ok(await answer(survey.slug, r.id, g1.id, 4))).next_question;
    expect(g2.generated).toBe(true);
    const backAtG1 = await ok(await back(survey.slug, r.id));
    expect(backAtG1.next_question).toEqual(g1);
    let stored = await storedResponse(team.key, survey.id, r.id);
    expect(stored.generated_questions.map((g: { id: string }) => g.id)).toEqual([g1.id]);
    await ok(await back(survey.slug, r.id, first.id));
    stored = await storedResponse(team.key, survey.id, r.id);
    expect(stored.generated_questions).toEqual([]);
    expect(stored.answers[g1.id]).toBeUndefined();
  });

  it("refuses a completed response, an empty path, and questions off the path", async () => {
    const { survey, questions: q } = await activeSurvey([
      { type: "yes_no", title: "A", branching: { rules: [{ if: { equals: true }, then: { skip_to_end: true } }] } },
      { type: "yes_no", title: "B" },
    ]);
    const fresh = await startOk(survey.slug);
    await expectError(await back(survey.slug, fresh.id), 409, { error: "No question has been answered yet; there is nothing to go back to" });

    const r = await startOk(survey.slug);
    await ok(await answer(survey.slug, r.id, q[0].id, true));
    // B was skipped by the branch: it is not an earlier question of this path.
    await expectError(await back(survey.slug, r.id, q[1].id), 409, { error: "Question is not an earlier question of this response's path", path: [q[0].id] });
    await expectError(await back(survey.slug, r.id, crypto.randomUUID()), 409, {
      error: "Question is not an earlier question of this response's path",
      path: [q[0].id],
    });
    await ok(await complete(survey.slug, r.id));
    await expectError(await back(survey.slug, r.id), 409, { error: "Response is already completed" });
    await expectError(await back(survey.slug, r.id, q[0].id), 409, { error: "Response is already completed" });
  });

  it("refuses a question deleted since it was answered", async () => {
    const {
      team,
      survey,
      questions: q,
    } = await activeSurvey([
      { type: "yes_no", title: "A" },
      { type: "yes_no", title: "B" },
    ]);
    const r = await startOk(survey.slug);
    await ok(await answer(survey.slug, r.id, q[0].id, true));
    expect((await call("DELETE", `surveys/${survey.id}/questions/${q[0].id}`, { key: team.key })).status).toBe(204);
    await expectError(await back(survey.slug, r.id, q[0].id), 409, { error: "Question is not an earlier question of this response's path", path: [q[0].id] });
  });

  it("validates the body and hides unknown or foreign responses", async () => {
    const { survey, questions: q } = await activeSurvey([{ type: "yes_no", title: "A" }]);
    const other = await activeSurvey([{ type: "yes_no", title: "B" }]);
    const r = await startOk(survey.slug);
    await ok(await answer(survey.slug, r.id, q[0].id, true));
    const extra = await call("POST", `surveys/${survey.slug}/responses/${r.id}/back`, { body: { question_id: q[0].id, value: 1 } });
    expect(extra.status).toBe(422);
    expect((await json(extra)).error).toBe("Validation failed");
    const empty = await call("POST", `surveys/${survey.slug}/responses/${r.id}/back`, { body: { question_id: "" } });
    expect(empty.status).toBe(422);
    expect(Object.keys((await json(empty)).errors)).toEqual(["question_id"]);
    await expectError(await back(survey.slug, crypto.randomUUID()), 404, { error: "Response not found" });
    // A response id under another survey's slug is not found.
    await expectError(await back(other.survey.slug, r.id), 404, { error: "Response not found" });
    await expectError(await back("no-such-survey-slug", r.id), 404, { error: "Survey not found" });
  });
});
