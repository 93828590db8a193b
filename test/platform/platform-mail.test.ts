// One rule for tenant text in every platform mail (issue 37, 1): each template of platform mail is
// in the table below, keyed by the closed list of kinds `platform-mail.ts` defines, so a template
// added later (a new kind) fails this file until it is listed here. Each entry renders its
// template with hostile tenant text; every rendering must be plain (no html), one-line subjects,
// the tenant text cut to 100 characters with an ellipsis, and URL-like text defanged
// (`evil[.]test/restore`, no scheme), so no mail client makes a link of it. The sign-up and
// invitation regressions go through the real routes.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { linkMail } from "../../src/console/sign-in.service";
import { PLATFORM_MAIL_KINDS, storePlatformMail, tenantText, type MailContent, type PlatformMailKind } from "../../src/platform/platform-mail";
import { usageWarningMail } from "../../src/platform/quota";
import { shareMail } from "../../src/products/audit/audit-share.service";
import { alertMail } from "../../src/products/logs/logs.consumer";
import { destinationDisabledMail } from "../../src/products/relay/relay.health";
import { formSubmissionMail } from "../../src/products/forms/forms.notify";
import { gradeDropMail } from "../../src/products/audit/audit-scan-schedules.service";
import { consoleTeam, page } from "../helpers/console";

const PHISH = "Your mailbox is full - restore it at https://evil.test/restore";
const LONG = `Team ${"A".repeat(300)}`;
const ID = "4f1c2a9e-1d2b-4c3d-8e9f-0a1b2c3d4e5f";
const AT = "2026-11-28T10:00:00.000Z";

/** Every template of platform mail, rendered with `tenant` wherever a tenant's text goes. */
const TEMPLATES: Record<PlatformMailKind, (tenant: string) => MailContent[]> = {
  console_sign_in: () => [linkMail("sign_in", { url: "http://app.test/console/auth/t" })],
  console_sign_up: (tenant) => [linkMail("sign_up", { url: "http://app.test/console/auth/t", teamName: tenant })],
  console_invite: (tenant) => [linkMail("invite", { url: "http://app.test/console/auth/t", teamName: tenant })],
  usage_warning: () => [usageWarningMail({ threshold: 80, service: "mail", period: "2026-11", after: 800, limit: 1000 })],
  report_share: (tenant) => [shareMail({ projectId: tenant, periodStart: AT, periodEnd: AT, url: "http://app.test/insights/audit/reports/shared/t" })],
  alert: (tenant) => {
    const alert = { id: ID, project_id: ID, name: tenant, project_name: tenant, level: "error" as const, threshold: 5, window_minutes: 5 };
    const note = { firing_id: ID, alert_id: ID, team_id: ID, channel: "email" as const, count: 9, window_start: AT, triggered_at: AT };
    return [alertMail(note, alert), alertMail({ ...note, kind: "resolved", resolved_at: AT }, alert)];
  },
  relay_destination_disabled: (tenant) => [
    destinationDisabledMail("http://app.test", { teamId: ID, ownerEmail: "o@example.com", sourceId: ID, destinationId: ID, url: tenant, failingSince: AT }),
  ],
  // The form's name is the team's text; the fields are a visitor's, quoted the same way.
  scan_grade_drop: (tenant) => [gradeDropMail({ targetUrl: tenant, projectId: tenant, scanId: ID, before: "A", after: "C" })],
  form_submission: (tenant) => [
    formSubmissionMail({ name: tenant }, { id: ID, fields: { message: "hello" }, files: [], subject: null, replyTo: null, createdAt: AT }, []),
  ],
};

/** Whether a template puts tenant text in its mail at all (usage warnings and sign-in links do not). */
const CARRIES_TENANT_TEXT = (kind: PlatformMailKind) => !["console_sign_in", "usage_warning"].includes(kind);

describe("platform mail templates", () => {
  it("the table lists every kind of platform mail, and a kind outside it cannot be stored", async () => {
    expect(Object.keys(TEMPLATES).sort()).toEqual([...PLATFORM_MAIL_KINDS].sort());
    await expect(
      storePlatformMail(env, [{ teamId: null, kind: "something_new" as PlatformMailKind, to: "a@example.com", subject: "s", text: "t" }]),
    ).rejects.toThrow(/kind/);
  });

  for (const kind of PLATFORM_MAIL_KINDS) {
    it(`${kind}: plain, one-line subject, tenant text defanged without a scheme`, () => {
      for (const mail of TEMPLATES[kind](PHISH)) {
        expect(Object.keys(mail).sort()).toEqual(["subject", "text"]);
        expect(mail.subject).not.toMatch(/[\r\n]/);
        const all = `${mail.subject}\n${mail.text}`;
        expect(all).not.toMatch(/evil\.test/);
        expect(all).not.toMatch(/https?:\/\/evil|https?\[:\]/);
        if (CARRIES_TENANT_TEXT(kind)) expect(all).toContain("restore it at evil[.]test/restore");
      }
    });

    it(`${kind}: tenant text cut to 100 characters with an ellipsis`, () => {
      for (const mail of TEMPLATES[kind](LONG)) {
        const all = `${mail.subject}\n${mail.text}`;
        expect(all).not.toContain("A".repeat(100));
        if (CARRIES_TENANT_TEXT(kind)) expect(all).toContain(`Team ${"A".repeat(94)}…`);
      }
    });
  }
});

describe("the one rule (tenantText)", () => {
  it("drops schemes, defangs dots and at signs, keeps one line and cuts at 100", () => {
    expect(tenantText(PHISH)).toBe("Your mailbox is full - restore it at evil[.]test/restore");
    expect(tenantText("HTTP://Evil.Test/a and ftp://x.test and javascript:alert(1)")).toBe("Evil[.]Test/a and x[.]test and alert(1)");
    expect(tenantText("mail help@evil.test\r\nor www.evil.test")).toBe("mail help[at]evil[.]test or www[.]evil[.]test");
    expect(tenantText("evil。test and evil．test")).toBe("evil[.]test and evil[.]test");
    expect([...tenantText(LONG)]).toHaveLength(100);
  });
});

describe("platform mail from the console (regression, issue 37 finding 1)", () => {
  it("a sign-up's team name reaches the mail defanged, without a scheme", async () => {
    const email = `founder-${crypto.randomUUID().slice(0, 8)}@example.com`;
    expect((await page("POST", "/console/sign-up", { form: { email, team_name: PHISH } })).status).toBe(303);
    const mail = await env.DB.prepare('SELECT text, html FROM platform_outbox WHERE "to" = ?').bind(email).first<{ text: string; html: string | null }>();
    expect(mail!.text).toContain("restore it at evil[.]test/restore");
    expect(mail!.text).not.toContain("https://evil.test");
    expect(mail!.html).toBeNull();
  });

  it("an invitation carries the team name defanged", async () => {
    const team = await consoleTeam("owner");
    await env.DB.prepare("UPDATE teams SET name = ? WHERE id = ?").bind(PHISH, team.teamId).run();
    const email = `invitee-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const res = await page("POST", `/console/teams/${team.teamId}/members/invite`, { cookie: team.cookie, form: { email, role: "viewer" } });
    expect(res.status).toBe(303);
    const mail = await env.DB.prepare('SELECT text FROM platform_outbox WHERE "to" = ?').bind(email).first<{ text: string }>();
    expect(mail!.text).toContain("evil[.]test/restore");
    expect(mail!.text).not.toContain("evil.test");
  });
});
