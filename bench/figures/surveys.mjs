// Survey summary (issue 15 d): `GET /surveys/:id/summary` over 100,000 completed responses against
// reading the survey itself (`GET /surveys/:id`), and the console's survey page over the same
// responses (issue 25) against that summary, the API call it makes: the page reads the survey, the
// summary and the first page of responses and renders the charts. The responses are seeded in SQL
// through the bench Worker's operator-only helper (the public flow would take hours); the summary
// and the page must count exactly what was seeded. Ratio of median latency of sequential requests
// (one at a time, DURATION seconds per side and round, alternating).
import { randomBytes } from "node:crypto";
import { api, sequential } from "../lib.mjs";

const RESPONSES = Number(process.env.SURVEY_RESPONSES ?? 100_000);

export default {
  name: "surveys",
  async run({ url, adminToken, createTeamWithKey, median, rounds, duration }) {
    const ownerEmail = `bench-${randomBytes(4).toString("hex")}@example.com`;
    const { key, teamId } = await createTeamWithKey({ plan: "scale", scopes: ["surveys:read", "surveys:write"], ownerEmail });
    const survey = await api(url, "POST", "surveys", key, { name: "bench", slug: `bench-${randomBytes(6).toString("hex")}` });
    const rating = await api(url, "POST", `surveys/${survey.id}/questions`, key, { type: "rating", title: "How was it?", position: 1 });
    const choice = await api(url, "POST", `surveys/${survey.id}/questions`, key, { type: "choice", title: "Pick one", position: 2, options: ["a", "b", "c"] });
    const yesNo = await api(url, "POST", `surveys/${survey.id}/questions`, key, { type: "yes_no", title: "Again?", position: 3 });
    await api(url, "POST", `surveys/${survey.id}/activate`, key);

    const seeded = await fetch(`${url}/__bench/seed/survey`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({
        survey_id: survey.id,
        count: RESPONSES,
        values: { [rating.id]: [1, 2, 3, 4, 5], [choice.id]: ["a", "b", "c"], [yesNo.id]: [true, false] },
      }),
    });
    if (seeded.status !== 201) throw new Error(`seeding answered ${seeded.status}: ${await seeded.text()}`);

    // What the summary must say: response i answered rating (i % 5) + 1, choice "abc"[i % 3], yes when i is even.
    const share = (k, of) => Math.floor(RESPONSES / of) + (k < RESPONSES % of ? 1 : 0);
    const summary = await api(url, "GET", `surveys/${survey.id}/summary`, key);
    const byId = Object.fromEntries(summary.questions.map((q) => [q.question_id, q]));
    const expect = (label, actual, wanted) => {
      if (JSON.stringify(actual) !== JSON.stringify(wanted)) throw new Error(`summary ${label}: ${JSON.stringify(actual)}, seeded ${JSON.stringify(wanted)}`);
    };
    expect("responses", summary.responses, { total: RESPONSES, completed: RESPONSES, in_progress: 0 });
    expect("response_count", summary.response_count, RESPONSES);
    expect("rating distribution", byId[rating.id].distribution, Object.fromEntries([1, 2, 3, 4, 5].map((v, k) => [String(v), share(k, 5)])));
    expect("choice counts", byId[choice.id].counts, { a: share(0, 3), b: share(1, 3), c: share(2, 3) });
    expect("yes/no", [byId[yesNo.id].yes, byId[yesNo.id].no], [share(0, 2), share(1, 2)]);
    for (const q of [rating, choice, yesNo]) expect(`answered of ${q.type}`, byId[q.id].answered, RESPONSES);

    // The console page, signed in as the team's owner through an operator sign-in link.
    const cookie = await consoleSession(url, adminToken, ownerEmail);
    const pageUrl = `${url}/console/teams/${teamId}/surveys/${survey.id}`;
    const html = await (await fetch(pageUrl, { headers: { cookie } })).text();
    if (!html.includes(`data-testid="response-count" data-count="${RESPONSES}"`))
      throw new Error(`the console page does not show ${RESPONSES} completed responses`);

    const headers = { authorization: `Bearer ${key}` };
    const runs = { survey: [], summary: [], page: [] };
    for (let i = 0; i < rounds; i++) {
      for (const [name, path] of [
        ["survey", `surveys/${survey.id}`],
        ["summary", `surveys/${survey.id}/summary`],
      ]) {
        runs[name].push(median(await sequential(`${url}/api/v1/${path}`, { headers, seconds: duration })));
      }
      runs.page.push(median(await sequential(pageUrl, { headers: { cookie }, seconds: duration })));
    }
    const ms = (name) => median(runs[name]);
    return [
      {
        figure: `survey summary over ${RESPONSES.toLocaleString("en-US")} responses, median ms`,
        value: ms("summary").toFixed(1),
        baseline: `${ms("survey").toFixed(1)} (GET /surveys/:id)`,
        ratio: `${(ms("summary") / ms("survey")).toFixed(2)}×`,
        note: "sequential requests; counts equal the seeded numbers",
      },
      {
        figure: `console survey page over ${RESPONSES.toLocaleString("en-US")} responses, median ms`,
        value: ms("page").toFixed(1),
        baseline: `${ms("summary").toFixed(1)} (GET /surveys/:id/summary)`,
        ratio: `${(ms("page") / ms("summary")).toFixed(2)}×`,
        note: "sequential requests, signed in; the page reads the survey, the summary and a page of responses, and shows the seeded count",
      },
    ];
  },
};

/** A console session cookie for `email`: an operator sign-in link, used with the console's Origin. */
async function consoleSession(url, adminToken, email) {
  const minted = await fetch(`${url}/api/v1/admin/sign-in-links`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ email }),
  });
  if (minted.status !== 201) throw new Error(`sign-in link answered ${minted.status}: ${await minted.text()}`);
  const link = new URL((await minted.json()).data.url);
  const used = await fetch(`${url}${link.pathname}`, { method: "POST", headers: { origin: link.origin }, redirect: "manual" });
  const cookie = /edp_session=[^;]+/.exec(used.headers.get("set-cookie") ?? "")?.[0];
  if (used.status !== 303 || !cookie) throw new Error(`the sign-in link answered ${used.status} without a session`);
  return cookie;
}
