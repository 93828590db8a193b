// The per-survey store (issue 27): one object per survey holds its responses and summary counters;
// two surveys never share one; the completion's D1 side (response_count, webhook deliveries) is
// written once per completion even when that write fails and is retried by the store's alarm;
// the operator's migration moves D1 responses step by step, repeatable with nothing doubled; a
// respondent's response not moved yet is moved when it is touched.
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { SurveyStore } from "../../../src/products/surveys/store/survey-store";
import { publishCompletion } from "../../../src/products/surveys/surveys.publish";
import { surveyStore } from "../../../src/products/surveys/surveys.store";
import { admin, call, json } from "../../helpers/api";
import { activeSurvey, answer, complete, startOk } from "./helpers";

afterEach(() => vi.restoreAllMocks());

const responseCount = async (surveyId: string) =>
  (await env.DB.prepare("SELECT response_count AS n FROM surveys WHERE id = ?").bind(surveyId).first<{ n: number }>())!.n;
const deliveries = async (surveyId: string) =>
  (await env.DB.prepare("SELECT id, response_id FROM survey_webhook_deliveries WHERE survey_id = ?").bind(surveyId).all<{ id: string; response_id: string }>())
    .results;
const at = "2031-02-03T04:05:06.000Z";

/** A row of the former D1 table. */
async function legacyRow(
  teamId: string,
  surveyId: string,
  values: { id?: string; status: "completed" | "in_progress"; answers: Record<string, unknown>; path?: string[]; next?: string | null },
) {
  const id = values.id ?? crypto.randomUUID();
  const answers = Object.fromEntries(Object.entries(values.answers).map(([q, value]) => [q, { value, version: 1, answered_at: at }]));
  await env.DB.prepare(
    `INSERT INTO survey_responses (id, team_id, survey_id, status, respondent, answers, path, next_question_id, generated_questions, completion_id, started_at, updated_at, completed_at)
     VALUES (?1, ?2, ?3, ?4, '{"email":"old@example.com"}', ?5, ?6, ?7, '[]', ?8, ?9, ?9, ?10)`,
  )
    .bind(
      id,
      teamId,
      surveyId,
      values.status,
      JSON.stringify(answers),
      JSON.stringify(values.path ?? Object.keys(answers)),
      values.next ?? null,
      values.status === "completed" ? "legacy" : null,
      at,
      values.status === "completed" ? at : null,
    )
    .run();
  return id;
}

