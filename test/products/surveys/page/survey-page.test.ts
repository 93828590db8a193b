// The hosted survey page, its script, the embed widget and the settings schema they own.
import { describe, expect, it } from "vitest";
import { assertSettingsUrls, resolveSettings } from "../../../../src/products/surveys/page/survey-settings";
import { call, json, setupTeam, type TestTeam } from "../../../helpers/api";

async function activeSurvey(team: TestTeam, slug: string, extra: Record<string, unknown> = {}) {
  const created = await call("POST", "surveys", { key: team.key, body: { name: "Team pulse", slug, ...extra } });
  expect(created.status).toBe(201);
  const id = (await json(created)).data.id as string;
  const question = await call("POST", `surveys/${id}/questions`, { key: team.key, body: { type: "rating", title: "How was it?", position: 1 } });
  expect(question.status).toBe(201);
  expect((await call("POST", `surveys/${id}/activate`, { key: team.key })).status).toBe(200);
  return id;
}

const slug = () => `page-${crypto.randomUUID().slice(0, 8)}`;

describe("hosted page /s/:slug", () => {
  it("serves an active survey with its settings applied and a strict content security policy", async () => {
    const team = await setupTeam();
    const s = slug();
    await activeSurvey(team, s, {
      settings: { theme: { primary_color: "#0b6e4f" }, button_labels: { start: "Begin" }, show_progress: false, thank_you_message: "Cheers" },
    });
    const res = await call("GET", `/s/${s}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(res.headers.get("x-ratelimit-limit")).toBe("200");
    const html = await res.text();
    expect(html).toContain("--primary:#0b6e4f");
    expect(html).toContain('<script src="/s/_/survey.js" defer></script>');
    const config = JSON.parse(/<script type="application\/json" id="survey-config">(.*?)<\/script>/s.exec(html)![1]);
    expect(config).toMatchObject({
      slug: s,
      name: "Team pulse",
      questionCount: 1,
      api: `/api/v1/surveys/${s}`,
      settings: { labels: { start: "Begin", next: "Next" }, showProgress: false, thankYou: "Cheers", redirectUrl: null },
    });
    expect(html).not.toMatch(/https?:\/\/(?!www\.w3\.org)/); // no third-party requests
  });

  it("escapes survey names in the markup and in the embedded configuration", async () => {
    const team = await setupTeam();
    const s = slug();
    const id = await activeSurvey(team, s);
    await call("PATCH", `surveys/${id}`, { key: team.key, body: { name: "</script><script>alert(1)</script>" } });
    const html = await (await call("GET", `/s/${s}`)).text();
    expect(html).not.toContain("<script>alert(1)");
    expect(html).toContain("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("\\u003c/script\\u003e");
  });

  it("shows a clear 410 page for a closed survey and a 404 page for unknown and draft slugs", async () => {
    const team = await setupTeam();
    const s = slug();
    const id = await activeSurvey(team, s);
    await call("POST", `surveys/${id}/close`, { key: team.key });
    const closed = await call("GET", `/s/${s}`);
    expect(closed.status).toBe(410);
    const closedHtml = await closed.text();
    expect(closedHtml).toContain('data-state="notice"');
    expect(closedHtml).toContain("closed");
    expect(closedHtml).not.toContain("survey.js");

    const unknown = await call("GET", `/s/no-such-${slug()}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain("Survey not found");

    const draftSlug = slug();
    await call("POST", "surveys", { key: team.key, body: { name: "Draft", slug: draftSlug } });
    expect((await call("GET", `/s/${draftSlug}`)).status).toBe(404);
  });

  it("a slug change invalidates the old invitation URL", async () => {
    const team = await setupTeam();
    const oldSlug = slug();
    const id = await activeSurvey(team, oldSlug);
    const newSlug = slug();
    expect((await call("PATCH", `surveys/${id}`, { key: team.key, body: { slug: newSlug } })).status).toBe(200);
    expect((await call("GET", `/s/${oldSlug}`)).status).toBe(404);
    expect((await call("GET", `/s/${newSlug}`)).status).toBe(200);
  });

  it("gives the page its back label, and the script a back step and outlined stars (behaviour: e2e survey-page.mjs)", async () => {
    const team = await setupTeam();
    const s = slug();
    await activeSurvey(team, s, { settings: { button_labels: { back: "Previous" } } });
    const html = await (await call("GET", `/s/${s}`)).text();
    const config = JSON.parse(/<script type="application\/json" id="survey-config">(.*?)<\/script>/s.exec(html)![1]);
    expect(config.settings.labels).toMatchObject({ back: "Previous", next: "Next" });
    // Unchosen stars are outlines; only .lit ones are filled.
    expect(html).toMatch(/\.star svg\{[^}]*fill:none/);
    expect(html).toMatch(/\.star\.lit svg\{fill:#f5b301\}/);
    const script = await (await call("GET", "/s/_/survey.js")).text();
    expect(script).toContain('"/back"');
    expect(script).toContain("data.can_go_back");
    expect(script).toContain("data.previous_answer");
    expect(script).not.toContain("★"); // a text glyph takes the platform font's colours
  });

  it("serves the page script and the embed widget as JavaScript", async () => {
    const page = await call("GET", "/s/_/survey.js");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/javascript/);
    const script = await page.text();
    for (const type of ["text", "email", "choice", "multi_choice", "rating", "nps", "scale", "slider", "matrix", "ranking", "yes_no", "date"]) {
      expect(script).toContain(`${type}: function`);
    }
    const embed = await call("GET", "/embed.js");
    expect(embed.status).toBe(200);
    expect(embed.headers.get("access-control-allow-origin")).toBe("*");
    const widget = await embed.text();
    expect(widget).toContain('getAttribute("data-survey")');
    expect(widget).toContain("edge-survey:completed");
  });
});

describe("settings schema", () => {
  it("refuses bad colours, labels, types and unsafe redirect URLs with the surveys validation body", async () => {
    const team = await setupTeam();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ theme: { primary_color: "red" } }, "settings.theme.primary_color"],
      [{ theme: { accent: "#fff" } }, "settings.theme.accent"],
      [{ theme: "neon" }, "settings.theme"],
      [{ button_labels: { next: "x".repeat(41) } }, "settings.button_labels.next"],
      [{ show_progress: "yes" }, "settings.show_progress"],
      [{ redirect_delay_seconds: 31 }, "settings.redirect_delay_seconds"],
      [{ redirect_url: "javascript:alert(1)" }, "settings.redirect_url"],
    ];
    for (const [settings, field] of cases) {
      const res = await call("POST", "surveys", { key: team.key, body: { name: "S", slug: slug(), settings } });
      expect(res.status, JSON.stringify(settings)).toBe(422);
      const body = await json(res);
      expect(body.error).toBe("Validation failed");
      expect(Object.keys(body.errors)).toContain(field);
    }
    const patchTarget = await call("POST", "surveys", { key: team.key, body: { name: "S", slug: slug() } });
    const id = (await json(patchTarget)).data.id;
    const patch = await call("PATCH", `surveys/${id}`, { key: team.key, body: { settings: { redirect_url: "ftp://example.com/x" } } });
    expect(patch.status).toBe(422);
  });

  it("keeps unknown keys as free-form display settings", async () => {
    const team = await setupTeam();
    const res = await call("POST", "surveys", {
      key: team.key,
      body: { name: "S", slug: slug(), settings: { logo: "https://example.com/logo.png", redirect_url: "https://example.com/thanks" } },
    });
    expect(res.status).toBe(201);
    expect((await json(res)).data.settings).toEqual({ logo: "https://example.com/logo.png", redirect_url: "https://example.com/thanks" });
  });

  it("refuses private redirect targets where the deployment does not allow them", () => {
    expect(() => assertSettingsUrls({ redirect_url: "https://10.0.0.1/x" }, { allowPrivate: false })).toThrow(/Validation failed/);
    expect(() => assertSettingsUrls({ redirect_url: "http://example.com/x" }, { allowPrivate: false })).toThrow();
    expect(() => assertSettingsUrls({ redirect_url: "https://example.com/x" }, { allowPrivate: false })).not.toThrow();
  });

  it("accepts a named theme, alone or as the base of custom colours", async () => {
    const team = await setupTeam();
    const s = slug();
    await activeSurvey(team, s, { settings: { theme: "dark" } });
    expect(await (await call("GET", `/s/${s}`)).text()).toContain("--bg:#111522");
    expect(resolveSettings({ theme: { base: "dark", primary_color: "#ff0000" } })).toMatchObject({ dark: true, primary: "#ff0000", background: "#111522" });
  });

  it("resolves defaults, and falls back to them for stored values that no longer validate", () => {
    expect(resolveSettings({})).toMatchObject({ primary: "#2457d6", showProgress: true, labels: { start: "Start", submit: "Submit" }, redirectDelay: 3 });
    expect(resolveSettings({ theme: { primary_color: "not a colour" } }).primary).toBe("#2457d6");
  });
});
