// The console's push and audit pages: push apps with the public key, subscriber count and a test
// notification (never the private key); audit projects, a project's summary, export buttons,
// artefacts to download, a share link shown once and revocation; tenancy, roles (a viewer sees no
// write button and no share link, and is refused writes), the Origin rule, the signed-out redirect.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { processExport } from "../../src/products/audit/audit.consumer";
import { call, json, setupTeam } from "../helpers/api";
import { consoleTeam, followRedirect, memberOf, page } from "../helpers/console";
import { auditBase, createFinding, exportReport, waitForStatus } from "../products/audit/audit-helpers";
import { browserSubscription, createApp, pushService, subscribe, waitFor } from "../products/push/push-helpers";

const teamPage = (teamId: string, rest: string) => `/console/teams/${teamId}/${rest}`;

describe("console push pages", () => {
  it("redirects to sign-in without a session", async () => {
    for (const rest of ["push", `push/apps/${crypto.randomUUID()}`, "audit", "audit/projects/web"]) {
      const res = await page("GET", teamPage(crypto.randomUUID(), rest));
      expect(res.status, rest).toBe(303);
      expect(res.headers.get("location")).toBe("/console/sign-in");
    }
  });

  it("teaches with an empty state, creates an app from the form, and shows its public key and subscribers", async () => {
    const team = await consoleTeam("developer");
    const empty = await (await page("GET", teamPage(team.teamId, "push"), { cookie: team.cookie })).text();
    expect(empty).toContain("Create your first push app");
    expect(empty).toContain("curl -X POST http://app.test/api/v1/push/apps");

    const created = await page("POST", teamPage(team.teamId, "push"), { cookie: team.cookie, form: { name: "Storefront" } });
    expect(created.status).toBe(303);
    const app = (await json(await call("GET", "push/apps", { key: team.key }))).data[0];
    expect(created.headers.get("location")).toBe(`${teamPage(team.teamId, `push/apps/${app.id}`)}?notice=created`);
    await subscribe(team.key, app.id, await browserSubscription());
    const html = await (await page("GET", teamPage(team.teamId, `push/apps/${app.id}`), { cookie: team.cookie })).text();
    expect(html).toContain(`<pre id="vapid-public-key">${app.vapid_public_key}</pre>`);
    expect(html).toContain('data-testid="subscriber-count" data-count="1"');
    expect(html).toContain("Send to 1 subscriber");
    const list = await (await page("GET", teamPage(team.teamId, "push"), { cookie: team.cookie })).text();
    expect(list.match(/data-testid="push-app-row"/g)).toHaveLength(1);
  });

  it("sends a test notification through the same service (it reaches the push service) and lists it", async () => {
    const team = await consoleTeam("admin");
    const app = await createApp(team.key);
    const sub = await browserSubscription();
    await subscribe(team.key, app.id, sub);
    const seen = pushService();
    const res = await page("POST", teamPage(team.teamId, `push/apps/${app.id}/test`), {
      cookie: team.cookie,
      form: { title: "Hello from the console", body: "It works!" },
    });
    expect(res.status).toBe(303);
    const html = await (await page("GET", res.headers.get("location")!, { cookie: team.cookie })).text();
    expect(html).toContain("Test notification queued for every subscriber.");
    expect(html).toMatch(/data-testid="notification-row"/);
    expect(html).toContain("Hello from the console");
    const notifications = (await json(await call("GET", `push/apps/${app.id}/notifications`, { key: team.key }))).data;
    expect(notifications).toHaveLength(1);
    expect(notifications[0].recipients).toBe(1);
    // The queue consumer delivers it to the subscription's push service, as for the API.
    await waitFor(async () => seen.requests.length > 0);
    expect(seen.requests[0].url).toBe(sub.endpoint);
    seen.restore();
    expect((await page("POST", teamPage(team.teamId, `push/apps/${app.id}/test`), { cookie: team.cookie, form: { title: "", body: "x" } })).status).toBe(422);
  });

  it("never shows the private key, gives a viewer no write button, refuses its writes, and 404s another team's app", async () => {
    const team = await consoleTeam("owner");
    const keys = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
    const jwk = (await crypto.subtle.exportKey("jwk", (keys as CryptoKeyPair).privateKey)) as JsonWebKey;
    const app = await createApp(team.key, { name: "Own keys", vapid_private_key: jwk.d });
    const viewer = await memberOf(team.teamId, "viewer");
    for (const cookie of [team.cookie, viewer.cookie]) {
      const html = await (await page("GET", teamPage(team.teamId, `push/apps/${app.id}`), { cookie })).text();
      expect(html).not.toContain(jwk.d!);
      expect(html).toContain(app.vapid_public_key);
    }
    const seen = await (await page("GET", teamPage(team.teamId, `push/apps/${app.id}`), { cookie: viewer.cookie })).text();
    expect(seen).not.toMatch(/<form method="post" action="\/console\/teams\/[^"]*\/push/);
    expect((await page("POST", teamPage(team.teamId, `push/apps/${app.id}/test`), { cookie: viewer.cookie, form: { title: "x", body: "y" } })).status).toBe(
      403,
    );
    expect((await page("POST", teamPage(team.teamId, "push"), { cookie: viewer.cookie, form: { name: "x" } })).status).toBe(403);
    expect((await page("POST", teamPage(team.teamId, "push"), { cookie: team.cookie, origin: "http://evil.test", form: { name: "x" } })).status).toBe(403);

    const stranger = await setupTeam();
    const theirs = await createApp(stranger.key);
    expect((await page("GET", teamPage(team.teamId, `push/apps/${theirs.id}`), { cookie: team.cookie })).status).toBe(404);
    expect((await page("POST", teamPage(team.teamId, `push/apps/${theirs.id}/test`), { cookie: team.cookie, form: { title: "x", body: "y" } })).status).toBe(
      404,
    );
    expect((await page("GET", teamPage(stranger.teamId, "push"), { cookie: team.cookie })).status).toBe(404);
  });
});