describe("survey store", () => {
  it("keeps each survey's responses in its own object; another team's survey answers 404 and reaches no store", async () => {
    const a = await activeSurvey([{ type: "yes_no", title: "A?" }]);
    const b = await activeSurvey([{ type: "yes_no", title: "B?" }]);
    const ra = await startOk(a.survey.slug);
    await answer(a.survey.slug, ra.id, a.questions[0].id, true);
    expect((await complete(a.survey.slug, ra.id)).status).toBe(200);
    expect(await surveyStore(env, a.survey.id).get(ra.id)).toMatchObject({ id: ra.id, status: "completed" });
    expect(await surveyStore(env, b.survey.id).get(ra.id)).toBeNull();
    expect(await surveyStore(env, b.survey.id).counts()).toEqual({ inProgress: 0, completed: 0 });
    // The response id under the other survey's slug: not found there.
    expect((await call("GET", `surveys/${b.survey.slug}/responses/${ra.id}`)).status).toBe(404);
    // Another team's survey: 404 on every read, and its store was never written by those reads.
    for (const path of [`surveys/${a.survey.id}/responses`, `surveys/${a.survey.id}/summary`, `surveys/${a.survey.id}/responses/export`]) {
      expect((await call("GET", path, { key: b.team.key })).status).toBe(404);
    }
    const list = await json(await call("GET", `surveys/${a.survey.id}/responses`, { key: a.team.key }));
    expect(list.data.map((r: { id: string }) => r.id)).toEqual([ra.id]);
    expect(list.pagination.total).toBe(1);
  });

  it("writes the D1 side of a completion once: a failed write is retried by the alarm, a repeat changes nothing", async () => {
    const { team, survey, questions } = await activeSurvey([{ type: "yes_no", title: "Again?" }]);
    const hook = await call("POST", `surveys/${survey.id}/webhooks`, {
      key: team.key,
      body: { url: "https://hooks.example.com/store", events: ["response.completed"] },
    });
    expect(hook.status).toBe(201);
    const send = vi.spyOn(env.SURVEY_QUEUE, "sendBatch").mockResolvedValue(undefined as never);
    const r = await startOk(survey.slug);
    await answer(survey.slug, r.id, questions[0].id, true);

    // D1 refuses the completion's key: the completion is committed in the store all the same.
    const trigger = `fail_completions_${crypto.randomUUID().replaceAll("-", "")}`;
    await env.DB.exec(`CREATE TRIGGER ${trigger} BEFORE INSERT ON survey_completions BEGIN SELECT RAISE(ABORT, 'd1 down'); END`);
    const res = await complete(survey.slug, r.id);
    expect(res.status).toBe(200);
    expect((await json(res)).data.status).toBe("completed");
    const store = surveyStore(env, survey.id);
    expect(await store.pendingPublishes()).toEqual([r.id]);
    expect(await responseCount(survey.id)).toBe(0);
    expect(await deliveries(survey.id)).toEqual([]);
    expect(send).not.toHaveBeenCalled();
    // Still down when the alarm runs: still pending.
    expect(await runDurableObjectAlarm(store)).toBe(true);
    expect(await store.pendingPublishes()).toEqual([r.id]);

    await env.DB.exec(`DROP TRIGGER ${trigger}`);
    // The next alarm (set again by the failed run) writes it.
    expect(await runDurableObjectAlarm(store)).toBe(true);
    expect(await store.pendingPublishes()).toEqual([]);
    expect(await responseCount(survey.id)).toBe(1);
    const rows = await deliveries(survey.id);
    expect(rows).toEqual([{ id: expect.any(String), response_id: r.id }]);
    expect(send).toHaveBeenCalledTimes(1);

    // A repeat (an alarm after a write whose confirmation was lost), a repeated completion: nothing more.
    expect(await publishCompletion(env, { surveyId: survey.id, teamId: team.teamId }, r.id, at)).toBe(false);
    expect((await complete(survey.slug, r.id)).status).toBe(200);
    expect(await responseCount(survey.id)).toBe(1);
    expect(await deliveries(survey.id)).toHaveLength(1);
    expect(send).toHaveBeenCalledTimes(1);
    expect((await json(await call("GET", `surveys/${survey.id}/summary`, { key: team.key }))).data.questions[0]).toMatchObject({ answered: 1, yes: 1 });
  });

  it("counts concurrent completions of one response once", async () => {
    const { team, survey, questions } = await activeSurvey([{ type: "nps", title: "Score" }]);
    const r = await startOk(survey.slug);
    await answer(survey.slug, r.id, questions[0].id, 9);
    const results = await Promise.all(Array.from({ length: 6 }, () => complete(survey.slug, r.id)));
    expect(results.map((x) => x.status)).toEqual(Array(6).fill(200));
    expect(await responseCount(survey.id)).toBe(1);
    const summary = (await json(await call("GET", `surveys/${survey.id}/summary`, { key: team.key }))).data;
    expect(summary.responses).toEqual({ total: 1, completed: 1, in_progress: 0 });
    expect(summary.questions[0]).toMatchObject({ answered: 1, promoters: 1 });
  });

  it("a store that fails mid-completion keeps nothing of it (the transaction rolls back whole)", async () => {
    const { survey, questions } = await activeSurvey([{ type: "yes_no", title: "Q" }]);
    const r = await startOk(survey.slug);
    await answer(survey.slug, r.id, questions[0].id, false);
    const store = surveyStore(env, survey.id);
    // The owner check fails inside the completion's transaction.
    await expect(
      runInDurableObject(store, (instance) =>
        (instance as unknown as SurveyStore).complete({ surveyId: survey.id, teamId: "another-team" }, r.id, { completionId: "x", at }, [
          { id: questions[0].id, type: "yes_no" },
        ]),
      ),
    ).rejects.toThrow(/owner/);
    expect(await store.get(r.id)).toMatchObject({ status: "in_progress", completion_id: null });
    expect(await store.counts()).toEqual({ inProgress: 1, completed: 0 });
    expect(await store.pendingPublishes()).toEqual([]);
  });

  it("answers 500 (the surveys product has no 503) when its store fails, with nothing stored", async () => {
    const { survey } = await activeSurvey([{ type: "yes_no", title: "Q" }]);
    const store = surveyStore(env, survey.id);
    await runInDurableObject(
      store,
      (instance) =>
        void Object.assign(instance, {
          start: () => {
            throw new Error("storage down");
          },
        }),
    );
    const res = await call("POST", `surveys/${survey.slug}/responses`, {});
    expect(res.status).toBe(500);
    expect(await json(res)).toEqual({ error: "Internal server error" });
    await runInDurableObject(store, (instance) => void Reflect.deleteProperty(instance, "start"));
    expect(await store.counts()).toEqual({ inProgress: 0, completed: 0 });
    expect(await store.page({}, 10, 0)).toEqual({ rows: [], total: 0 });
  });

  it("migrates D1 responses step by step: repeated, and after a step that stopped half-way, nothing is doubled", async () => {
    const one = await activeSurvey([
      { type: "choice", title: "Plan", options: ["free", "pro"] },
      { type: "rating", title: "Rate" },
    ]);
    const two = await activeSurvey([{ type: "yes_no", title: "Again?" }]);
    const [plan, rate] = one.questions;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(await legacyRow(one.team.teamId, one.survey.id, { status: "completed", answers: { [plan.id]: i % 2 ? "pro" : "free", [rate.id]: 1 + i } }));
    const open = await legacyRow(one.team.teamId, one.survey.id, { status: "in_progress", answers: { [plan.id]: "pro" }, next: rate.id });
    for (let i = 0; i < 3; i++) await legacyRow(two.team.teamId, two.survey.id, { status: "completed", answers: { [two.questions[0].id]: i === 0 } });
    await env.DB.prepare("INSERT INTO survey_summary_state (survey_id, team_id, in_progress, completed, rebuilt_at) VALUES (?, ?, 1, 5, ?)")
      .bind(one.survey.id, one.team.teamId, at)
      .run();
    await env.DB.prepare("UPDATE surveys SET response_count = 5 WHERE id = ?").bind(one.survey.id).run();

    // A step that imported its rows and stopped before deleting them from D1.
    const first = (await env.DB.prepare(
      "SELECT id, status, respondent, answers, path, next_question_id, generated_questions, completion_id, started_at, updated_at, completed_at FROM survey_responses WHERE id = ?",
    )
      .bind(ids[0])
      .first())!;
    await surveyStore(env, one.survey.id).importResponses(
      { surveyId: one.survey.id, teamId: one.team.teamId },
      [first as never],
      [
        { id: plan.id, type: "choice" },
        { id: rate.id, type: "rating" },
      ],
    );

    const steps = [];
    for (let i = 0; i < 10; i++) {
      const res = await admin("POST", "surveys/migrate-responses", { limit: 4 });
      expect(res.status).toBe(200);
      const step = (await json(res)).data;
      steps.push(step);
      if (!step.more) break;
    }
    expect(steps.reduce((n, s) => n + s.moved, 0)).toBe(9);
    expect(steps.at(-1)).toEqual({ moved: 0, dropped: 0, more: false });
    // Repeated after the end: nothing to do.
    expect((await json(await admin("POST", "surveys/migrate-responses", { limit: 4 }))).data).toEqual({ moved: 0, dropped: 0, more: false });
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM survey_responses").first<{ n: number }>())!.n).toBe(0);
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM survey_summary_state").first<{ n: number }>())!.n).toBe(0);

    expect(await surveyStore(env, one.survey.id).counts()).toEqual({ inProgress: 1, completed: 5 });
    const summary = (await json(await call("GET", `surveys/${one.survey.id}/summary`, { key: one.team.key }))).data;
    expect(summary.response_count).toBe(5);
    expect(summary.responses).toEqual({ total: 6, completed: 5, in_progress: 1 });
    expect(summary.questions[0]).toMatchObject({ answered: 5, counts: { free: 3, pro: 2 } });
    expect(summary.questions[1]).toMatchObject({ answered: 5, average: 3 });
    const list = await json(await call("GET", `surveys/${two.survey.id}/responses`, { key: two.team.key }));
    expect(list.pagination.total).toBe(3);
    expect(list.data[0]).toMatchObject({ respondent: { email: "old@example.com" }, status: "completed" });

    // The moved in-progress response goes on where it stood, and completes once.
    expect((await answer(one.survey.slug, open, rate.id, 4)).status).toBe(200);
    expect((await complete(one.survey.slug, open)).status).toBe(200);
    expect(await responseCount(one.survey.id)).toBe(6);
  });

  it("moves a response not migrated yet when its respondent comes back to it", async () => {
    const { team, survey, questions } = await activeSurvey([
      { type: "yes_no", title: "One" },
      { type: "yes_no", title: "Two" },
    ]);
    const id = await legacyRow(team.teamId, survey.id, { status: "in_progress", answers: { [questions[0].id]: true }, next: questions[1].id });
    const state = await json(await call("GET", `surveys/${survey.slug}/responses/${id}`));
    expect(state.data).toMatchObject({ id, status: "in_progress", answered_count: 1 });
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM survey_responses WHERE id = ?").bind(id).first<{ n: number }>())!.n).toBe(0);
    expect((await answer(survey.slug, id, questions[1].id, false)).status).toBe(200);
    expect((await complete(survey.slug, id)).status).toBe(200);
    expect(await responseCount(survey.id)).toBe(1);
    // Another survey's slug never moves it.
    const other = await activeSurvey([{ type: "yes_no", title: "Other" }]);
    const foreign = await legacyRow(team.teamId, survey.id, { status: "in_progress", answers: {}, path: [], next: questions[0].id });
    expect((await call("GET", `surveys/${other.survey.slug}/responses/${foreign}`)).status).toBe(404);
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM survey_responses WHERE id = ?").bind(foreign).first<{ n: number }>())!.n).toBe(1);
  });

  it("DELETE /surveys/:id wipes the store", async () => {
    const { team, survey, questions } = await activeSurvey([{ type: "yes_no", title: "Q" }]);
    const r = await startOk(survey.slug);
    await answer(survey.slug, r.id, questions[0].id, true);
    expect((await complete(survey.slug, r.id)).status).toBe(200);
    expect((await call("DELETE", `surveys/${survey.id}`, { key: team.key })).status).toBe(204);
    const store = surveyStore(env, survey.id);
    expect(await store.get(r.id)).toBeNull();
    expect(await store.counts()).toEqual({ inProgress: 0, completed: 0 });
    expect(await runInDurableObject(store, async (_o, state) => state.storage.getAlarm())).toBeNull();
  });
});

