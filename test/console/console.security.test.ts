// The attack review of the console's surfaces (issue 23; SECURITY.md "Console surfaces"): every
// state-changing console route, read from the app's route table, refused without the app's Origin
// and for a viewer with nothing changed; every page's security headers and that GET changes
// nothing; tenant strings escaped; the session cookie's flags, fixation and storage; invitation
// links against removal, someone else's session and the pending cap under parallel invites.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { addMember, MAX_PENDING_INVITATIONS } from "../../src/console/members.service";
import { createLink } from "../../src/console/sign-in.service";
import { setClock } from "../../src/platform/clock";
import { sha256Hex } from "../../src/platform/crypto";
import { DEFAULT_SANDBOX_CAPS } from "../../src/platform/config";
import { addKey, call, json } from "../helpers/api";
import { consoleRoutes, consoleTeam, fillPath, mailedLinks, memberOf, page, sessionCookie, signIn, useLink, type ConsoleTeam } from "../helpers/console";

afterEach(() => setClock(null));

const address = (tag: string) => `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`;
const one = <T>(sql: string, ...binds: unknown[]) =>
  env.DB.prepare(sql)
    .bind(...binds)
    .first<T>();

/** A team with an owner signed in, a second member, a key and a pending invitation: an id for every route parameter. */
async function targets(role: "owner" | "viewer" = "owner") {
  const team = await consoleTeam("owner");
  const actor = role === "owner" ? { cookie: team.cookie, email: team.email } : await memberOf(team.teamId, role);
  const other = await memberOf(team.teamId, "developer");
  await page("POST", `/console/teams/${team.teamId}/members/invite`, { cookie: team.cookie, form: { email: address("pending"), role: "viewer" } });
  const invitation = await one<{ id: string }>("SELECT id FROM console_links WHERE team_id = ? AND kind = 'invite'", team.teamId);
  const { token } = await createLink(getDb(env.DB), { kind: "sign_in", email: actor.email });
  const params = { team_id: team.teamId, key_id: team.keyId, user_id: other.userId, id: invitation!.id, token, ...(await productIds(team.key)) };
  return { team, actor, other, params };
}

/**
 * Ids for the product pages' parameters: real resources of the team where one call makes them (a
 * log project, which also names the audit project, a relay source, a survey, a sending domain, a
 * mail webhook, a push app), and unknown ids where the resource takes a flow to exist (an event, an
 * email, a report): every request below is refused before any look-up, and an unknown id's page is
 * still one of the console's pages (its 404 carries the same headers).
 */
async function productIds(key: string): Promise<Record<string, string>> {
  const made = async (path: string, body: unknown) => {
    const res = await call("POST", path, { key, body });
    expect(res.status, path).toBe(201);
    return (await json(res)).data.id as string;
  };
  const [project_id, source_id, survey_id, domain_id, webhook_id, app_id, form_id] = await Promise.all([
    made("logs/projects", { name: "p" }),
    made("webhooks/sources", { name: "s", provider: "generic" }),
    made("surveys", { name: "s", slug: `s-${crypto.randomUUID().slice(0, 8)}` }),
    made("domains", { name: `${crypto.randomUUID().slice(0, 8)}.example.org` }),
    made("webhooks", { url: "https://hooks.example.com/mail", events: ["email.sent"] }),
    made("push/apps", { name: "a" }),
    made("forms", { name: "f" }),
  ]);
  // A flag (flags are named by key, not id) for the flags pages' `:flag_key`.
  expect((await call("POST", "flags", { key, body: { key: "csrf-flag" } })).status).toBe(201);
  // A destination of the source and a section of the survey: the settings forms name them in their paths.
  const [destination_id, section_id] = await Promise.all([
    made(`webhooks/sources/${source_id}/destinations`, { url: "https://hooks.example.com/relay" }),
    made(`surveys/${survey_id}/sections`, { title: "s", position: 1 }),
  ]);
  return {
    project_id,
    source_id,
    destination_id,
    section_id,
    subscriber_id: crypto.randomUUID(),
    notification_id: crypto.randomUUID(),
    survey_id,
    domain_id,
    webhook_id,
    app_id,
    event_id: crypto.randomUUID(),
    email_id: crypto.randomUUID(),
    report_id: crypto.randomUUID(),
    form_id,
    sid: crypto.randomUUID(),
    file_id: crypto.randomUUID(),
    scan_id: crypto.randomUUID(),
    schedule_id: crypto.randomUUID(),
    alert_id: crypto.randomUUID(),
    finding_id: crypto.randomUUID(),
    question_id: crypto.randomUUID(),
    site_id: crypto.randomUUID(),
    flag_key: "csrf-flag",
    environment: "production",
    rule_id: "no-rule",
    segment_key: "no-segment",
    client_key_id: crypto.randomUUID(),
    change_id: crypto.randomUUID(),
  };
}

