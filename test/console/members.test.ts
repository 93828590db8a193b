// The members page (DESIGN.md "People"): invitations that become memberships only when their link
// is used within 7 days, role changes, removal, the last-owner rule, who may do what, another
// team's ids, and the record of console actions shown to owners and admins only.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { nowMs, setClock } from "../../src/platform/clock";
import { setupTeam } from "../helpers/api";
import { consoleTeam, mailedLinks, memberOf, page, sessionCookie, useLink } from "../helpers/console";

afterEach(() => setClock(null));

const address = (tag: string) => `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`;
const roleOf = (teamId: string, email: string) =>
  env.DB.prepare("SELECT m.role FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.team_id = ? AND u.email = ?")
    .bind(teamId, email)
    .first<string>("role");

describe("invitations", () => {
  it("an invitation is pending until its link is used; then the invitee is a member with the role", async () => {
    const team = await consoleTeam("admin");
    const base = `/console/teams/${team.teamId}/members`;
    const html = await (await page("GET", base, { cookie: team.cookie })).text();
    expect(html).toContain('data-testid="invite-member"');
    expect(html).toContain('name="role"');
    const email = address("invitee");
    const sent = await page("POST", `${base}/invite`, { cookie: team.cookie, form: { email, role: "developer" } });
    expect(sent.status).toBe(303);
    // The tests' transport is the local outbox: the notice says the link is in the terminal.
    expect(sent.headers.get("location")).toBe(`${base}?notice=invited_terminal`);
    expect(await roleOf(team.teamId, email)).toBeNull();
    expect(await (await page("GET", base, { cookie: team.cookie })).text()).toContain('data-testid="invitation-row"');

    const [token] = await mailedLinks(email);
    const confirm = await page("GET", `/console/auth/${token}`);
    expect(await confirm.text()).toContain("Join the team");
    expect(await roleOf(team.teamId, email)).toBeNull();
    const used = await useLink(token);
    expect(used.status).toBe(303);
    expect(used.headers.get("location")).toBe(`/console/teams/${team.teamId}/keys`);
    expect(await roleOf(team.teamId, email)).toBe("developer");
    expect((await page("GET", `/console/teams/${team.teamId}/keys`, { cookie: sessionCookie(used) })).status).toBe(200);
    expect((await useLink(token)).status).toBe(410);
    expect(await (await page("GET", base, { cookie: team.cookie })).text()).not.toContain('data-testid="invitation-row"');
  });

  it("works for 7 days, then not (a moved clock)", async () => {
    const start = nowMs();
    setClock(start);
    const team = await consoleTeam("owner");
    const email = address("late");
    await page("POST", `/console/teams/${team.teamId}/members/invite`, { cookie: team.cookie, form: { email, role: "viewer" } });
    const [token] = await mailedLinks(email);
    setClock(start + 6 * 86_400_000);
    expect((await page("GET", `/console/auth/${token}`)).status).toBe(200);
    setClock(start + 7 * 86_400_000 + 1);
    expect((await useLink(token)).status).toBe(410);
    expect(await roleOf(team.teamId, email)).toBeNull();
  });

  it("refuses a member's address (422), a bad role (422), and an admin inviting an owner (403)", async () => {
    const team = await consoleTeam("admin");
    const base = `/console/teams/${team.teamId}/members/invite`;
    expect((await page("POST", base, { cookie: team.cookie, form: { email: team.email, role: "viewer" } })).status).toBe(422);
    expect((await page("POST", base, { cookie: team.cookie, form: { email: address("x"), role: "root" } })).status).toBe(422);
    expect((await page("POST", base, { cookie: team.cookie, form: { email: "nope", role: "viewer" } })).status).toBe(422);
    const owner = address("would-be-owner");
    expect((await page("POST", base, { cookie: team.cookie, form: { email: owner, role: "owner" } })).status).toBe(403);
    expect(await mailedLinks(owner)).toHaveLength(0);
  });

  it("a withdrawn invitation's link no longer works; another team's invitation answers 404", async () => {
    const team = await consoleTeam("owner");
    const other = await consoleTeam("owner");
    const email = address("withdrawn");
    await page("POST", `/console/teams/${team.teamId}/members/invite`, { cookie: team.cookie, form: { email, role: "viewer" } });
    const id = await env.DB.prepare("SELECT id FROM console_links WHERE email = ?").bind(email).first<string>("id");
    expect((await page("POST", `/console/teams/${other.teamId}/members/invitations/${id}/withdraw`, { cookie: other.cookie })).status).toBe(404);
    expect((await page("POST", `/console/teams/${team.teamId}/members/invitations/${id}/withdraw`, { cookie: team.cookie })).status).toBe(303);
    const [token] = await mailedLinks(email);
    expect((await useLink(token)).status).toBe(410);
  });
});

