// Signing in and up by one-time link (DESIGN.md "Signing in"): no enumeration, the per-address
// limit for every address, the confirm page that consumes nothing, single use under parallel
// requests, expiry with a moved clock, the session cookie, idle and absolute session expiry,
// sign-out (everywhere), membership removal, the operator routes and retention.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { addMember, removeMember } from "../../src/console/members.service";
import { consoleRetention } from "../../src/console/console.cron";
import { createLink, LINKS_PER_ADDRESS_PER_HOUR, LINKS_PER_ADDRESS_PER_NETWORK } from "../../src/console/sign-in.service";
import { nowMs, setClock } from "../../src/platform/clock";
import { admin, expectError, json, setupTeam } from "../helpers/api";
import { consoleTeam, mailedLinks, page, sessionCookie, settledPage, signIn, useLink } from "../helpers/console";

afterEach(() => setClock(null));

const DAY = 86_400_000;
const address = (tag: string) => `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`;

/** The page body without the address it echoes, to compare the answers to two addresses. */
async function bodyWithout(res: Response, email: string): Promise<string> {
  return (await res.text()).replaceAll(email, "<email>");
}

/** Post/redirect/get of asking for a link: 303 to /console/check-email, opened with the cookie that carries the address. */
async function checkEmailPage(res: Response): Promise<Response> {
  expect(res.status).toBe(303);
  expect(res.headers.get("location")).toBe("/console/check-email");
  const cookie = /edp_check=([^;]*)/.exec(res.headers.get("set-cookie") ?? "")?.[0];
  expect(cookie).toBeDefined();
  return page("GET", "/console/check-email", { cookie });
}

