import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { and, eq } from "drizzle-orm";
import { getDb } from "../../../src/db/client";
import { platformOutbox } from "../../../src/db/schema";
import { auditReports } from "../../../src/db/schema/audit";
import { setClock } from "../../../src/platform/clock";
import { planLimits } from "../../../src/platform/plans";
import { call, expectError, json } from "../../helpers/api";
import { setUsed, usedOf } from "../../helpers/usage";
import { exportReport, insertReport, newTeam } from "./audit-helpers";

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

const T0 = Date.parse("2026-06-01T09:00:00Z");
const HOUR = 3_600_000;

async function share(key: string, base: string, body: Record<string, unknown>) {
  return call("POST", `${base}/reports/share`, { key, body });
}

/** Opens a share URL (or a download link) as a browser would: no credential. */
const open = (url: string) => call("GET", url);

function downloadLinkOf(html: string): string {
  const match = /href="([^"]+\/insights\/audit\/reports\/download\/[^"]+)"/.exec(html);
  expect(match).not.toBeNull();
  return match![1].replace(/&amp;/g, "&");
}

async function exportedTeam(format = "json") {
  setClock(T0);
  const team = await newTeam();
  const report = await exportReport(team.key, team.base, team.teamId, { format });
  return { team, report };
}

describe("tenant text in share mail (issue 23, finding 4)", () => {
  it("the project id a tenant chose is one plain line in the mail, never a link", async () => {
    setClock(T0);
    const team = await newTeam();
    const project = "www.evil.test-verify-your-account";
    const report = await insertReport(team.teamId, T0, { projectId: project, status: "exported", objectKey: "k", exportedAt: "2026-06-01T09:00:00Z" });
    const res = await share(team.key, `orgs/${team.teamId}/projects/${project}/audit`, {
      channel: "email",
      report_id: report.id,
      recipients: ["reader@example.com"],
    });
    expect(res.status).toBe(200);
    const [mail] = await getDb(env.DB)
      .select()
      .from(platformOutbox)
      .where(and(eq(platformOutbox.teamId, team.teamId), eq(platformOutbox.kind, "report_share")));
    expect(mail.subject).toBe("Audit report for project www[.]evil[.]test-verify-your-account");
    expect(mail.text).not.toContain(project);
  });
});

describe("share by link", () => {
  it("shares, serves the viewer page and a 5-minute download of the artefact", async () => {
    const { team, report } = await exportedTeam("csv");
    const res = await share(team.key, team.base, { channel: "link", report_id: report.id });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(Object.keys(body.data).sort()).toEqual(["accepted", "channel", "id", "recipients", "rejected", "share_url", "shared_at"]);
    expect(body.data).toMatchObject({ id: report.id, channel: "link", recipients: [], accepted: [], rejected: [], shared_at: "2026-06-01T09:00:00Z" });
    expect(body.data.share_url).toMatch(/^http:\/\/app\.test\/insights\/audit\/reports\/shared\/[\w-]+\.[\w-]+$/);

    const record = (await json(await call("GET", `${team.base}/reports/${report.id}`, { key: team.key }))).data;
    expect(record).toMatchObject({ status: "shared", shared_at: "2026-06-01T09:00:00Z" });

    const page = await open(body.data.share_url);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    const html = await page.text();
    expect(html).toContain("<svg");
    expect(html).toContain("Open findings");
    const link = downloadLinkOf(html);
    // A signed token on our own origin, never the storage key or a storage host.
    expect(link).toMatch(/^http:\/\/app\.test\/insights\/audit\/reports\/download\/[\w-]+\.[\w-]+$/);

    const expected = await (await call("GET", `${team.base}/reports/${report.id}/download`, { key: team.key })).text();
    const file = await open(link);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(await file.text()).toBe(expected);

    // The download link lives 5 minutes from the moment the page minted it.
    setClock(T0 + 299_000);
    expect((await open(link)).status).toBe(200);
    setClock(T0 + 300_000);
    expect((await open(link)).status).toBe(404);
    // Opening the page again mints a fresh one.
    const again = downloadLinkOf(await (await open(body.data.share_url)).text());
    expect((await open(again)).status).toBe(200);
  });

  it("the share link is valid 48 hours", async () => {
    const { team, report } = await exportedTeam();
    const url = (await json(await share(team.key, team.base, { channel: "link", report_id: report.id }))).data.share_url;
    setClock(T0 + 48 * HOUR - 1000);
    expect((await open(url)).status).toBe(200);
    setClock(T0 + 48 * HOUR);
    const expired = await open(url);
    expect(expired.status).toBe(404);
    expect(await expired.text()).toContain("Report not available");
  });

  it("tampered tokens, foreign signatures and the wrong kind of token answer 404", async () => {
    const { team, report } = await exportedTeam();
    const url: string = (await json(await share(team.key, team.base, { channel: "link", report_id: report.id }))).data.share_url;
    const token = url.split("/").pop()!;
    const [payload, mac] = token.split(".");
    const decoded = JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/")));
    // A payload with a later expiry, re-encoded, keeps the old signature: refused.
    const forged = btoa(JSON.stringify({ ...decoded, exp: decoded.exp + 10 * 48 * 3600 }))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
    const base = "http://app.test/insights/audit/reports";
    for (const bad of [
      `${forged}.${mac}`,
      `${payload}.${mac.slice(0, -2)}${mac.endsWith("AA") ? "BB" : "AA"}`,
      payload,
      "not-a-token",
      `${payload}.${mac}.extra`,
    ]) {
      const res = await open(`${base}/shared/${bad}`);
      expect(res.status, bad).toBe(404);
      expect(res.headers.get("content-type")).toContain("text/html");
    }
    // A share token is not a download token, and the reverse.
    expect((await open(`${base}/download/${token}`)).status).toBe(404);
    const link = downloadLinkOf(await (await open(url)).text());
    expect((await open(`${base}/shared/${link.split("/").pop()}`)).status).toBe(404);
    expect((await open(url)).status).toBe(200);
  });
});

