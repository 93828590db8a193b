/** @jsxImportSource hono/jsx */
// The survey builder's writes (its view is survey-builder-view.tsx): add a question of any type,
// edit one, move it up or down, delete it, and set its branching (add a rule, set where it goes
// when no rule matches, clear). Every write calls the services of /api/v1/surveys/{id}/questions
// with the same checks, then redirects (303) back to the survey's page.
import { Hono, type Context } from "hono";
import { createQuestion, deleteQuestion, listQuestions, reorderQuestions, updateQuestion } from "../survey-questions.service";
import { CreateQuestionBody, PatchQuestionBody, QUESTION_TYPES, type QuestionType } from "../surveys.schemas";
import { ApiError, zodDetails } from "../../../platform/errors";
import { formText } from "../../../console/forms";
import { redirectTo } from "../../../console/render";
import { requireRole, type ConsoleEnv } from "../../../console/session";
import { lines, NUMERIC, OPERATORS, type BuilderQuestion, type Operator } from "./survey-builder-view";

/** The fields a question's forms share, read from a form: the API's body for that type. */
async function questionFields(c: Context<ConsoleEnv>, type: QuestionType) {
  const description = (await formText(c, "description")).trim();
  const settings: Record<string, unknown> = {};
  if (type === "scale" || type === "slider") {
    settings.min = Number(await formText(c, "min"));
    settings.max = Number(await formText(c, "max"));
  }
  if (type === "matrix") {
    settings.rows = lines(await formText(c, "rows"));
    settings.columns = lines(await formText(c, "columns"));
  }
  if (type === "text") settings.multiline = (await formText(c, "multiline")) === "on";
  if ((await formText(c, "optional")) === "on") settings.required = false;
  // The section select is offered only when the survey has sections; absent, the question's section stays.
  const section = (await formText(c, "has_section")) === "1" ? { section_id: (await formText(c, "section_id")) || null } : {};
  return {
    ...section,
    title: await formText(c, "title"),
    description: description || null,
    options: ["choice", "multi_choice", "ranking"].includes(type) ? lines(await formText(c, "options")) : [],
    settings,
  };
}

/** A choice answer as the branching condition compares it: a number, a boolean or the text. */
function conditionValue(type: string, text: string): unknown {
  if (NUMERIC.has(type)) return Number(text);
  if (type === "yes_no") return ["yes", "true"].includes(text.trim().toLowerCase());
  return text.trim();
}

/** A branching target from a select: `end` or a question id. */
function target(value: string): Record<string, unknown> {
  return value === "end" ? { skip_to_end: true } : { go_to_question_id: value };
}

export const surveyBuilderPages = new Hono<ConsoleEnv>();
const surveyPath = (c: Context<ConsoleEnv>) => `surveys/${c.req.param("survey_id")}`;
const teamId = (c: Context<ConsoleEnv>) => c.get("consoleTeam").id;

surveyBuilderPages.post("/surveys/:survey_id/questions", async (c) => {
  requireRole(c, "developer");
  const type = (await formText(c, "type")) as QuestionType;
  if (!(QUESTION_TYPES as readonly string[]).includes(type)) throw ApiError.validation({ type: [`must be one of ${QUESTION_TYPES.join(", ")}`] });
  const existing = await listQuestions(c.env, teamId(c), c.req.param("survey_id"));
  const parsed = CreateQuestionBody.safeParse({ type, position: existing.length + 1, ...(await questionFields(c, type)) });
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  await createQuestion(c.env, teamId(c), c.req.param("survey_id"), parsed.data);
  return redirectTo(c, surveyPath(c), "question-added");
});

surveyBuilderPages.post("/surveys/:survey_id/questions/:question_id", async (c) => {
  requireRole(c, "developer");
  const question = await findQuestion(c);
  const parsed = PatchQuestionBody.safeParse(await questionFields(c, question.type));
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  await updateQuestion(c.env, teamId(c), c.req.param("survey_id"), question.id, parsed.data);
  return redirectTo(c, surveyPath(c), "question-saved");
});

surveyBuilderPages.post("/surveys/:survey_id/questions/:question_id/move", async (c) => {
  requireRole(c, "developer");
  const questions = await listQuestions(c.env, teamId(c), c.req.param("survey_id"));
  const ids = questions.map((q) => q.id);
  const at = ids.indexOf(c.req.param("question_id"));
  if (at < 0) throw ApiError.notFound("Question not found");
  const to = (await formText(c, "direction")) === "up" ? at - 1 : at + 1;
  if (to >= 0 && to < ids.length) {
    [ids[at], ids[to]] = [ids[to]!, ids[at]!];
    await reorderQuestions(c.env, teamId(c), c.req.param("survey_id"), ids);
  }
  return redirectTo(c, surveyPath(c), "question-moved");
});

surveyBuilderPages.post("/surveys/:survey_id/questions/:question_id/delete", async (c) => {
  requireRole(c, "developer");
  await deleteQuestion(c.env, teamId(c), c.req.param("survey_id"), c.req.param("question_id"));
  return redirectTo(c, surveyPath(c), "question-deleted");
});

surveyBuilderPages.post("/surveys/:survey_id/questions/:question_id/branching", async (c) => {
  requireRole(c, "developer");
  const question = await findQuestion(c);
  const current = question.branching as { rules?: unknown[]; default?: unknown };
  let branching: Record<string, unknown>;
  const action = await formText(c, "action");
  if (action === "clear") {
    branching = { rules: [], default: { go_to_next: true } };
  } else if (action === "default") {
    const to = await formText(c, "default_target");
    branching = { rules: current.rules ?? [], default: to === "next" ? { go_to_next: true } : target(to) };
  } else {
    const operator = (await formText(c, "operator")) as Operator;
    if (!Object.hasOwn(OPERATORS, operator)) throw ApiError.validation({ operator: [`must be one of ${Object.keys(OPERATORS).join(", ")}`] });
    const rule = { if: { [operator]: conditionValue(question.type, await formText(c, "value")) }, then: target(await formText(c, "target")) };
    branching = { rules: [...(current.rules ?? []), rule], default: current.default ?? { go_to_next: true } };
  }
  const parsed = PatchQuestionBody.safeParse({ branching });
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  await updateQuestion(c.env, teamId(c), c.req.param("survey_id"), question.id, parsed.data);
  return redirectTo(c, surveyPath(c), "branching-saved");
});

async function findQuestion(c: Context<ConsoleEnv>): Promise<BuilderQuestion> {
  const questions = await listQuestions(c.env, teamId(c), c.req.param("survey_id") ?? "");
  const question = questions.find((q) => q.id === c.req.param("question_id"));
  if (!question) throw ApiError.notFound("Question not found");
  return question as BuilderQuestion;
}
