// The console's Forms pages: the list with counts, creating a form (303), a form's inbox and spam
// rows, the HTML snippet and fetch example, the CSV export, file downloads as attachments, the
// webhook deliveries, the moves; visitor text escaped; roles, tenancy and the Origin rule.
import { describe, expect, it } from "vitest";
import { call, json } from "../../helpers/api";
import { consoleTeam, memberOf, page } from "../../helpers/console";
import { postJson, postMultipart, storeSql } from "./forms.helpers";

const teamPage = (teamId: string, rest: string) => `/console/teams/${teamId}/${rest}`;

describe("console forms pages", () => {
  it("redirects to sign-in without a session", async () => {
    const res = await page("GET", teamPage(crypto.randomUUID(), "forms"));
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/sign-in");
  });

  it("creates a form (303), lists it with counts, and shows its snippet, fetch example, inbox and spam", async () => {
    const team = await consoleTeam("developer");
    const empty = await (await page("GET", teamPage(team.teamId, "forms"), { cookie: team.cookie })).text();
    expect(empty).toContain("No forms yet");
    const created = await page("POST", teamPage(team.teamId, "forms"), {
      cookie: team.cookie,
      form: { name: "Contact", redirect_url: "https://site.example/thanks", allowed_origins: "https://site.example", files_enabled: "on" },
    });
    expect(created.status).toBe(303);
    const [form] = (await json(await call("GET", "forms", { key: team.key }))).data;
    expect(form).toMatchObject({
      name: "Contact",
      redirect_url: "https://site.example/thanks",
      allowed_origins: ["https://site.example"],
      files: { enabled: true },
    });
    expect(created.headers.get("location")).toBe(`${teamPage(team.teamId, `forms/${form.id}`)}?notice=created`);

    await postJson(form.id, { name: "<img src=x onerror=alert(1)>", note: "hello" });
    await postJson(form.id, { name: "bot", _gotcha: "x" });
    await postMultipart(form.id, [{ name: "cv", value: "file", filename: "cv.txt" }]);

    const list = await (await page("GET", teamPage(team.teamId, "forms"), { cookie: team.cookie })).text();
    expect(list.match(/data-testid="form-row"/g)).toHaveLength(1);
    expect(list).toContain('<td data-testid="inbox-count" data-label="Inbox">2</td>');

    const res = await page("GET", teamPage(team.teamId, `forms/${form.id}`), { cookie: team.cookie });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html.match(/data-testid="submission-row"/g)).toHaveLength(2);
    expect(html).not.toContain("<img src=x");
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(html).toContain(`&lt;form action=&quot;http://app.test/f/${form.id}&quot; method=&quot;POST&quot;&gt;`);
    expect(html).toContain("_gotcha");
    expect(html).toContain("await fetch(");
    expect(html).toContain('data-testid="export-csv"');
    const spam = await (await page("GET", teamPage(team.teamId, `forms/${form.id}?status=spam`), { cookie: team.cookie })).text();
    expect(spam.match(/data-testid="submission-row" data-status="spam"/g)).toHaveLength(1);

    const csv = await page("GET", teamPage(team.teamId, `forms/${form.id}/export`), { cookie: team.cookie });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-disposition")).toContain("attachment");
    expect((await csv.text()).split("\r\n").filter(Boolean)).toHaveLength(3);

    const withFile = (await json(await call("GET", `forms/${form.id}/submissions`, { key: team.key }))).data.find((s: { files: unknown[] }) => s.files.length);
    const file = await page("GET", teamPage(team.teamId, `forms/${form.id}/submissions/${withFile.id}/files/${withFile.files[0].id}`), { cookie: team.cookie });
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("application/octet-stream");
    expect(file.headers.get("content-security-policy")).toBe("sandbox");
  });

  it("refuses a bad create with 422 and the reasons, storing nothing", async () => {
    const team = await consoleTeam("developer");
    const res = await page("POST", teamPage(team.teamId, "forms"), { cookie: team.cookie, form: { name: "", allowed_origins: "not an origin" } });
    expect(res.status).toBe(422);
    expect(await res.text()).toContain("Allowed sites, entry 1:");
    expect((await json(await call("GET", "forms", { key: team.key }))).data).toHaveLength(0);
  });

  it("moves a submission to spam and back from the page; a viewer sees no buttons and is refused", async () => {
    const team = await consoleTeam("developer");
    await page("POST", teamPage(team.teamId, "forms"), { cookie: team.cookie, form: { name: "F" } });
    const [form] = (await json(await call("GET", "forms", { key: team.key }))).data;
    const { id } = await json(await postJson(form.id, { a: "b" }));
    const moved = await page("POST", teamPage(team.teamId, `forms/${form.id}/submissions/${id}/spam`), { cookie: team.cookie });
    expect(moved.status).toBe(303);
    expect(await storeSql(form.id, "SELECT status FROM submissions")).toEqual([{ status: "spam" }]);
    await page("POST", teamPage(team.teamId, `forms/${form.id}/submissions/${id}/not-spam`), { cookie: team.cookie });
    expect(await storeSql(form.id, "SELECT status FROM submissions")).toEqual([{ status: "inbox" }]);

    const viewer = await memberOf(team.teamId, "viewer");
    const html = await (await page("GET", teamPage(team.teamId, `forms/${form.id}`), { cookie: viewer.cookie })).text();
    expect(html).toContain('data-testid="submission-row"');
    expect(html).not.toContain(">Spam</button>");
    const refused = await page("POST", teamPage(team.teamId, `forms/${form.id}/submissions/${id}/spam`), { cookie: viewer.cookie });
    expect(refused.status).toBe(403);
    const noCreate = await page("POST", teamPage(team.teamId, "forms"), { cookie: viewer.cookie, form: { name: "x" } });
    expect(noCreate.status).toBe(403);
  });

  it("answers another team's form with 404, and refuses a post without the app's Origin", async () => {
    const a = await consoleTeam("owner");
    const b = await consoleTeam("owner");
    await page("POST", teamPage(a.teamId, "forms"), { cookie: a.cookie, form: { name: "A's" } });
    const [form] = (await json(await call("GET", "forms", { key: a.key }))).data;
    expect((await page("GET", teamPage(b.teamId, `forms/${form.id}`), { cookie: b.cookie })).status).toBe(404);
    expect((await page("GET", teamPage(b.teamId, `forms/${form.id}/export`), { cookie: b.cookie })).status).toBe(404);
    const crossOrigin = await page("POST", teamPage(a.teamId, "forms"), { cookie: a.cookie, form: { name: "x" }, origin: "https://evil.example" });
    expect(crossOrigin.status).toBe(403);
  });
});