describe("asking for a sign-in link", () => {
  it("shows the form, and answers a member and a stranger with the same page; only the member gets a link", async () => {
    const form = await page("GET", "/console/sign-in");
    expect(form.status).toBe(200);
    expect(await form.text()).toContain('name="email"');

    const member = address("member");
    const team = await setupTeam({ ownerEmail: null });
    await addMember(getDb(env.DB), team.teamId, { email: member, role: "developer" });
    const stranger = address("stranger");

    const a = await settledPage("POST", "/console/sign-in", { form: { email: member.toUpperCase() } });
    const b = await settledPage("POST", "/console/sign-in", { form: { email: stranger } });
    const [pageA, pageB] = [await checkEmailPage(a), await checkEmailPage(b)];
    expect(pageA.status).toBe(200);
    expect(await bodyWithout(pageA, member.toUpperCase())).toBe(await bodyWithout(pageB, stranger));
    // Opened again (a reload), the page sends nothing more; without its cookie it is the sign-in form.
    await checkEmailPage(a);
    expect(await mailedLinks(member)).toHaveLength(1);
    const bare = await page("GET", "/console/check-email");
    expect(bare.status).toBe(303);
    expect(bare.headers.get("location")).toBe("/console/sign-in");
    expect(await mailedLinks(member)).toHaveLength(1);
    expect(await mailedLinks(stranger)).toHaveLength(0);
  });

  it("answers 422 with the form for an address that is not one", async () => {
    const res = await page("POST", "/console/sign-in", { form: { email: "not an address" } });
    expect(res.status).toBe(422);
    expect(await res.text()).toContain("Enter a valid email address");
  });

  it("mails at most 5 links per address and hour from one client network, counting the asks for an address that was not a member yet", async () => {
    const email = address("limited");
    const ip = "198.51.100.20";
    // Five asks while a stranger: nothing is sent, but each one counts.
    for (let i = 0; i < LINKS_PER_ADDRESS_PER_NETWORK; i++) expect((await settledPage("POST", "/console/sign-in", { form: { email }, ip })).status).toBe(303);
    const team = await setupTeam({ ownerEmail: null });
    await addMember(getDb(env.DB), team.teamId, { email, role: "viewer" });
    const sixth = await checkEmailPage(await settledPage("POST", "/console/sign-in", { form: { email }, ip }));
    expect(sixth.status).toBe(200);
    expect(await sixth.text()).toContain("Find the link in the terminal");
    expect(await mailedLinks(email)).toHaveLength(0);
    // The next hour's window sends again.
    setClock(nowMs() + 3_600_000);
    await settledPage("POST", "/console/sign-in", { form: { email }, ip });
    expect(await mailedLinks(email)).toHaveLength(1);
  });

  it("regression (issue 37, 5): a stranger's asks cannot lock a person out: 5 per client network, 20 in all, refused asks count nowhere else, invitations never counted", async () => {
    const email = address("target");
    const team = await consoleTeam("owner");
    await addMember(getDb(env.DB), team.teamId, { email, role: "viewer" });
    // A stranger on one network (an IPv4 address, or any address of one IPv6 /64) asks 30 times.
    for (let i = 0; i < 30; i++) await settledPage("POST", "/console/sign-in", { form: { email }, ip: `2001:db8:37:1::${i + 1}` });
    expect(await mailedLinks(email)).toHaveLength(LINKS_PER_ADDRESS_PER_NETWORK);
    // The person, from their own network, still gets a link; and an invitation is never refused by these limits.
    await settledPage("POST", "/console/sign-in", { form: { email }, ip: "198.51.100.77" });
    expect(await mailedLinks(email)).toHaveLength(LINKS_PER_ADDRESS_PER_NETWORK + 1);
    const invitee = address("invitee");
    for (let i = 0; i < 6; i++) await settledPage("POST", "/console/sign-in", { form: { email: invitee }, ip: "198.51.100.78" });
    expect((await page("POST", `/console/teams/${team.teamId}/members/invite`, { cookie: team.cookie, form: { email: invitee, role: "viewer" } })).status).toBe(
      303,
    );
    expect(await mailedLinks(invitee)).toHaveLength(1);
    // 20 links an hour in all, whatever the networks.
    for (let n = 2; n <= 6; n++) for (let i = 0; i < 5; i++) await settledPage("POST", "/console/sign-in", { form: { email }, ip: `198.51.${n}.1` });
    expect(await mailedLinks(email)).toHaveLength(LINKS_PER_ADDRESS_PER_HOUR);
  });

  it("regression (issue 37, 5): the answer does not wait for the membership look-up or the mail: the link is made after the answer", async () => {
    const email = address("member");
    const team = await setupTeam({ ownerEmail: null });
    await addMember(getDb(env.DB), team.teamId, { email, role: "viewer" });
    const ctx = createExecutionContext();
    const res = await page("POST", "/console/sign-in", { form: { email }, ctx });
    expect(res.status).toBe(303);
    expect(await mailedLinks(email)).toHaveLength(0);
    await waitOnExecutionContext(ctx);
    expect(await mailedLinks(email)).toHaveLength(1);
  });
});

