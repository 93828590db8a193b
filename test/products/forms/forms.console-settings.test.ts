// The console's form settings: a create with every setting the API has (fields, origins,
// redirect, recipients, webhook, files, retention, on/off) and an edit of each, post/redirect/get;
// the webhook secret shown once through the flash and equal to the one that signs; a refused post
// re-renders at 422 naming the field and stores nothing; viewers read only; deletion of a form and
// of a submission, a webhook re-send, and another team's form answering 404.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { decryptSecret } from "../../../src/platform/crypto";
import { call, json } from "../../helpers/api";
import { consoleTeam, followRedirect, memberOf, page } from "../../helpers/console";
import { postJson, storeSql } from "./forms.helpers";

const teamPage = (teamId: string, rest: string) => `/console/teams/${teamId}/${rest}`;

async function apiForms(key: string) {
  return (await json(await call("GET", "forms", { key }))).data as Array<Record<string, unknown> & { id: string }>;
}

/** The webhook secret a form holds, unsealed. */
async function heldSecret(formId: string): Promise<string | null> {
  const row = await env.DB.prepare("SELECT webhook_secret FROM forms WHERE id = ?").bind(formId).first<{ webhook_secret: string | null }>();
  return row?.webhook_secret ? decryptSecret(env.ENCRYPTION_KEY, row.webhook_secret) : null;
}

const secretOn = (html: string) => /data-testid="webhook-secret">\s*([^<\s]+)\s*</.exec(html)?.[1] ?? null;

