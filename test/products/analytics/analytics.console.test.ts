// The console's analytics pages: a site added from the console (303 to its page), the dashboard
// over a range (realtime, totals, the charts with their tables, top pages, sources, countries, the
// snippet), roles, another team's site, and no address or user agent on any page.
import { describe, expect, it } from "vitest";
import { consoleTeam, memberOf, page } from "../../helpers/console";
import { createSite, pageview, sendEvent, settle } from "./analytics.helpers";

async function html(res: Response, status = 200): Promise<string> {
  const text = await res.text();
  expect(res.status, text.slice(0, 300)).toBe(status);
  return text;
}

describe("console analytics", () => {
  it("adds a site from the console and shows its dashboard", async () => {
    const team = await consoleTeam("developer");
    const base = `/console/teams/${team.teamId}/analytics`;
    expect(await html(await page("GET", base, { cookie: team.cookie }))).toContain("Add your first site");
    const created = await page("POST", base, { cookie: team.cookie, form: { domain: "www.shop.example" } });
    expect(created.status).toBe(303);
    const location = created.headers.get("location")!;
    expect(location).toMatch(new RegExp(`^${base}/sites/[0-9a-f-]{36}\\?notice=created$`));
    const siteId = location.split("/sites/")[1]!.split("?")[0]!;
    await sendEvent(pageview(siteId, "https://shop.example/"), { ip: "203.0.113.201" });
    await sendEvent({ ...pageview(siteId, "https://shop.example/pricing"), r: "https://news.ycombinator.com/" }, { ip: "203.0.113.202" });
    await settle();
    const body = await html(await page("GET", location, { cookie: team.cookie }));
    expect(body).toContain("Site added");
    expect(body).toContain(`data-domain=&quot;${siteId}&quot;`);
    expect(body).toMatch(/data-testid="realtime-visitors">2</);
    expect(body).toMatch(/data-testid="total-visitors">2</);
    expect(body).toMatch(/data-testid="total-pageviews">2</);
    for (const text of ["<svg", "Visitors, last 7 days", "/pricing", "Hacker News", "Direct / None", "Unknown"]) expect(body).toContain(text);
    // The charts' numbers are in tables for screen readers.
    expect(body).toContain('<table class="skip">');
    // No address or user agent reaches a page.
    for (const needle of ["203.0.113.201", "203.0.113.202", "Chrome/124"]) expect(body).not.toContain(needle);
    // Another range, by hour.
    const today = await html(await page("GET", `${location.split("?")[0]}?range=day`, { cookie: team.cookie }));
    expect(today).toContain("Today, by hour (UTC)");
    expect(today).toContain('aria-current="page"');
    // The list shows it.
    expect(await html(await page("GET", base, { cookie: team.cookie }))).toContain("shop.example");
  });

  it("refuses a bad domain with 422, viewers' writes with 403, another team's site with 404", async () => {
    const team = await consoleTeam("owner");
    const base = `/console/teams/${team.teamId}/analytics`;
    expect(await html(await page("POST", base, { cookie: team.cookie, form: { domain: "https://x.com/a" } }), 422)).toContain("host name");
    const viewer = await memberOf(team.teamId, "viewer");
    const list = await html(await page("GET", base, { cookie: viewer.cookie }));
    expect(list).not.toContain('data-testid="create-analytics-site"');
    expect((await page("POST", base, { cookie: viewer.cookie, form: { domain: "x.com" } })).status).toBe(403);
    const other = await consoleTeam("owner");
    const foreign = await createSite(other.key);
    expect((await page("GET", `${base}/sites/${foreign.id}`, { cookie: team.cookie })).status).toBe(404);
    // The Origin rule holds on the form.
    expect((await page("POST", base, { cookie: team.cookie, origin: "https://evil.example", form: { domain: "x.com" } })).status).toBe(403);
  });
});