describe("the link", () => {
  it("GET shows a confirm button and consumes nothing; POST signs in once and redirects (303) into the console", async () => {
    const team = await consoleTeam("owner");
    const { token } = await createLink(getDb(env.DB), { kind: "sign_in", email: team.email });
    for (let i = 0; i < 2; i++) {
      const confirm = await page("GET", `/console/auth/${token}`);
      expect(confirm.status).toBe(200);
      expect(await confirm.text()).toContain('data-testid="confirm-sign-in"');
    }
    const used = await useLink(token);
    expect(used.status).toBe(303);
    expect(used.headers.get("location")).toBe("/console");
    const cookie = used.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^edp_session=[A-Za-z0-9_-]{43};/);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax");
    expect(cookie).toContain("Path=/console");
    expect(cookie).not.toContain("Secure"); // APP_URL is http in the tests
    // The session cookie opens the console; the token is stored only as a hash.
    const home = await page("GET", "/console", { cookie: sessionCookie(used) });
    expect(home.status).toBe(303);
    expect(home.headers.get("location")).toBe(`/console/teams/${team.teamId}/keys`);
    const stored = await env.DB.prepare("SELECT count(*) AS n FROM console_links WHERE token_hash = ?").bind(token).first<{ n: number }>();
    expect(stored!.n).toBe(0);

    // Used: a second POST and the GET both say it has expired.
    expect((await useLink(token)).status).toBe(410);
    expect((await page("GET", `/console/auth/${token}`)).status).toBe(410);
  });

  it("signs in once when the same link is posted twice at the same time", async () => {
    const team = await consoleTeam("developer");
    const { token } = await createLink(getDb(env.DB), { kind: "sign_in", email: team.email });
    const answers = await Promise.all([useLink(token), useLink(token), useLink(token)]);
    expect(answers.map((r) => r.status).sort()).toEqual([303, 410, 410]);
    const sessions = await env.DB.prepare("SELECT count(*) AS n FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = ?")
      .bind(team.email)
      .first<{ n: number }>();
    expect(sessions!.n).toBe(2); // consoleTeam's own sign-in, and this one
  });

  it("expires after 15 minutes (a moved clock)", async () => {
    const team = await consoleTeam("viewer");
    const start = nowMs();
    setClock(start);
    const { token } = await createLink(getDb(env.DB), { kind: "sign_in", email: team.email });
    setClock(start + 15 * 60_000 + 1);
    expect((await page("GET", `/console/auth/${token}`)).status).toBe(410);
    expect((await useLink(token)).status).toBe(410);
  });

  it("answers 410 for a token that was never issued, and the Origin rule holds for its POST", async () => {
    expect((await useLink("x".repeat(43))).status).toBe(410);
    expect((await useLink("short")).status).toBe(410);
    const team = await consoleTeam("viewer");
    const { token } = await createLink(getDb(env.DB), { kind: "sign_in", email: team.email });
    expect((await useLink(token, { origin: null })).status).toBe(403);
    expect((await useLink(token, { origin: "https://evil.test" })).status).toBe(403);
    expect((await useLink(token)).status).toBe(303); // still unused after the refused attempts
  });
});

describe("signing up", () => {
  it("creates nothing until the link is used, then the user, a free team and the owner membership", async () => {
    const email = address("founder");
    const name = `Founders ${crypto.randomUUID().slice(0, 6)}`;
    const res = await page("POST", "/console/sign-up", { form: { email, team_name: name } });
    expect((await checkEmailPage(res)).status).toBe(200);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM teams WHERE name = ?").bind(name).first("n")).toBe(0);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM users WHERE email = ?").bind(email).first("n")).toBe(0);
    const [token] = await mailedLinks(email);
    expect(token).toBeDefined();
    const used = await useLink(token);
    expect(used.status).toBe(303);
    const team = await env.DB.prepare("SELECT id, plan, owner_email FROM teams WHERE name = ?")
      .bind(name)
      .first<{ id: string; plan: string; owner_email: string }>();
    expect(team).toMatchObject({ plan: "free", owner_email: email });
    expect(used.headers.get("location")).toBe(`/console/teams/${team!.id}/keys`);
    const role = await env.DB.prepare("SELECT m.role FROM memberships m JOIN users u ON u.id = m.user_id WHERE u.email = ? AND m.team_id = ?")
      .bind(email, team!.id)
      .first("role");
    expect(role).toBe("owner");
    const keys = await page("GET", `/console/teams/${team!.id}/keys`, { cookie: sessionCookie(used) });
    expect(keys.status).toBe(200);
  });

  it("puts the team name in the mail as one line of at most 100 characters", async () => {
    const email = address("founder");
    expect((await page("POST", "/console/sign-up", { form: { email, team_name: "Evil\r\nBcc: victim@example.com" } })).status).toBe(422);
    const name = `Acme ${"x".repeat(190)}`;
    expect((await page("POST", "/console/sign-up", { form: { email, team_name: name } })).status).toBe(303);
    const mail = await env.DB.prepare('SELECT subject, text FROM platform_outbox WHERE "to" = ?').bind(email).first<{ subject: string; text: string }>();
    const quoted = /team "([^"]*)"/.exec(mail!.text)![1];
    expect(quoted).toHaveLength(100);
    expect(quoted.endsWith("…")).toBe(true);
    expect(quoted).not.toMatch(/[\r\n]/);
    expect(mail!.subject).toBe("Confirm your new team");
  });

  it("answers 422 without a team name, and the per-address limit applies", async () => {
    const email = address("founder");
    expect((await page("POST", "/console/sign-up", { form: { email, team_name: "  " } })).status).toBe(422);
    for (let i = 0; i < LINKS_PER_ADDRESS_PER_NETWORK + 2; i++)
      await page("POST", "/console/sign-up", { form: { email, team_name: "T" }, ip: "198.51.100.30" });
    expect(await mailedLinks(email)).toHaveLength(LINKS_PER_ADDRESS_PER_NETWORK);
  });
});

