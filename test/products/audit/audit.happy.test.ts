import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { call, json } from "../../helpers/api";
import { setClock } from "../../../src/platform/clock";
import { CSV_HEADER } from "../../../src/products/audit/audit.render";
import { createFinding, exportReport, newTeam, patchFinding } from "./audit-helpers";

afterEach(() => setClock(null));

const at = (iso: string) => setClock(new Date(iso));

describe("audit findings", () => {
  it("creates, lists, reads and changes findings in the envelope, with status history", async () => {
    const team = await newTeam();
    const res = await call("POST", `${team.base}/findings`, {
      key: team.key,
      body: { title: "SQL injection", priority_score: 8.5 },
      headers: { "x-request-id": "req-abc" },
    });
    expect(res.status).toBe(201);
    const created = await json(res);
    expect(created.meta).toEqual({ request_id: "req-abc" });
    expect(created.error).toBeNull();
    expect(created.data).toMatchObject({
      title: "SQL injection",
      priority_score: 8.5,
      status: "new",
      org_id: team.teamId,
      project_id: "web-app",
      regression: false,
    });

    const id = created.data.id;
    await patchFinding(team.key, team.base, id, { status: "resolved" });
    const reopened = await patchFinding(team.key, team.base, id, { status: "triaged", title: "SQLi in /search" });
    expect(reopened).toMatchObject({ status: "triaged", title: "SQLi in /search", regression: true });
    expect(reopened.status_history.map((h: { from: string | null; to: string }) => [h.from, h.to])).toEqual([
      [null, "new"],
      ["new", "resolved"],
      ["resolved", "triaged"],
    ]);
    // A title-only change is not a status change.
    const renamed = await patchFinding(team.key, team.base, id, { title: "renamed" });
    expect(renamed.status_history).toHaveLength(3);

    const ver = await call("POST", `${team.base}/findings/${id}/verifications`, { key: team.key, body: { result: "passed", note: "fixed" } });
    expect(ver.status).toBe(201);
    expect((await json(ver)).data).toMatchObject({ finding_id: id, result: "passed", note: "fixed" });

    const detail = await json(await call("GET", `${team.base}/findings/${id}`, { key: team.key }));
    expect(detail.data.verifications).toHaveLength(1);

    await createFinding(team.key, team.base, { title: "second", priority_score: 1, status: "dismissed" });
    const list = await json(await call("GET", `${team.base}/findings?per_page=1`, { key: team.key }));
    expect(list.data).toHaveLength(1);
    expect(list.meta.pagination).toEqual({ page: 1, per_page: 1, total: 2, total_pages: 2 });
    const dismissed = await json(await call("GET", `${team.base}/findings?status=dismissed`, { key: team.key }));
    expect(dismissed.data.map((f: { title: string }) => f.title)).toEqual(["second"]);
  });
});

