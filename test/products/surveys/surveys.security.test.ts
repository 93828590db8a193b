// Tenancy, scopes and rate limits: another team's ids answer 404 on every route, scopes answer
// 403, the public flow needs no credential and is limited by the strict bucket of the survey's team.
import { describe, expect, it } from "vitest";
import { setClock } from "../../../src/platform/clock";
import { addKey, call, expectError, json, setupTeam } from "../../helpers/api";
import { activeSurvey, addQuestion, createSurvey, start, startOk } from "./helpers";

describe("survey security", () => {
  it("answers 404 for another team's survey, section, question and webhook on every route", async () => {
    const { team: owner, survey, questions } = await activeSurvey([{ type: "text", title: "Q" }]);
    const section = (await json(await call("POST", `surveys/${survey.id}/sections`, { key: owner.key, body: { position: 1 } }))).data;
    const hook = (await json(await call("POST", `surveys/${survey.id}/webhooks`, { key: owner.key, body: { url: "http://127.0.0.1:9/h" } }))).data;
    const intruder = await setupTeam();
    const k = intruder.key;
    const id = survey.id;
    const q = questions[0].id;
    const routes: Array<[string, string, unknown?]> = [
      ["GET", `surveys/${id}`],
      ["PATCH", `surveys/${id}`, { name: "hijack" }],
      ["DELETE", `surveys/${id}`],
      ["POST", `surveys/${id}/duplicate`],
      ["POST", `surveys/${id}/activate`],
      ["POST", `surveys/${id}/close`],
      ["GET", `surveys/${id}/sections`],
      ["POST", `surveys/${id}/sections`, { position: 1 }],
      ["PATCH", `surveys/${id}/sections/${section.id}`, { title: "x" }],
      ["DELETE", `surveys/${id}/sections/${section.id}`],
      ["GET", `surveys/${id}/questions`],
      ["POST", `surveys/${id}/questions`, { type: "text", title: "x", position: 2 }],
      ["PATCH", `surveys/${id}/questions/${q}`, { title: "x" }],
      ["DELETE", `surveys/${id}/questions/${q}`],
      ["POST", `surveys/${id}/questions/reorder`, { question_ids: [q] }],
      ["GET", `surveys/${id}/responses`],
      ["GET", `surveys/${id}/summary`],
      ["POST", `surveys/${id}/webhooks`, { url: "http://127.0.0.1:9/x" }],
      ["GET", `surveys/${id}/webhooks`],
      ["DELETE", `surveys/${id}/webhooks/${hook.id}`],
    ];
    for (const [method, path, body] of routes) {
      const res = await call(method, path, { key: k, body });
      expect({ method, path, status: res.status, body: await json(res) }).toEqual({ method, path, status: 404, body: { error: "Survey not found" } });
    }
    // The intruder's own survey cannot reach the owner's section or question either.
    const mine = await createSurvey(k);
    await expectError(await call("PATCH", `surveys/${mine.id}/questions/${q}`, { key: k, body: { title: "x" } }), 404, { error: "Question not found" });
    await expectError(await call("DELETE", `surveys/${mine.id}/sections/${section.id}`, { key: k }), 404, { error: "Section not found" });
    await expectError(await call("DELETE", `surveys/${mine.id}/webhooks/${hook.id}`, { key: k }), 404, { error: "Webhook not found" });
    // Branching cannot point into another team's survey.
    const res = await call("POST", `surveys/${mine.id}/questions`, {
      key: k,
      body: { type: "text", title: "x", position: 1, branching: { rules: [{ if: { equals: "a" }, then: { go_to_question_id: q } }] } },
    });
    expect(res.status).toBe(422);
    // The owner's data is untouched and lists do not leak across teams.
    const after = (await json(await call("GET", `surveys/${id}`, { key: owner.key }))).data;
    expect(after).toMatchObject({ name: survey.name, status: "active" });
    expect(after.questions).toHaveLength(1);
    expect(after.sections).toHaveLength(1);
    expect((await json(await call("GET", "surveys", { key: k }))).data.map((s: { id: string }) => s.id)).toEqual([mine.id]);
  });

  it("requires a key on the authenticated routes", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    for (const [method, path] of [
      ["GET", "surveys"],
      ["POST", "surveys"],
      ["GET", "surveys/templates"],
      ["GET", `surveys/${survey.id}`],
      ["GET", `surveys/${survey.id}/responses`],
      ["GET", `surveys/${survey.id}/summary`],
      ["POST", `surveys/${survey.id}/questions/reorder`],
    ]) {
      await expectError(await call(method, path), 401, { error: "Invalid or missing API key" });
      await expectError(await call(method, path, { key: "edp_wrong" }), 401, { error: "Invalid or missing API key" });
    }
  });

  it("enforces surveys:read and surveys:write", async () => {
    const team = await setupTeam();
    const survey = await createSurvey(team.key);
    const q = await addQuestion(team.key, survey.id, { type: "text", title: "Q", position: 1 });
    const reader = await addKey(team.teamId, ["surveys:read"]);
    const writer = await addKey(team.teamId, ["surveys:write"]);
    const none = await addKey(team.teamId, ["logs:read", "webhooks:write"]);
    const reads: Array<[string, string]> = [
      ["GET", "surveys"],
      ["GET", "surveys/templates"],
      ["GET", `surveys/${survey.id}`],
      ["GET", `surveys/${survey.id}/sections`],
      ["GET", `surveys/${survey.id}/questions`],
      ["GET", `surveys/${survey.id}/responses`],
      ["GET", `surveys/${survey.id}/summary`],
      ["GET", `surveys/${survey.id}/webhooks`],
    ];
    const writes: Array<[string, string, unknown?]> = [
      ["POST", "surveys", { name: "x", slug: "x-forbidden" }],
      ["PATCH", `surveys/${survey.id}`, { name: "x" }],
      ["DELETE", `surveys/${survey.id}`],
      ["POST", `surveys/${survey.id}/duplicate`],
      ["POST", `surveys/${survey.id}/activate`],
      ["POST", `surveys/${survey.id}/close`],
      ["POST", `surveys/${survey.id}/sections`, { position: 1 }],
      ["POST", `surveys/${survey.id}/questions`, { type: "text", title: "x", position: 1 }],
      ["PATCH", `surveys/${survey.id}/questions/${q.id}`, { title: "x" }],
      ["DELETE", `surveys/${survey.id}/questions/${q.id}`],
      ["POST", `surveys/${survey.id}/questions/reorder`, { question_ids: [q.id] }],
      ["POST", `surveys/${survey.id}/webhooks`, { url: "http://127.0.0.1:9/x" }],
    ];
    for (const [method, path] of reads) {
      expect({ path, status: (await call(method, path, { key: reader.key })).status }).toEqual({ path, status: 200 });
      await expectError(await call(method, path, { key: writer.key }), 403, { error: "Insufficient scope" });
      await expectError(await call(method, path, { key: none.key }), 403, { error: "Insufficient scope" });
    }
    for (const [method, path, body] of writes) {
      await expectError(await call(method, path, { key: reader.key, body }), 403, { error: "Insufficient scope" });
      await expectError(await call(method, path, { key: none.key, body }), 403, { error: "Insufficient scope" });
    }
    expect((await json(await call("GET", `surveys/${survey.id}`, { key: team.key }))).data.name).toBe(survey.name);
  });

  it("serves the public flow without a credential, even with a bad one", async () => {
    const { survey } = await activeSurvey([{ type: "text", title: "Q" }]);
    const res = await call("POST", `surveys/${survey.slug}/responses`, { key: "edp_not_a_key" });
    expect(res.status).toBe(201);
  });

  it("limits starts with the survey_start family of the team's strict bucket (30 per minute), whatever the client IPs", async () => {
    const { survey } = await activeSurvey([{ type: "text", title: "Q" }]);
    const other = await activeSurvey([{ type: "text", title: "Q" }]);
    setClock(Date.parse("2032-03-03T12:00:10Z"));
    try {
      for (let i = 0; i < 29; i++) {
        // Different client IPs share the team's bucket.
        const res = await call("POST", `surveys/${survey.slug}/responses`, { ip: `198.51.100.${i}` });
        expect(res.status).toBe(201);
      }
      const last = await call("POST", `surveys/${survey.slug}/responses`, { ip: "198.51.100.200" });
      expect(last.status).toBe(201);
      expect(last.headers.get("x-ratelimit-limit")).toBe("30");
      expect(last.headers.get("x-ratelimit-remaining")).toBe("0");
      const refused = await start(survey.slug);
      expect(refused.headers.get("retry-after")).toBe("50");
      await expectError(refused, 429, { error: "Rate limit exceeded", retry_after: 50 });
      // The definition is not in the team's strict bucket: only the caller's per-IP public bucket.
      const definition = await call("GET", `surveys/${survey.slug}/public`, { ip: "198.51.100.201" });
      expect(definition.status).toBe(200);
      expect(definition.headers.get("x-ratelimit-limit")).toBe("200");
      // Another team's survey has its own bucket.
      expect((await start(other.survey.slug)).status).toBe(201);
      // The next window starts afresh.
      setClock(Date.parse("2032-03-03T12:01:00Z"));
      expect((await startOk(survey.slug)).status).toBe("in_progress");
    } finally {
      setClock(null);
    }
  });

  it("regression (issue 23, finding 5): one client IP takes at most 10 of a window's 30 starts and cannot lock the team's surveys", async () => {
    const { survey } = await activeSurvey([{ type: "text", title: "Q" }]);
    const second = await activeSurvey([{ type: "text", title: "Q" }]);
    setClock(Date.parse("2032-03-05T12:00:10Z"));
    try {
      const attacker = "203.0.113.250";
      for (let i = 0; i < 10; i++) expect((await call("POST", `surveys/${survey.slug}/responses`, { ip: attacker })).status).toBe(201);
      // The 11th and every later start from that IP is refused, on any survey of the team ...
      for (let i = 0; i < 25; i++) {
        const refused = await call("POST", `surveys/${survey.slug}/responses`, { ip: attacker });
        expect(refused.status).toBe(429);
        expect(refused.headers.get("x-ratelimit-limit")).toBe("10");
        expect(await json(refused)).toEqual({ error: "Rate limit exceeded", retry_after: 50 });
      }
      // ... without taking the team's places: 20 other respondents still start.
      for (let i = 0; i < 20; i++) expect((await call("POST", `surveys/${survey.slug}/responses`, { ip: `198.51.100.${i}` })).status).toBe(201);
      expect((await call("POST", `surveys/${survey.slug}/responses`, { ip: "198.51.100.99" })).status).toBe(429);
      // Another team is not concerned, even from the same IP.
      expect((await call("POST", `surveys/${second.survey.slug}/responses`, { ip: attacker })).status).toBe(201);
      // One IPv6 /64 is one client: a machine cannot rotate through its own addresses.
      setClock(Date.parse("2032-03-05T12:01:10Z"));
      for (let i = 0; i < 10; i++) expect((await call("POST", `surveys/${survey.slug}/responses`, { ip: `2001:db8:1:2::${i + 1}` })).status).toBe(201);
      expect((await call("POST", `surveys/${survey.slug}/responses`, { ip: "2001:db8:1:2:ffff::1" })).status).toBe(429);
      expect((await call("POST", `surveys/${survey.slug}/responses`, { ip: "2001:db8:1:3::1" })).status).toBe(201);
    } finally {
      setClock(null);
    }
  });

  it("regression: definitions fetched from many IPs and a full start family never cut off respondents already answering", async () => {
    const { survey, questions } = await activeSurvey([
      { type: "text", title: "Q1" },
      { type: "text", title: "Q2" },
    ]);
    setClock(Date.parse("2032-03-04T12:00:05Z"));
    try {
      const respondent = await startOk(survey.slug);
      // The attack of the issue: 31 definition reads from 31 IPs, then the start family filled.
      for (let i = 0; i < 31; i++) expect((await call("GET", `surveys/${survey.slug}/public`, { ip: `192.0.2.${i}` })).status).toBe(200);
      for (let i = 0; i < 29; i++) expect((await call("POST", `surveys/${survey.slug}/responses`, { ip: `198.51.100.${i}` })).status).toBe(201);
      expect((await call("POST", `surveys/${survey.slug}/responses`, { ip: "198.51.100.77" })).status).toBe(429);
      // The respondent who started before carries on to the end.
      const path = `surveys/${survey.slug}/responses/${respondent.id}`;
      expect((await call("GET", path)).status).toBe(200);
      expect((await call("POST", `${path}/answers`, { body: { question_id: questions[0].id, value: "a" } })).status).toBe(200);
      expect((await call("POST", `${path}/answers`, { body: { question_id: questions[1].id, value: "b" } })).status).toBe(200);
      expect((await call("POST", `${path}/complete`)).status).toBe(200);
    } finally {
      setClock(null);
    }
  });

  it("counts every public survey route per client IP, unknown slugs included (200 per minute)", async () => {
    const { survey } = await activeSurvey([{ type: "text", title: "Q" }]);
    setClock(Date.parse("2032-03-05T12:00:10Z"));
    try {
      const ip = "192.0.2.250";
      const first = await call("GET", `surveys/no-such-slug-${crypto.randomUUID()}/public`, { ip });
      expect(first.status).toBe(404);
      expect(first.headers.get("x-ratelimit-limit")).toBe("200");
      expect(first.headers.get("x-ratelimit-remaining")).toBe("199");
      for (let i = 0; i < 199; i++) await call("GET", `surveys/unknown-${i}/public`, { ip });
      const limited = await call("GET", `surveys/${survey.slug}/public`, { ip });
      await expectError(limited, 429, { error: "Rate limit exceeded", retry_after: 50 });
      expect((await call("POST", `surveys/unknown-x/responses/${crypto.randomUUID()}/answers`, { ip, body: {} })).status).toBe(429);
      // Another client is not affected.
      expect((await call("GET", `surveys/${survey.slug}/public`, { ip: "192.0.2.251" })).status).toBe(200);
    } finally {
      setClock(null);
    }
  });
});

describe("survey OpenAPI", () => {
  it("documents the builder, public and results routes", async () => {
    const res = await call("GET", "openapi.json");
    expect(res.status).toBe(200);
    const doc = await json(res);
    for (const path of [
      "/api/v1/surveys",
      "/api/v1/surveys/templates",
      "/api/v1/surveys/{id}",
      "/api/v1/surveys/{survey_id}/questions/reorder",
      "/api/v1/surveys/{survey}/responses",
      "/api/v1/surveys/{slug}/responses/{response_id}/answers",
      "/api/v1/surveys/{slug}/responses/{response_id}/complete",
      "/api/v1/surveys/{slug}/public",
      "/api/v1/surveys/{id}/summary",
    ]) {
      expect({ path, present: path in doc.paths }).toEqual({ path, present: true });
    }
  });
});
