// The console's mail page: sending domains with their DNS record and a verify button that shows
// what DNS answered (the resolver intercepted, as in the domains tests), recent emails with status
// and history, the sandboxed preview with its own CSP, webhooks with the secret shown once and
// the test button; tenancy, roles (a viewer sees no write button and no secret), the Origin rule
// and the signed-out redirect.
import { afterEach, describe, expect, it, vi } from "vitest";
import { call, json, setupTeam } from "../helpers/api";
import { consoleTeam, followRedirect, memberOf, page } from "../helpers/console";
import { LIVE, send } from "../products/mail/mail-helpers";

afterEach(() => vi.restoreAllMocks());

/** Answers DNS-over-HTTPS TXT look-ups from `records`; every other fetch goes on. */
function resolver(records: Record<string, string[]>) {
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (!url.pathname.endsWith("/dns-query")) return real(input, init);
    const name = url.searchParams.get("name") ?? "";
    return Response.json({ Status: 0, Answer: (records[name] ?? []).map((v) => ({ name, type: 16, data: `"${v}"` })) });
  });
}

const mailPath = (teamId: string, rest = "") => `/console/teams/${teamId}/mail${rest}`;

describe("console mail page", () => {
  it("redirects to sign-in without a session", async () => {
    const id = crypto.randomUUID();
    for (const path of [mailPath(id), mailPath(id, `/emails/${id}`), mailPath(id, `/emails/${id}/preview`)]) {
      const res = await page("GET", path);
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/console/sign-in");
    }
  });

  it("teaches with empty states: the curl commands with the real API address", async () => {
    const team = await consoleTeam("developer", { domains: [] });
    const html = await (await page("GET", mailPath(team.teamId), { cookie: team.cookie })).text();
    expect(html).toContain("curl -X POST http://app.test/api/v1/domains");
    expect(html).toContain("curl -X POST http://app.test/api/v1/emails");
    expect(html).toContain('data-testid="add-domain"');
  });

  it("adds a domain, shows the exact record, and a verify that shows what DNS answered, then verifies", async () => {
    const team = await consoleTeam("owner", { domains: [] });
    const added = await page("POST", mailPath(team.teamId, "/domains"), { cookie: team.cookie, form: { name: "Mail.Example.ORG" } });
    expect(added.status).toBe(303);
    const html = await (await page("GET", added.headers.get("location")!, { cookie: team.cookie })).text();
    expect(html).toContain("Domain added.");
    expect(html).toMatch(/data-testid="domain-row" data-status="pending" data-domain="mail\.example\.org"/);
    const domain = (await json(await call("GET", "domains", { key: team.key }))).data[0];
    expect(html).toContain(`<code id="rec-name-${domain.id}">_edge-platform.mail.example.org</code>`);
    expect(html).toContain(`<code id="rec-value-${domain.id}">${domain.records[0].value}</code>`);

    resolver({ "_edge-platform.mail.example.org": ["v=spf1 -all", "edp-verify=someone-else"] });
    const failed = await page("POST", mailPath(team.teamId, `/domains/${domain.id}/verify`), { cookie: team.cookie });
    expect(failed.status).toBe(422);
    const answer = await failed.text();
    expect(answer).toContain('data-testid="dns-answer"');
    expect(answer).toContain("found: &quot;v=spf1 -all&quot;, &quot;edp-verify=someone-else&quot;");

    resolver({ "_edge-platform.mail.example.org": [domain.records[0].value] });
    const ok = await page("POST", mailPath(team.teamId, `/domains/${domain.id}/verify`), { cookie: team.cookie });
    const verified = await (await followRedirect(ok, team.cookie)).text();
    expect(verified).toContain("Verified: DNS holds the record.");
    expect(verified).toMatch(/data-testid="domain-row" data-status="verified"/);
    // The DNS answer is the flash of one page view: a reload shows the list, not the answer again.
    const reloaded = await (await page("GET", ok.headers.get("location")!, { cookie: team.cookie })).text();
    expect(reloaded).not.toContain("Verified: DNS holds the record.");
    expect((await json(await call("GET", `domains/${domain.id}`, { key: team.key }))).data.status).toBe("verified");
  });

  it("lists emails with status, and one email with its history and a sandboxed preview served with a CSP that runs nothing", async () => {
    const team = await consoleTeam("viewer");
    const sent = await send(team.key, {
      ...LIVE,
      subject: "Your <receipt>",
      html: '<h1>Thanks</h1><script>alert(1)</script><img src="https://tracker.example/p.gif">',
    });
    expect(sent.status).toBe(201);
    const id = (await json(sent)).data.id;
    const list = await (await page("GET", mailPath(team.teamId), { cookie: team.cookie })).text();
    expect(list.match(/data-testid="email-row"/g)).toHaveLength(1);
    expect(list).toContain("Your &lt;receipt&gt;");

    const detail = await page("GET", mailPath(team.teamId, `/emails/${id}`), { cookie: team.cookie });
    expect(detail.status).toBe(200);
    expect(detail.headers.get("content-security-policy")).toContain("frame-src 'self'");
    expect(detail.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const html = await detail.text();
    expect(html).toContain('data-testid="email-history"');
    expect(html).toMatch(/<iframe class="preview" src="[^"]*\/emails\/[^"]*\/preview" sandbox=""/);
    expect(html).not.toContain("<script>alert(1)</script>");

    const preview = await page("GET", mailPath(team.teamId, `/emails/${id}/preview`), { cookie: team.cookie });
    expect(preview.status).toBe(200);
    const csp = preview.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("sandbox");
    expect(csp).toContain("frame-ancestors 'self'");
    expect(csp).not.toContain("script-src");
    expect(preview.headers.get("x-frame-options")).toBe("SAMEORIGIN");
    expect(await preview.text()).toContain("<h1>Thanks</h1>");
  });

  it("creates a webhook with its secret shown once, tests it (delivered and refused), deletes it", async () => {
    const team = await consoleTeam("developer");
    const created = await page("POST", mailPath(team.teamId, "/webhooks"), {
      cookie: team.cookie,
      form: { url: "https://hooks.example.com/mail", events: ["email.sent", "email.bounced"] },
    });
    expect(created.headers.get("location")).toBe(`${mailPath(team.teamId)}?notice=webhook-created`);
    const html = await (await followRedirect(created, team.cookie)).text();
    expect(html).toMatch(/<pre id="new-webhook-secret">whsec_[A-Za-z0-9+/=]+<\/pre>/);
    const again = await (await page("GET", created.headers.get("location")!, { cookie: team.cookie })).text();
    expect(again).not.toContain("whsec_");
    const hook = (await json(await call("GET", "webhooks", { key: team.key }))).data[0];
    expect(hook.events).toEqual(["email.sent", "email.bounced"]);

    const seen: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementationOnce(async (input) => {
      seen.push(new Request(input).url);
      return new Response(null, { status: 204 });
    });
    const ok = await page("POST", mailPath(team.teamId, `/webhooks/${hook.id}/test`), { cookie: team.cookie });
    expect(await (await followRedirect(ok, team.cookie)).text()).toMatch(
      /data-testid="webhook-test-result">Delivered: the endpoint answered HTTP 204 in \d+ ms\./,
    );
    // A reload shows the page without the result and sends no second test.
    expect(await (await page("GET", ok.headers.get("location")!, { cookie: team.cookie })).text()).not.toContain("webhook-test-result");
    expect(seen).toEqual(["https://hooks.example.com/mail"]);

    vi.spyOn(globalThis, "fetch").mockImplementationOnce(async () => new Response(null, { status: 500 }));
    const refused = await page("POST", mailPath(team.teamId, `/webhooks/${hook.id}/test`), { cookie: team.cookie });
    expect(await (await followRedirect(refused, team.cookie)).text()).toContain(
      "Test delivery was not accepted by the endpoint: The endpoint answered HTTP 500",
    );

    const bad = await page("POST", mailPath(team.teamId, "/webhooks"), { cookie: team.cookie, form: { url: "http://10.0.0.1/x", events: "email.sent" } });
    expect(bad.status).toBe(422);

    const deleted = await page("POST", mailPath(team.teamId, `/webhooks/${hook.id}/delete`), { cookie: team.cookie });
    expect(deleted.status).toBe(303);
    expect((await json(await call("GET", "webhooks", { key: team.key }))).data).toEqual([]);
  });

  it("gives a viewer no write button and refuses its writes; a cross-origin post is refused", async () => {
    const team = await consoleTeam("owner");
    await call("POST", "webhooks", { key: team.key, body: { url: "https://hooks.example.com/mail", events: ["email.sent"] } });
    const viewer = await memberOf(team.teamId, "viewer");
    const html = await (await page("GET", mailPath(team.teamId), { cookie: viewer.cookie })).text();
    expect(html).toContain('data-testid="domain-row"');
    expect(html).toContain('data-testid="webhook-row"');
    expect(html).not.toMatch(/<form method="post" action="\/console\/teams\/[^"]*\/mail/);
    expect(html).not.toContain("whsec_");
    const domain = (await json(await call("GET", "domains", { key: team.key }))).data[0];
    for (const path of ["/domains", `/domains/${domain.id}/verify`, `/domains/${domain.id}/delete`, "/webhooks"]) {
      expect((await page("POST", mailPath(team.teamId, path), { cookie: viewer.cookie, form: { name: "x.example.com" } })).status, path).toBe(403);
    }
    expect((await page("POST", mailPath(team.teamId, "/domains"), { cookie: team.cookie, origin: null, form: { name: "y.example.com" } })).status).toBe(403);
  });

  it("answers 404 for another team's domain, email and webhook, and for another team's id", async () => {
    const team = await consoleTeam("owner");
    const stranger = await setupTeam();
    const email = (await json(await send(stranger.key, LIVE))).data.id;
    const domain = (await json(await call("GET", "domains", { key: stranger.key }))).data[0];
    const hook = (await json(await call("POST", "webhooks", { key: stranger.key, body: { url: "https://hooks.example.com/x", events: ["email.sent"] } }))).data;
    for (const [method, path] of [
      ["GET", `/emails/${email}`],
      ["GET", `/emails/${email}/preview`],
      ["POST", `/domains/${domain.id}/verify`],
      ["POST", `/domains/${domain.id}/delete`],
      ["POST", `/webhooks/${hook.id}/test`],
      ["POST", `/webhooks/${hook.id}/delete`],
    ]) {
      expect((await page(method, mailPath(team.teamId, path), { cookie: team.cookie })).status, path).toBe(404);
    }
    expect((await page("GET", mailPath(stranger.teamId), { cookie: team.cookie })).status).toBe(404);
    expect((await json(await call("GET", `domains/${domain.id}`, { key: stranger.key }))).data.id).toBe(domain.id);
  });
});