/** Everything a console POST could change for this team and these addresses, as one comparable value. */
async function snapshot(team: ConsoleTeam, actorEmail: string, formEmail: string, teamName: string) {
  const rows = await env.DB.batch([
    env.DB.prepare("SELECT id, revoked_at FROM api_keys WHERE team_id = ? ORDER BY id").bind(team.teamId),
    env.DB.prepare("SELECT user_id, role FROM memberships WHERE team_id = ? ORDER BY user_id").bind(team.teamId),
    env.DB.prepare("SELECT id, used_at FROM console_links WHERE team_id = ? OR email IN (?, ?) ORDER BY id").bind(team.teamId, actorEmail, formEmail),
    env.DB.prepare("SELECT s.id FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = ? ORDER BY s.id").bind(actorEmail),
    env.DB.prepare("SELECT count(*) AS n FROM console_actions WHERE team_id = ?").bind(team.teamId),
    env.DB.prepare("SELECT count(*) AS n FROM teams WHERE name = ?").bind(teamName),
    env.DB.prepare('SELECT count(*) AS n FROM platform_outbox WHERE "to" IN (?, ?)').bind(actorEmail, formEmail),
    env.DB.prepare("SELECT count(*) AS n FROM audit_scans WHERE team_id = ?").bind(team.teamId),
    env.DB.prepare("SELECT count(*) AS n FROM audit_scan_schedules WHERE team_id = ?").bind(team.teamId),
    // What the product settings forms change: a project, a source or destination, an app, a survey, its sections and webhooks.
    env.DB.prepare("SELECT id, name, updated_at FROM log_projects WHERE team_id = ? ORDER BY id").bind(team.teamId),
    env.DB.prepare("SELECT id, name, enabled, retention_days, updated_at FROM webhook_sources WHERE team_id = ? ORDER BY id").bind(team.teamId),
    env.DB.prepare("SELECT id, url, enabled, updated_at FROM webhook_destinations WHERE team_id = ? ORDER BY id").bind(team.teamId),
    env.DB.prepare("SELECT id, name, settings, updated_at FROM push_apps WHERE team_id = ? ORDER BY id").bind(team.teamId),
    env.DB.prepare("SELECT id, name, slug, settings, updated_at FROM surveys WHERE team_id = ? ORDER BY id").bind(team.teamId),
    env.DB.prepare("SELECT id, title, position FROM survey_sections WHERE team_id = ? ORDER BY id").bind(team.teamId),
    env.DB.prepare("SELECT count(*) AS n FROM survey_webhooks WHERE team_id = ?").bind(team.teamId),
  ]);
  return JSON.stringify(rows.map((r) => r.results));
}

/** A form every console POST accepts if nothing stops it. */
function anyForm() {
  return {
    name: "attack",
    scopes: "logs:read",
    email: address("target"),
    role: "developer",
    team_name: `attack-${crypto.randomUUID()}`,
    confirm: "yes",
    // The names the product resources of `productIds` have, typed where a deletion asks for its resource's name.
    confirm_name: "s",
    url: "https://hooks.example.com/attack",
    title: "attack",
    position: "2",
    retention_days: "3",
  };
}

