// Per-team caps on what a tenant configures: each log project may hold a store of its own, each
// relay source is a public ingest address, each push app holds keys and subscribers. A team holds
// a bounded number of each, checked and written in one statement, so parallel creates cannot pass
// the cap, and another team keeps its own room.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_PROJECTS_PER_TEAM } from "../../src/products/logs/logs.service";
import { MAX_APPS_PER_TEAM } from "../../src/products/push/push-apps.service";
import { MAX_SOURCES_PER_TEAM } from "../../src/products/relay/relay-sources.service";
import { MAX_QUESTIONS_PER_SURVEY } from "../../src/products/surveys/survey-questions.service";
import { MAX_SECTIONS_PER_SURVEY } from "../../src/products/surveys/survey-sections.service";
import { MAX_SURVEYS_PER_TEAM } from "../../src/products/surveys/surveys.service";
import { call, json, setupTeam } from "../helpers/api";

async function createInParallel(key: string, path: string, n: number, body: (i: number) => unknown) {
  return Promise.all(Array.from({ length: n }, (_, i) => call("POST", path, { key, body: body(i) })));
}

describe("per-team caps under parallel creates", () => {
  it(`log projects: ${MAX_PROJECTS_PER_TEAM} per team`, async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const results = await createInParallel(team.key, "logs/projects", MAX_PROJECTS_PER_TEAM + 5, (i) => ({ name: `p${i}` }));
    expect(results.filter((r) => r.status === 201)).toHaveLength(MAX_PROJECTS_PER_TEAM);
    const refused = results.find((r) => r.status !== 201)!;
    expect(refused.status).toBe(422);
    expect(await json(refused)).toEqual({ error: "Validation failed", details: { name: [`a team can have at most ${MAX_PROJECTS_PER_TEAM} log projects`] } });
    expect((await json(await call("GET", "logs/projects", { key: team.key }))).data).toHaveLength(MAX_PROJECTS_PER_TEAM);
    const other = await setupTeam({ plan: "enterprise" });
    expect((await call("POST", "logs/projects", { key: other.key, body: { name: "mine" } })).status).toBe(201);
  });

  it(`relay sources: ${MAX_SOURCES_PER_TEAM} per team`, async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const results = await createInParallel(team.key, "webhooks/sources", MAX_SOURCES_PER_TEAM + 5, (i) => ({ name: `s${i}`, provider: "generic" }));
    expect(results.filter((r) => r.status === 201)).toHaveLength(MAX_SOURCES_PER_TEAM);
    const refused = results.find((r) => r.status !== 201)!;
    expect(refused.status).toBe(422);
    expect(await json(refused)).toEqual({ error: "Validation failed", details: { name: [`a team can have at most ${MAX_SOURCES_PER_TEAM} sources`] } });
    const other = await setupTeam({ plan: "enterprise" });
    expect((await call("POST", "webhooks/sources", { key: other.key, body: { name: "mine", provider: "generic" } })).status).toBe(201);
  });

  it(`push apps: ${MAX_APPS_PER_TEAM} per team`, async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const results = await createInParallel(team.key, "push/apps", MAX_APPS_PER_TEAM + 5, (i) => ({ name: `a${i}` }));
    expect(results.filter((r) => r.status === 201)).toHaveLength(MAX_APPS_PER_TEAM);
    const refused = results.find((r) => r.status !== 201)!;
    expect(refused.status).toBe(422);
    expect(await json(refused)).toEqual({ error: "Validation failed", details: { name: [`a team can have at most ${MAX_APPS_PER_TEAM} push apps`] } });
    const other = await setupTeam({ plan: "enterprise" });
    expect((await call("POST", "push/apps", { key: other.key, body: { name: "mine" } })).status).toBe(201);
  });

  it(`surveys: ${MAX_SURVEYS_PER_TEAM} per team, creates and duplicates alike`, async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const source = (await json(await call("POST", "surveys", { key: team.key, body: { name: "source", slug: `src-${crypto.randomUUID()}` } }))).data;
    await call("POST", `surveys/${source.id}/questions`, { key: team.key, body: { type: "short_text", title: "Why?" } });
    // Seeded to 5 below the cap in SQL: a thousand creates through the API would only slow the test.
    const seeded = MAX_SURVEYS_PER_TEAM - 6;
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO surveys (id, team_id, name, slug, mode, status, settings, ai_config, response_count, created_at, updated_at)
       SELECT lower(hex(randomblob(16))), ?1, 'seeded', 'seeded-' || lower(hex(randomblob(12))), 'manual', 'draft', '{}', '{}', 0, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z' FROM n`,
    )
      .bind(team.teamId, seeded)
      .run();
    const results = await Promise.all([
      ...Array.from({ length: 5 }, (_, i) => call("POST", "surveys", { key: team.key, body: { name: `s${i}`, slug: `cap-${i}-${crypto.randomUUID()}` } })),
      ...Array.from({ length: 5 }, () => call("POST", `surveys/${source.id}/duplicate`, { key: team.key })),
    ]);
    expect(results.filter((r) => r.status === 201)).toHaveLength(5);
    const refused = results.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(5);
    for (const r of refused) {
      expect(r.status).toBe(422);
      expect(await json(r)).toEqual({ error: "Validation failed", errors: { name: [`a team can have at most ${MAX_SURVEYS_PER_TEAM} surveys`] } });
    }
    const { n } = (await env.DB.prepare("SELECT count(*) AS n FROM surveys WHERE team_id = ?").bind(team.teamId).first<{ n: number }>())!;
    expect(n).toBe(MAX_SURVEYS_PER_TEAM);
    // A refused duplicate left no orphaned questions behind.
    const orphans = await env.DB.prepare("SELECT count(*) AS n FROM survey_questions q LEFT JOIN surveys s ON s.id = q.survey_id WHERE s.id IS NULL").first<{
      n: number;
    }>();
    expect(orphans!.n).toBe(0);
  });
});