describe("sessions", () => {
  it("end 30 days after their last use, and their use moves that forward (at most hourly)", async () => {
    const start = nowMs();
    setClock(start);
    const team = await consoleTeam("viewer");
    const path = `/console/teams/${team.teamId}/keys`;
    setClock(start + 20 * DAY);
    expect((await page("GET", path, { cookie: team.cookie })).status).toBe(200);
    setClock(start + 45 * DAY); // 25 days after the last use
    expect((await page("GET", path, { cookie: team.cookie })).status).toBe(200);
    setClock(start + 75 * DAY + 1); // 30 days after the last use
    const res = await page("GET", path, { cookie: team.cookie });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/sign-in");
  });

  it("end 90 days after sign-in however often they are used", async () => {
    const start = nowMs();
    setClock(start);
    const team = await consoleTeam("viewer");
    const path = `/console/teams/${team.teamId}/keys`;
    for (let day = 20; day < 90; day += 20) {
      setClock(start + day * DAY);
      expect((await page("GET", path, { cookie: team.cookie })).status, `day ${day}`).toBe(200);
    }
    setClock(start + 90 * DAY + 1);
    expect((await page("GET", path, { cookie: team.cookie })).status).toBe(303);
  });

  it("sign-out deletes the session on the server; sign-out everywhere deletes every session of the user", async () => {
    const team = await consoleTeam("developer");
    const path = `/console/teams/${team.teamId}/keys`;
    const out = await page("POST", "/console/sign-out", { cookie: team.cookie });
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toContain("edp_session=;");
    expect((await page("GET", path, { cookie: team.cookie })).status).toBe(303);

    const one = await signIn(team.email);
    const two = await signIn(team.email);
    expect((await page("GET", path, { cookie: two })).status).toBe(200);
    expect((await page("POST", "/console/sign-out-everywhere", { cookie: one })).status).toBe(303);
    expect((await page("GET", path, { cookie: one })).status).toBe(303);
    expect((await page("GET", path, { cookie: two })).status).toBe(303);
  });

  it("a removed member loses the team at their next request", async () => {
    const team = await consoleTeam("owner");
    const other = await addMember(getDb(env.DB), team.teamId, { email: address("leaver"), role: "developer" });
    const cookie = await signIn(other.email);
    const path = `/console/teams/${team.teamId}/keys`;
    expect((await page("GET", path, { cookie })).status).toBe(200);
    await removeMember(getDb(env.DB), team.teamId, { email: team.email, role: "owner" }, other.user_id);
    expect((await page("GET", path, { cookie })).status).toBe(404);
    expect((await page("POST", path, { cookie, form: { name: "k", scopes: "logs:read" } })).status).toBe(404);
  });
});