describe("revoke", () => {
  it("unshares every shared report of the project; its links stop resolving, also after a re-share", async () => {
    setClock(T0);
    const team = await newTeam();
    const first = await exportReport(team.key, team.base, team.teamId, { format: "json" });
    setClock(T0 + 2000);
    const second = await exportReport(team.key, team.base, team.teamId, { format: "pdf" });
    const oldUrl = (await json(await share(team.key, team.base, { channel: "link", report_id: first.id }))).data.share_url;
    setClock(T0 + 5000);
    await share(team.key, team.base, { channel: "link", report_id: second.id });
    const link = downloadLinkOf(await (await open(oldUrl)).text());

    const res = await call("DELETE", `${team.base}/reports/share`, { key: team.key });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.error).toBeNull();
    expect(body.data).toEqual({ status: "exported", revoked_count: 2, ids: [second.id, first.id], id: second.id });
    for (const id of [first.id, second.id]) {
      expect((await json(await call("GET", `${team.base}/reports/${id}`, { key: team.key }))).data.status).toBe("exported");
    }
    expect((await open(oldUrl)).status).toBe(404);
    expect((await open(link)).status).toBe(404);

    // Sharing the report again gives a new live link; the revoked one stays dead.
    const newUrl = (await json(await share(team.key, team.base, { channel: "link", report_id: first.id }))).data.share_url;
    expect((await open(newUrl)).status).toBe(200);
    expect((await open(oldUrl)).status).toBe(404);

    await call("DELETE", `${team.base}/reports/share`, { key: team.key });
    const none = await call("DELETE", `${team.base}/reports/share`, { key: team.key });
    expect(none.status).toBe(404);
    expect((await json(none)).error.code).toBe("not_found");
  });
});

