import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../../src/platform/clock";
import { call, expectError, json } from "../../helpers/api";
import { ipCounter, setUsed } from "../../helpers/usage";
import { createFinding, newTeam } from "./audit-helpers";

afterEach(() => setClock(null));

/** Asserts an audit envelope error: status, code, and the request id echoed in meta. */
async function expectAuditError(res: Response, status: number, code: string) {
  const body = await json(res);
  expect({ status: res.status, code: body.error?.code }).toEqual({ status, code });
  expect(body.data).toBeNull();
  expect(body.meta.request_id).toBe(res.headers.get("x-request-id"));
  expect(typeof body.error.message).toBe("string");
  return body;
}

describe("invalid_params (422)", () => {
  it("export: bad format, malformed or impossible dates, start after end", async () => {
    const team = await newTeam();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ format: "docx" }, "format"],
      [{ format: 3 }, "format"],
      [{ period_start: "2026-02-30" }, "period_start"],
      [{ period_start: "2026-13-01" }, "period_start"],
      [{ period_end: "yesterday" }, "period_end"],
      [{ period_end: "2026-01-05T00:00:00Z" }, "period_end"],
      [{ period_start: "2026-03-02", period_end: "2026-03-01" }, "period_start"],
    ];
    for (const [body, field] of cases) {
      const res = await call("POST", `${team.base}/reports/export`, { key: team.key, body });
      const error = await expectAuditError(res, 422, "invalid_params");
      expect(Object.keys(error.error.details), JSON.stringify(body)).toContain(field);
    }
    // None of them consumed quota or created a record.
    expect((await json(await call("GET", `${team.base}/reports`, { key: team.key }))).data).toEqual([]);
  });

  it("export: a default period is six days ago to today", async () => {
    setClock(new Date("2026-03-01T23:59:59Z"));
    const team = await newTeam();
    const res = await call("POST", `${team.base}/reports/export`, { key: team.key });
    expect(res.status).toBe(202);
    expect((await json(res)).data).toMatchObject({ period_start: "2026-02-23", period_end: "2026-03-01", format: "pdf" });
  });

  it("malformed JSON and non-JSON bodies", async () => {
    const team = await newTeam();
    const malformed = await call("POST", `${team.base}/reports/export`, { key: team.key, raw: "{format:", headers: { "content-type": "application/json" } });
    await expectAuditError(malformed, 422, "invalid_params");
    const text = await call("POST", `${team.base}/findings`, { key: team.key, raw: "title=x", headers: { "content-type": "text/plain" } });
    await expectAuditError(text, 422, "invalid_params");
    const array = await call("POST", `${team.base}/reports/share`, { key: team.key, body: [] });
    await expectAuditError(array, 422, "invalid_params");
  });

  it("share by email with no, empty, too many or non-string recipients", async () => {
    const team = await newTeam();
    const eleven = Array.from({ length: 11 }, (_, i) => `u${i}@example.com`);
    for (const recipients of [undefined, [], eleven, "a@example.com", [1, 2]]) {
      const res = await call("POST", `${team.base}/reports/share`, { key: team.key, body: { channel: "email", recipients } });
      const body = await expectAuditError(res, 422, "invalid_params");
      expect(body.error.details.recipients).toBeDefined();
    }
  });

  it("share to chat without a usable webhook_url", async () => {
    const team = await newTeam();
    for (const webhook_url of [undefined, "", "ftp://chat.example.com/x", "not a url", 42, "https://user:pw@chat.example.com/"]) {
      const res = await call("POST", `${team.base}/reports/share`, { key: team.key, body: { channel: "chat", webhook_url } });
      const body = await expectAuditError(res, 422, "invalid_params");
      expect(body.error.details.webhook_url).toBeDefined();
    }
  });

  it("findings: missing title, bad priority or status, empty patch, bad verification result, bad project id", async () => {
    const team = await newTeam();
    for (const body of [{}, { title: "  " }, { title: "x", priority_score: -1 }, { title: "x", priority_score: "high" }, { title: "x", status: "done" }]) {
      await expectAuditError(await call("POST", `${team.base}/findings`, { key: team.key, body }), 422, "invalid_params");
    }
    const finding = await createFinding(team.key, team.base, { title: "x" });
    await expectAuditError(await call("PATCH", `${team.base}/findings/${finding.id}`, { key: team.key, body: {} }), 422, "invalid_params");
    await expectAuditError(
      await call("POST", `${team.base}/findings/${finding.id}/verifications`, { key: team.key, body: { result: "maybe" } }),
      422,
      "invalid_params",
    );
    await expectAuditError(await call("GET", `${team.base}/findings?per_page=500`, { key: team.key }), 422, "invalid_params");
    const badProject = `orgs/${team.teamId}/projects/${"x".repeat(129)}/audit/reports/summary`;
    await expectAuditError(await call("GET", badProject, { key: team.key }), 422, "invalid_params");
    await expectAuditError(await call("GET", `orgs/${team.teamId}/projects/-lead/audit/findings`, { key: team.key }), 422, "invalid_params");
  });
});

