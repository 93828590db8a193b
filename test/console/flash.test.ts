// The single-use flash of post/redirect/get (console/flash.ts), through the keys page: a secret a
// POST made is on the page the 303 leads to once, for that session only and on that page only;
// it is stored sealed (never in plaintext, never in the URL), gone after a reload, a second tab of
// another session or its expiry, and the retention job deletes what nobody read.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { consoleRetention } from "../../src/console/console.cron";
import { FLASH_TTL_MS } from "../../src/console/flash";
import { nowMs, setClock } from "../../src/platform/clock";
import { consoleTeam, followRedirect, page, signIn } from "../helpers/console";

afterEach(() => setClock(null));

const NEW_KEY = /data-testid="new-key">\s*(edp_[A-Za-z0-9_-]{43})/;
const FORM = { name: "Flashed", scopes: "logs:read", allowed_streams: "transactional" };

const flashCount = async () => (await env.DB.prepare("SELECT count(*) AS n FROM console_flashes").first<number>("n")) ?? 0;

describe("the console's flash", () => {
  it("is shown once, on the page the 303 names, and stored sealed", async () => {
    const team = await consoleTeam("developer");
    const path = `/console/teams/${team.teamId}/keys`;
    const created = await page("POST", path, { cookie: team.cookie, form: FORM });
    const location = created.headers.get("location")!;
    expect(location).toBe(`${path}?notice=created`);
    // Stored sealed: the plaintext is nowhere in the table.
    const row = await env.DB.prepare("SELECT sealed, path FROM console_flashes WHERE path = ?").bind(path).first<{ sealed: string; path: string }>();
    expect(row!.sealed).toMatch(/^v1\./);
    const first = await (await followRedirect(created, team.cookie)).text();
    const key = NEW_KEY.exec(first)?.[1];
    expect(key).toBeDefined();
    expect(row!.sealed).not.toContain(key!);
    expect(location).not.toContain(key!.slice(4));
    // Read once: the row is gone, a reload and the back button find nothing.
    expect(await env.DB.prepare("SELECT count(*) AS n FROM console_flashes WHERE path = ?").bind(path).first("n")).toBe(0);
    for (let i = 0; i < 2; i++) {
      const again = await (await page("GET", location, { cookie: team.cookie })).text();
      expect(again).not.toContain(key!);
      expect(again).not.toContain('data-testid="new-key"');
    }
  });

  it("belongs to the session that made it: another session of the same user, or another page, sees nothing", async () => {
    const team = await consoleTeam("owner");
    const path = `/console/teams/${team.teamId}/keys`;
    const created = await page("POST", path, { cookie: team.cookie, form: FORM });
    const otherDevice = await signIn(team.email);
    const elsewhere = await (await page("GET", created.headers.get("location")!, { cookie: otherDevice })).text();
    expect(elsewhere).not.toContain('data-testid="new-key"');
    // Another page of the team with the same notice code does not take it either...
    await page("GET", `/console/teams/${team.teamId}/logs?notice=created`, { cookie: team.cookie });
    // ...so the session that made it still sees it once.
    expect(await (await followRedirect(created, team.cookie)).text()).toMatch(NEW_KEY);
  });

  it("expires unread after FLASH_TTL_MS, and the retention job deletes it", async () => {
    const start = nowMs();
    setClock(start);
    const team = await consoleTeam("developer");
    const path = `/console/teams/${team.teamId}/keys`;
    const created = await page("POST", path, { cookie: team.cookie, form: FORM });
    const before = await flashCount();
    expect(before).toBeGreaterThanOrEqual(1);
    setClock(start + FLASH_TTL_MS + 1);
    const late = await (await page("GET", created.headers.get("location")!, { cookie: team.cookie })).text();
    expect(late).not.toContain('data-testid="new-key"');
    expect(late).toContain("shown once");
    expect((await consoleRetention(env)).flashes).toBeGreaterThanOrEqual(1);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM console_flashes WHERE path = ?").bind(path).first("n")).toBe(0);
  });

  it("is deleted with its session (sign-out)", async () => {
    const team = await consoleTeam("developer");
    const path = `/console/teams/${team.teamId}/keys`;
    await page("POST", path, { cookie: team.cookie, form: FORM });
    expect(await env.DB.prepare("SELECT count(*) AS n FROM console_flashes WHERE path = ?").bind(path).first("n")).toBe(1);
    expect((await page("POST", "/console/sign-out", { cookie: team.cookie })).status).toBe(303);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM console_flashes WHERE path = ?").bind(path).first("n")).toBe(0);
  });
});