describe("CSRF: every state-changing console route", () => {
  const posts = consoleRoutes("POST");

  it("is enumerated from the app's route table (sign-in, sign-up, links, sign-out, keys, members, the product settings forms)", () => {
    for (const path of [
      "/console/sign-in",
      "/console/sign-up",
      "/console/auth/:token",
      "/console/sign-out",
      "/console/sign-out-everywhere",
      "/console/teams/:team_id/keys",
      "/console/teams/:team_id/keys/:key_id/revoke",
      "/console/teams/:team_id/members/invite",
      "/console/teams/:team_id/members/:user_id/remove",
      "/console/teams/:team_id/logs/:project_id/delete",
      "/console/teams/:team_id/relay/sources/:source_id/settings",
      "/console/teams/:team_id/relay/sources/:source_id/delete",
      "/console/teams/:team_id/relay/sources/:source_id/destinations/:destination_id",
      "/console/teams/:team_id/relay/sources/:source_id/destinations/:destination_id/delete",
      "/console/teams/:team_id/surveys/:survey_id/settings",
      "/console/teams/:team_id/surveys/:survey_id/delete",
      "/console/teams/:team_id/surveys/:survey_id/duplicate",
      "/console/teams/:team_id/surveys/:survey_id/sections",
      "/console/teams/:team_id/surveys/:survey_id/sections/:section_id",
      "/console/teams/:team_id/surveys/:survey_id/sections/:section_id/delete",
      "/console/teams/:team_id/surveys/:survey_id/webhooks",
      "/console/teams/:team_id/surveys/:survey_id/webhooks/:webhook_id/delete",
      "/console/teams/:team_id/push/apps/:app_id/settings",
      "/console/teams/:team_id/push/apps/:app_id/delete",
      "/console/teams/:team_id/push/apps/:app_id/subscribers/:subscriber_id/delete",
    ]) {
      expect(posts).toContain(path);
    }
    // No console route answers PUT, PATCH or DELETE: each would need the same Origin rule.
    for (const method of ["PUT", "PATCH", "DELETE"]) expect(consoleRoutes(method)).toEqual([]);
  });

  it("is refused (403) without an Origin, with a foreign one and with `null`, and changes nothing", async () => {
    const { team, actor, params } = await targets();
    for (const route of posts) {
      for (const origin of [null, "https://evil.test", "null", "http://app.test.evil.test"]) {
        const form = anyForm();
        const before = await snapshot(team, actor.email, form.email, form.team_name);
        const res = await page("POST", fillPath(route, params), { cookie: actor.cookie, origin, form });
        expect(res.status, `${route} with Origin ${origin}`).toBe(403);
        expect(res.headers.get("set-cookie"), route).toBeNull();
        expect(await snapshot(team, actor.email, form.email, form.team_name), route).toBe(before);
      }
    }
  });

  it("a viewer's every POST of a team page is 403 and changes nothing", async () => {
    const { team, actor, params } = await targets("viewer");
    const teamPosts = posts.filter((p) => p.startsWith("/console/teams/"));
    expect(teamPosts.length).toBeGreaterThanOrEqual(6);
    for (const route of teamPosts) {
      const form = anyForm();
      const before = await snapshot(team, actor.email, form.email, form.team_name);
      const res = await page("POST", fillPath(route, params), { cookie: actor.cookie, form });
      expect(res.status, route).toBe(403);
      expect(await snapshot(team, actor.email, form.email, form.team_name), route).toBe(before);
    }
  });

  it("a member of team A reaches no POST of team B (404, nothing changed)", async () => {
    const { team, params } = await targets();
    const intruder = await consoleTeam("owner");
    for (const route of posts.filter((p) => p.startsWith("/console/teams/"))) {
      const form = anyForm();
      const before = await snapshot(team, intruder.email, form.email, form.team_name);
      const res = await page("POST", fillPath(route, params), { cookie: intruder.cookie, form });
      expect(res.status, route).toBe(404);
      expect(await snapshot(team, intruder.email, form.email, form.team_name), route).toBe(before);
    }
  });
});