describe("share by email", () => {
  it("queues platform mail for well-formed recipients and rejects malformed ones", async () => {
    const { team, report } = await exportedTeam();
    const recipients = ["alice@example.com", "not-an-email", "bob@example.org", "eve@", "Alice@example.com"];
    const res = await share(team.key, team.base, { channel: "email", report_id: report.id, recipients });
    expect(res.status).toBe(200);
    const data = (await json(res)).data;
    expect(data).toMatchObject({
      channel: "email",
      recipients,
      accepted: ["alice@example.com", "bob@example.org"],
      rejected: ["not-an-email", "eve@"],
    });
    const mails = await getDb(env.DB)
      .select()
      .from(platformOutbox)
      .where(and(eq(platformOutbox.teamId, team.teamId), eq(platformOutbox.kind, "report_share")));
    expect(mails.map((m) => m.to).sort()).toEqual(["alice@example.com", "bob@example.org"]);
    for (const mail of mails) expect(mail.text).toContain(data.share_url);
  });

  it("meters each accepted recipient against the team's mail quota; short of units: 429 quota_exceeded and nothing is mailed", async () => {
    const { team, report } = await exportedTeam();
    const used = async () => (await usedOf(team.teamId, "mail")) ?? 0;
    const ok = await share(team.key, team.base, { channel: "email", report_id: report.id, recipients: ["a@example.com", "b@example.com", "bad"] });
    expect(ok.status).toBe(200);
    expect(await used()).toBe(2);
    // One unit left of the plan's mails (pro: 250,000), two recipients asked for.
    const limit = planLimits("pro").monthly.mail as number;
    await setUsed(team.teamId, "mail", limit - 1);
    const refused = await share(team.key, team.base, { channel: "email", report_id: report.id, recipients: ["c@example.com", "d@example.com"] });
    expect(refused.status).toBe(429);
    expect((await json(refused)).error.code).toBe("quota_exceeded");
    const mails = await getDb(env.DB)
      .select()
      .from(platformOutbox)
      .where(and(eq(platformOutbox.teamId, team.teamId), eq(platformOutbox.kind, "report_share")));
    expect(mails.map((m) => m.to).sort()).toEqual(["a@example.com", "b@example.com"]);
    expect(await used()).toBe(limit - 1);
    expect((await share(team.key, team.base, { channel: "email", report_id: report.id, recipients: ["c@example.com"] })).status).toBe(200);
    expect(await used()).toBe(limit);
  });

  it("answers 200 with a live link when every recipient is rejected", async () => {
    const { team, report } = await exportedTeam();
    const data = (await json(await share(team.key, team.base, { channel: "email", report_id: report.id, recipients: ["nope"] }))).data;
    expect(data).toMatchObject({ accepted: [], rejected: ["nope"] });
    expect((await open(data.share_url)).status).toBe(200);
  });
});

describe("share to chat", () => {
  it("posts the share_url to the webhook through the guard, with a 10 s timeout", async () => {
    const { team, report } = await exportedTeam();
    const realFetch = globalThis.fetch;
    const seen: Array<{ url: string; init: RequestInit }> = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (!url.startsWith("https://chat.example.com/")) return realFetch(input, init);
      seen.push({ url, init: init! });
      return new Response("ok");
    });
    const res = await share(team.key, team.base, {
      channel: "chat",
      report_id: report.id,
      webhook_url: "https://chat.example.com/hooks/T1",
      recipients: ["ignored"],
    });
    expect(res.status).toBe(200);
    const data = (await json(res)).data;
    expect(data).toMatchObject({ channel: "chat", recipients: [], accepted: [], rejected: [] });
    expect(seen).toHaveLength(1);
    expect(seen[0].init.method).toBe("POST");
    expect(seen[0].init.redirect).toBe("manual");
    expect(seen[0].init.signal).toBeInstanceOf(AbortSignal);
    const payload = JSON.parse(String(seen[0].init.body));
    expect(payload.text).toContain(data.share_url);
    expect(payload.share_url).toBe(data.share_url);
  });

  it("logs a failing webhook and answers the same", async () => {
    const { team, report } = await exportedTeam();
    const realFetch = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url.startsWith("https://chat.example.com/")) throw new TypeError("network down");
      return realFetch(input, init);
    });
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const res = await share(team.key, team.base, { channel: "chat", report_id: report.id, webhook_url: "https://chat.example.com/hooks/T1" });
    expect(res.status).toBe(200);
    expect((await json(res)).data.channel).toBe("chat");
    expect(errors.mock.calls.some(([line]) => String(line).includes("audit chat share failed"))).toBe(true);
  });
});