describe("console audit pages", () => {
  it("teaches with the curl carrying the team's real id, then lists projects with findings or reports", async () => {
    const team = await consoleTeam("viewer");
    const empty = await (await page("GET", teamPage(team.teamId, "audit"), { cookie: team.cookie })).text();
    expect(empty).toContain(`curl -X POST http://app.test/api/v1/orgs/${team.teamId}/projects/my-app/audit/findings`);
    await createFinding(team.key, auditBase(team, "web-app"), { title: "XSS in search", priority_score: 40 });
    await createFinding(team.key, auditBase(team, "api"), { title: "Open redirect", priority_score: 10 });
    await exportReport(team.key, auditBase(team, "billing"), team.teamId, { format: "json" });
    const html = await (await page("GET", teamPage(team.teamId, "audit"), { cookie: team.cookie })).text();
    expect([...html.matchAll(/data-testid="audit-project"><a href="[^"]*">([^<]*)</g)].map((m) => m[1])).toEqual(["api", "billing", "web-app"]);
  });

  it("shows a project's summary, exports, downloads the artefact, shares once and revokes", async () => {
    const team = await consoleTeam("developer");
    const base = auditBase(team, "web-app");
    await createFinding(team.key, base, { title: "XSS in search", priority_score: 40 });
    const project = teamPage(team.teamId, "audit/projects/web-app");
    const first = await (await page("GET", project, { cookie: team.cookie })).text();
    expect(first).toContain('data-testid="open-findings">1<');
    expect(first).toMatch(/<title id="burn-down-title">Open risk score per day/);
    expect(first).toContain("No report yet. Export one above.");

    const exported = await page("POST", `${project}/export`, { cookie: team.cookie, form: { format: "csv" } });
    expect(exported.status).toBe(303);
    const record = (await json(await call("GET", `${base}/reports`, { key: team.key }))).data[0];
    expect(record).toMatchObject({ format: "csv", status: "queued" });
    await processExport(env, { report_id: record.id, team_id: team.teamId });
    await waitForStatus(team.key, base, record.id, "exported");

    const download = await page("GET", `${project}/reports/${record.id}/download`, { cookie: team.cookie });
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(await download.text()).toContain("report_id,project_id");

    const shared = await page("POST", `${project}/share`, { cookie: team.cookie, form: { report_id: record.id } });
    expect(shared.headers.get("location")).toBe(`${project}?notice=shared`);
    const sharedHtml = await (await followRedirect(shared, team.cookie)).text();
    const url = /<pre id="share-url">([^<]+)<\/pre>/.exec(sharedHtml)?.[1];
    expect(url).toMatch(/^http:\/\/app\.test\/insights\/audit\/reports\/shared\//);
    expect((await call("GET", url!)).status).toBe(200);
    const after = await (await page("GET", `${project}?notice=shared`, { cookie: team.cookie })).text();
    expect(after).not.toContain(url!);
    expect(after).toContain("shown once");
    // The form's own address, opened (the issue's dead end), leads to the project's page.
    const opened = await page("GET", `${project}/share`, { cookie: team.cookie });
    expect(opened.status).toBe(303);
    expect(opened.headers.get("location")).toBe(project);
    expect(after).toContain('data-testid="report-row" data-status="shared"');

    const viewer = await memberOf(team.teamId, "viewer");
    const seen = await (await page("GET", project, { cookie: viewer.cookie })).text();
    expect(seen).toContain('data-testid="download-report"');
    expect(seen).not.toMatch(/<form method="post" action="\/console\/teams\/[^"]*\/audit/);
    for (const [path, form] of [
      ["/export", { format: "json" }],
      ["/share", { report_id: record.id }],
      ["/share/revoke", {}],
    ] as const) {
      expect((await page("POST", `${project}${path}`, { cookie: viewer.cookie, form })).status, path).toBe(403);
    }

    const revoked = await page("POST", `${project}/share/revoke`, { cookie: team.cookie });
    expect(revoked.status).toBe(303);
    expect((await call("GET", url!)).status).not.toBe(200);
    expect((await page("POST", `${project}/share/revoke`, { cookie: team.cookie })).status).toBe(404);
    expect((await page("POST", `${project}/export`, { cookie: team.cookie, form: { format: "docx" } })).status).toBe(422);
  });

  it("answers 404 for another team's report and for a project id that cannot exist", async () => {
    const team = await consoleTeam("owner");
    const stranger = await setupTeam();
    const report = await exportReport(stranger.key, auditBase(stranger, "web-app"), stranger.teamId, { format: "json" });
    const project = teamPage(team.teamId, "audit/projects/web-app");
    expect((await page("GET", `${project}/reports/${report.id}/download`, { cookie: team.cookie })).status).toBe(404);
    expect((await page("POST", `${project}/share`, { cookie: team.cookie, form: { report_id: report.id } })).status).toBe(404);
    const own = await (await page("GET", project, { cookie: team.cookie })).text();
    expect(own).not.toContain(report.id);
    expect((await page("GET", teamPage(team.teamId, "audit/projects/-bad%20id"), { cookie: team.cookie })).status).toBe(404);
    expect((await page("GET", teamPage(stranger.teamId, "audit"), { cookie: team.cookie })).status).toBe(404);
  });
});

describe("console audit findings", () => {
  const findingsOf = async (team: Parameters<typeof auditBase>[0] & { key: string }, project: string, query = "") =>
    (await json(await call("GET", `${auditBase(team, project)}/findings${query}`, { key: team.key }))).data as Array<Record<string, any>>;

  it("records a first finding from the empty audit page, then lists, filters, changes and verifies findings; each POST redirects and a reload repeats nothing", async () => {
    const team = await consoleTeam("developer");
    const empty = await (await page("GET", teamPage(team.teamId, "audit"), { cookie: team.cookie })).text();
    expect(empty).toContain('data-testid="create-finding"');
    const first = await page("POST", teamPage(team.teamId, "audit/findings"), {
      cookie: team.cookie,
      form: { project_id: "web-app", title: "XSS in search", priority_score: "40" },
    });
    const project = teamPage(team.teamId, "audit/projects/web-app");
    expect(first.headers.get("location")).toBe(`${project}?notice=finding-created`);
    for (let i = 0; i < 2; i++) {
      const html = await (await followRedirect(first, team.cookie)).text();
      expect(html.match(/data-testid="finding-row"/g)).toHaveLength(1);
      expect(html).toContain('data-testid="open-findings">1<');
    }
    const second = await page("POST", `${project}/findings`, { cookie: team.cookie, form: { title: "Open redirect", priority_score: "10" } });
    expect(second.status).toBe(303);
    const [redirect, xss] = await findingsOf(team, "web-app");
    expect([redirect.title, xss.title]).toEqual(["Open redirect", "XSS in search"]);
    expect(xss.priority_score).toBe(40);

    // Change status (and title, priority) with the API's service: history, summary.
    const saved = await page("POST", `${project}/findings/${xss.id}`, {
      cookie: team.cookie,
      form: { title: "XSS in search box", priority_score: "45", status: "resolved" },
    });
    expect(saved.status).toBe(303);
    const after = await (await followRedirect(saved, team.cookie)).text();
    expect(after).toContain('data-testid="open-findings">1<');
    expect(after).toContain('data-testid="finding-row" data-status="resolved"');
    // The filter: only the resolved one.
    const resolved = await (await page("GET", `${project}?status=resolved`, { cookie: team.cookie })).text();
    expect(resolved.match(/data-testid="finding-row"/g)).toHaveLength(1);
    expect(resolved).toContain("XSS in search box");
    expect(resolved).not.toContain("Open redirect</td>");

    const verified = await page("POST", `${project}/findings/${xss.id}/verify`, { cookie: team.cookie, form: { result: "passed", note: "Fixed in 2.4" } });
    expect(verified.status).toBe(303);
    const detail = (await json(await call("GET", `${auditBase(team, "web-app")}/findings/${xss.id}`, { key: team.key }))).data;
    expect(detail.verifications).toMatchObject([{ result: "passed", note: "Fixed in 2.4" }]);
    expect(detail.status_history.map((h: { to: string }) => h.to)).toEqual(["new", "resolved"]);

    // The API's rules, refused at 422 with nothing stored.
    const refused: Array<[string, Record<string, string>]> = [
      [`${project}/findings`, { title: "", priority_score: "1" }],
      [`${project}/findings`, { title: "x", priority_score: "-1" }],
      [teamPage(team.teamId, "audit/findings"), { project_id: "-bad id", title: "x" }],
      [`${project}/findings/${xss.id}`, { title: "x", status: "nope" }],
      [`${project}/findings/${xss.id}/verify`, { result: "maybe" }],
    ];
    for (const [path, form] of refused) expect((await page("POST", path, { cookie: team.cookie, form })).status, JSON.stringify(form)).toBe(422);
    expect(await findingsOf(team, "web-app")).toHaveLength(2);
  });

  it("gives a viewer the findings but no form, refuses its writes, and 404s another team's finding", async () => {
    const team = await consoleTeam("owner");
    await createFinding(team.key, auditBase(team, "web-app"), { title: "XSS in search", priority_score: 40 });
    const [finding] = await findingsOf(team, "web-app");
    const project = teamPage(team.teamId, "audit/projects/web-app");
    const viewer = await memberOf(team.teamId, "viewer");
    const seen = await (await page("GET", project, { cookie: viewer.cookie })).text();
    expect(seen).toContain('data-testid="finding-row"');
    expect(seen).not.toContain('data-testid="create-finding"');
    for (const path of ["/findings", `/findings/${finding.id}`, `/findings/${finding.id}/verify`]) {
      expect(
        (await page("POST", `${project}${path}`, { cookie: viewer.cookie, form: { title: "x", status: "resolved", result: "passed" } })).status,
        path,
      ).toBe(403);
    }
    const stranger = await consoleTeam("owner");
    const theirs = teamPage(stranger.teamId, "audit/projects/web-app");
    expect((await page("POST", `${theirs}/findings/${finding.id}`, { cookie: stranger.cookie, form: { title: "x", status: "resolved" } })).status).toBe(404);
    expect((await page("POST", `${theirs}/findings/${finding.id}/verify`, { cookie: stranger.cookie, form: { result: "passed" } })).status).toBe(404);
    expect((await findingsOf(team, "web-app"))[0].status).toBe("new");
  });
});
