// Issue 23, finding 1: every stored free-form JSON value has a byte cap (DESIGN.md "Stored free-form
// JSON has a byte cap"): survey and question settings and options, ai_config, branching, push
// credentials and notification data (mail headers: test/products/mail/mail.errors.test.ts). Past
// 16 KB of UTF-8 JSON each answers 422 in the product's shape and stores nothing; a duplicate is
// held to the same caps for every value it copies.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { FREE_FORM_JSON_BYTES } from "../../src/platform/sizes";
import { call, json, setupTeam } from "../helpers/api";
import { addQuestion, createSurvey, slug } from "../products/surveys/helpers";
import { createApp } from "../products/push/push-helpers";

/** A JSON object of about `bytes` bytes: one free-form key whose value is `é` (2 bytes each). */
function objectOf(bytes: number, key = "note"): Record<string, string> {
  return { [key]: "é".repeat(Math.ceil(bytes / 2)) };
}
const OVER = FREE_FORM_JSON_BYTES + 64;
const UNDER = FREE_FORM_JSON_BYTES - 64;
const cap = "must be at most 16 KB of JSON";

async function count(sql: string, ...params: unknown[]): Promise<number> {
  return (await env.DB.prepare(sql)
    .bind(...params)
    .first<{ n: number }>())!.n;
}

describe("surveys", () => {
  it("survey settings and ai_config past 16 KB answer 422 `{error, errors}` on create and on PATCH; nothing is stored", async () => {
    const team = await setupTeam();
    const create = (body: Record<string, unknown>) => call("POST", "surveys", { key: team.key, body: { name: "s", slug: slug(), ...body } });
    let res = await create({ settings: objectOf(OVER) });
    expect(res.status).toBe(422);
    expect((await json(res)).errors).toEqual({ settings: [cap] });
    res = await create({ mode: "ai", ai_config: { goal: "learn", ...objectOf(OVER, "extra") } });
    expect(res.status).toBe(422);
    expect((await json(res)).errors).toEqual({ ai_config: [cap] });
    expect(await count("SELECT COUNT(*) AS n FROM surveys WHERE team_id = ?", team.teamId)).toBe(0);

    const survey = await createSurvey(team.key, { settings: objectOf(UNDER) });
    res = await call("PATCH", `surveys/${survey.id}`, { key: team.key, body: { settings: objectOf(OVER) } });
    expect(res.status).toBe(422);
    expect((await json(res)).errors).toEqual({ settings: [cap] });
    const stored = await env.DB.prepare("SELECT length(settings) AS n FROM surveys WHERE id = ?").bind(survey.id).first<{ n: number }>();
    expect(stored!.n).toBeLessThan(FREE_FORM_JSON_BYTES);
  });

  it("question settings, options and branching past 16 KB answer 422 on create and on PATCH; nothing is stored", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    const post = (body: Record<string, unknown>) =>
      call("POST", `surveys/${survey.id}/questions`, { key: team.key, body: { type: "text", title: "Q", position: 1, ...body } });
    const cases: Array<[string, Record<string, unknown>]> = [
      ["settings", { settings: objectOf(OVER) }],
      // 100 options of 200 two-byte characters: within the per-option limits, 40 KB together.
      ["options", { type: "choice", options: Array.from({ length: 100 }, (_, i) => `${i}${"é".repeat(199)}`) }],
      ["branching", { branching: { rules: [{ if: { equals: "é".repeat(OVER / 2) }, then: { skip_to_end: true } }] } }],
    ];
    for (const [field, body] of cases) {
      const res = await post(body);
      expect(res.status, field).toBe(422);
      expect((await json(res)).errors, field).toEqual({ [field]: [cap] });
    }
    expect(await count("SELECT COUNT(*) AS n FROM survey_questions WHERE survey_id = ?", survey.id)).toBe(0);

    const question = await addQuestion(team.key, survey.id, { type: "text", title: "Q", position: 1, settings: objectOf(UNDER) });
    const res = await call("PATCH", `surveys/${survey.id}/questions/${question.id}`, { key: team.key, body: { settings: objectOf(OVER) } });
    expect(res.status).toBe(422);
    expect((await json(res)).errors).toEqual({ settings: [cap] });
  });

  it("regression: a duplicate is a create; a survey holding values past the caps (stored before them) is not copied", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    const question = await addQuestion(team.key, survey.id, { type: "text", title: "Q", position: 1 });
    // Rows written before the caps existed: up to D1's 1 MB per value.
    await env.DB.prepare("UPDATE survey_questions SET settings = ? WHERE id = ?")
      .bind(JSON.stringify(objectOf(200_000)), question.id)
      .run();
    await env.DB.prepare("UPDATE surveys SET settings = ? WHERE id = ?")
      .bind(JSON.stringify(objectOf(OVER)), survey.id)
      .run();
    const res = await call("POST", `surveys/${survey.id}/duplicate`, { key: team.key });
    expect(res.status).toBe(422);
    expect((await json(res)).errors).toEqual({ settings: [cap], "questions.0.settings": [cap] });
    expect(await count("SELECT COUNT(*) AS n FROM surveys WHERE team_id = ?", team.teamId)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM survey_questions WHERE team_id = ?", team.teamId)).toBe(1);

    // Within the caps the duplicate goes through, with its copies.
    await env.DB.prepare("UPDATE survey_questions SET settings = '{}' WHERE id = ?").bind(question.id).run();
    await env.DB.prepare("UPDATE surveys SET settings = '{}' WHERE id = ?").bind(survey.id).run();
    const copied = await call("POST", `surveys/${survey.id}/duplicate`, { key: team.key });
    expect(copied.status).toBe(201);
    expect((await json(copied)).data.questions).toHaveLength(1);
  });
});

describe("push", () => {
  it("credential objects or strings and notification data past 16 KB answer 422 `{error, details}`; nothing is stored", async () => {
    const team = await setupTeam();
    for (const field of ["fcm_credentials", "apns_credentials"]) {
      for (const value of [objectOf(OVER), "é".repeat(OVER / 2)]) {
        const res = await call("POST", "push/apps", { key: team.key, body: { name: "app", [field]: value } });
        expect(res.status, field).toBe(422);
        const body = await json(res);
        expect(body.error).toBe("Validation failed");
        expect(Object.keys(body.details), field).toEqual([field]);
      }
    }
    expect(await count("SELECT COUNT(*) AS n FROM push_apps WHERE team_id = ?", team.teamId)).toBe(0);

    const app = await createApp(team.key, { name: "app", fcm_credentials: objectOf(UNDER) });
    const patched = await call("PATCH", `push/apps/${app.id}`, { key: team.key, body: { apns_credentials: objectOf(OVER) } });
    expect(patched.status).toBe(422);
    const res = await call("POST", `push/apps/${app.id}/notifications`, { key: team.key, body: { title: "t", body: "b", data: objectOf(OVER) } });
    expect(res.status).toBe(422);
    expect((await json(res)).details).toEqual({ data: [cap] });
    expect(await count("SELECT COUNT(*) AS n FROM push_notifications WHERE team_id = ?", team.teamId)).toBe(0);
  });
});