describe("framing and pages", () => {
  const gets = consoleRoutes("GET");

  it("every console page, error pages included, sends the strict CSP, no framing, nosniff and no-store, and changes nothing", async () => {
    const { team, actor, params } = await targets();
    const paths = [
      ...gets.map((route) => fillPath(route, { ...params, page: "usage" })),
      "/console/teams/not-a-team/keys",
      "/console/auth/unknown",
      "/console/nothing-here",
    ];
    const before = await snapshot(team, actor.email, actor.email, "-");
    for (const path of paths) {
      for (const cookie of [actor.cookie, null]) {
        const res = await page("GET", path, { cookie });
        // The live tail is an event stream, not a page (signed out, it redirects like any page).
        if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
          expect(cookie, path).not.toBeNull();
          await res.body?.cancel();
          continue;
        }
        const csp = res.headers.get("content-security-policy") ?? "";
        expect(csp, path).toContain("frame-ancestors 'none'");
        expect(csp, path).toMatch(/script-src 'self'(;|$)/);
        expect(csp, path).not.toContain("unsafe-inline");
        expect(res.headers.get("x-frame-options"), path).toBe("DENY");
        expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
        expect(res.headers.get("cache-control"), path).toBe("no-store");
        const html = await res.text();
        expect(html, path).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
        expect(html, path).not.toMatch(/\son[a-z]+=/i);
      }
    }
    expect(await snapshot(team, actor.email, actor.email, "-")).toBe(before);
  });

  it("escapes every tenant string: team, key and invitation names with <script> and attribute breaks", async () => {
    const evil = `"><script>alert(1)</script><img src=x onerror=alert(2)>'`;
    const email = address("xss");
    const signUp = await page("POST", "/console/sign-up", { form: { email, team_name: evil } });
    expect(signUp.status).toBe(303);
    const [token] = await mailedLinks(email);
    const confirm = await (await page("GET", `/console/auth/${token}`)).text();
    const used = await useLink(token);
    const cookie = sessionCookie(used)!;
    const keysPath = used.headers.get("location")!;
    const created = await page("POST", keysPath, { cookie, form: { name: evil, scopes: "logs:read", allowed_streams: ["transactional"] } });
    // The page the POST leads to shows the name in the new key's flash too.
    const flashPage = await (await page("GET", created.headers.get("location")!, { cookie })).text();
    expect(flashPage).toContain('data-testid="new-key"');
    const membersPath = keysPath.replace(/keys$/, "members");
    await page("POST", `${membersPath}/invite`, { cookie, form: { email: `o'brien-${crypto.randomUUID().slice(0, 6)}@example.com`, role: "viewer" } });
    const keyPage = await (await page("GET", keysPath, { cookie })).text();
    const membersPage = await (await page("GET", membersPath, { cookie })).text();
    for (const html of [confirm, keyPage, membersPage, flashPage]) {
      expect(html).not.toContain("<script>alert");
      expect(html).not.toContain("<img src=x");
      expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    }
    // Inside attributes too (the revoke button's aria-label): the quote cannot close it.
    expect(keyPage).toContain(`aria-label="Revoke &quot;&gt;&lt;script&gt;alert(1)`);
    expect(membersPage).not.toContain("o'brien");
  });
});

