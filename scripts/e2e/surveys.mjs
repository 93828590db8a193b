// Surveys over real HTTP: build and activate a survey, answer it on the public flow, read the
// results, and receive the signed response.completed webhook on a local receiver (through the
// survey-webhooks queue of wrangler dev).
import { randomUUID } from "node:crypto";
import { assert, expectStatus, need, request } from "./http.mjs";
import { startReceiver } from "./receiver.mjs";

export async function surveysChecks({ url, createTeamWithKey, defer }) {
  const { key } = await createTeamWithKey({ name: "Surveys e2e" });
  const receiver = await startReceiver();
  defer(() => receiver.close());
  const slug = `e2e-${randomUUID().slice(0, 8)}`;
  const api = (method, path, body) => request(url, method, `/api/v1${path}`, { key, body });
  const state = {};

  return {
    "surveys: create a survey with a section and two questions, then activate it": async () => {
      const survey = expectStatus(await api("POST", "/surveys", { name: "E2E NPS", slug }), 201, "create survey");
      assert.equal(survey.body.data.status, "draft");
      state.survey = survey.body.data;
      const section = expectStatus(await api("POST", `/surveys/${state.survey.id}/sections`, { title: "About us", position: 1 }), 201, "create section");
      const nps = await api("POST", `/surveys/${state.survey.id}/questions`, {
        type: "nps",
        title: "How likely are you to recommend us?",
        position: 1,
        section_id: section.body.data.id,
      });
      expectStatus(nps, 201, "create nps question");
      const text = await api("POST", `/surveys/${state.survey.id}/questions`, {
        type: "text",
        title: "Why?",
        position: 2,
        section_id: section.body.data.id,
      });
      expectStatus(text, 201, "create text question");
      state.questions = [nps.body.data, text.body.data];
      const activated = expectStatus(await api("POST", `/surveys/${state.survey.id}/activate`), 200, "activate");
      assert.equal(activated.body.data.status, "active");
      const detail = expectStatus(await api("GET", `/surveys/${state.survey.id}`), 200, "get survey");
      assert.deepEqual(
        detail.body.data.questions.map((q) => q.id),
        state.questions.map((q) => q.id),
      );
    },

    "surveys: a webhook is registered with a whsec_ secret shown once": async () => {
      const survey = need(state.survey, "survey");
      const hook = await api("POST", `/surveys/${survey.id}/webhooks`, { url: `${receiver.url}/surveys`, events: ["response.completed"] });
      expectStatus(hook, 201, "create survey webhook");
      assert.match(hook.body.data.secret, /^whsec_/);
      receiver.secret = hook.body.data.secret;
      const list = expectStatus(await api("GET", `/surveys/${survey.id}/webhooks`), 200, "list webhooks");
      assert.equal(list.body.data.length, 1);
      assert.equal(list.body.data[0].secret, undefined, "the secret must not be listed");
    },

    "surveys: public start, a bad answer is 422, good answers, complete": async () => {
      const [nps, text] = need(state.questions, "questions");
      const publicDef = expectStatus(await request(url, "GET", `/api/v1/surveys/${slug}/public`), 200, "public definition");
      assert.equal(publicDef.body.data.accepting_responses, true);
      const started = await request(url, "POST", `/api/v1/surveys/${slug}/responses`, { body: { respondent: { email: "ada@example.com" } } });
      expectStatus(started, 201, "start response");
      assert.equal(started.body.data.next_question.id, nps.id);
      const responseId = started.body.data.id;
      const answer = (question_id, value) => request(url, "POST", `/api/v1/surveys/${slug}/responses/${responseId}/answers`, { body: { question_id, value } });

      const bad = expectStatus(await answer(nps.id, 42), 422, "nps answer out of range");
      assert.equal(bad.body.error, "Validation failed");
      assert.ok(Array.isArray(bad.body.errors?.value) && bad.body.errors.value.length > 0, `errors.value expected: ${JSON.stringify(bad.body)}`);

      const first = expectStatus(await answer(nps.id, 9), 200, "nps answer");
      assert.equal(first.body.data.next_question.id, text.id);
      const second = expectStatus(await answer(text.id, "Fast and friendly"), 200, "text answer");
      assert.equal(second.body.data.finished, true);
      const done = expectStatus(await request(url, "POST", `/api/v1/surveys/${slug}/responses/${responseId}/complete`), 200, "complete");
      assert.equal(done.body.data.status, "completed");
      state.responseId = responseId;
    },

    "surveys: response_count is 1 and the summary aggregates the answers": async () => {
      const survey = need(state.survey, "survey");
      need(state.responseId, "completed response");
      const detail = expectStatus(await api("GET", `/surveys/${survey.id}`), 200, "get survey");
      assert.equal(detail.body.data.response_count, 1);
      const summary = expectStatus(await api("GET", `/surveys/${survey.id}/summary`), 200, "summary");
      assert.equal(summary.body.data.response_count, 1);
      assert.equal(summary.body.data.responses.completed, 1);
      const nps = summary.body.data.questions.find((q) => q.type === "nps");
      assert.equal(nps.answered, 1);
      assert.equal(nps.promoters, 1);
      assert.equal(nps.nps, 100);
    },

    "surveys: the response.completed webhook reaches the receiver with a valid signature": async () => {
      const responseId = need(state.responseId, "completed response");
      const delivery = await receiver.waitFor((r) => r.verified && JSON.parse(r.text).data?.response?.id === responseId);
      const body = JSON.parse(delivery.text);
      assert.equal(body.type, "response.completed");
      assert.equal(body.data.survey.slug, slug);
      assert.equal(body.data.response.status, "completed");
      assert.equal(body.data.response.answers[state.questions[0].id].value, 9);
      assert.equal(receiver.requests.filter((r) => r.verified === false).length, 0, "no request may fail verification");
    },

    "surveys: a less_than branch, going back to change the answer, and the summary counts the final answers only": async () => {
      const other = `e2e-back-${randomUUID().slice(0, 8)}`;
      const survey = expectStatus(await api("POST", "/surveys", { name: "E2E back", slug: other }), 201, "create survey").body.data;
      const why = expectStatus(await api("POST", `/surveys/${survey.id}/questions`, { type: "text", title: "What went wrong?", position: 2 }), 201, "text").body
        .data;
      const score = expectStatus(
        await api("POST", `/surveys/${survey.id}/questions`, {
          type: "nps",
          title: "Score",
          position: 1,
          branching: { rules: [{ if: { less_than: 7 }, then: { go_to_question_id: why.id } }], default: { skip_to_end: true } },
        }),
        201,
        "nps with a less_than rule",
      ).body.data;
      const wrongType = await api("POST", `/surveys/${survey.id}/questions`, {
        type: "text",
        title: "Bad rule",
        position: 3,
        branching: { rules: [{ if: { less_than: 7 }, then: { skip_to_end: true } }] },
      });
      expectStatus(wrongType, 422, "less_than on a text question");
      assert.ok(wrongType.body.errors["branching.rules.0.if"], JSON.stringify(wrongType.body));
      expectStatus(await api("POST", `/surveys/${survey.id}/activate`), 200, "activate");
      expectStatus(await api("GET", `/surveys/${survey.id}/summary`), 200, "summary before responses");

      const base = `/api/v1/surveys/${other}/responses`;
      const started = expectStatus(await request(url, "POST", base, {}), 201, "start").body.data;
      const answer = (question_id, value) => request(url, "POST", `${base}/${started.id}/answers`, { body: { question_id, value } });
      assert.equal(expectStatus(await answer(score.id, 3), 200, "low score").body.data.next_question.id, why.id);
      const back = expectStatus(await request(url, "POST", `${base}/${started.id}/back`, {}), 200, "back");
      assert.equal(back.body.data.next_question.id, score.id);
      assert.equal(back.body.data.previous_answer.value, 3);
      assert.equal(expectStatus(await answer(score.id, 10), 200, "changed score").body.data.finished, true);
      expectStatus(await request(url, "POST", `${base}/${started.id}/complete`), 200, "complete");
      const late = await request(url, "POST", `${base}/${started.id}/back`, {});
      expectStatus(late, 409, "back on a completed response");

      const summary = expectStatus(await api("GET", `/surveys/${survey.id}/summary`), 200, "summary").body.data;
      assert.deepEqual(summary.responses, { total: 1, completed: 1, in_progress: 0 });
      const [npsSummary, textSummary] = summary.questions;
      assert.equal(npsSummary.answered, 1);
      assert.equal(npsSummary.promoters, 1);
      assert.equal(npsSummary.detractors, 0);
      assert.equal(textSummary.answered, 0);
    },
  };
}
