// A survey's settings page in the console: its own settings (name, address, display settings,
// other keys kept), sections (create, rename, order, delete; the builder offers them to a
// question), result webhooks (create with the signing secret shown once, delete), duplication
// and deletion after typing the name. Each: the API's service and a 303 to a page that reloads
// without repeating anything; a refused form at 422 naming the field and changing nothing; a
// viewer refused (403); another team's survey 404.
import { describe, expect, it } from "vitest";
import { call, json } from "../helpers/api";
import { consoleTeam, followRedirect, memberOf, page } from "../helpers/console";
import { addQuestion, createSurvey, slug } from "../products/surveys/helpers";

const path = (teamId: string, rest: string) => `/console/teams/${teamId}/surveys/${rest}`;
const get = async (key: string, rest: string) => {
  const res = await call("GET", rest, { key });
  return { status: res.status, data: res.status === 200 ? (await json(res)).data : null };
};

describe("surveys console: a survey's settings", () => {
  it("saves name, address and display settings, keeping the keys it does not edit; a reload repeats nothing", async () => {
    const team = await consoleTeam("developer");
    const survey = await createSurvey(team.key, { name: "NPS", settings: { button_labels: { submit: "Send" } } });
    const surveyPage = await (await page("GET", path(team.teamId, survey.id), { cookie: team.cookie })).text();
    expect(surveyPage).toContain(`href="${path(team.teamId, `${survey.id}/settings`)}"`);
    const form = await page("GET", path(team.teamId, `${survey.id}/settings`), { cookie: team.cookie });
    expect(form.status).toBe(200);
    const address = slug("renamed");
    const res = await page("POST", path(team.teamId, `${survey.id}/settings`), {
      cookie: team.cookie,
      form: { name: "NPS 2031", slug: address, theme: "dark", thank_you_message: "Thanks!", redirect_url: "", redirect_delay_seconds: "" },
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${path(team.teamId, `${survey.id}/settings`)}?notice=saved`);
    expect(await (await followRedirect(res, team.cookie)).text()).toContain("Settings saved.");
    const after = (await get(team.key, `surveys/${survey.id}`)).data;
    expect(after).toMatchObject({ name: "NPS 2031", slug: address });
    expect(after.settings).toEqual({ button_labels: { submit: "Send" }, theme: "dark", thank_you_message: "Thanks!", show_progress: false });
    expect((await page("GET", res.headers.get("location")!, { cookie: team.cookie })).status).toBe(200);
    expect((await get(team.key, `surveys/${survey.id}`)).data.updated_at).toBe(after.updated_at);
  });

  it("answers a taken address or a bad delay at 422 naming the field, and changes nothing", async () => {
    const team = await consoleTeam("owner");
    const taken = await createSurvey(team.key);
    const survey = await createSurvey(team.key, { name: "NPS" });
    const before = (await get(team.key, `surveys/${survey.id}`)).data;
    const delay = await page("POST", path(team.teamId, `${survey.id}/settings`), {
      cookie: team.cookie,
      form: { name: "NPS", slug: survey.slug, redirect_delay_seconds: "99" },
    });
    expect(delay.status).toBe(422);
    expect(await delay.text()).toContain("<li>redirect delay seconds: ");
    const slugTaken = await page("POST", path(team.teamId, `${survey.id}/settings`), { cookie: team.cookie, form: { name: "Other", slug: taken.slug } });
    expect(slugTaken.status).toBe(422);
    const html = await slugTaken.text();
    expect(html).toContain("<li>slug: has already been taken</li>");
    expect(html).toContain('value="Other"');
    expect((await get(team.key, `surveys/${survey.id}`)).data).toEqual(before);
  });

  it("adds, renames, orders and deletes sections; the builder lets a question pick one", async () => {
    const team = await consoleTeam("developer");
    const survey = await createSurvey(team.key);
    const base = path(team.teamId, `${survey.id}`);
    const added = await page("POST", `${base}/sections`, { cookie: team.cookie, form: { title: "About you", position: "1" } });
    expect(added.status).toBe(303);
    expect(added.headers.get("location")).toBe(`${base}/settings?notice=section-added`);
    const [section] = (await get(team.key, `surveys/${survey.id}/sections`)).data;
    expect(section).toMatchObject({ title: "About you", position: 1 });

    expect((await page("POST", `${base}/sections/${section.id}`, { cookie: team.cookie, form: { title: "You", position: "3" } })).status).toBe(303);
    expect((await get(team.key, `surveys/${survey.id}/sections`)).data[0]).toMatchObject({ title: "You", position: 3 });
    const refused = await page("POST", `${base}/sections/${section.id}`, { cookie: team.cookie, form: { title: "x", position: "0" } });
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain("<li>position: must be at least 1</li>");
    expect((await get(team.key, `surveys/${survey.id}/sections`)).data[0]).toMatchObject({ title: "You", position: 3 });

    // The builder offers the section; a question added with it is in it.
    const builder = await (await page("GET", base, { cookie: team.cookie })).text();
    expect(builder).toContain(`<option value="${section.id}">You</option>`);
    const q = await page("POST", `${base}/questions`, {
      cookie: team.cookie,
      form: { type: "text", title: "Name?", has_section: "1", section_id: section.id },
    });
    expect(q.status).toBe(303);
    const [question] = (await get(team.key, `surveys/${survey.id}/questions`)).data;
    expect(question.section_id).toBe(section.id);

    const deleted = await page("POST", `${base}/sections/${section.id}/delete`, { cookie: team.cookie, form: {} });
    expect(deleted.headers.get("location")).toBe(`${base}/settings?notice=section-deleted`);
    expect((await get(team.key, `surveys/${survey.id}/sections`)).data).toEqual([]);
    expect((await get(team.key, `surveys/${survey.id}/questions`)).data[0].section_id).toBeNull();
    expect((await page("POST", `${base}/sections/${section.id}/delete`, { cookie: team.cookie, form: {} })).status).toBe(404);
  });

  it("adds a result webhook with its secret shown once, refuses a private address, and deletes it", async () => {
    const team = await consoleTeam("developer");
    const survey = await createSurvey(team.key);
    const base = path(team.teamId, `${survey.id}`);
    const refused = await page("POST", `${base}/webhooks`, { cookie: team.cookie, form: { url: "http://10.0.0.1/hook" } });
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain("<li>url: ");
    expect((await get(team.key, `surveys/${survey.id}/webhooks`)).data).toEqual([]);

    const res = await page("POST", `${base}/webhooks`, { cookie: team.cookie, form: { url: "https://hooks.example.com/survey" } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${base}/settings?notice=webhook-added`);
    const shown = await (await followRedirect(res, team.cookie)).text();
    const secret = /data-testid="new-webhook-secret">([^<]+)</.exec(shown)?.[1];
    expect(secret).toMatch(/^whsec_/);
    // The reload shows it no more, and made no second webhook.
    const reloaded = await (await page("GET", res.headers.get("location")!, { cookie: team.cookie })).text();
    expect(reloaded).not.toContain(secret!);
    expect(reloaded).toContain("was shown once");
    const hooks = (await get(team.key, `surveys/${survey.id}/webhooks`)).data;
    expect(hooks).toHaveLength(1);

    const deleted = await page("POST", `${base}/webhooks/${hooks[0].id}/delete`, { cookie: team.cookie, form: {} });
    expect(deleted.headers.get("location")).toBe(`${base}/settings?notice=webhook-deleted`);
    expect((await get(team.key, `surveys/${survey.id}/webhooks`)).data).toEqual([]);
    expect((await page("POST", `${base}/webhooks/${hooks[0].id}/delete`, { cookie: team.cookie, form: {} })).status).toBe(404);
  });

  it("duplicates a survey into a draft with its questions, once per post", async () => {
    const team = await consoleTeam("developer");
    const survey = await createSurvey(team.key, { name: "NPS" });
    await addQuestion(team.key, survey.id, { type: "nps", title: "Recommend us?", position: 1 });
    const res = await page("POST", path(team.teamId, `${survey.id}/duplicate`), { cookie: team.cookie, form: {} });
    expect(res.status).toBe(303);
    const location = res.headers.get("location")!;
    const copyId = /surveys\/([^/?]+)\?notice=duplicated$/.exec(location)?.[1];
    expect(copyId).toBeTruthy();
    expect(copyId).not.toBe(survey.id);
    const landed = await (await page("GET", location, { cookie: team.cookie })).text();
    expect(landed).toContain("This is a draft copy");
    expect(landed).toContain("Recommend us?");
    const all = (await get(team.key, "surveys")).data as Array<{ id: string }>;
    expect(all).toHaveLength(2);
    expect((await page("GET", location, { cookie: team.cookie })).status).toBe(200);
    expect((await get(team.key, "surveys")).data).toHaveLength(2);
  });

  it("deletes a survey only after its name is typed; a re-post is 404", async () => {
    const team = await consoleTeam("developer");
    const survey = await createSurvey(team.key, { name: "NPS" });
    const target = path(team.teamId, `${survey.id}/delete`);
    expect(await (await page("GET", target, { cookie: team.cookie })).text()).toContain('data-testid="confirm-delete-survey"');
    const wrong = await page("POST", target, { cookie: team.cookie, form: { confirm: "yes", confirm_name: "nps" } });
    expect(wrong.status).toBe(422);
    expect((await get(team.key, `surveys/${survey.id}`)).status).toBe(200);
    const res = await page("POST", target, { cookie: team.cookie, form: { confirm: "yes", confirm_name: "NPS" } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/console/teams/${team.teamId}/surveys?notice=deleted`);
    expect(await (await followRedirect(res, team.cookie)).text()).toContain("The survey was deleted");
    expect((await get(team.key, `surveys/${survey.id}`)).status).toBe(404);
    expect((await page("POST", target, { cookie: team.cookie, form: { confirm: "yes", confirm_name: "NPS" } })).status).toBe(404);
  });

  it("refuses a viewer every write (403) and another team every write (404), changing nothing", async () => {
    const team = await consoleTeam("owner");
    const survey = await createSurvey(team.key, { name: "NPS" });
    const section = (await json(await call("POST", `surveys/${survey.id}/sections`, { key: team.key, body: { title: "A", position: 1 } }))).data;
    const hook = (await json(await call("POST", `surveys/${survey.id}/webhooks`, { key: team.key, body: { url: "https://hooks.example.com/s" } }))).data;
    const viewer = await memberOf(team.teamId, "viewer");
    const other = await consoleTeam("owner");
    const snapshot = async () =>
      JSON.stringify(
        await Promise.all(["surveys", `surveys/${survey.id}`, `surveys/${survey.id}/sections`, `surveys/${survey.id}/webhooks`].map((r) => get(team.key, r))),
      );
    const before = await snapshot();
    const writes: Array<[string, Record<string, string>]> = [
      ["settings", { name: "x", slug: survey.slug }],
      ["sections", { title: "B", position: "2" }],
      [`sections/${section.id}`, { title: "C", position: "1" }],
      [`sections/${section.id}/delete`, {}],
      ["webhooks", { url: "https://hooks.example.com/t" }],
      [`webhooks/${hook.id}/delete`, {}],
      ["duplicate", {}],
      ["delete", { confirm: "yes", confirm_name: "NPS" }],
    ];
    for (const [rest, form] of writes) {
      expect((await page("POST", path(team.teamId, `${survey.id}/${rest}`), { cookie: viewer.cookie, form })).status, rest).toBe(403);
      expect((await page("POST", path(other.teamId, `${survey.id}/${rest}`), { cookie: other.cookie, form })).status, rest).toBe(404);
    }
    expect((await page("GET", path(team.teamId, `${survey.id}/settings`), { cookie: viewer.cookie })).status).toBe(403);
    expect(await snapshot()).toBe(before);
  });
});