describe("sessions", () => {
  it("sets Secure on the cookie (and on its deletion) when APP_URL is https", async () => {
    const https = { ...env, APP_URL: "https://app.test" };
    const team = await consoleTeam("owner");
    const { token } = await createLink(getDb(env.DB), { kind: "sign_in", email: team.email });
    const used = await call("POST", `/console/auth/${token}`, { env: https, headers: { origin: "https://app.test" } });
    expect(used.status).toBe(303);
    const cookie = used.headers.get("set-cookie")!;
    for (const flag of ["HttpOnly", "SameSite=Lax", "Path=/console", "Secure"]) expect(cookie).toContain(flag);
    // The http origin of the same host is a foreign origin for an https app.
    expect((await call("POST", "/console/sign-out", { env: https, headers: { origin: "http://app.test", cookie: sessionCookie(used)! } })).status).toBe(403);
    const out = await call("POST", "/console/sign-out", { env: https, headers: { origin: "https://app.test", cookie: sessionCookie(used)! } });
    expect(out.headers.get("set-cookie")).toContain("Secure");
  });

  it("does not adopt a cookie planted before sign-in (fixation), and stores only hashes of sessions and links", async () => {
    const team = await consoleTeam("developer");
    const planted = "A".repeat(43);
    const { token } = await createLink(getDb(env.DB), { kind: "sign_in", email: team.email });
    const used = await useLink(token, { cookie: `edp_session=${planted}` });
    const issued = sessionCookie(used)!.slice("edp_session=".length);
    expect(issued).not.toBe(planted);
    expect((await page("GET", `/console/teams/${team.teamId}/keys`, { cookie: `edp_session=${planted}` })).status).toBe(303);
    const stored = await env.DB.prepare("SELECT s.* FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = ?").bind(team.email).all();
    const links = await env.DB.prepare("SELECT * FROM console_links WHERE email = ?").bind(team.email).all();
    const everything = JSON.stringify([stored.results, links.results]);
    expect(everything).not.toContain(issued);
    expect(everything).not.toContain(token);
    expect(everything).toContain(await sha256Hex(issued));
    expect(everything).toContain(await sha256Hex(token));
  });

  it("a stolen cookie is dead after sign-out everywhere from another device, and cannot sign out or act", async () => {
    const team = await consoleTeam("owner");
    const stolen = await signIn(team.email);
    expect((await page("POST", "/console/sign-out-everywhere", { cookie: team.cookie })).status).toBe(303);
    expect((await page("GET", `/console/teams/${team.teamId}/keys`, { cookie: stolen })).status).toBe(303);
    const res = await page("POST", `/console/teams/${team.teamId}/keys`, { cookie: stolen, form: { name: "late", scopes: "logs:read" } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/sign-in");
    expect(await one<{ n: number }>("SELECT count(*) AS n FROM api_keys WHERE team_id = ? AND name = 'late'", team.teamId)).toEqual({ n: 0 });
  });
});

describe("invitation links", () => {
  it("a removed member cannot rejoin with another invitation they still hold", async () => {
    const team = await consoleTeam("owner");
    const base = `/console/teams/${team.teamId}/members`;
    const email = address("twice");
    // Invited twice before joining: two links in the mailbox.
    for (let i = 0; i < 2; i++) expect((await page("POST", `${base}/invite`, { cookie: team.cookie, form: { email, role: "admin" } })).status).toBe(303);
    const [second, first] = await mailedLinks(email);
    expect((await useLink(first)).status).toBe(303);
    const user = await one<{ id: string }>("SELECT id FROM users WHERE email = ?", email);
    expect((await page("POST", `${base}/${user!.id}/remove`, { cookie: team.cookie })).status).toBe(303);
    const again = await useLink(second);
    expect(again.status).toBe(410);
    expect(await one("SELECT role FROM memberships WHERE team_id = ? AND user_id = ?", team.teamId, user!.id)).toBeNull();
  });

  it("used from someone else's session, signs in the invited address only, never adds the session's user", async () => {
    const team = await consoleTeam("owner");
    const bystander = await consoleTeam("developer");
    const email = address("invitee");
    await page("POST", `/console/teams/${team.teamId}/members/invite`, { cookie: team.cookie, form: { email, role: "developer" } });
    const [token] = await mailedLinks(email);
    const used = await useLink(token, { cookie: bystander.cookie });
    expect(used.status).toBe(303);
    const members = await env.DB.prepare("SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.team_id = ?")
      .bind(team.teamId)
      .all<{ email: string }>();
    expect(members.results.map((m) => m.email).sort()).toEqual([team.email, email].sort());
    expect(sessionCookie(used)).not.toBe(bystander.cookie);
  });

  it(`holds the cap of ${MAX_PENDING_INVITATIONS} pending invitations under parallel invites`, async () => {
    const team = await consoleTeam("owner");
    const base = `/console/teams/${team.teamId}/members`;
    for (let i = 0; i < MAX_PENDING_INVITATIONS - 2; i++) {
      expect((await page("POST", `${base}/invite`, { cookie: team.cookie, form: { email: address("seq"), role: "viewer" } })).status).toBe(303);
    }
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => page("POST", `${base}/invite`, { cookie: team.cookie, form: { email: address("par"), role: "viewer" } })),
    );
    expect(answers.filter((r) => r.status === 303)).toHaveLength(2);
    expect(answers.filter((r) => r.status === 422)).toHaveLength(6);
    expect(await one<{ n: number }>("SELECT count(*) AS n FROM console_links WHERE team_id = ? AND kind = 'invite' AND used_at IS NULL", team.teamId)).toEqual({
      n: MAX_PENDING_INVITATIONS,
    });
  });
});

describe("self-service keys against escalation", () => {
  it("a key holding keys:write but not a scope cannot mint it, nor keys:write from keys:read; a sandbox key cannot mint a live key or lift a suspension", async () => {
    const team = await consoleTeam("owner");
    const writer = await addKey(team.teamId, ["keys:write", "logs:read"]);
    const reader = await addKey(team.teamId, ["keys:read"]);
    expect((await call("POST", "keys", { key: writer.key, body: { scopes: ["logs:write"] } })).status).toBe(403);
    expect((await call("POST", "keys", { key: reader.key, body: { scopes: ["keys:write"] } })).status).toBe(403);
    const sandbox = await addKey(team.teamId, ["keys:write", "mail:send"], { sandbox: true, allowed_streams: ["transactional"], hourly_cap: 5 });
    expect((await call("POST", "keys", { key: sandbox.key, body: { scopes: ["mail:send"], mail: { sandbox: false } } })).status).toBe(403);
    expect((await call("POST", "keys", { key: sandbox.key, body: { scopes: ["mail:send"], mail: { suspended: false } } })).status).toBe(422);
    expect((await call("POST", "keys", { key: sandbox.key, body: { scopes: ["mail:send"], mail: { hourly_cap: null } } })).status).toBe(422);
    const made = await json(await call("POST", "keys", { key: sandbox.key, body: { scopes: ["mail:send"] } }));
    expect(made.data.mail).toMatchObject({ sandbox: true, allowed_streams: ["transactional"], hourly_cap: 5 });
  });

  it("the console's key form ignores caps and suspension fields a member posts", async () => {
    const team = await consoleTeam("developer");
    const res = await page("POST", `/console/teams/${team.teamId}/keys`, {
      cookie: team.cookie,
      form: { name: "capless", scopes: "mail:send", sandbox: "on", allowed_streams: "transactional", hourly_cap: "999999", suspended: "false" },
    });
    expect(res.status).toBe(303);
    const row = await one<{ mail: string }>("SELECT mail FROM api_keys WHERE team_id = ? AND name = 'capless'", team.teamId);
    expect(JSON.parse(row!.mail)).toMatchObject({ sandbox: true, hourly_cap: DEFAULT_SANDBOX_CAPS.hourly, daily_cap: DEFAULT_SANDBOX_CAPS.daily });
  });
});

