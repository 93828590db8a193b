// Branching beyond equality (issue 18): numeric comparisons (less_than, less_than_or_equal,
// greater_than, greater_than_or_equal) on rating / nps / scale / slider questions and `includes`
// on multi_choice, enforced by the server when each answer is submitted, and validated against
// the question's type and options whenever a question is written (422 in the surveys shape).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { conditionHolds } from "../../../src/products/surveys/survey-rules";
import { call, json, setupTeam } from "../../helpers/api";
import { addQuestion, answer, createSurvey, startOk } from "./helpers";

/** A draft survey whose questions are created in order; branching is patched in afterwards. */
async function draft(questions: Array<Record<string, unknown>>) {
  const team = await setupTeam();
  const survey = await createSurvey(team.key);
  const q = [];
  for (const [i, body] of questions.entries()) q.push(await addQuestion(team.key, survey.id, { position: i + 1, ...body }));
  return { team, survey, q };
}

async function setBranching(key: string, surveyId: string, questionId: string, branching: unknown) {
  return call("PATCH", `surveys/${surveyId}/questions/${questionId}`, { key, body: { branching } });
}

async function activate(key: string, surveyId: string) {
  expect((await call("POST", `surveys/${surveyId}/activate`, { key })).status).toBe(200);
}

/** The question that follows answering the first question with `value`, on a fresh response (null: the end). */
async function nextAfter(slug: string, questionId: string, value: unknown): Promise<string | null> {
  const r = await startOk(slug);
  const res = await answer(slug, r.id, questionId, value);
  expect(res.status).toBe(200);
  return (await json(res)).data.next_question?.id ?? null;
}