describe("operator routes", () => {
  it("POST /admin/teams/:id/members adds a member (201); POST /admin/sign-in-links mints a working link (201)", async () => {
    const team = await setupTeam({ ownerEmail: null });
    const email = address("support");
    const added = await admin("POST", `teams/${team.teamId}/members`, { email, role: "admin" });
    expect(added.status).toBe(201);
    expect((await json(added)).data).toMatchObject({ team_id: team.teamId, email, role: "admin" });
    const minted = await admin("POST", "sign-in-links", { email });
    expect(minted.status).toBe(201);
    const { url, expires_at } = (await json(minted)).data;
    expect(url).toMatch(/^http:\/\/app\.test\/console\/auth\/[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(expires_at) - nowMs()).toBeGreaterThan(14 * 60_000);
    const used = await useLink(url.split("/").pop());
    expect(used.status).toBe(303);
    expect((await page("GET", `/console/teams/${team.teamId}/members`, { cookie: sessionCookie(used) })).status).toBe(200);
  });

  it("answers 404 for a link to an address that is no user, 404 for an unknown team, 422 for a bad role, 401 without the token", async () => {
    await expectError(await admin("POST", "sign-in-links", { email: address("nobody") }), 404, { error: "No user with this address" });
    expect((await admin("POST", `teams/${crypto.randomUUID()}/members`, { email: address("x"), role: "viewer" })).status).toBe(404);
    const team = await setupTeam({ ownerEmail: null });
    expect((await admin("POST", `teams/${team.teamId}/members`, { email: address("x"), role: "emperor" })).status).toBe(422);
  });

  it("a team created with owner_email has that owner, and the last owner cannot be demoted by the operator (409)", async () => {
    const email = address("owner");
    const created = await admin("POST", "teams", { name: "Owned", owner_email: email });
    const teamId = (await json(created)).data.id;
    const members = await env.DB.prepare("SELECT m.role FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.team_id = ? AND u.email = ?")
      .bind(teamId, email)
      .all();
    expect(members.results).toEqual([{ role: "owner" }]);
    expect((await admin("POST", `teams/${teamId}/members`, { email, role: "viewer" })).status).toBe(409);
  });

  it("the migration makes each existing team's owner_email its owner", async () => {
    const team = await setupTeam({ ownerEmail: ` Legacy-${crypto.randomUUID().slice(0, 6)}@Example.com ` });
    const migration = (env.TEST_MIGRATIONS as { name: string; queries: string[] }[]).find((m) => m.name.includes("console"))!;
    const backfill = migration.queries.slice(-2);
    expect(backfill[0]).toContain("INSERT INTO `users`");
    for (const query of backfill) await env.DB.prepare(query).run();
    const row = await env.DB.prepare("SELECT u.email, m.role FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.team_id = ?")
      .bind(team.teamId)
      .first<{ email: string; role: string }>();
    expect(row!.role).toBe("owner");
    expect(row!.email).toMatch(/^legacy-[0-9a-f]{6}@example\.com$/);
    expect((await env.DB.prepare("SELECT id FROM users WHERE email = ?").bind(row!.email).first<{ id: string }>())!.id).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });
});

describe("retention", () => {
  it("deletes expired and idle sessions and used or expired links, and keeps the live ones", async () => {
    const start = nowMs();
    setClock(start);
    const team = await consoleTeam("viewer");
    const { token: pending } = await createLink(getDb(env.DB), { kind: "sign_in", email: team.email });
    const { token: used } = await createLink(getDb(env.DB), { kind: "sign_in", email: team.email });
    const usedRes = await useLink(used);
    expect(usedRes.status).toBe(303);
    expect((await consoleRetention(env)).links).toBeGreaterThanOrEqual(2); // consoleTeam's own link and `used`
    expect((await page("GET", `/console/auth/${pending}`)).status).toBe(200);
    setClock(start + 31 * DAY);
    const swept = await consoleRetention(env);
    expect(swept.sessions).toBeGreaterThanOrEqual(2);
    expect(swept.links).toBeGreaterThanOrEqual(1);
    setClock(start);
    expect((await page("GET", `/console/teams/${team.teamId}/keys`, { cookie: sessionCookie(usedRes) })).status).toBe(303);
  });
});