describe("survey store size", () => {
  it("measures the bytes a response takes in its store, from responses given through the public flow", async () => {
    // A typical survey: an NPS, a choice, a multi-choice, a yes/no and a short free text.
    const { survey, questions, team } = await activeSurvey([
      { type: "nps", title: "How likely are you to recommend us?" },
      { type: "choice", title: "Plan", options: ["free", "pro", "scale"] },
      { type: "multi_choice", title: "Which products?", options: ["logs", "relay", "mail", "push", "surveys"] },
      { type: "yes_no", title: "Would you buy again?" },
      { type: "text", title: "Anything else?" },
    ]);
    const values = (i: number) => [
      i % 11,
      ["free", "pro", "scale"][i % 3],
      ["logs", "mail", "surveys"].slice(0, 1 + (i % 3)),
      i % 2 === 0,
      `Works well for us, ticket ${i}`,
    ];
    for (let i = 0; i < 10; i++) {
      const r = await startOk(survey.slug);
      for (const [n, q] of questions.entries()) expect((await answer(survey.slug, r.id, q.id, values(i)[n])).status).toBe(200);
      expect((await complete(survey.slug, r.id)).status).toBe(200);
    }
    const store = surveyStore(env, survey.id);
    const real = (await store.page({}, 10, 0)).rows;
    // Those rows copied (new ids) to 5,000 responses: the growth of the object's database per response,
    // indexes, counters and page overhead included.
    const size = () => runInDurableObject(store, async (_o, state) => state.storage.sql.databaseSize);
    const before = await size();
    const copies = Array.from({ length: 5_000 }, (_, i) => ({ ...real[i % real.length], id: crypto.randomUUID() }));
    await store.importResponses(
      { surveyId: survey.id, teamId: team.teamId },
      copies,
      questions.map((q: { id: string; type: string }) => ({ id: q.id, type: q.type })),
    );
    const perResponse = ((await size()) - before) / copies.length;
    const rowBytes =
      real.reduce((n, r) => n + Object.values(r).reduce<number>((m, v) => m + (typeof v === "string" ? new TextEncoder().encode(v).length : 8), 0), 0) /
      real.length;
    console.log(JSON.stringify({ msg: "survey store size", row_bytes: Math.round(rowBytes), stored_bytes_per_response: Math.round(perResponse) }));
    expect(perResponse).toBeGreaterThan(rowBytes);
    expect(perResponse).toBeLessThan(4 * rowBytes);
  });
});
