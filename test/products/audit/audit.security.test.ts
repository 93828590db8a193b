import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../../src/platform/clock";
import { renderHtml } from "../../../src/products/audit/audit.render";
import { emptySummary } from "../../../src/products/audit/audit-summary.service";
import { call, json } from "../../helpers/api";
import { auditBase, createFinding, exportReport, newTeam } from "./audit-helpers";

afterEach(() => setClock(null));

async function expectNotFound(res: Response, label: string) {
  const body = await json(res);
  expect({ label, status: res.status, code: body.error?.code, data: body.data }).toEqual({ label, status: 404, code: "not_found", data: null });
}

/** Every audit route, with the ids it needs. */
function routes(base: string, findingId: string, reportId: string) {
  return [
    ["POST", `${base}/findings`, { title: "x" }],
    ["GET", `${base}/findings`, undefined],
    ["GET", `${base}/findings/${findingId}`, undefined],
    ["PATCH", `${base}/findings/${findingId}`, { status: "resolved" }],
    ["POST", `${base}/findings/${findingId}/verifications`, { result: "passed" }],
    ["GET", `${base}/reports/summary`, undefined],
    ["POST", `${base}/reports/export`, {}],
    ["GET", `${base}/reports`, undefined],
    ["GET", `${base}/reports/${reportId}`, undefined],
    ["GET", `${base}/reports/${reportId}/download`, undefined],
    ["POST", `${base}/reports/share`, { channel: "link", report_id: reportId }],
    ["DELETE", `${base}/reports/share`, undefined],
  ] as const;
}

describe("tenancy", () => {
  it("another team's org_id answers 404 on every route, and changes nothing", async () => {
    const owner = await newTeam();
    const finding = await createFinding(owner.key, owner.base, { title: "secret", priority_score: 9 });
    const report = await exportReport(owner.key, owner.base, owner.teamId, { format: "json" });
    await call("POST", `${owner.base}/reports/share`, { key: owner.key, body: { channel: "link", report_id: report.id } });
    const intruder = await newTeam();

    for (const [method, path, body] of routes(owner.base, finding.id, report.id)) {
      await expectNotFound(await call(method, path, { key: intruder.key, body }), `${method} ${path}`);
    }
    // An org id that is not a team at all is the same 404.
    await expectNotFound(await call("GET", `orgs/not-a-team/projects/web-app/audit/reports`, { key: intruder.key }), "unknown org");

    const after = await json(await call("GET", `${owner.base}/findings/${finding.id}`, { key: owner.key }));
    expect(after.data).toMatchObject({ status: "new", title: "secret" });
    expect((await json(await call("GET", `${owner.base}/reports/${report.id}`, { key: owner.key }))).data.status).toBe("shared");
    expect((await json(await call("GET", `${owner.base}/reports`, { key: owner.key }))).data).toHaveLength(1);
  });

  it("another team's finding and report ids answer 404 under the caller's own org", async () => {
    const owner = await newTeam();
    const finding = await createFinding(owner.key, owner.base, { title: "secret" });
    const report = await exportReport(owner.key, owner.base, owner.teamId, { format: "json" });
    const intruder = await newTeam();
    const own = auditBase(intruder); // same project name, the intruder's own org
    for (const [method, path, body] of routes(own, finding.id, report.id)) {
      if (!path.includes(finding.id) && !path.includes(report.id) && !(body && "report_id" in body)) continue;
      await expectNotFound(await call(method, path, { key: intruder.key, body }), `${method} ${path}`);
    }
  });

  it("ids of one project answer 404 under another project of the same team", async () => {
    const team = await newTeam();
    const finding = await createFinding(team.key, team.base, { title: "a" });
    const report = await exportReport(team.key, team.base, team.teamId, { format: "json" });
    const other = auditBase(team, "other-project");
    await expectNotFound(await call("GET", `${other}/findings/${finding.id}`, { key: team.key }), "finding");
    await expectNotFound(await call("GET", `${other}/reports/${report.id}`, { key: team.key }), "report");
    await expectNotFound(await call("GET", `${other}/reports/${report.id}/download`, { key: team.key }), "download");
    await expectNotFound(await call("POST", `${other}/reports/share`, { key: team.key, body: { channel: "link", report_id: report.id } }), "share");
    // The other project's summary and lists do not see them.
    expect((await json(await call("GET", `${other}/findings`, { key: team.key }))).data).toEqual([]);
    expect((await json(await call("GET", `${other}/reports/summary`, { key: team.key }))).data.open_findings).toBe(0);
    // Revoke of the other project leaves this project's share alone.
    await call("POST", `${team.base}/reports/share`, { key: team.key, body: { channel: "link", report_id: report.id } });
    await expectNotFound(await call("DELETE", `${other}/reports/share`, { key: team.key }), "revoke");
    expect((await json(await call("GET", `${team.base}/reports/${report.id}`, { key: team.key }))).data.status).toBe("shared");
  });
});

describe("the public viewer", () => {
  it("escapes what it shows and sends a strict content security policy", async () => {
    const team = await newTeam();
    const project = "p.<x>";
    // The project id charset refuses markup outright.
    expect((await call("GET", `${auditBase(team, encodeURIComponent(project))}/reports/summary`, { key: team.key })).status).toBe(422);
    const report = await exportReport(team.key, team.base, team.teamId, { format: "pdf" });
    const url = (await json(await call("POST", `${team.base}/reports/share`, { key: team.key, body: { channel: "link", report_id: report.id } }))).data
      .share_url;
    const page = await call("GET", url);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(page.headers.get("x-robots-tag")).toContain("noindex");
    expect(await page.text()).not.toMatch(/<script/i);

    // Whatever reaches the page is escaped.
    const html = renderHtml(
      {
        id: "r1",
        org_id: "o",
        project_id: "<img src=x onerror=alert(1)>",
        period_start: "2026-01-01",
        period_end: "2026-01-07",
        format: "pdf",
        status: "shared",
        snapshot: emptySummary(),
        exported_at: null,
        shared_at: null,
        created_at: "c",
        updated_at: "u",
      },
      { downloadUrl: 'https://x/"><script>' },
    );
    expect(html).not.toContain("<img");
    expect(html).not.toContain("<script");
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
  });
});