describe("default report and placeholder", () => {
  it("creates an empty placeholder JSON report when the project has none", async () => {
    setClock(T0);
    const team = await newTeam();
    const data = (await json(await share(team.key, team.base, { channel: "link" }))).data;
    const list = (await json(await call("GET", `${team.base}/reports`, { key: team.key }))).data;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      id: data.id,
      format: "json",
      status: "shared",
      period_start: "2026-05-26",
      period_end: "2026-06-01",
      exported_at: "2026-06-01T09:00:00Z",
      snapshot: { verification_pass_rate: 0, regression_rate: 0, open_findings: 0 },
    });
    expect(list[0].snapshot.risk_burn_down).toHaveLength(7);
    const file = await call("GET", `${team.base}/reports/${data.id}/download`, { key: team.key });
    expect(file.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect((await file.json<{ report: { id: string } }>()).report.id).toBe(data.id);
    // No AI quota was used for it.
    expect(await usedOf(team.teamId, "ai")).toBeNull();
    // A second share reuses it.
    expect((await json(await share(team.key, team.base, { channel: "link" }))).data.id).toBe(data.id);
  });

  it("concurrent shares of a project with no report create exactly one placeholder", async () => {
    setClock(T0);
    const team = await newTeam();
    const responses = await Promise.all(Array.from({ length: 5 }, () => share(team.key, team.base, { channel: "link" })));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const ids = new Set(await Promise.all(responses.map(async (r) => (await json(r)).data.id as string)));
    expect(ids.size).toBe(1);
    const rows = await getDb(env.DB)
      .select()
      .from(auditReports)
      .where(and(eq(auditReports.teamId, team.teamId), eq(auditReports.projectId, "web-app")));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: [...ids][0], placeholder: true, status: "shared" });
    // The requests that lost the race removed the artefacts they had written: one object is left.
    const objects = await env.REPORTS.list({ prefix: `audit/${team.teamId}/web-app/` });
    expect(objects.objects.map((o) => o.key)).toEqual([`audit/${team.teamId}/web-app/${rows[0].id}.json`]);
    // Straight to the service too (no HTTP in between), with a second project racing alongside.
    const { shareReport } = await import("../../../src/products/audit/audit-share.service");
    const results = await Promise.all(
      ["p2", "p2", "p2", "p3", "p3"].map((projectId) =>
        shareReport(env, { teamId: team.teamId, projectId }, { teamId: team.teamId, plan: "free", ownerEmail: null }, { channel: "link" }),
      ),
    );
    expect(new Set(results.slice(0, 3).map((r) => r.id)).size).toBe(1);
    expect(new Set(results.slice(3).map((r) => r.id)).size).toBe(1);
    const placeholders = await env.DB.prepare(
      "SELECT project_id, COUNT(*) AS n FROM audit_reports WHERE team_id = ? AND placeholder = 1 GROUP BY project_id ORDER BY project_id",
    )
      .bind(team.teamId)
      .all<{ project_id: string; n: number }>();
    expect(placeholders.results).toEqual([
      { project_id: "p2", n: 1 },
      { project_id: "p3", n: 1 },
      { project_id: "web-app", n: 1 },
    ]);
    for (const [projectId, id] of [
      ["p2", results[0].id],
      ["p3", results[3].id],
    ]) {
      const listed = await env.REPORTS.list({ prefix: `audit/${team.teamId}/${projectId}/` });
      expect(listed.objects.map((o) => o.key)).toEqual([`audit/${team.teamId}/${projectId}/${id}.json`]);
    }
  });

  it("picks the most recent report by created_at, then by id on a tie", async () => {
    setClock(T0);
    const team = await newTeam();
    const a = await exportReport(team.key, team.base, team.teamId, { format: "json" });
    setClock(T0 + 1000);
    const b = await exportReport(team.key, team.base, team.teamId, { format: "json" });
    expect((await json(await share(team.key, team.base, { channel: "link" }))).data.id).toBe(b.id);
    // Same second: the larger id wins, deterministically.
    const c = await exportReport(team.key, team.base, team.teamId, { format: "json" });
    const winner = [b.id, c.id].sort().pop();
    expect((await json(await share(team.key, team.base, { channel: "link" }))).data.id).toBe(winner);
    void a;
  });

  it("answers 422 request_failed when the chosen report cannot be shared yet", async () => {
    setClock(T0);
    const team = await newTeam();
    const res = await call("POST", `${team.base}/reports/export`, { key: team.key, body: { format: "json" } });
    const id = (await json(res)).data.id;
    // A failed export has no artefact: the conditional share update matches no row.
    await getDb(env.DB).update(auditReports).set({ status: "failed" }).where(eq(auditReports.id, id));
    const refused = await share(team.key, team.base, { channel: "link", report_id: id });
    expect(refused.status).toBe(422);
    const body = await json(refused);
    expect(body.data).toBeNull();
    expect(body.error.code).toBe("request_failed");
  });
});

describe("strict bucket on share", () => {
  it("the 31st share in a minute gets the platform rate-limit body, not the envelope", async () => {
    const { team, report } = await exportedTeam();
    for (let i = 0; i < 30; i++) {
      const res = await share(team.key, team.base, { channel: "link", report_id: report.id });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("30");
    }
    const limited = await share(team.key, team.base, { channel: "link", report_id: report.id });
    await expectError(limited, 429, { error: "Rate limit exceeded", retry_after: 60 });
    expect(limited.headers.get("retry-after")).toBe("60");
    // Revoke is not in the strict bucket.
    expect((await call("DELETE", `${team.base}/reports/share`, { key: team.key })).status).toBe(200);
  });
});