describe("comparison and includes operators", () => {
  it("routes numeric answers by less_than / greater_than_or_equal, first matching rule first", async () => {
    const { team, survey, q } = await draft([
      { type: "nps", title: "Score" },
      { type: "text", title: "What went wrong?" },
      { type: "text", title: "What could be better?" },
      { type: "text", title: "What do you love?" },
    ]);
    const res = await setBranching(team.key, survey.id, q[0].id, {
      rules: [
        { if: { less_than: 7 }, then: { go_to_question_id: q[1].id } },
        { if: { greater_than_or_equal: 9 }, then: { go_to_question_id: q[3].id } },
        { if: { less_than: 9 }, then: { go_to_question_id: q[2].id } },
      ],
      default: { skip_to_end: true },
    });
    expect(res.status).toBe(200);
    expect((await json(res)).data.branching.rules[0].if).toEqual({ less_than: 7 });
    await activate(team.key, survey.id);
    for (const [score, expected] of [
      [0, q[1].id],
      [6, q[1].id],
      [7, q[2].id],
      [8, q[2].id],
      [9, q[3].id],
      [10, q[3].id],
    ] as const) {
      expect({ score, next: await nextAfter(survey.slug, q[0].id, score) }).toEqual({ score, next: expected });
    }
  });

  it("applies the inclusive bounds and greater_than on rating, scale and slider questions", async () => {
    const { team, survey, q } = await draft([
      { type: "rating", title: "Stars" },
      { type: "scale", title: "Effort", settings: { min: -3, max: 3 } },
      { type: "slider", title: "Percent", settings: { min: 0, max: 100 } },
      { type: "text", title: "Tail" },
    ]);
    const toTail = { go_to_question_id: q[3].id };
    expect((await setBranching(team.key, survey.id, q[0].id, { rules: [{ if: { less_than_or_equal: 2 }, then: toTail }] })).status).toBe(200);
    expect((await setBranching(team.key, survey.id, q[1].id, { rules: [{ if: { greater_than: -1 }, then: toTail }] })).status).toBe(200);
    expect((await setBranching(team.key, survey.id, q[2].id, { rules: [{ if: { greater_than_or_equal: 50.5 }, then: { skip_to_end: true } }] })).status).toBe(
      200,
    );
    await activate(team.key, survey.id);
    expect(await nextAfter(survey.slug, q[0].id, 2)).toBe(q[3].id);
    expect(await nextAfter(survey.slug, q[0].id, 3)).toBe(q[1].id);

    // Walk one response through all three to check each on its own question.
    const r = await startOk(survey.slug);
    await answer(survey.slug, r.id, q[0].id, 5);
    expect((await json(await answer(survey.slug, r.id, q[1].id, -1))).data.next_question.id).toBe(q[2].id);
    expect((await json(await answer(survey.slug, r.id, q[2].id, 51))).data).toMatchObject({ finished: true, next_question: null });
    const r2 = await startOk(survey.slug);
    await answer(survey.slug, r2.id, q[0].id, 5);
    expect((await json(await answer(survey.slug, r2.id, q[1].id, 0))).data.next_question.id).toBe(q[3].id);
  });

  it("routes a multi_choice answer by includes, and a null answer matches no comparison", async () => {
    const { team, survey, q } = await draft([
      { type: "multi_choice", title: "Products", options: ["Logs", "Push", "Mail"] },
      { type: "nps", title: "Optional score", settings: { required: false } },
      { type: "text", title: "Push feedback" },
      { type: "text", title: "Low score" },
    ]);
    expect((await setBranching(team.key, survey.id, q[0].id, { rules: [{ if: { includes: "Push" }, then: { go_to_question_id: q[2].id } }] })).status).toBe(
      200,
    );
    expect(
      (
        await setBranching(team.key, survey.id, q[1].id, {
          rules: [{ if: { less_than: 7 }, then: { go_to_question_id: q[3].id } }],
          default: { skip_to_end: true },
        })
      ).status,
    ).toBe(200);
    await activate(team.key, survey.id);
    expect(await nextAfter(survey.slug, q[0].id, ["Logs", "Push"])).toBe(q[2].id);
    expect(await nextAfter(survey.slug, q[0].id, ["Mail", "Logs"])).toBe(q[1].id);
    const r = await startOk(survey.slug);
    await answer(survey.slug, r.id, q[0].id, ["Mail"]);
    expect((await json(await answer(survey.slug, r.id, q[1].id, null))).data).toMatchObject({ finished: true });
  });

  it("keeps equals as deep equality", async () => {
    const { team, survey, q } = await draft([
      { type: "multi_choice", title: "Products", options: ["Logs", "Push"] },
      { type: "text", title: "Both" },
      { type: "text", title: "Other" },
    ]);
    const rules = [{ if: { equals: ["Logs", "Push"] }, then: { go_to_question_id: q[2].id } }];
    expect((await setBranching(team.key, survey.id, q[0].id, { rules })).status).toBe(200);
    await activate(team.key, survey.id);
    expect(await nextAfter(survey.slug, q[0].id, ["Logs", "Push"])).toBe(q[2].id);
    expect(await nextAfter(survey.slug, q[0].id, ["Push", "Logs"])).toBe(q[1].id); // order matters for equality
  });
});