describe("audit summary", () => {
  it("builds the 7-day burn-down from the status history across past days", async () => {
    const team = await newTeam();
    const k = team.key;
    const b = team.base;
    at("2026-03-02T10:00:00Z");
    const e = await createFinding(k, b, { title: "E", priority_score: 100 });
    const f = await createFinding(k, b, { title: "F", priority_score: 1 });
    at("2026-03-03T10:00:00Z");
    await patchFinding(k, b, e.id, { status: "resolved" });
    at("2026-03-04T10:00:00Z");
    const a = await createFinding(k, b, { title: "A", priority_score: 5 });
    const bb = await createFinding(k, b, { title: "B", priority_score: 3, status: "triaged" });
    at("2026-03-05T09:00:00Z");
    await patchFinding(k, b, a.id, { status: "resolved" });
    at("2026-03-06T15:00:00Z");
    await patchFinding(k, b, a.id, { status: "in_progress" }); // a regression
    const c = await createFinding(k, b, { title: "C", priority_score: 2 });
    at("2026-03-08T08:00:00Z");
    await patchFinding(k, b, bb.id, { status: "dismissed" });
    await patchFinding(k, b, c.id, { priority_score: 4 });
    at("2026-03-09T23:59:59.999Z");
    await patchFinding(k, b, c.id, { status: "resolved" }); // still counts as 03-09
    at("2026-03-10T00:00:00.000Z");
    const d = await createFinding(k, b, { title: "D", priority_score: 7 });
    await call("POST", `${b}/findings/${a.id}/verifications`, { key: k, body: { result: "passed" } });
    await call("POST", `${b}/findings/${a.id}/verifications`, { key: k, body: { result: "failed" } });
    await call("POST", `${b}/findings/${d.id}/verifications`, { key: k, body: { result: "passed" } });
    void f;

    at("2026-03-10T12:00:00Z");
    const res = await call("GET", `${b}/reports/summary?date_from=2020-01-01&date_to=2020-01-02`, { key: k });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.error).toBeNull();
    expect(body.data).toEqual({
      risk_burn_down: [
        { date: "2026-03-04", open_risk_score: 9 }, // F 1 + A 5 + B 3
        { date: "2026-03-05", open_risk_score: 4 }, // A resolved
        { date: "2026-03-06", open_risk_score: 11 }, // A reopened, C 2
        { date: "2026-03-07", open_risk_score: 11 },
        { date: "2026-03-08", open_risk_score: 10 }, // B dismissed, C 4
        { date: "2026-03-09", open_risk_score: 6 }, // C resolved at 23:59:59.999
        { date: "2026-03-10", open_risk_score: 13 }, // D 7
      ],
      verification_pass_rate: 2 / 3,
      regression_rate: 1 / 3, // A open regression; B, C, E terminal
      open_findings: 3, // A, D, F
    });

    // Today's entry is "now": a change later today shows at once.
    at("2026-03-10T13:00:00Z");
    await patchFinding(k, b, d.id, { status: "ready_verify", priority_score: 10 });
    const later = await json(await call("GET", `${b}/reports/summary`, { key: k }));
    expect(later.data.risk_burn_down[6]).toEqual({ date: "2026-03-10", open_risk_score: 16 });
    expect(later.data.risk_burn_down[5].open_risk_score).toBe(6);
  });

  it("is all zeros for a project with no data", async () => {
    const team = await newTeam();
    at("2026-01-01T00:30:00Z");
    const body = await json(await call("GET", `${team.base}/reports/summary`, { key: team.key }));
    expect(body.data.risk_burn_down.map((d: { date: string }) => d.date)).toEqual([
      "2025-12-26",
      "2025-12-27",
      "2025-12-28",
      "2025-12-29",
      "2025-12-30",
      "2025-12-31",
      "2026-01-01",
    ]);
    expect(body.data).toMatchObject({ verification_pass_rate: 0, regression_rate: 0, open_findings: 0 });
    expect(body.data.risk_burn_down.every((d: { open_risk_score: number }) => d.open_risk_score === 0)).toBe(true);
  });
});

