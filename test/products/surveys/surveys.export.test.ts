// The CSV export of completed responses (GET /surveys/{id}/responses/export): parsed back with
// csv-parse (a well-known RFC 4180 parser), its escaping (commas, quotes, line breaks) and the
// spreadsheet neutralising of text cells, numbers left as numbers, paging over more than one page
// of responses, and its errors: another team's survey, a missing key or scope.
import { env, runInDurableObject } from "cloudflare:test";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { EXPORT_PAGE } from "../../../src/products/surveys/survey-export.service";
import { COMPLETED_AFTER_SQL } from "../../../src/products/surveys/store/survey-store.queries";
import type { StoredResponse } from "../../../src/products/surveys/store/survey-rows";
import { surveyStore } from "../../../src/products/surveys/surveys.store";
import { call, expectError, setupTeam } from "../../helpers/api";
import { activeSurvey, answer, complete, startOk } from "./helpers";

const exportOf = (key: string, surveyId: string) => call("GET", `surveys/${surveyId}/responses/export`, { key });

/** Answers every question in order with the given values, then completes the response. */
async function respond(slug: string, questions: Array<{ id: string }>, values: unknown[], finish = true): Promise<string> {
  const response = await startOk(slug);
  for (const [i, q] of questions.entries()) {
    const res = await answer(slug, response.id, q.id, values[i]);
    if (res.status !== 200) throw new Error(`answer ${i} refused: ${res.status} ${await res.text()}`);
  }
  if (finish) expect((await complete(slug, response.id)).status).toBe(200);
  return response.id;
}

/** A response as the store keeps it (what the migration imports), started and updated at `at`. */
function storedResponse(id: string, status: StoredResponse["status"], answers: string, at: string): StoredResponse {
  return {
    id,
    status,
    respondent: "{}",
    answers,
    path: "[]",
    next_question_id: null,
    generated_questions: "[]",
    completion_id: null,
    started_at: at,
    updated_at: at,
    completed_at: status === "completed" ? at : null,
  };
}

const QUESTIONS = [
  { type: "text", title: "What did you think?", settings: { multiline: true } },
  { type: "scale", title: "Temperature", settings: { min: -5, max: 5 } },
  { type: "nps", title: "How likely are you to recommend us?" },
  { type: "multi_choice", title: "Which features?", options: ["Logs", "Relay", "Mail"] },
  { type: "yes_no", title: "Would you buy again?" },
  { type: "matrix", title: "Rate each", settings: { rows: ["Speed", "Price"], columns: ["Bad", "Good"] } },
  { type: "text", title: '=HYPERLINK("http://evil.test")' },
];