describe("invitations answer to their inviter (regression, issue 37 finding 4)", () => {
  it("an admin's invitation of an admin is withdrawn when the admin is removed, and cannot make an admin afterwards", async () => {
    const team = await consoleTeam("owner");
    const inviter = await memberOf(team.teamId, "admin");
    const email = address("second-admin");
    expect((await page("POST", `/console/teams/${team.teamId}/members/invite`, { cookie: inviter.cookie, form: { email, role: "admin" } })).status).toBe(303);
    const [token] = await mailedLinks(email);
    expect((await page("POST", `/console/teams/${team.teamId}/members/${inviter.userId}/remove`, { cookie: team.cookie })).status).toBe(303);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM console_links WHERE team_id = ? AND email = ?").bind(team.teamId, email).first("n")).toBe(0);
    expect((await useLink(token)).status).toBe(410);
    expect(await roleOf(team.teamId, email)).toBeNull();
  });

  it("an invitation is withdrawn when its inviter is demoted below the right to invite that role", async () => {
    const team = await consoleTeam("owner");
    const inviter = await memberOf(team.teamId, "admin");
    const email = address("invitee");
    await page("POST", `/console/teams/${team.teamId}/members/invite`, { cookie: inviter.cookie, form: { email, role: "developer" } });
    const [token] = await mailedLinks(email);
    expect(
      (await page("POST", `/console/teams/${team.teamId}/members/${inviter.userId}/role`, { cookie: team.cookie, form: { role: "developer" } })).status,
    ).toBe(303);
    expect((await useLink(token)).status).toBe(410);
    expect(await roleOf(team.teamId, email)).toBeNull();
  });

  it("checked again when used: a link whose inviter lost the right by another path (no withdrawal) makes no member", async () => {
    const team = await consoleTeam("owner");
    const inviter = await memberOf(team.teamId, "admin");
    const email = address("invitee");
    await page("POST", `/console/teams/${team.teamId}/members/invite`, { cookie: inviter.cookie, form: { email, role: "admin" } });
    const [token] = await mailedLinks(email);
    await env.DB.prepare("UPDATE memberships SET role = 'viewer' WHERE team_id = ? AND user_id = ?").bind(team.teamId, inviter.userId).run();
    expect((await useLink(token)).status).toBe(410);
    expect(await roleOf(team.teamId, email)).toBeNull();
    // An invitation whose inviter still holds the right works.
    const other = address("welcome");
    await page("POST", `/console/teams/${team.teamId}/members/invite`, { cookie: team.cookie, form: { email: other, role: "admin" } });
    const [ok] = await mailedLinks(other);
    expect((await useLink(ok)).status).toBe(303);
    expect(await roleOf(team.teamId, other)).toBe("admin");
  });
});

describe("roles", () => {
  it("developers and viewers cannot manage members (403) and see no invitations or activity", async () => {
    const team = await consoleTeam("owner");
    for (const role of ["developer", "viewer"] as const) {
      const member = await memberOf(team.teamId, role);
      const base = `/console/teams/${team.teamId}/members`;
      const html = await (await page("GET", base, { cookie: member.cookie })).text();
      expect(html).toContain('data-testid="member-row"');
      expect(html).not.toContain('data-testid="invite-member"');
      expect(html).not.toContain("Activity");
      expect((await page("POST", `${base}/invite`, { cookie: member.cookie, form: { email: address("x"), role: "viewer" } })).status).toBe(403);
      const ownerId = await env.DB.prepare("SELECT id FROM users WHERE email = ?").bind(team.email).first<string>("id");
      expect((await page("POST", `${base}/${ownerId}/role`, { cookie: member.cookie, form: { role: "viewer" } })).status).toBe(403);
      expect((await page("POST", `${base}/${ownerId}/remove`, { cookie: member.cookie })).status).toBe(403);
    }
    expect(await roleOf(team.teamId, team.email)).toBe("owner");
  });

  it("an admin changes and removes non-owners, but cannot touch an owner or grant ownership (403)", async () => {
    const team = await consoleTeam("owner");
    const adminMember = await memberOf(team.teamId, "admin");
    const dev = await memberOf(team.teamId, "developer");
    const base = `/console/teams/${team.teamId}/members`;
    expect((await page("POST", `${base}/${dev.userId}/role`, { cookie: adminMember.cookie, form: { role: "viewer" } })).status).toBe(303);
    expect(await roleOf(team.teamId, dev.email)).toBe("viewer");
    expect((await page("POST", `${base}/${dev.userId}/role`, { cookie: adminMember.cookie, form: { role: "owner" } })).status).toBe(403);
    const ownerId = await env.DB.prepare("SELECT id FROM users WHERE email = ?").bind(team.email).first<string>("id");
    expect((await page("POST", `${base}/${ownerId}/role`, { cookie: adminMember.cookie, form: { role: "admin" } })).status).toBe(403);
    expect((await page("POST", `${base}/${ownerId}/remove`, { cookie: adminMember.cookie })).status).toBe(403);
    expect((await page("POST", `${base}/${dev.userId}/remove`, { cookie: adminMember.cookie })).status).toBe(303);
    expect(await roleOf(team.teamId, dev.email)).toBeNull();
  });

  it("another team's member id answers 404 and changes nothing", async () => {
    const team = await consoleTeam("owner");
    const other = await setupTeam({ ownerEmail: null });
    const stranger = await memberOf(other.teamId, "developer");
    const base = `/console/teams/${team.teamId}/members`;
    expect((await page("POST", `${base}/${stranger.userId}/role`, { cookie: team.cookie, form: { role: "viewer" } })).status).toBe(404);
    expect((await page("POST", `${base}/${stranger.userId}/remove`, { cookie: team.cookie })).status).toBe(404);
    expect((await page("GET", `/console/teams/${other.teamId}/members`, { cookie: team.cookie })).status).toBe(404);
    expect(await roleOf(other.teamId, stranger.email)).toBe("developer");
  });
});