describe("audit export", () => {
  async function seeded() {
    const team = await newTeam();
    at("2026-04-20T08:00:00.250Z");
    const one = await createFinding(team.key, team.base, { title: "one", priority_score: 4 });
    await createFinding(team.key, team.base, { title: "two", priority_score: 6 });
    await call("POST", `${team.base}/findings/${one.id}/verifications`, { key: team.key, body: { result: "passed" } });
    await call("POST", `${team.base}/findings/${one.id}/verifications`, { key: team.key, body: { result: "failed" } });
    return { ...team, one };
  }

  async function download(key: string, base: string, id: string) {
    const res = await call("GET", `${base}/reports/${id}/download`, { key });
    expect(res.status).toBe(200);
    return res;
  }

  it("json: queued with defaults, exported by the consumer, the record and snapshot in R2", async () => {
    const team = await seeded();
    const res = await call("POST", `${team.base}/reports/export`, { key: team.key, body: { format: "json" } });
    expect(res.status).toBe(202);
    const queued = (await json(res)).data;
    expect(queued).toMatchObject({
      status: "queued",
      format: "json",
      period_start: "2026-04-14",
      period_end: "2026-04-20",
      org_id: team.teamId,
      project_id: "web-app",
      exported_at: null,
      shared_at: null,
      created_at: "2026-04-20T08:00:00Z",
    });
    expect(queued.snapshot.open_findings).toBe(2);
    expect(queued.snapshot.risk_burn_down[6]).toEqual({ date: "2026-04-20", open_risk_score: 10 });

    // The snapshot is the state at export time, whatever happens next.
    await patchFinding(team.key, team.base, team.one.id, { status: "resolved" });
    const { processExport } = await import("../../../src/products/audit/audit.consumer");
    at("2026-04-20T08:00:07.900Z");
    await processExport(env, { report_id: queued.id, team_id: team.teamId });
    const record = (await json(await call("GET", `${team.base}/reports/${queued.id}`, { key: team.key }))).data;
    expect(record.status).toBe("exported");
    expect(record.exported_at).toMatch(/^2026-04-20T08:00:0\dZ$/);

    const file = await download(team.key, team.base, queued.id);
    expect(file.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(file.headers.get("content-disposition")).toBe(`attachment; filename="audit-report-web-app-${queued.id}.json"`);
    const artefact = await file.json<{ report: Record<string, unknown> }>();
    expect(artefact.report).toMatchObject({ id: queued.id, format: "json", status: "exported", snapshot: queued.snapshot });
    expect(queued.snapshot.open_findings).toBe(2);
    const live = (await json(await call("GET", `${team.base}/reports/summary`, { key: team.key }))).data;
    expect(live.open_findings).toBe(1);

    const object = await env.REPORTS.get(`audit/${team.teamId}/web-app/${queued.id}.json`);
    expect(object).not.toBeNull();
    expect(JSON.parse(await object!.text())).toEqual(artefact);
  });

  it("csv: one row per burn-down day plus the rates", async () => {
    const team = await seeded();
    const report = await exportReport(team.key, team.base, team.teamId, { format: "csv", period_start: "2026-04-01", period_end: "2026-04-20" });
    const file = await download(team.key, team.base, report.id);
    expect(file.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    const lines = (await file.text()).split("\r\n");
    expect(lines[0]).toBe(CSV_HEADER);
    expect(lines).toHaveLength(9); // header, 7 days, trailing empty
    expect(lines[1]).toBe(`${report.id},web-app,2026-04-01,2026-04-20,2026-04-14,0,0.5,0,2`);
    expect(lines[7]).toBe(`${report.id},web-app,2026-04-01,2026-04-20,2026-04-20,10,0.5,0,2`);
    expect(lines[8]).toBe("");
  });

  it("pdf (the default): a self-contained HTML page with the metrics and an inline SVG chart", async () => {
    const team = await seeded();
    const report = await exportReport(team.key, team.base, team.teamId);
    expect(report.format).toBe("pdf");
    const file = await download(team.key, team.base, report.id);
    expect(file.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(file.headers.get("content-disposition")).toContain(".html");
    const html = await file.text();
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).toContain("<svg");
    expect((html.match(/<rect /g) ?? []).length).toBe(7);
    expect(html).toMatch(/<b>2<\/b><span>Open findings<\/span>/);
    expect(html).toContain("<b>50.0%</b><span>Verification pass rate</span>");
    expect(html).toContain("<b>10</b><span>Open risk score today</span>");
    // Self-contained: no script and nothing fetched from elsewhere.
    expect(html).not.toMatch(/<script|<link|src=|@import/i);
  });

  it("lists reports newest first and pages them", async () => {
    const team = await newTeam();
    at("2026-05-01T10:00:00Z");
    const first = await exportReport(team.key, team.base, team.teamId, { format: "json" });
    at("2026-05-01T10:00:05Z");
    const second = await exportReport(team.key, team.base, team.teamId, { format: "csv" });
    const list = await json(await call("GET", `${team.base}/reports`, { key: team.key }));
    expect(list.data.map((r: { id: string }) => r.id)).toEqual([second.id, first.id]);
    expect(list.meta.pagination.total).toBe(2);
    const csvOnly = await json(await call("GET", `${team.base}/reports?status=exported&per_page=1&page=2`, { key: team.key }));
    expect(csvOnly.data.map((r: { id: string }) => r.id)).toEqual([first.id]);
  });

  it("consumes one AI quota unit per export", async () => {
    const team = await newTeam({ scopes: ["audit:read", "audit:write", "billing:read"] });
    await call("POST", `${team.base}/reports/export`, { key: team.key, body: {} });
    await call("POST", `${team.base}/reports/export`, { key: team.key, body: {} });
    const usage = await json(await call("GET", "usage", { key: team.key }));
    expect(usage.data.services.ai.used).toBe(2);
  });
});