describe("invalid_channel (422)", () => {
  it("a channel other than email, chat or link, or none", async () => {
    const team = await newTeam();
    for (const channel of ["fax", "EMAIL", "", 7, undefined]) {
      const res = await call("POST", `${team.base}/reports/share`, { key: team.key, body: { channel, recipients: ["a@example.com"] } });
      await expectAuditError(res, 422, "invalid_channel");
    }
  });
});

describe("quota_exceeded (429)", () => {
  it("export when the AI quota of the month is used up: nothing recorded", async () => {
    const team = await newTeam({ plan: "free" });
    await setUsed(team.teamId, "ai", 9);
    expect((await call("POST", `${team.base}/reports/export`, { key: team.key, body: {} })).status).toBe(202);
    const res = await call("POST", `${team.base}/reports/export`, { key: team.key, body: {} });
    const body = await expectAuditError(res, 429, "quota_exceeded");
    expect(body.error.message).toBe("Monthly usage limit exceeded. Upgrade your plan.");
    expect(res.headers.get("retry-after")).toBeNull();
    expect((await json(await call("GET", `${team.base}/reports`, { key: team.key }))).data).toHaveLength(1);
  });
});

describe("not_found (404)", () => {
  it("unknown ids, unknown audit paths, and revoke with nothing shared", async () => {
    const team = await newTeam();
    const missing = crypto.randomUUID();
    await expectAuditError(await call("GET", `${team.base}/reports/${missing}`, { key: team.key }), 404, "not_found");
    await expectAuditError(await call("GET", `${team.base}/reports/${missing}/download`, { key: team.key }), 404, "not_found");
    await expectAuditError(await call("PATCH", `${team.base}/findings/${missing}`, { key: team.key, body: { status: "resolved" } }), 404, "not_found");
    await expectAuditError(await call("GET", `${team.base}/findings/${missing}`, { key: team.key }), 404, "not_found");
    await expectAuditError(
      await call("POST", `${team.base}/findings/${missing}/verifications`, { key: team.key, body: { result: "passed" } }),
      404,
      "not_found",
    );
    await expectAuditError(
      await call("POST", `${team.base}/reports/share`, { key: team.key, body: { channel: "link", report_id: missing } }),
      404,
      "not_found",
    );
    await expectAuditError(await call("DELETE", `${team.base}/reports/share`, { key: team.key }), 404, "not_found");
    await expectAuditError(await call("GET", `${team.base}/nothing-here`, { key: team.key }), 404, "not_found");
  });

  it("an unknown viewer token is the 404 page", async () => {
    const res = await call("GET", "/insights/audit/reports/shared/abc.def");
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("Report not available");
  });

  it("the viewer past its per-IP public bucket answers the documented 429 body, not a page", async () => {
    const t0 = Date.UTC(2031, 5, 1, 12, 0, 0);
    setClock(t0 + 10_000);
    const ip = "198.51.100.213";
    // The window's 200 requests of the `public` bucket, counted straight in the limiter's object.
    await ipCounter("public", ip).hit(t0 / 1000, 200);
    const res = await call("GET", "/insights/audit/reports/shared/abc.def", { ip });
    expect(res.headers.get("retry-after")).toBe("50");
    await expectError(res, 429, { error: "Rate limit exceeded", retry_after: 50 });
  });
});

describe("report_not_ready (409)", () => {
  it("download of a report whose artefact is not written yet", async () => {
    const team = await newTeam();
    const id = (await json(await call("POST", `${team.base}/reports/export`, { key: team.key, body: { format: "json" } }))).data.id;
    await env.DB.prepare("UPDATE audit_reports SET status = 'failed' WHERE id = ?").bind(id).run();
    await expectAuditError(await call("GET", `${team.base}/reports/${id}/download`, { key: team.key }), 409, "report_not_ready");
  });
});

describe("universal bodies (not enveloped)", () => {
  it("401 without a valid key, 403 without the scope", async () => {
    const team = await newTeam({ scopes: ["audit:read"] });
    await expectError(await call("GET", `${team.base}/reports/summary`), 401, { error: "Invalid or missing API key" });
    await expectError(await call("GET", `${team.base}/reports/summary`, { key: "edp_wrong" }), 401, { error: "Invalid or missing API key" });
    expect((await call("GET", `${team.base}/reports/summary`, { key: team.key })).status).toBe(200);
    for (const [method, path, body] of [
      ["POST", "findings", { title: "x" }],
      ["POST", "reports/export", {}],
      ["POST", "reports/share", { channel: "link" }],
      ["DELETE", "reports/share", undefined],
    ] as const) {
      await expectError(await call(method, `${team.base}/${path}`, { key: team.key, body }), 403, { error: "Insufficient scope" });
    }
    const writer = await newTeam({ scopes: ["audit:write"] });
    for (const path of ["reports/summary", "reports", "findings"]) {
      await expectError(await call("GET", `${writer.base}/${path}`, { key: writer.key }), 403, { error: "Insufficient scope" });
    }
    const mailOnly = await newTeam({ scopes: ["mail:send"] });
    await expectError(await call("GET", `${mailOnly.base}/reports/summary`, { key: mailOnly.key }), 403, { error: "Insufficient scope" });
  });
});
