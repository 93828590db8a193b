// The console's surveys pages: the list and its empty state, creating a survey, a survey's counts,
// charts, responses and CSV export, the hosted link and embed snippet; tenancy (another team's
// survey or team id answers 404), roles (a viewer reads, never sees a write button, and is refused
// a write), the Origin rule and the signed-out redirect.
import { parse } from "csv-parse/sync";
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, json, setupTeam } from "../helpers/api";
import { consoleTeam, memberOf, page } from "../helpers/console";
import { countingDb } from "../helpers/counting";
import { activeSurvey, answer, complete, startOk } from "../products/surveys/helpers";

async function respond(slug: string, questions: Array<{ id: string }>, values: unknown[]) {
  const response = await startOk(slug);
  for (const [i, q] of questions.entries()) expect((await answer(slug, response.id, q.id, values[i])).status).toBe(200);
  expect((await complete(slug, response.id)).status).toBe(200);
  return response.id;
}

const QUESTIONS = [
  { type: "nps", title: "How likely are you to recommend us?" },
  { type: "choice", title: "Which plan?", options: ["Free", "Pro"] },
  { type: "rating", title: "Rate the docs" },
  { type: "text", title: "Anything else?" },
];

describe("console surveys pages", () => {
  it("redirects to sign-in without a session", async () => {
    for (const path of ["surveys", `surveys/${crypto.randomUUID()}`, `surveys/${crypto.randomUUID()}/responses.csv`]) {
      const res = await page("GET", `/console/teams/${crypto.randomUUID()}/${path}`);
      expect(res.status, path).toBe(303);
      expect(res.headers.get("location")).toBe("/console/sign-in");
    }
  });

  it("teaches with an empty state: the curl with the real API address, and the create button for writers only", async () => {
    const team = await consoleTeam("developer");
    const html = await (await page("GET", `/console/teams/${team.teamId}/surveys`, { cookie: team.cookie })).text();
    expect(html).toContain("Create your first survey");
    expect(html).toContain("curl -X POST http://app.test/api/v1/surveys");
    expect(html).toContain('data-testid="create-survey"');

    const viewer = await memberOf(team.teamId, "viewer");
    const seen = await (await page("GET", `/console/teams/${team.teamId}/surveys`, { cookie: viewer.cookie })).text();
    expect(seen).toContain("curl -X POST http://app.test/api/v1/surveys");
    expect(seen).not.toContain('data-testid="create-survey"');
    expect(seen).not.toMatch(/<form method="post" action="[^"]*surveys/);
  });

  it("creates a draft survey with the same service (post/redirect/get); a viewer is refused; a cross-origin post too", async () => {
    const team = await consoleTeam("admin");
    const res = await page("POST", `/console/teams/${team.teamId}/surveys`, { cookie: team.cookie, form: { name: "Onboarding check-in" } });
    expect(res.status).toBe(303);
    const location = res.headers.get("location")!;
    expect(location).toMatch(new RegExp(`^/console/teams/${team.teamId}/surveys/[0-9a-f-]{36}\\?notice=created$`));
    const html = await (await page("GET", location, { cookie: team.cookie })).text();
    expect(html).toContain("Onboarding check-in");
    expect(html).toContain("Survey created.");
    expect(html).toContain(">draft<");
    expect(html).toMatch(/http:\/\/app\.test\/s\/onboarding-check-in-[0-9a-f]{6}/);

    const blank = await page("POST", `/console/teams/${team.teamId}/surveys`, { cookie: team.cookie, form: { name: "  " } });
    expect(blank.status).toBe(422);

    const viewer = await memberOf(team.teamId, "viewer");
    expect((await page("POST", `/console/teams/${team.teamId}/surveys`, { cookie: viewer.cookie, form: { name: "Nope" } })).status).toBe(403);
    expect(
      (await page("POST", `/console/teams/${team.teamId}/surveys`, { cookie: team.cookie, origin: "http://evil.test", form: { name: "Nope" } })).status,
    ).toBe(403);
    const list = await (await page("GET", `/console/teams/${team.teamId}/surveys`, { cookie: team.cookie })).text();
    expect(list.match(/data-testid="survey-row"/g)).toHaveLength(1);
  });

  it("shows a survey's counts, its charts with titles and tables, the responses, the hosted link, the embed and the CSV export", async () => {
    const team = await consoleTeam("owner");
    const { survey, questions } = await activeSurvey(QUESTIONS, {}, team);
    await respond(survey.slug, questions, [10, "Pro", 5, "=cmd"]);
    await respond(survey.slug, questions, [3, "Free", 4, "fine, thanks"]);
    await respond(survey.slug, questions, [8, "Pro", 5, "more"]);
    await startOk(survey.slug);

    // The session, the teams, the survey, its questions and sections: one D1 round trip.
    const counted = countingDb();
    const res = await page("GET", `/console/teams/${team.teamId}/surveys/${survey.id}`, { cookie: team.cookie, env: { ...env, DB: counted.db } });
    expect(res.status).toBe(200);
    expect(counted.roundTrips()).toBe(1);
    const html = await res.text();
    expect(html).toContain('data-testid="response-count" data-count="3"');
    expect(html).toContain('data-testid="nps-score">0<');
    expect(html).toContain("Promoters (9–10): 1 (33%)");
    expect(html.match(/<svg class="chart"[^>]*role="img"/g)!.length).toBeGreaterThanOrEqual(4);
    expect(html).toContain("<title id=");
    expect(html).toMatch(/<table class="skip"><caption>Answers to “Which plan\?”<\/caption>/);
    expect(html.match(/data-testid="response-row"/g)).toHaveLength(4);
    expect(html).toContain(`href="http://app.test/s/${survey.slug}"`);
    expect(html).toContain(`&lt;script src=&quot;http://app.test/embed.js&quot; data-survey=&quot;${survey.slug}&quot; async&gt;&lt;/script&gt;`);
    expect(html).toContain(`data-testid="export-csv"`);
    expect(html).toContain(`/surveys/${survey.id}/close"`);

    const csv = await page("GET", `/console/teams/${team.teamId}/surveys/${survey.id}/responses.csv`, { cookie: team.cookie });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    const rows: string[][] = parse(await csv.text());
    expect(rows).toHaveLength(4);
    expect(
      rows
        .slice(1)
        .map((r) => r[6])
        .sort(),
    ).toEqual(["'=cmd", "fine, thanks", "more"]);
  });

  it("gives a viewer the results and the export but no write button, and refuses its writes", async () => {
    const team = await consoleTeam("owner");
    const { survey } = await activeSurvey(QUESTIONS, {}, team);
    const viewer = await memberOf(team.teamId, "viewer");
    const html = await (await page("GET", `/console/teams/${team.teamId}/surveys/${survey.id}`, { cookie: viewer.cookie })).text();
    expect(html).toContain('data-testid="response-count" data-count="0"');
    expect(html).toContain('data-testid="export-csv"');
    expect(html).not.toMatch(/<form method="post" action="\/console\/teams\/[^"]*\/surveys/);
    expect((await page("POST", `/console/teams/${team.teamId}/surveys/${survey.id}/close`, { cookie: viewer.cookie })).status).toBe(403);
    const csv = await page("GET", `/console/teams/${team.teamId}/surveys/${survey.id}/responses.csv`, { cookie: viewer.cookie });
    expect(csv.status).toBe(200);
  });

  it("closes and reopens a survey with the API's rules", async () => {
    const team = await consoleTeam("developer");
    const { survey } = await activeSurvey(QUESTIONS, {}, team);
    const closed = await page("POST", `/console/teams/${team.teamId}/surveys/${survey.id}/close`, { cookie: team.cookie });
    expect(closed.status).toBe(303);
    expect(await (await page("GET", closed.headers.get("location")!, { cookie: team.cookie })).text()).toContain(">closed<");
    expect((await page("POST", `/console/teams/${team.teamId}/surveys/${survey.id}/activate`, { cookie: team.cookie })).status).toBe(303);
  });

  it("answers 404 for another team's survey, in every page and action, and for another team's id", async () => {
    const team = await consoleTeam("owner");
    const stranger = await setupTeam();
    const { survey } = await activeSurvey(QUESTIONS, {}, stranger);
    for (const [method, path] of [
      ["GET", `surveys/${survey.id}`],
      ["GET", `surveys/${survey.id}/responses.csv`],
      ["POST", `surveys/${survey.id}/close`],
      ["GET", `surveys/not-a-uuid`],
    ]) {
      const res = await page(method, `/console/teams/${team.teamId}/${path}`, { cookie: team.cookie });
      expect(res.status, path).toBe(404);
    }
    expect((await page("GET", `/console/teams/${stranger.teamId}/surveys`, { cookie: team.cookie })).status).toBe(404);
    expect((await page("GET", `/console/teams/${stranger.teamId}/surveys/${survey.id}`, { cookie: team.cookie })).status).toBe(404);
  });
});

