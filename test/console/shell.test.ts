// The console shell: landing page, sign-in redirects, the layout, security headers and CSP, the
// Origin rule, another team's ids, and a page behind every navigation entry.
import { navEntries } from "../../src/console/nav";
import { describe, expect, it } from "vitest";
import { consoleTeam, memberOf, page } from "../helpers/console";
import { setupTeam } from "../helpers/api";

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

describe("console shell", () => {
  it("serves a landing page at / linking the console, sign-up and the API reference", async () => {
    const res = await page("GET", "/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    expect(html.startsWith("<!doctype html>")).toBe(true);
    for (const href of ["/console/sign-in", "/console/sign-up", "/api/v1/docs", "/assets/console.css"]) expect(html).toContain(`href="${href}"`);
    expect(res.headers.get("content-security-policy")).toBe(CSP);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
  });

  it("redirects every console page to the sign-in page without a session", async () => {
    for (const path of ["/console", "/console/teams/00000000-0000-4000-8000-000000000000/keys", "/console/teams/x/members"]) {
      const res = await page("GET", path);
      expect(res.status, path).toBe(303);
      expect(res.headers.get("location")).toBe("/console/sign-in");
    }
    const bad = await page("GET", "/console/teams/x/keys", { cookie: "edp_session=not-a-real-session-token-at-all-0000000000000" });
    expect(bad.status).toBe(303);
  });

  it("renders the layout with the team switcher, the navigation and no inline script or style", async () => {
    const team = await consoleTeam("owner");
    const res = await page("GET", `/console/teams/${team.teamId}/keys`, { cookie: team.cookie });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('<script src="/assets/console.js" defer="">');
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=/);
    expect(html).not.toMatch(/<style/);
    expect(html).toContain(`/console/teams/${team.teamId}/members`);
    expect(html).toContain('aria-current="page"');
    for (const [name, value] of Object.entries({ "content-security-policy": CSP, "x-frame-options": "DENY", "cache-control": "no-store" })) {
      expect(res.headers.get(name)).toBe(value);
    }
  });

  it("answers 404 for another team's id and for unknown ids", async () => {
    const team = await consoleTeam("owner");
    const other = await setupTeam();
    for (const id of [other.teamId, "00000000-0000-4000-8000-000000000000", "nope"]) {
      const res = await page("GET", `/console/teams/${id}/keys`, { cookie: team.cookie });
      expect(res.status, id).toBe(404);
      expect(await res.text()).toContain("Page not found");
    }
  });

  it("shows an error to a signed-in member as one: inside the team's console on its pages, under their own top bar elsewhere, never offering to sign in", async () => {
    const team = await consoleTeam("viewer");
    const signedInBar = (html: string) => {
      expect(html).toContain(team.email);
      expect(html).toContain('action="/console/sign-out"');
      expect(html).not.toContain('href="/console/sign-up"');
      expect(html).not.toContain('href="/console/sign-in"');
    };
    // A page of the team that does not exist, and a refusal of the viewer's role: the team's console.
    for (const [method, path, status, title] of [
      ["GET", `/console/teams/${team.teamId}/nothing-here`, 404, "Page not found"],
      ["POST", `/console/teams/${team.teamId}/keys`, 403, "Not allowed"],
    ] as const) {
      const res = await page(method, path, { cookie: team.cookie, ...(method === "POST" ? { form: { name: "x", scopes: "logs:read" } } : {}) });
      expect(res.status, path).toBe(status);
      const html = await res.text();
      expect(html).toContain(`<h1>${title}</h1>`);
      expect(html).toContain('aria-label="Products"');
      expect(html).toContain(`href="/console/teams/${team.teamId}/members"`);
      signedInBar(html);
    }
    // A form refused for its size (before any page reads the session) still shows in the team's console.
    const large = await page("POST", `/console/teams/${team.teamId}/keys`, { cookie: team.cookie, form: { name: "x".repeat(1024 * 1024 + 1) } });
    expect(large.status).toBe(413);
    const largeHtml = await large.text();
    expect(largeHtml).toContain("<h1>Too large</h1>");
    expect(largeHtml).toContain('aria-label="Products"');
    signedInBar(largeHtml);
    // The refusal of the keys page marks the keys entry.
    const refused = await (await page("POST", `/console/teams/${team.teamId}/keys`, { cookie: team.cookie, form: { name: "x" } })).text();
    expect(refused).toMatch(/href="\/console\/teams\/[^"]+\/keys" aria-current="page"/);
    // Another team's page and an unknown console address: the signed-in top bar, no team's sidebar.
    const other = await setupTeam();
    for (const path of [`/console/teams/${other.teamId}/keys`, "/console/nothing-here"]) {
      const res = await page("GET", path, { cookie: team.cookie });
      expect(res.status, path).toBe(404);
      const html = await res.text();
      expect(html).toContain("Page not found");
      expect(html).not.toContain('aria-label="Products"');
      expect(html).not.toContain(other.teamId);
      signedInBar(html);
    }
    // Without a session, or with a dead one, an unknown address offers to sign in.
    for (const cookie of [undefined, "edp_session=not-a-real-session-token-at-all-0000000000000"]) {
      const html = await (await page("GET", "/console/nothing-here", { cookie })).text();
      expect(html).toContain('href="/console/sign-in"');
      expect(html).not.toContain('action="/console/sign-out"');
    }
  });

  it("a signed-in user of no team is told so, offered to create one, and can sign out", async () => {
    const team = await consoleTeam("owner");
    const member = await memberOf(team.teamId, "developer");
    expect((await page("POST", `/console/teams/${team.teamId}/members/${member.userId}/remove`, { cookie: team.cookie })).status).toBe(303);
    const res = await page("GET", "/console", { cookie: member.cookie });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("<h1>No team yet</h1>");
    expect(html).toContain('<a href="/console/sign-up">Create a team</a>');
    expect(html).toContain(member.email);
    expect(html).toContain('action="/console/sign-out"');
    expect(html).not.toContain('href="/console/sign-in"');
  });

  it("refuses a state-changing request without the app's Origin (403), before anything runs", async () => {
    const team = await consoleTeam("owner");
    for (const origin of [null, "http://evil.test", "null"]) {
      const res = await page("POST", `/console/teams/${team.teamId}/keys`, { cookie: team.cookie, origin, form: { name: "x", scopes: "logs:read" } });
      expect(res.status, String(origin)).toBe(403);
    }
    for (const path of ["/console/sign-in", "/console/sign-up", "/console/sign-out"]) {
      expect((await page("POST", path, { origin: "http://evil.test", form: { email: "a@b.co" } })).status).toBe(403);
    }
  });

  it("every navigation entry has its page; anything else is 404", async () => {
    const team = await consoleTeam("viewer");
    for (const entry of navEntries())
      expect((await page("GET", `/console/teams/${team.teamId}/${entry.path}`, { cookie: team.cookie })).status, entry.path).toBe(200);
    expect((await page("GET", `/console/teams/${team.teamId}/nothing-here`, { cookie: team.cookie })).status).toBe(404);
    expect((await page("GET", `/console/nothing-here`, { cookie: team.cookie })).status).toBe(404);
  });
});