describe("per-survey caps under parallel creates", () => {
  /** A survey of `team` already holding `count` rows of `table`, seeded in SQL. */
  async function seededSurvey(team: { key: string; teamId: string }, table: "survey_questions" | "survey_sections", count: number) {
    const survey = (await json(await call("POST", "surveys", { key: team.key, body: { name: "capped", slug: `cap-${crypto.randomUUID()}` } }))).data;
    const insert =
      table === "survey_questions"
        ? `INSERT INTO survey_questions (id, team_id, survey_id, section_id, type, title, description, options, settings, position, branching, version, created_at, updated_at)
           SELECT lower(hex(randomblob(16))), ?1, ?2, NULL, 'text', 'Seeded ' || i, NULL, '[]', '{}', i, '{"rules":[],"default":{"go_to_next":true}}', 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z' FROM n`
        : `INSERT INTO survey_sections (id, team_id, survey_id, title, description, position, created_at)
           SELECT lower(hex(randomblob(16))), ?1, ?2, 'Seeded ' || i, NULL, i, '2026-01-01T00:00:00.000Z' FROM n`;
    await env.DB.prepare(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?3) ${insert}`).bind(team.teamId, survey.id, count).run();
    return survey as { id: string };
  }
  const countOf = async (table: string, surveyId: string) =>
    (await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE survey_id = ?`).bind(surveyId).first<{ n: number }>())!.n;

  it(`questions: ${MAX_QUESTIONS_PER_SURVEY} per survey`, async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const survey = await seededSurvey(team, "survey_questions", MAX_QUESTIONS_PER_SURVEY - 3);
    const results = await createInParallel(team.key, `surveys/${survey.id}/questions`, 8, (i) => ({ type: "text", title: `Q${i}`, position: 1000 + i }));
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    for (const refused of results.filter((r) => r.status !== 201)) {
      expect(refused.status).toBe(422);
      expect(await json(refused)).toEqual({
        error: "Validation failed",
        errors: { survey_id: [`a survey can have at most ${MAX_QUESTIONS_PER_SURVEY} questions`] },
      });
    }
    expect(await countOf("survey_questions", survey.id)).toBe(MAX_QUESTIONS_PER_SURVEY);
    // Another survey of the same team keeps its own room.
    const other = (await json(await call("POST", "surveys", { key: team.key, body: { name: "other", slug: `other-${crypto.randomUUID()}` } }))).data;
    expect((await call("POST", `surveys/${other.id}/questions`, { key: team.key, body: { type: "text", title: "Mine", position: 1 } })).status).toBe(201);
  });

  it(`sections: ${MAX_SECTIONS_PER_SURVEY} per survey`, async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const survey = await seededSurvey(team, "survey_sections", MAX_SECTIONS_PER_SURVEY - 2);
    const results = await createInParallel(team.key, `surveys/${survey.id}/sections`, 6, (i) => ({ title: `S${i}`, position: 1000 + i }));
    expect(results.filter((r) => r.status === 201)).toHaveLength(2);
    for (const refused of results.filter((r) => r.status !== 201)) {
      expect(refused.status).toBe(422);
      expect(await json(refused)).toEqual({
        error: "Validation failed",
        errors: { survey_id: [`a survey can have at most ${MAX_SECTIONS_PER_SURVEY} sections`] },
      });
    }
    expect(await countOf("survey_sections", survey.id)).toBe(MAX_SECTIONS_PER_SURVEY);
  });
});