describe("the survey builder", () => {
  /** A draft survey made in the console, and its page's address. */
  async function draft(role: "owner" | "developer" = "developer") {
    const team = await consoleTeam(role);
    const res = await page("POST", `/console/teams/${team.teamId}/surveys`, { cookie: team.cookie, form: { name: "Built here" } });
    const base = res.headers.get("location")!.replace(/\?.*$/, "");
    const id = base.split("/").pop()!;
    return { team, base, id };
  }
  const questionsOf = async (key: string, id: string) => (await json(await call("GET", `surveys/${id}/questions`, { key }))).data as Array<Record<string, any>>;

  it("adds questions of every type through the API's service, one redirect each; a reload adds nothing", async () => {
    const { team, base, id } = await draft();
    const forms: Record<string, string>[] = [
      { type: "text", title: "Your name", multiline: "on" },
      { type: "email", title: "Your email", optional: "on" },
      { type: "choice", title: "Plan?", options: "Free\nPro\n\n" },
      { type: "multi_choice", title: "Which features?", options: "Logs\r\nRelay" },
      { type: "rating", title: "Rate us" },
      { type: "nps", title: "Recommend us?" },
      { type: "scale", title: "Scale", min: "1", max: "7" },
      { type: "slider", title: "Slider", min: "0", max: "100" },
      { type: "matrix", title: "Matrix", rows: "Speed\nPrice", columns: "Bad\nGood" },
      { type: "ranking", title: "Rank", options: "A\nB\nC" },
      { type: "yes_no", title: "Yes?" },
      { type: "date", title: "When?" },
    ];
    for (const form of forms) {
      const res = await page("POST", `${base}/questions`, { cookie: team.cookie, form });
      expect(res.status, form.type).toBe(303);
      expect(res.headers.get("location")).toBe(`${base}?notice=question-added`);
    }
    const html = await (await page("GET", `${base}?notice=question-added`, { cookie: team.cookie })).text();
    expect(html).toContain('data-testid="add-question"');
    expect(html.match(/data-testid="question-row"/g)).toHaveLength(forms.length);
    const questions = await questionsOf(team.key, id);
    expect(questions.map((q) => q.type)).toEqual(forms.map((f) => f.type));
    expect(questions.map((q) => q.position)).toEqual(forms.map((_, i) => i + 1));
    expect(questions[0].settings).toEqual({ multiline: true });
    expect(questions[1].settings).toEqual({ required: false });
    expect(questions[2].options).toEqual(["Free", "Pro"]);
    expect(questions[3].options).toEqual(["Logs", "Relay"]);
    expect(questions[6].settings).toEqual({ min: 1, max: 7 });
    expect(questions[8].settings).toEqual({ rows: ["Speed", "Price"], columns: ["Bad", "Good"] });
    // The API's checks, refused at 422 and nothing stored: a choice without options, a scale upside down.
    const refused: Record<string, string>[] = [
      { type: "choice", title: "No options", options: "" },
      { type: "scale", title: "Upside down", min: "5", max: "1" },
      { type: "nope", title: "Unknown" },
      { type: "text", title: "" },
    ];
    for (const form of refused) {
      expect((await page("POST", `${base}/questions`, { cookie: team.cookie, form })).status, form.title).toBe(422);
    }
    expect(await questionsOf(team.key, id)).toHaveLength(forms.length);
  });

  it("edits, moves, deletes, branches and activates; the activated survey runs as built", async () => {
    const { team, base, id } = await draft();
    for (const form of [
      { type: "nps", title: "Recommend us?" },
      { type: "text", title: "What should we improve?" },
      { type: "text", title: "What do you love?" },
    ]) {
      await page("POST", `${base}/questions`, { cookie: team.cookie, form });
    }
    let [nps, improve, love] = await questionsOf(team.key, id);
    // Edit the title; move the last question up; delete nothing yet.
    expect((await page("POST", `${base}/questions/${nps.id}`, { cookie: team.cookie, form: { title: "How likely are you to recommend us?" } })).status).toBe(
      303,
    );
    expect((await page("POST", `${base}/questions/${love.id}/move`, { cookie: team.cookie, form: { direction: "up" } })).status).toBe(303);
    [nps, love, improve] = await questionsOf(team.key, id);
    expect([nps.title, love.title, improve.title]).toEqual(["How likely are you to recommend us?", "What do you love?", "What should we improve?"]);
    // Branching: a score of 6 or less skips to "improve"; otherwise next.
    const rule = await page("POST", `${base}/questions/${nps.id}/branching`, {
      cookie: team.cookie,
      form: { action: "add", operator: "less_than_or_equal", value: "6", target: improve.id },
    });
    expect(rule.status).toBe(303);
    expect((await questionsOf(team.key, id))[0].branching).toEqual({
      rules: [{ if: { less_than_or_equal: 6 }, then: { go_to_question_id: improve.id } }],
      default: { go_to_next: true },
    });
    const shown = await (await page("GET", base, { cookie: team.cookie })).text();
    expect(shown).toContain("If the answer is at most <code>6</code>, go to “3. What should we improve?”");
    // A comparison on a text question is the API's 422.
    expect(
      (
        await page("POST", `${base}/questions/${love.id}/branching`, {
          cookie: team.cookie,
          form: { action: "add", operator: "greater_than", value: "1", target: "end" },
        })
      ).status,
    ).toBe(422);
    // Activate with the hook; the hosted flow follows the branching.
    const activated = await page("POST", `${base}/activate`, { cookie: team.cookie });
    expect(activated.status).toBe(303);
    const live = await (await page("GET", activated.headers.get("location")!, { cookie: team.cookie })).text();
    expect(live).toContain(">active<");
    expect(live).toContain('data-testid="close-survey"');
    const survey = (await json(await call("GET", `surveys/${id}`, { key: team.key }))).data;
    const response = await startOk(survey.slug);
    const next = await answer(survey.slug, response.id, nps.id, 3);
    expect(JSON.stringify(await json(next))).toContain(improve.id);
    // Delete the middle question.
    expect((await page("POST", `${base}/questions/${love.id}/delete`, { cookie: team.cookie })).status).toBe(303);
    expect((await questionsOf(team.key, id)).map((q) => q.id)).toEqual([nps.id, improve.id]);
  });

  it("gives a viewer the questions but no builder, refuses its writes, and 404s another team's survey", async () => {
    const { team, base, id } = await draft("owner");
    await page("POST", `${base}/questions`, { cookie: team.cookie, form: { type: "yes_no", title: "Ok?" } });
    const [q] = await questionsOf(team.key, id);
    const viewer = await memberOf(team.teamId, "viewer");
    const html = await (await page("GET", base, { cookie: viewer.cookie })).text();
    expect(html).toContain('data-testid="question-row"');
    expect(html).not.toContain('data-testid="add-question"');
    for (const [path, form] of [
      ["/questions", { type: "text", title: "x" }],
      [`/questions/${q.id}`, { title: "x" }],
      [`/questions/${q.id}/move`, { direction: "up" }],
      [`/questions/${q.id}/delete`, {}],
      [`/questions/${q.id}/branching`, { action: "clear" }],
    ] as const) {
      expect((await page("POST", `${base}${path}`, { cookie: viewer.cookie, form })).status, path).toBe(403);
    }
    const other = await consoleTeam("owner");
    const foreign = `/console/teams/${other.teamId}/surveys/${id}`;
    for (const path of ["/questions", `/questions/${q.id}`, `/questions/${q.id}/delete`]) {
      expect((await page("POST", `${foreign}${path}`, { cookie: other.cookie, form: { type: "text", title: "x" } })).status, path).toBe(404);
    }
    expect(await questionsOf(team.key, id)).toHaveLength(1);
  });
});