describe("the last owner", () => {
  it("can be neither demoted nor removed (409); with a second owner, either can go", async () => {
    const team = await consoleTeam("owner");
    const base = `/console/teams/${team.teamId}/members`;
    const me = await env.DB.prepare("SELECT id FROM users WHERE email = ?").bind(team.email).first<string>("id");
    expect((await page("POST", `${base}/${me}/role`, { cookie: team.cookie, form: { role: "admin" } })).status).toBe(409);
    expect((await page("POST", `${base}/${me}/remove`, { cookie: team.cookie })).status).toBe(409);
    expect(await roleOf(team.teamId, team.email)).toBe("owner");

    const second = await memberOf(team.teamId, "admin");
    expect((await page("POST", `${base}/${second.userId}/role`, { cookie: team.cookie, form: { role: "owner" } })).status).toBe(303);
    expect((await page("POST", `${base}/${me}/role`, { cookie: team.cookie, form: { role: "admin" } })).status).toBe(303);
    expect(await roleOf(team.teamId, team.email)).toBe("admin");
    // Now `second` is the last owner.
    expect((await page("POST", `${base}/${second.userId}/remove`, { cookie: second.cookie })).status).toBe(409);
  });

  it("holds when two owners demote each other at the same time: one stays owner", async () => {
    const team = await consoleTeam("owner");
    const second = await memberOf(team.teamId, "owner");
    const base = `/console/teams/${team.teamId}/members`;
    const me = await env.DB.prepare("SELECT id FROM users WHERE email = ?").bind(team.email).first<string>("id");
    const answers = await Promise.all([
      page("POST", `${base}/${second.userId}/role`, { cookie: team.cookie, form: { role: "viewer" } }),
      page("POST", `${base}/${me}/role`, { cookie: second.cookie, form: { role: "viewer" } }),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([303, 409]);
    const owners = await env.DB.prepare("SELECT count(*) AS n FROM memberships WHERE team_id = ? AND role = 'owner'").bind(team.teamId).first<number>("n");
    expect(owners).toBe(1);
  });
});

describe("the activity record", () => {
  it("shows sign-ins, invitations, role changes and removals with who did them, to owners and admins", async () => {
    const team = await consoleTeam("owner");
    const base = `/console/teams/${team.teamId}/members`;
    const dev = await memberOf(team.teamId, "developer");
    await page("POST", `${base}/invite`, { cookie: team.cookie, form: { email: address("guest"), role: "viewer" } });
    await page("POST", `${base}/${dev.userId}/role`, { cookie: team.cookie, form: { role: "viewer" } });
    await page("POST", `${base}/${dev.userId}/remove`, { cookie: team.cookie });
    const html = await (await page("GET", base, { cookie: team.cookie })).text();
    const rows = html.match(/data-testid="action-row"/g) ?? [];
    expect(rows.length).toBeGreaterThanOrEqual(5);
    for (const text of ["signed in", "invited", "changed the role of", "removed", "added"]) expect(html).toContain(text);
    expect(html).toContain(team.email);
  });
});