describe("roles", () => {
  it("no role ever sees a key's secret or hash on a page; a viewer sees no form to make one", async () => {
    const team = await consoleTeam("owner");
    const hash = await sha256Hex(team.key);
    for (const role of ["viewer", "developer", "admin"] as const) {
      const member = await memberOf(team.teamId, role);
      for (const path of ["keys", "members", "usage"]) {
        const html = await (await page("GET", `/console/teams/${team.teamId}/${path}`, { cookie: member.cookie })).text();
        expect(html, `${role} ${path}`).not.toContain(team.key);
        expect(html, `${role} ${path}`).not.toContain(team.key.slice(12));
        expect(html, `${role} ${path}`).not.toContain(hash);
        if (role === "viewer") expect(html).not.toContain('data-testid="create-key"');
      }
    }
  });

  it("an admin can neither take nor give ownership, nor remove or demote an owner; a developer manages no one", async () => {
    const team = await consoleTeam("owner");
    const adminUser = await memberOf(team.teamId, "admin");
    const dev = await memberOf(team.teamId, "developer");
    const owner = await one<{ id: string }>("SELECT id FROM users WHERE email = ?", team.email);
    const base = `/console/teams/${team.teamId}/members`;
    expect((await page("POST", `${base}/${adminUser.userId}/role`, { cookie: adminUser.cookie, form: { role: "owner" } })).status).toBe(403);
    expect((await page("POST", `${base}/${owner!.id}/role`, { cookie: adminUser.cookie, form: { role: "viewer" } })).status).toBe(403);
    expect((await page("POST", `${base}/${owner!.id}/remove`, { cookie: adminUser.cookie })).status).toBe(403);
    expect((await page("POST", `${base}/invite`, { cookie: adminUser.cookie, form: { email: address("o"), role: "owner" } })).status).toBe(403);
    expect((await page("POST", `${base}/${adminUser.userId}/role`, { cookie: dev.cookie, form: { role: "viewer" } })).status).toBe(403);
    const roles = await env.DB.prepare("SELECT role FROM memberships WHERE team_id = ? ORDER BY role").bind(team.teamId).all<{ role: string }>();
    expect(roles.results.map((r) => r.role)).toEqual(["admin", "developer", "owner"]);
  });

  it("a demoted admin loses the right at their next request (no role cached in the session)", async () => {
    const team = await consoleTeam("owner");
    const adminUser = await memberOf(team.teamId, "admin");
    await addMember(getDb(env.DB), team.teamId, { email: adminUser.email, role: "viewer" });
    const res = await page("POST", `/console/teams/${team.teamId}/members/invite`, {
      cookie: adminUser.cookie,
      form: { email: address("late"), role: "viewer" },
    });
    expect(res.status).toBe(403);
    const html = await (await page("GET", `/console/teams/${team.teamId}/keys`, { cookie: adminUser.cookie })).text();
    expect(html).not.toContain('data-testid="create-key"');
  });
});

describe("sign-in links", () => {
  it("have no redirect parameter: a `next` in the link or the form is ignored", async () => {
    const team = await consoleTeam("owner");
    const { token } = await createLink(getDb(env.DB), { kind: "sign_in", email: team.email });
    const used = await page("POST", `/console/auth/${token}?next=https://evil.test/&return_to=//evil.test`, { form: { next: "https://evil.test/" } });
    expect(used.status).toBe(303);
    expect(used.headers.get("location")).toBe("/console");
    const signedIn = await page("GET", "/console/sign-in?next=https://evil.test/", { cookie: sessionCookie(used) });
    expect(signedIn.headers.get("location")).toBe("/console");
  });
});