describe("GET /surveys/{id}/responses/export", () => {
  it("streams one row per completed response with one column per question, parsed back by csv-parse", async () => {
    const { team, survey, questions } = await activeSurvey(QUESTIONS);
    const first = await respond(survey.slug, questions, ["plain", -3, 9, ["Logs", "Mail"], true, { Speed: "Good", Price: "Bad" }, "x"]);
    const second = await respond(survey.slug, questions, ["more, with a comma", 0, 4, ["Relay"], false, { Speed: "Bad", Price: "Bad" }, "y"]);
    await respond(survey.slug, questions.slice(0, 2), ["still answering", 1], false);

    const res = await exportOf(team.key, survey.id);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="${survey.slug}-responses.csv"`);
    expect(res.headers.get("cache-control")).toBe("private, no-store");
    const text = await res.text();
    expect(text.endsWith("\r\n")).toBe(true);

    const rows: string[][] = parse(text);
    expect(rows[0]).toEqual(["response_id", "started_at", "completed_at", ...QUESTIONS.slice(0, 6).map((q) => q.title), `'=HYPERLINK("http://evil.test")`]);
    expect(rows).toHaveLength(3);
    const byId = new Map(rows.slice(1).map((r) => [r[0], r]));
    expect([...byId.keys()].sort()).toEqual([first, second].sort());
    expect(byId.get(first)!.slice(3)).toEqual(["plain", "-3", "9", "Logs; Mail", "true", "Speed: Good; Price: Bad", "x"]);
    expect(byId.get(second)!.slice(3)).toEqual(["more, with a comma", "0", "4", "Relay", "false", "Speed: Bad; Price: Bad", "y"]);
    for (const r of rows.slice(1)) {
      expect(Date.parse(r[1])).not.toBeNaN();
      expect(Date.parse(r[2])).toBeGreaterThanOrEqual(Date.parse(r[1]));
    }
  });

  it("quotes commas, quotes and line breaks, neutralises formula text, and leaves -3 a number", async () => {
    const { team, survey, questions } = await activeSurvey([
      { type: "text", title: "Comment", settings: { multiline: true } },
      { type: "scale", title: "Score", settings: { min: -5, max: 5 } },
    ]);
    const texts = ["a,b", 'say "hi"', "line one\nline two", "=SUM(A1:A9)", "+1", "-2+3+cmd|' /C calc'!A0", "@SUM(1)", "\tindented", "\rreturn", "ordinary"];
    const ids = [];
    for (const [i, t] of texts.entries()) ids.push(await respond(survey.slug, questions, [t, i % 2 ? -3 : 3]));

    const text = await (await exportOf(team.key, survey.id)).text();
    // The raw bytes: RFC 4180 quoting, and the negative number written bare.
    expect(text).toContain(`,"a,b",`);
    expect(text).toContain(`,"say ""hi""",`);
    expect(text).toContain(`,"line one\nline two",`);
    expect(text).toContain(`,'=SUM(A1:A9),`);
    expect(text).toContain(`,'@SUM(1),`);
    expect(text).toContain(`,"'\rreturn",`);
    expect(text).toMatch(/,-3\r\n/);
    expect(text).not.toMatch(/,'-3/);

    const rows: string[][] = parse(text);
    expect(rows).toHaveLength(texts.length + 1);
    const byId = new Map(rows.slice(1).map((r) => [r[0], r.slice(3)]));
    const expected = [
      "a,b",
      'say "hi"',
      "line one\nline two",
      "'=SUM(A1:A9)",
      "'+1",
      "'-2+3+cmd|' /C calc'!A0",
      "'@SUM(1)",
      "'\tindented",
      "'\rreturn",
      "ordinary",
    ];
    for (const [i, id] of ids.entries()) expect(byId.get(id)).toEqual([expected[i], i % 2 ? "-3" : "3"]);
  });

  it("pages through more than one page of responses, each completed response once, skipping others' and in-progress ones", async () => {
    const { team, survey, questions } = await activeSurvey([{ type: "nps", title: "NPS" }]);
    const other = await activeSurvey([{ type: "nps", title: "NPS" }], {}, team);
    const total = EXPORT_PAGE * 2 + 7;
    const at = "2031-01-01T00:00:00.000Z";
    const rows = Array.from({ length: total * 2 }, (_, i) => ({
      id: crypto.randomUUID(),
      // Interleaved: this survey's completed, then another survey's or an in-progress one.
      survey_id: i % 4 === 1 ? other.survey.id : survey.id,
      status: i % 4 === 3 ? "in_progress" : "completed",
      answers: JSON.stringify({ [questions[0].id]: { value: i % 11, version: 1, answered_at: at } }),
    }));
    // Seeded into each survey's store as the migration imports rows.
    for (const s of [survey, other.survey]) {
      const own = rows.filter((r) => r.survey_id === s.id).map((r) => storedResponse(r.id, r.status as StoredResponse["status"], r.answers, at));
      await surveyStore(env, s.id).importResponses({ surveyId: s.id, teamId: team.teamId }, own, []);
    }
    const wanted = rows.filter((r) => r.survey_id === survey.id && r.status === "completed");
    expect(wanted.length).toBeGreaterThan(EXPORT_PAGE * 2);

    const res = await exportOf(team.key, survey.id);
    expect(res.status).toBe(200);
    const parsed: string[][] = parse(await res.text());
    const exported = parsed.slice(1).map((r) => r[0]);
    expect(exported).toHaveLength(wanted.length);
    expect(new Set(exported)).toEqual(new Set(wanted.map((r) => r.id)));
    // In insertion (start) order, each row's value from its own response.
    expect(exported).toEqual(wanted.map((r) => r.id));
    const valueById = new Map(wanted.map((r) => [r.id, String(JSON.parse(r.answers)[questions[0].id].value)]));
    for (const r of parsed.slice(1)) expect(r[3]).toBe(valueById.get(r[0]));
  });

  it("pages by bytes as well: 40 responses of 1 MB each (past a store call's 32 MiB) export whole, and a page stops at its byte bound", async () => {
    const { team, survey, questions } = await activeSurvey([{ type: "text", title: "Essay", settings: { multiline: true } }]);
    const at = "2031-01-01T00:00:00.000Z";
    const essay = "y".repeat(1024 * 1024);
    const answers = JSON.stringify({ [questions[0].id]: { value: essay, version: 1, answered_at: at } });
    const own = Array.from({ length: 40 }, () => storedResponse(crypto.randomUUID(), "completed", answers, at));
    // Imported 8 at a time: one import call stays under the limit too.
    for (let i = 0; i < own.length; i += 8)
      await surveyStore(env, survey.id).importResponses({ surveyId: survey.id, teamId: team.teamId }, own.slice(i, i + 8), []);

    const page = await surveyStore(env, survey.id).completedAfter(0, { limit: EXPORT_PAGE, maxBytes: 3 * 1024 * 1024 });
    expect(page.rows).toHaveLength(2);
    expect(page.more).toBe(true);
    // A bound below one row still gives that row.
    expect((await surveyStore(env, survey.id).completedAfter(0, { limit: EXPORT_PAGE, maxBytes: 1 })).rows).toHaveLength(1);

    const res = await exportOf(team.key, survey.id);
    expect(res.status).toBe(200);
    const parsed: string[][] = parse(await res.text());
    expect(parsed.slice(1).map((r) => r[0])).toEqual(own.map((r) => r.id));
    expect(parsed.slice(1).every((r) => r[3] === essay)).toBe(true);
  });

  it("reads each page as one range of the store's status index, never a scan or a sort", async () => {
    const details = await runInDurableObject(surveyStore(env, crypto.randomUUID()), async (_store, state) =>
      state.storage.sql
        .exec<{ detail: string }>(`EXPLAIN QUERY PLAN ${COMPLETED_AFTER_SQL}`, 0, 10)
        .toArray()
        .map((r) => r.detail),
    );
    expect(details).toEqual([expect.stringMatching(/^SEARCH responses USING INDEX responses_status_idx \(status=\? AND rowid>\?\)$/)]);
  });

  it("adds the generated questions of an AI-mode survey as title: answer lines in one column", async () => {
    const { team, survey, questions } = await activeSurvey([{ type: "rating", title: "How was support?" }], {
      mode: "ai",
      ai_config: { goal: "Improve support", target_questions: 3 },
    });
    let state = await startOk(survey.slug);
    const given: Array<[string, unknown]> = [];
    while (!state.finished) {
      const q = state.next_question;
      const value = q.type === "rating" ? 2 : q.type === "nps" ? 3 : q.type === "yes_no" ? false : q.options.length ? q.options[0] : "=too slow";
      given.push([q.title, value]);
      const res = await answer(survey.slug, state.id, q.id, value);
      expect(res.status).toBe(200);
      state = (await res.json<{ data: typeof state }>()).data;
    }
    expect((await complete(survey.slug, state.id)).status).toBe(200);
    expect(given.length).toBeGreaterThan(1);

    const rows: string[][] = parse(await (await exportOf(team.key, survey.id)).text());
    expect(rows[0]).toEqual(["response_id", "started_at", "completed_at", questions[0].title, "generated_questions"]);
    expect(rows[1][3]).toBe("2");
    const lines = given.slice(1).map(([title, value]) => `${title}: ${String(value)}`);
    expect(rows[1][4]).toBe(lines.join("\n"));
  });

  it("answers the header alone for a survey without completed responses", async () => {
    const { team, survey } = await activeSurvey([{ type: "rating", title: "Stars, please" }]);
    const res = await exportOf(team.key, survey.id);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`response_id,started_at,completed_at,"Stars, please"\r\n`);
  });

  it("answers 404 in the survey shape for another team's survey or an unknown id, 401 without a key, 403 without surveys:read", async () => {
    const { survey } = await activeSurvey([{ type: "rating", title: "Stars" }]);
    const stranger = await setupTeam();
    await expectError(await exportOf(stranger.key, survey.id), 404, { error: "Survey not found" });
    await expectError(await exportOf(stranger.key, crypto.randomUUID()), 404, { error: "Survey not found" });
    await expectError(await exportOf(stranger.key, "export"), 404, { error: "Survey not found" });
    await expectError(await call("GET", `surveys/${survey.id}/responses/export`), 401, { error: "Invalid or missing API key" });
    const writer = await setupTeam({ scopes: ["push:read"] });
    await expectError(await exportOf(writer.key, survey.id), 403, { error: "Insufficient scope" });
  });
});
