// Every error the builder answers, in the survey body shape: 404s, 422 with `errors`, 400 on a
// partial reorder, and the definition rules of each question type.
import { describe, expect, it } from "vitest";
import { call, expectError, json, setupTeam } from "../../helpers/api";
import { addQuestion, createSurvey, slug } from "./helpers";

const NOT_FOUND = { error: "Survey not found" };

describe("survey errors", () => {
  it("answers 422 errors.slug on a slug collision, in the team and across teams", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    await expectError(await call("POST", "surveys", { key: team.key, body: { name: "Other", slug: survey.slug } }), 422, {
      error: "Validation failed",
      errors: { slug: ["has already been taken"] },
    });
    const other = await createSurvey(team.key);
    await expectError(await call("PATCH", `surveys/${other.id}`, { key: team.key, body: { slug: survey.slug } }), 422, {
      error: "Validation failed",
      errors: { slug: ["has already been taken"] },
    });
    // Slugs are global: public URLs carry only the slug.
    const team2 = await setupTeam();
    await expectError(await call("POST", "surveys", { key: team2.key, body: { name: "Other", slug: survey.slug } }), 422, {
      error: "Validation failed",
      errors: { slug: ["has already been taken"] },
    });
  });

  it("validates the create body field by field", async () => {
    const team = await setupTeam();
    let res = await call("POST", "surveys", { key: team.key, body: {} });
    expect(res.status).toBe(422);
    let body = await json(res);
    expect(body.error).toBe("Validation failed");
    expect(Object.keys(body.errors).sort()).toEqual(["name", "slug"]);
    res = await call("POST", "surveys", { key: team.key, body: { name: "x", slug: "Not URL safe!" } });
    body = await json(res);
    expect(res.status).toBe(422);
    expect(body.errors.slug[0]).toMatch(/lowercase/);
    res = await call("POST", "surveys", { key: team.key, body: { name: "x", slug: slug(), mode: "robot" } });
    expect(res.status).toBe(422);
    expect((await json(res)).errors.mode).toBeDefined();
    res = await call("POST", "surveys", { key: team.key, body: { name: "x", slug: slug(), settings: "dark" } });
    expect((await json(res)).errors.settings).toBeDefined();
  });

  it("requires ai_config.goal in AI mode and an empty ai_config in manual mode", async () => {
    const team = await setupTeam();
    await expectError(await call("POST", "surveys", { key: team.key, body: { name: "x", slug: slug(), mode: "ai" } }), 422, {
      error: "Validation failed",
      errors: { "ai_config.goal": ["is required when mode is ai"] },
    });
    await expectError(await call("POST", "surveys", { key: team.key, body: { name: "x", slug: slug(), mode: "ai", ai_config: { tone: "formal" } } }), 422, {
      error: "Validation failed",
      errors: { "ai_config.goal": ["is required when mode is ai"] },
    });
    await expectError(await call("POST", "surveys", { key: team.key, body: { name: "x", slug: slug(), ai_config: { goal: "g" } } }), 422, {
      error: "Validation failed",
      errors: { ai_config: ["must be empty when mode is manual"] },
    });
    const res = await call("POST", "surveys", { key: team.key, body: { name: "x", slug: slug(), mode: "ai", ai_config: { goal: "g", target_questions: 50 } } });
    expect(res.status).toBe(422);
    expect((await json(res)).errors["ai_config.target_questions"]).toBeDefined();
    const manual = await createSurvey(team.key);
    await expectError(await call("PATCH", `surveys/${manual.id}`, { key: team.key, body: { mode: "ai" } }), 422, {
      error: "Validation failed",
      errors: { "ai_config.goal": ["is required when mode is ai"] },
    });
  });

  it("refuses per_page over 100 and a bad page or status", async () => {
    const team = await setupTeam();
    for (const q of ["per_page=101", "per_page=0", "page=0", "page=x", "status=open"]) {
      const res = await call("GET", `surveys?${q}`, { key: team.key });
      expect({ q, status: res.status }).toEqual({ q, status: 422 });
      expect((await json(res)).error).toBe("Validation failed");
    }
  });

  it("answers 404 for unknown survey, section and question ids", async () => {
    const team = await setupTeam();
    const id = crypto.randomUUID();
    await expectError(await call("GET", `surveys/${id}`, { key: team.key }), 404, NOT_FOUND);
    await expectError(await call("GET", "surveys/not-a-uuid", { key: team.key }), 404, NOT_FOUND);
    await expectError(await call("PATCH", `surveys/${id}`, { key: team.key, body: { name: "x" } }), 404, NOT_FOUND);
    await expectError(await call("DELETE", `surveys/${id}`, { key: team.key }), 404, NOT_FOUND);
    await expectError(await call("POST", `surveys/${id}/activate`, { key: team.key }), 404, NOT_FOUND);
    await expectError(await call("GET", `surveys/${id}/questions`, { key: team.key }), 404, NOT_FOUND);
    const survey = await createSurvey(team.key);
    await expectError(await call("PATCH", `surveys/${survey.id}/sections/${id}`, { key: team.key, body: { title: "x" } }), 404, { error: "Section not found" });
    await expectError(await call("DELETE", `surveys/${survey.id}/sections/${id}`, { key: team.key }), 404, { error: "Section not found" });
    await expectError(await call("PATCH", `surveys/${survey.id}/questions/${id}`, { key: team.key, body: { title: "x" } }), 404, {
      error: "Question not found",
    });
    await expectError(await call("DELETE", `surveys/${survey.id}/questions/${id}`, { key: team.key }), 404, { error: "Question not found" });
    await expectError(await call("DELETE", `surveys/${survey.id}/webhooks/${id}`, { key: team.key }), 404, { error: "Webhook not found" });
  });

  it("answers 404 for a question or section of another survey of the same team", async () => {
    const team = await setupTeam();
    const a = await createSurvey(team.key);
    const b = await createSurvey(team.key);
    const q = await addQuestion(team.key, a.id, { type: "text", title: "Q", position: 1 });
    const s = (await json(await call("POST", `surveys/${a.id}/sections`, { key: team.key, body: { position: 1 } }))).data;
    await expectError(await call("PATCH", `surveys/${b.id}/questions/${q.id}`, { key: team.key, body: { title: "x" } }), 404, { error: "Question not found" });
    await expectError(await call("DELETE", `surveys/${b.id}/sections/${s.id}`, { key: team.key }), 404, { error: "Section not found" });
  });

  it("refuses to activate a survey with zero questions", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    const body = { error: "Validation failed", errors: { questions: ["a survey needs at least one question to be activated"] } };
    await expectError(await call("POST", `surveys/${survey.id}/activate`, { key: team.key }), 422, body);
    await expectError(await call("PATCH", `surveys/${survey.id}`, { key: team.key, body: { status: "active" } }), 422, body);
    const after = (await json(await call("GET", `surveys/${survey.id}`, { key: team.key }))).data;
    expect(after.status).toBe("draft");
  });

  it("refuses to close a draft and to go back to draft", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    await expectError(await call("POST", `surveys/${survey.id}/close`, { key: team.key }), 422, {
      error: "Validation failed",
      errors: { status: ["a draft survey cannot be closed; activate it first"] },
    });
    await addQuestion(team.key, survey.id, { type: "text", title: "Q", position: 1 });
    await call("POST", `surveys/${survey.id}/activate`, { key: team.key });
    await expectError(await call("PATCH", `surveys/${survey.id}`, { key: team.key, body: { status: "draft" } }), 422, {
      error: "Validation failed",
      errors: { status: ["cannot change from active back to draft"] },
    });
  });

  it("answers 400 on a partial, padded or duplicated reorder list and changes nothing", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    const a = await addQuestion(team.key, survey.id, { type: "text", title: "A", position: 1 });
    const b = await addQuestion(team.key, survey.id, { type: "text", title: "B", position: 2 });
    const body = { error: "question_ids must list every question of the survey exactly once" };
    for (const ids of [[b.id], [b.id, a.id, crypto.randomUUID()], [b.id, b.id], [b.id, b.id, a.id], []]) {
      await expectError(await call("POST", `surveys/${survey.id}/questions/reorder`, { key: team.key, body: { question_ids: ids } }), 400, body);
    }
    const list = (await json(await call("GET", `surveys/${survey.id}/questions`, { key: team.key }))).data;
    expect(list.map((q: { id: string; position: number }) => [q.id, q.position])).toEqual([
      [a.id, 1],
      [b.id, 2],
    ]);
    const res = await call("POST", `surveys/${survey.id}/questions/reorder`, { key: team.key, body: { question_ids: "nope" } });
    expect(res.status).toBe(422);
  });

  it("validates question definitions per type", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    const other = await createSurvey(team.key);
    const foreign = await addQuestion(team.key, other.id, { type: "text", title: "elsewhere", position: 1 });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: "choice" }, "options"],
      [{ type: "multi_choice", options: [] }, "options"],
      [{ type: "ranking" }, "options"],
      [{ type: "choice", options: ["a", "a"] }, "options"],
      [{ type: "text", options: ["a"] }, "options"],
      [{ type: "scale" }, "settings.min"],
      [{ type: "scale", settings: { min: 5, max: 5 } }, "settings.max"],
      [{ type: "slider", settings: { min: 10, max: 1 } }, "settings.max"],
      [{ type: "slider", settings: { min: 1.5, max: 10 } }, "settings.min"],
      [{ type: "matrix", settings: { rows: ["r"] } }, "settings.columns"],
      [{ type: "matrix", settings: { rows: [], columns: ["c"] } }, "settings.rows"],
      [{ type: "text", settings: { multiline: "yes" } }, "settings.multiline"],
      [{ type: "wat" }, "type"],
      [{ type: "text", title: "" }, "title"],
      [{ type: "text", position: 0 }, "position"],
      [{ type: "text", position: 1.5 }, "position"],
      [{ type: "text", section_id: crypto.randomUUID() }, "section_id"],
      [{ type: "text", branching: { rules: [{ if: { equals: "x" }, then: { go_to_question_id: foreign.id } }] } }, "branching"],
      [{ type: "text", branching: { rules: [{ if: { equals: "x" }, then: { jump: 1 } }] } }, "branching.rules.0.then"],
      [{ type: "text", branching: { default: { go_to_question_id: crypto.randomUUID() } } }, "branching"],
    ];
    for (const [body, field] of cases) {
      const res = await call("POST", `surveys/${survey.id}/questions`, { key: team.key, body: { title: "Q", position: 1, ...body } });
      const json_ = await json(res);
      expect({
        body,
        status: res.status,
        error: json_.error,
        has: Object.keys(json_.errors ?? {}).some((k) => k === field || k.startsWith(`${field}.`)),
      }).toEqual({
        body,
        status: 422,
        error: "Validation failed",
        has: true,
      });
    }
    expect((await json(await call("GET", `surveys/${survey.id}/questions`, { key: team.key }))).data).toEqual([]);
  });

  it("validates a question patch against the merged definition", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    const q = await addQuestion(team.key, survey.id, { type: "text", title: "Q", position: 1 });
    let res = await call("PATCH", `surveys/${survey.id}/questions/${q.id}`, { key: team.key, body: { type: "choice" } });
    expect(res.status).toBe(422);
    expect((await json(res)).errors.options).toEqual(["is required for type choice"]);
    res = await call("PATCH", `surveys/${survey.id}/questions/${q.id}`, {
      key: team.key,
      body: { branching: { rules: [{ if: { equals: "a" }, then: { go_to_question_id: q.id } }] } },
    });
    expect(res.status).toBe(422);
    expect((await json(res)).errors.branching).toEqual(["must not jump to the question itself"]);
    res = await call("PATCH", `surveys/${survey.id}/questions/${q.id}`, { key: team.key, body: { type: "choice", options: ["a", "b"] } });
    expect(res.status).toBe(200);
  });

  it("answers 400 on malformed JSON", async () => {
    const team = await setupTeam();
    const res = await call("POST", "surveys", { key: team.key, raw: "{not json", headers: { "content-type": "application/json" } });
    expect(res.status).toBe(400);
    expect(Object.keys(await json(res))).toEqual(["error"]);
  });

  it("refuses webhook URLs the SSRF guard rejects", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    let res = await call("POST", `surveys/${survey.id}/webhooks`, { key: team.key, body: { url: "ftp://example.com/x" } });
    expect(res.status).toBe(422);
    expect((await json(res)).errors.url).toBeDefined();
    res = await call("POST", `surveys/${survey.id}/webhooks`, { key: team.key, body: { url: "not a url" } });
    expect(res.status).toBe(422);
    res = await call("POST", `surveys/${survey.id}/webhooks`, { key: team.key, body: { url: "https://example.com/x", events: ["response.deleted"] } });
    expect(res.status).toBe(422);
  });
});
