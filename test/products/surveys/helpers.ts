// Shared set-up for the survey tests: a team, a survey with questions, and public-flow helpers.
import { expect } from "vitest";
import { call, json, setupTeam, type TestTeam } from "../../helpers/api";

export interface Built {
  team: TestTeam;
  survey: { id: string; slug: string; [k: string]: unknown };
}

export function slug(prefix = "s"): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 12)}`;
}

export async function createSurvey(key: string, body: Record<string, unknown> = {}) {
  const res = await call("POST", "surveys", { key, body: { name: "Customer survey", slug: slug(), ...body } });
  expect(res.status).toBe(201);
  return (await json(res)).data;
}

export async function addQuestion(key: string, surveyId: string, body: Record<string, unknown>) {
  const res = await call("POST", `surveys/${surveyId}/questions`, { key, body });
  if (res.status !== 201) throw new Error(`question not created: ${res.status} ${await res.text()}`);
  return (await json(res)).data;
}

/** A team with an active survey built from `questions` (created in order, positions 1..n). */
export async function activeSurvey(questions: Array<Record<string, unknown>>, surveyBody: Record<string, unknown> = {}, team?: TestTeam) {
  team ??= await setupTeam();
  const survey = await createSurvey(team.key, surveyBody);
  const created = [];
  for (const [i, q] of questions.entries()) created.push(await addQuestion(team.key, survey.id, { position: i + 1, ...q }));
  const res = await call("POST", `surveys/${survey.id}/activate`, { key: team.key });
  expect(res.status).toBe(200);
  return { team, survey, questions: created };
}

export async function start(surveySlug: string, body?: unknown) {
  return call("POST", `surveys/${surveySlug}/responses`, body === undefined ? {} : { body });
}

export async function startOk(surveySlug: string) {
  const res = await start(surveySlug);
  expect(res.status).toBe(201);
  return (await json(res)).data;
}

export function answer(surveySlug: string, responseId: string, questionId: string, value: unknown) {
  return call("POST", `surveys/${surveySlug}/responses/${responseId}/answers`, { body: { question_id: questionId, value } });
}

export function complete(surveySlug: string, responseId: string) {
  return call("POST", `surveys/${surveySlug}/responses/${responseId}/complete`);
}

/** Goes back to `questionId` (an earlier question of the path), or one step when it is omitted. */
export function back(surveySlug: string, responseId: string, questionId?: string) {
  return call("POST", `surveys/${surveySlug}/responses/${responseId}/back`, questionId === undefined ? {} : { body: { question_id: questionId } });
}