describe("console form settings", () => {
  it("creates a form with every setting, and shows the webhook secret once", async () => {
    const team = await consoleTeam("developer");
    const created = await page("POST", teamPage(team.teamId, "forms"), {
      cookie: team.cookie,
      form: {
        name: "Support",
        enabled: ["off", "on"],
        fields: "email | email | required\nmessage | text | max 2000\n\nattachment | file\nage | number | optional",
        allowed_origins: "https://site.example\nhttps://www.site.example",
        redirect_url: "https://site.example/thanks",
        notify_emails: team.email,
        webhook_url: "https://hooks.example/forms",
        files_enabled: ["off", "on"],
        files_max_mb: "2.5",
        retention_days: "30",
      },
    });
    expect(created.status, await created.clone().text()).toBe(303);
    const [form] = await apiForms(team.key);
    expect(form).toMatchObject({
      name: "Support",
      enabled: true,
      fields: [
        { name: "email", type: "email", required: true, max_length: null },
        { name: "message", type: "text", required: false, max_length: 2000 },
        { name: "attachment", type: "file", required: false, max_length: null },
        { name: "age", type: "number", required: false, max_length: null },
      ],
      allowed_origins: ["https://site.example", "https://www.site.example"],
      redirect_url: "https://site.example/thanks",
      notify_emails: [team.email],
      webhook_url: "https://hooks.example/forms",
      files: { enabled: true, max_bytes: Math.round(2.5 * 1024 * 1024) },
      retention_days: 30,
    });
    expect(created.headers.get("location")).toBe(`${teamPage(team.teamId, `forms/${form!.id}`)}?notice=created-webhook`);
    const shown = await (await followRedirect(created, team.cookie)).text();
    const secret = secretOn(shown);
    expect(secret).toMatch(/^whsec_/);
    expect(secret).toBe(await heldSecret(form!.id));
    // Once: a reload shows no secret.
    const again = await (await page("GET", created.headers.get("location")!, { cookie: team.cookie })).text();
    expect(secretOn(again)).toBeNull();
    expect(again).not.toContain(secret!);

    // The settings page holds every value back, as lines the create form takes.
    const settings = await (await page("GET", teamPage(team.teamId, `forms/${form!.id}/settings`), { cookie: team.cookie })).text();
    expect(settings).toContain('data-testid="form-settings"');
    expect(settings).toContain("email | email | required\nmessage | text | max 2000\nattachment | file\nage | number");
    expect(settings).toContain('value="2.5"');
    expect(settings).toContain('value="30"');
    expect(settings).not.toContain(secret!);
  });

  it("edits every setting; a webhook added later shows its secret once, a cleared one is gone", async () => {
    const team = await consoleTeam("developer");
    await page("POST", teamPage(team.teamId, "forms"), { cookie: team.cookie, form: { name: "Plain" } });
    const [form] = await apiForms(team.key);
    expect(form).toMatchObject({ enabled: true, fields: null, webhook_url: null, files: { enabled: false }, retention_days: 90 });
    const settingsPath = teamPage(team.teamId, `forms/${form!.id}/settings`);
    const saved = await page("POST", settingsPath, {
      cookie: team.cookie,
      form: {
        name: "Renamed",
        enabled: "off",
        fields: "name | text | required | max 80",
        allowed_origins: "https://a.example, https://b.example",
        redirect_url: "https://a.example/done",
        notify_emails: team.email,
        webhook_url: "https://hooks.example/x",
        files_enabled: ["off", "on"],
        files_max_mb: "1",
        retention_days: "7",
      },
    });
    expect(saved.headers.get("location")).toBe(`${settingsPath}?notice=saved-webhook`);
    const [edited] = await apiForms(team.key);
    expect(edited).toMatchObject({
      name: "Renamed",
      enabled: false,
      fields: [{ name: "name", type: "text", required: true, max_length: 80 }],
      allowed_origins: ["https://a.example", "https://b.example"],
      redirect_url: "https://a.example/done",
      notify_emails: [team.email],
      webhook_url: "https://hooks.example/x",
      files: { enabled: true, max_bytes: 1024 * 1024 },
      retention_days: 7,
    });
    const secret = secretOn(await (await followRedirect(saved, team.cookie)).text());
    expect(secret).toBe(await heldSecret(form!.id));
    // Disabled: posts answer 404 (the public look-up of this isolate forgot the form at once).
    expect((await postJson(form!.id, { name: "x" })).status).toBe(404);

    // Clearing the redirect, the webhook and the fields; ticking the form back on.
    const cleared = await page("POST", settingsPath, {
      cookie: team.cookie,
      form: { name: "Renamed", enabled: ["off", "on"], fields: "", redirect_url: "", webhook_url: "", notify_emails: "", files_enabled: "off" },
    });
    expect(cleared.headers.get("location")).toBe(`${settingsPath}?notice=saved`);
    const [after] = await apiForms(team.key);
    expect(after).toMatchObject({ enabled: true, fields: null, redirect_url: null, webhook_url: null, notify_emails: [], files: { enabled: false } });
    expect(await heldSecret(form!.id)).toBeNull();
    expect((await postJson(form!.id, { name: "x" })).status).toBe(200);
  });

  it("refuses a bad create or edit at 422 naming the field, and stores nothing", async () => {
    const team = await consoleTeam("developer");
    const refusals: Array<[Record<string, string>, string]> = [
      [{ name: "A", fields: "age | integer" }, "Fields, line 1 (type)"],
      [{ name: "A", fields: "email | email | mandatory" }, "Fields, line 1"],
      [{ name: "A", fields: "_next | text" }, "Fields, line 1 (name)"],
      [{ name: "A", allowed_origins: "https://ok.example https://bad.example/path" }, "Allowed sites, entry 2"],
      [{ name: "A", redirect_url: "javascript:alert(1)" }, "Redirect"],
      [{ name: "A", notify_emails: "stranger@example.com" }, "Notification mail"],
      [{ name: "A", webhook_url: "ftp://hooks.example/x" }, "Webhook URL"],
      [{ name: "A", files_max_mb: "11" }, "Files (max bytes)"],
      [{ name: "A", retention_days: "0" }, "Keep submissions"],
      [{ name: "A", retention_days: "soon" }, "Keep submissions"],
      [{ name: "" }, "Name"],
    ];
    for (const [form, label] of refusals) {
      const res = await page("POST", teamPage(team.teamId, "forms"), { cookie: team.cookie, form });
      expect(res.status, JSON.stringify(form)).toBe(422);
      const html = await res.text();
      expect(html, JSON.stringify(form)).toContain(`${label}:`);
      // What was typed is shown again.
      if (form.fields) expect(html).toContain(form.fields);
    }
    expect(await apiForms(team.key)).toHaveLength(0);

    await page("POST", teamPage(team.teamId, "forms"), { cookie: team.cookie, form: { name: "Kept", redirect_url: "https://kept.example/" } });
    const [before] = await apiForms(team.key);
    const res = await page("POST", teamPage(team.teamId, `forms/${before!.id}/settings`), {
      cookie: team.cookie,
      form: { name: "Changed", redirect_url: "https://changed.example/", notify_emails: "stranger@example.com" },
    });
    expect(res.status).toBe(422);
    const html = await res.text();
    expect(html).toContain("Notification mail:");
    expect(html).toContain('value="Changed"');
    expect(await apiForms(team.key)).toEqual([before]);
  });

  it("lets viewers read the settings only", async () => {
    const team = await consoleTeam("developer");
    await page("POST", teamPage(team.teamId, "forms"), { cookie: team.cookie, form: { name: "F", webhook_url: "https://hooks.example/v" } });
    const [form] = await apiForms(team.key);
    const viewer = await memberOf(team.teamId, "viewer");
    const settingsPath = teamPage(team.teamId, `forms/${form!.id}/settings`);
    const html = await (await page("GET", settingsPath, { cookie: viewer.cookie })).text();
    expect(html).toContain('data-testid="form-settings-summary"');
    expect(html).toContain("https://hooks.example/v");
    expect(html).not.toContain('data-testid="form-settings"');
    expect(html).not.toContain('data-testid="delete-form"');
    const list = await (await page("GET", teamPage(team.teamId, "forms"), { cookie: viewer.cookie })).text();
    expect(list).not.toContain('data-testid="create-form"');
    expect((await page("POST", settingsPath, { cookie: viewer.cookie, form: { name: "Mine" } })).status).toBe(403);
    expect((await page("POST", teamPage(team.teamId, `forms/${form!.id}/delete`), { cookie: viewer.cookie })).status).toBe(403);
    expect(await apiForms(team.key)).toMatchObject([{ name: "F" }]);
  });

  it("deletes a submission, re-sends one to the webhook, and deletes the form", async () => {
    const team = await consoleTeam("developer");
    await page("POST", teamPage(team.teamId, "forms"), { cookie: team.cookie, form: { name: "F", webhook_url: "https://hooks.example/d" } });
    const [form] = await apiForms(team.key);
    const first = (await json(await postJson(form!.id, { a: "1" }))).id as string;
    const second = (await json(await postJson(form!.id, { a: "2" }))).id as string;
    const base = teamPage(team.teamId, `forms/${form!.id}`);
    const formHtml = await (await page("GET", base, { cookie: team.cookie })).text();
    expect(formHtml).toContain(`${base}/submissions/${first}/resend`);
    expect(formHtml).toContain(`${base}/settings`);

    const resent = await page("POST", `${base}/submissions/${first}/resend`, { cookie: team.cookie });
    expect(resent.headers.get("location")).toBe(`${base}?notice=resent`);
    const deliveries = (await json(await call("GET", `forms/${form!.id}/submissions/${first}/deliveries`, { key: team.key }))).data;
    expect(deliveries.map((d: { trigger: string }) => d.trigger).sort()).toEqual(["resend", "submission"]);

    const deleted = await page("POST", `${base}/submissions/${second}/delete`, { cookie: team.cookie });
    expect(deleted.headers.get("location")).toBe(`${base}?notice=deleted`);
    expect(await storeSql(form!.id, "SELECT id FROM submissions")).toEqual([{ id: first }]);

    const gone = await page("POST", `${base}/delete`, { cookie: team.cookie });
    expect(gone.headers.get("location")).toBe(`${teamPage(team.teamId, "forms")}?notice=deleted`);
    expect(await apiForms(team.key)).toHaveLength(0);
    expect((await call("GET", `forms/${form!.id}`, { key: team.key })).status).toBe(404);
  });

  it("answers another team's form settings with 404 and changes nothing", async () => {
    const a = await consoleTeam("owner");
    const b = await consoleTeam("owner");
    await page("POST", teamPage(a.teamId, "forms"), { cookie: a.cookie, form: { name: "A's" } });
    const [form] = await apiForms(a.key);
    expect((await page("GET", teamPage(b.teamId, `forms/${form!.id}/settings`), { cookie: b.cookie })).status).toBe(404);
    expect((await page("POST", teamPage(b.teamId, `forms/${form!.id}/settings`), { cookie: b.cookie, form: { name: "B's" } })).status).toBe(404);
    expect((await page("POST", teamPage(b.teamId, `forms/${form!.id}/delete`), { cookie: b.cookie })).status).toBe(404);
    expect(await apiForms(a.key)).toMatchObject([{ name: "A's" }]);
  });
});
