// The builder's happy paths: surveys, list and pagination, templates, status actions, sections,
// questions, reorder, duplicate with remapping, delete with cascade.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, json, setupTeam } from "../../helpers/api";
import { activeSurvey, addQuestion, answer, complete, createSurvey, slug, startOk } from "./helpers";

describe("surveys", () => {
  it("creates a draft survey with the spec's fields", async () => {
    const team = await setupTeam();
    const s = slug();
    const res = await call("POST", "surveys", { key: team.key, body: { name: "NPS Q3", slug: s, settings: { theme: "dark" } } });
    expect(res.status).toBe(201);
    const { data } = await json(res);
    expect(data).toEqual({
      id: expect.any(String),
      name: "NPS Q3",
      slug: s,
      mode: "manual",
      status: "draft",
      settings: { theme: "dark" },
      ai_config: {},
      response_count: 0,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(data.sections).toBeUndefined();
  });

  it("creates an AI-mode survey keeping its ai_config", async () => {
    const team = await setupTeam();
    const data = await createSurvey(team.key, { mode: "ai", ai_config: { goal: "Understand churn", target_questions: 3, tone: "friendly" } });
    expect(data.mode).toBe("ai");
    expect(data.ai_config).toEqual({ goal: "Understand churn", target_questions: 3, tone: "friendly" });
  });

  it("lists with pagination, status filter and per_page bounds", async () => {
    const team = await setupTeam();
    for (let i = 0; i < 3; i++) await createSurvey(team.key);
    const { survey } = await activeSurvey([{ type: "text", title: "Hi" }], {}, team);

    let res = await call("GET", "surveys?per_page=2", { key: team.key });
    expect(res.status).toBe(200);
    let body = await json(res);
    expect(body.data).toHaveLength(2);
    expect(body.data[0].sections).toBeUndefined();
    expect(body.pagination).toEqual({ page: 1, per_page: 2, total: 4, total_pages: 2 });

    res = await call("GET", "surveys?per_page=2&page=2", { key: team.key });
    body = await json(res);
    expect(body.data).toHaveLength(2);
    expect(body.pagination.page).toBe(2);

    res = await call("GET", "surveys?status=active", { key: team.key });
    body = await json(res);
    expect(body.data.map((s: { id: string }) => s.id)).toEqual([survey.id]);
    expect(body.pagination).toEqual({ page: 1, per_page: 20, total: 1, total_pages: 1 });

    res = await call("GET", "surveys?per_page=100", { key: team.key });
    expect(res.status).toBe(200);
  });

  it("serves the six templates at /surveys/templates", async () => {
    const team = await setupTeam();
    const res = await call("GET", "surveys/templates", { key: team.key });
    expect(res.status).toBe(200);
    const { data } = await json(res);
    expect(data.map((t: { name: string }) => t.name)).toEqual([
      "Net Promoter Score (NPS)",
      "Customer Satisfaction (CSAT)",
      "Customer Effort Score (CES)",
      "Product Feedback",
      "Onboarding",
      "Employee Engagement",
    ]);
    for (const t of data) expect(Object.keys(t).sort()).toEqual(["description", "id", "name"]);
  });

  it("gets a survey with sections and questions ordered by position", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    const s2 = await json(await call("POST", `surveys/${survey.id}/sections`, { key: team.key, body: { title: "B", position: 2 } }));
    const s1 = await json(await call("POST", `surveys/${survey.id}/sections`, { key: team.key, body: { title: "A", description: "first", position: 1 } }));
    const q2 = await addQuestion(team.key, survey.id, { type: "text", title: "Second", position: 2, section_id: s1.data.id });
    const q1 = await addQuestion(team.key, survey.id, { type: "nps", title: "First", position: 1 });
    const res = await call("GET", `surveys/${survey.id}`, { key: team.key });
    expect(res.status).toBe(200);
    const { data } = await json(res);
    expect(data.sections.map((s: { id: string }) => s.id)).toEqual([s1.data.id, s2.data.id]);
    expect(data.sections[0]).toEqual({ id: s1.data.id, survey_id: survey.id, title: "A", description: "first", position: 1, created_at: expect.any(String) });
    expect(data.questions.map((q: { id: string }) => q.id)).toEqual([q1.id, q2.id]);
    expect(data.questions[1]).toMatchObject({ section_id: s1.data.id, survey_id: survey.id, options: [], version: 1, description: null });
  });

  it("patches name, slug, settings and mode", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    const newSlug = slug("renamed");
    let res = await call("PATCH", `surveys/${survey.id}`, { key: team.key, body: { name: "Renamed", slug: newSlug, settings: { a: 1 } } });
    expect(res.status).toBe(200);
    let { data } = await json(res);
    expect(data).toMatchObject({ name: "Renamed", slug: newSlug, settings: { a: 1 }, status: "draft" });
    res = await call("PATCH", `surveys/${survey.id}`, { key: team.key, body: { mode: "ai", ai_config: { goal: "Learn" } } });
    ({ data } = await json(res));
    expect(data).toMatchObject({ mode: "ai", ai_config: { goal: "Learn" } });
    res = await call("PATCH", `surveys/${survey.id}`, { key: team.key, body: { mode: "manual" } });
    ({ data } = await json(res));
    expect(data).toMatchObject({ mode: "manual", ai_config: {} });
    // The same slug again is not a collision with itself.
    res = await call("PATCH", `surveys/${survey.id}`, { key: team.key, body: { slug: newSlug } });
    expect(res.status).toBe(200);
  });

  it("walks the status table: activate, close, reopen; PATCH status follows the same rules", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    await addQuestion(team.key, survey.id, { type: "text", title: "Q", position: 1 });
    let res = await call("POST", `surveys/${survey.id}/activate`, { key: team.key });
    expect(res.status).toBe(200);
    expect((await json(res)).data.status).toBe("active");
    // Activating an active survey is a no-op.
    res = await call("POST", `surveys/${survey.id}/activate`, { key: team.key });
    expect(res.status).toBe(200);
    expect((await json(res)).data.status).toBe("active");
    res = await call("POST", `surveys/${survey.id}/close`, { key: team.key });
    expect(res.status).toBe(200);
    expect((await json(res)).data.status).toBe("closed");
    res = await call("POST", `surveys/${survey.id}/close`, { key: team.key });
    expect((await json(res)).data.status).toBe("closed");
    res = await call("POST", `surveys/${survey.id}/activate`, { key: team.key });
    expect((await json(res)).data.status).toBe("active");
    res = await call("PATCH", `surveys/${survey.id}`, { key: team.key, body: { status: "closed" } });
    expect(res.status).toBe(200);
    expect((await json(res)).data.status).toBe("closed");
    res = await call("PATCH", `surveys/${survey.id}`, { key: team.key, body: { status: "active" } });
    expect((await json(res)).data.status).toBe("active");
  });

  it("increments a question's version only when its survey is active", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    const q = await addQuestion(team.key, survey.id, { type: "choice", title: "Pick", position: 1, options: ["a", "b"] });
    let res = await call("PATCH", `surveys/${survey.id}/questions/${q.id}`, { key: team.key, body: { title: "Pick one" } });
    expect((await json(res)).data.version).toBe(1);
    await call("POST", `surveys/${survey.id}/activate`, { key: team.key });
    res = await call("PATCH", `surveys/${survey.id}/questions/${q.id}`, { key: team.key, body: { options: ["a", "b", "c"] } });
    expect(res.status).toBe(200);
    const { data } = await json(res);
    expect(data).toMatchObject({ version: 2, options: ["a", "b", "c"], title: "Pick one" });
    res = await call("GET", `surveys/${survey.id}/questions`, { key: team.key });
    expect((await json(res)).data[0].version).toBe(2);
  });

  it("does section CRUD; deleting a section keeps its questions with section_id null", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    let res = await call("POST", `surveys/${survey.id}/sections`, { key: team.key, body: { position: 1 } });
    expect(res.status).toBe(201);
    const section = (await json(res)).data;
    expect(section).toMatchObject({ title: null, description: null, position: 1, survey_id: survey.id });
    res = await call("PATCH", `surveys/${survey.id}/sections/${section.id}`, { key: team.key, body: { title: "About you", position: 3 } });
    expect(res.status).toBe(200);
    expect((await json(res)).data).toMatchObject({ title: "About you", position: 3 });
    const q = await addQuestion(team.key, survey.id, { type: "email", title: "Email", position: 1, section_id: section.id });
    res = await call("GET", `surveys/${survey.id}/sections`, { key: team.key });
    expect((await json(res)).data).toHaveLength(1);
    res = await call("DELETE", `surveys/${survey.id}/sections/${section.id}`, { key: team.key });
    expect(res.status).toBe(204);
    res = await call("GET", `surveys/${survey.id}/questions`, { key: team.key });
    const questions = (await json(res)).data;
    expect(questions).toHaveLength(1);
    expect(questions[0]).toMatchObject({ id: q.id, section_id: null });
    res = await call("GET", `surveys/${survey.id}/sections`, { key: team.key });
    expect((await json(res)).data).toEqual([]);
  });

  it("creates every question type with its settings", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    const bodies = [
      { type: "text", settings: { multiline: true } },
      { type: "email" },
      { type: "choice", options: ["a", "b"] },
      { type: "multi_choice", options: ["a", "b"] },
      { type: "rating" },
      { type: "nps" },
      { type: "scale", settings: { min: 1, max: 7, labels: ["low", "high"] } },
      { type: "slider", settings: { min: 0, max: 100 } },
      { type: "matrix", settings: { rows: ["speed", "price"], columns: ["bad", "good"] } },
      { type: "ranking", options: ["x", "y", "z"] },
      { type: "yes_no" },
      { type: "date" },
    ];
    for (const [i, body] of bodies.entries()) {
      const q = await addQuestion(team.key, survey.id, { title: `Q${i}`, position: i + 1, description: "help", ...body });
      expect(q).toMatchObject({ type: body.type, options: body.options ?? [], settings: body.settings ?? {}, description: "help" });
    }
    const res = await call("GET", `surveys/${survey.id}/questions`, { key: team.key });
    expect((await json(res)).data.map((q: { type: string }) => q.type)).toEqual(bodies.map((b) => b.type));
  });

  it("deletes a question", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    const q = await addQuestion(team.key, survey.id, { type: "text", title: "Q", position: 1 });
    const res = await call("DELETE", `surveys/${survey.id}/questions/${q.id}`, { key: team.key });
    expect(res.status).toBe(204);
    expect((await json(await call("GET", `surveys/${survey.id}/questions`, { key: team.key }))).data).toEqual([]);
  });

  it("reorders every question atomically", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    const a = await addQuestion(team.key, survey.id, { type: "text", title: "A", position: 1 });
    const b = await addQuestion(team.key, survey.id, { type: "text", title: "B", position: 2 });
    const c = await addQuestion(team.key, survey.id, { type: "text", title: "C", position: 3 });
    const res = await call("POST", `surveys/${survey.id}/questions/reorder`, { key: team.key, body: { question_ids: [c.id, a.id, b.id] } });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ ok: true });
    const list = (await json(await call("GET", `surveys/${survey.id}/questions`, { key: team.key }))).data;
    expect(list.map((q: { id: string; position: number }) => [q.id, q.position])).toEqual([
      [c.id, 1],
      [a.id, 2],
      [b.id, 3],
    ]);
  });

  it("duplicates a survey with remapped sections and branching, no responses or webhooks", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key, { settings: { theme: "dark" }, mode: "ai", ai_config: { goal: "g" } });
    const section = (await json(await call("POST", `surveys/${survey.id}/sections`, { key: team.key, body: { title: "S", position: 1 } }))).data;
    const end = await addQuestion(team.key, survey.id, { type: "text", title: "End", position: 3 });
    const mid = await addQuestion(team.key, survey.id, { type: "text", title: "Mid", position: 2 });
    const first = await addQuestion(team.key, survey.id, {
      type: "yes_no",
      title: "Skip?",
      position: 1,
      section_id: section.id,
      branching: { rules: [{ if: { equals: true }, then: { go_to_question_id: end.id } }], default: { go_to_question_id: mid.id } },
    });
    await call("POST", `surveys/${survey.id}/activate`, { key: team.key });
    await call("POST", `surveys/${survey.id}/webhooks`, { key: team.key, body: { url: "http://127.0.0.1:9/hook" } });
    const r = await startOk(survey.slug);
    await answer(survey.slug, r.id, first.id, true);

    const res = await call("POST", `surveys/${survey.id}/duplicate`, { key: team.key });
    expect(res.status).toBe(201);
    const copy = (await json(res)).data;
    expect(copy).toMatchObject({ status: "draft", response_count: 0, settings: { theme: "dark" }, mode: "ai", ai_config: { goal: "g" }, name: survey.name });
    expect(copy.id).not.toBe(survey.id);
    expect(copy.slug).toBe(`${survey.slug}-copy`);
    expect(copy.sections).toHaveLength(1);
    expect(copy.sections[0].id).not.toBe(section.id);
    expect(copy.questions).toHaveLength(3);
    const ids = new Set([first.id, mid.id, end.id]);
    for (const q of copy.questions) {
      expect(ids.has(q.id)).toBe(false);
      expect(q.survey_id).toBe(copy.id);
    }
    const [cFirst, cMid, cEnd] = copy.questions;
    expect(cFirst.section_id).toBe(copy.sections[0].id);
    expect(cFirst.branching).toEqual({ rules: [{ if: { equals: true }, then: { go_to_question_id: cEnd.id } }], default: { go_to_question_id: cMid.id } });
    // The stored copy is what the API answered.
    const stored = (await json(await call("GET", `surveys/${copy.id}`, { key: team.key }))).data;
    expect(stored.questions).toEqual(copy.questions);
    expect((await json(await call("GET", `surveys/${copy.id}/responses`, { key: team.key }))).data).toEqual([]);
    expect((await json(await call("GET", `surveys/${copy.id}/webhooks`, { key: team.key }))).data).toEqual([]);
    // A second copy gets the next free slug.
    const again = (await json(await call("POST", `surveys/${survey.id}/duplicate`, { key: team.key }))).data;
    expect(again.slug).toBe(`${survey.slug}-copy-2`);
  });

  it("deletes a survey with everything it owns", async () => {
    const { team, survey, questions } = await activeSurvey([{ type: "yes_no", title: "Q" }]);
    await call("POST", `surveys/${survey.id}/sections`, { key: team.key, body: { position: 1 } });
    await call("POST", `surveys/${survey.id}/webhooks`, { key: team.key, body: { url: "http://127.0.0.1:9/hook" } });
    const r = await startOk(survey.slug);
    await answer(survey.slug, r.id, questions[0].id, true);
    await complete(survey.slug, r.id);
    const res = await call("DELETE", `surveys/${survey.id}`, { key: team.key });
    expect(res.status).toBe(204);
    expect((await call("GET", `surveys/${survey.id}`, { key: team.key })).status).toBe(404);
    for (const table of ["survey_sections", "survey_questions", "survey_responses", "survey_webhooks", "survey_webhook_deliveries"]) {
      const row = await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE survey_id = ?`).bind(survey.id).first<{ n: number }>();
      expect({ table, n: row?.n }).toEqual({ table, n: 0 });
    }
    // The slug is free again.
    expect((await call("POST", "surveys", { key: team.key, body: { name: "x", slug: survey.slug } })).status).toBe(201);
  });
});