describe("operator validation at write time", () => {
  it("refuses operators that do not fit the question type, bad operands and malformed conditions", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    const cases: Array<[Record<string, unknown>, unknown, string, string?]> = [
      [{ type: "text" }, { less_than: 7 }, "branching.rules.0.if", "less_than needs a numeric question (rating, nps, scale, slider), not text"],
      [
        { type: "choice", options: ["a", "b"] },
        { greater_than: 1 },
        "branching.rules.0.if",
        "greater_than needs a numeric question (rating, nps, scale, slider), not choice",
      ],
      [{ type: "yes_no" }, { less_than_or_equal: 0 }, "branching.rules.0.if"],
      [{ type: "date" }, { greater_than_or_equal: 2020 }, "branching.rules.0.if"],
      [{ type: "choice", options: ["a", "b"] }, { includes: "a" }, "branching.rules.0.if", "includes needs a multi_choice question, not choice"],
      [{ type: "ranking", options: ["a", "b"] }, { includes: "a" }, "branching.rules.0.if"],
      [{ type: "multi_choice", options: ["a", "b"] }, { includes: "c" }, "branching.rules.0.if", "includes must be one of the question's options"],
      [{ type: "nps" }, { less_than: "7" }, "branching.rules.0.if.less_than"],
      [{ type: "multi_choice", options: ["a"] }, { includes: ["a"] }, "branching.rules.0.if.includes"],
      [{ type: "nps" }, { less_than: 7, greater_than: 2 }, "branching.rules.0.if"],
      [{ type: "nps" }, {}, "branching.rules.0.if"],
      [{ type: "nps" }, { between: [1, 2] }, "branching.rules.0.if"],
    ];
    for (const [question, condition, field, message] of cases) {
      const res = await call("POST", `surveys/${survey.id}/questions`, {
        key: team.key,
        body: { title: "Q", position: 1, ...question, branching: { rules: [{ if: condition, then: { skip_to_end: true } }] } },
      });
      const body = await json(res);
      expect({ condition, status: res.status, error: body.error, has: Object.keys(body.errors ?? {}).includes(field) }).toEqual({
        condition,
        status: 422,
        error: "Validation failed",
        has: true,
      });
      if (message) expect(body.errors[field]).toContain(message);
    }
    expect((await json(await call("GET", `surveys/${survey.id}/questions`, { key: team.key }))).data).toEqual([]);
  });

  it("validates the merged question on PATCH: a type change or an option removal that breaks a rule answers 422", async () => {
    const { team, survey, q } = await draft([
      { type: "nps", title: "Score", branching: { rules: [{ if: { less_than: 7 }, then: { skip_to_end: true } }] } },
      { type: "multi_choice", title: "Uses", options: ["x", "y"], branching: { rules: [{ if: { includes: "y" }, then: { skip_to_end: true } }] } },
    ]);
    let res = await call("PATCH", `surveys/${survey.id}/questions/${q[0].id}`, { key: team.key, body: { type: "text" } });
    expect(res.status).toBe(422);
    expect((await json(res)).errors["branching.rules.0.if"]).toEqual(["less_than needs a numeric question (rating, nps, scale, slider), not text"]);
    res = await call("PATCH", `surveys/${survey.id}/questions/${q[1].id}`, { key: team.key, body: { options: ["x", "z"] } });
    expect(res.status).toBe(422);
    expect((await json(res)).errors["branching.rules.0.if"]).toEqual(["includes must be one of the question's options"]);
    // Still fitting: a numeric type change keeps the comparison valid.
    res = await call("PATCH", `surveys/${survey.id}/questions/${q[0].id}`, { key: team.key, body: { type: "rating" } });
    expect(res.status).toBe(200);
    const stored = (await json(await call("GET", `surveys/${survey.id}`, { key: team.key }))).data.questions;
    expect(stored[0]).toMatchObject({ type: "rating", branching: { rules: [{ if: { less_than: 7 } }] } });
    expect(stored[1].options).toEqual(["x", "y"]);
  });

  it("copies operator rules with duplicate, remapping their targets", async () => {
    const { team, survey, q } = await draft([
      { type: "nps", title: "Score" },
      { type: "text", title: "Why" },
    ]);
    await setBranching(team.key, survey.id, q[0].id, { rules: [{ if: { greater_than: 8 }, then: { go_to_question_id: q[1].id } }] });
    const copy = (await json(await call("POST", `surveys/${survey.id}/duplicate`, { key: team.key }))).data;
    expect(copy.questions[0].branching.rules[0]).toEqual({ if: { greater_than: 8 }, then: { go_to_question_id: copy.questions[1].id } });
  });
});

describe("conditionHolds", () => {
  it("compares numbers exactly like the operators say, and never matches a non-number", () => {
    fc.assert(
      fc.property(fc.integer({ min: -50, max: 150 }), fc.double({ min: -100, max: 200, noNaN: true }), (value, operand) => {
        expect(conditionHolds({ less_than: operand }, value)).toBe(value < operand);
        expect(conditionHolds({ less_than_or_equal: operand }, value)).toBe(value <= operand);
        expect(conditionHolds({ greater_than: operand }, value)).toBe(value > operand);
        expect(conditionHolds({ greater_than_or_equal: operand }, value)).toBe(value >= operand);
        expect(conditionHolds({ less_than: operand }, String(value))).toBe(false);
        expect(conditionHolds({ greater_than_or_equal: operand }, null)).toBe(false);
      }),
    );
  });

  it("includes tests membership of an array answer only", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.constantFrom("a", "b", "c", "d")), fc.constantFrom("a", "b", "c", "d"), (value, option) => {
        expect(conditionHolds({ includes: option }, value)).toBe(value.includes(option));
        expect(conditionHolds({ includes: option }, option)).toBe(false);
      }),
    );
  });
});
