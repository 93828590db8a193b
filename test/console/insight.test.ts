// The console's usage and requests pages: every role reads both, a signed-out visitor is sent to
// sign in, another team's id is 404; the usage figures, bars and charts (with data), the window;
// the request log's rows, filter, paging and error bodies; and the charts themselves.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { Role } from "../../src/db/schema";
import { DailyChart, formatNumber, monthDays, percentOf, toneOf, UsageBar } from "../../src/console/charts";
import { setClock } from "../../src/platform/clock";
import { planLimits, services } from "../../src/platform/plans";
import { teamObject } from "../../src/platform/rate-limit/middleware";
import { requestLogSettled, requestLogStore } from "../../src/platform/request-log/request-log";
import type { RequestLogRow } from "../../src/platform/request-log/request-log.types";
import { call, setupTeam } from "../helpers/api";
import { consoleTeam, memberOf, page } from "../helpers/console";

/** 2031-06-15T12:00:30Z. */
const T0 = Date.UTC(2031, 5, 15, 12, 0, 30);
const ROLES: Role[] = ["owner", "admin", "developer", "viewer"];

afterEach(() => setClock(null));

/** The attributes of every element carrying data-testid=`testid`, in document order. */
function elements(html: string, testid: string): Array<Record<string, string>> {
  const found: Array<Record<string, string>> = [];
  for (const match of html.matchAll(new RegExp(`<[a-z]+ [^>]*data-testid="${testid}"[^>]*>`, "g"))) {
    const attrs: Record<string, string> = {};
    for (const a of match[0].matchAll(/([\w-]+)="([^"]*)"/g)) attrs[a[1]!] = a[2]!;
    found.push(attrs);
  }
  return found;
}

async function setUsage(teamId: string, period: string, used: Record<string, number>): Promise<void> {
  await env.DB.batch(
    Object.entries(used).map(([service, value]) =>
      env.DB.prepare("INSERT INTO usage_counters (team_id, service, period, used) VALUES (?, ?, ?, ?)").bind(teamId, service, period, value),
    ),
  );
}

describe("who reads the pages", () => {
  it("every role reads usage and requests", async () => {
    const team = await consoleTeam("owner");
    for (const role of ROLES) {
      const member = role === "owner" ? { cookie: team.cookie } : await memberOf(team.teamId, role);
      for (const path of ["usage", "requests"]) {
        const res = await page("GET", `/console/teams/${team.teamId}/${path}`, { cookie: member.cookie });
        expect(res.status, `${role} ${path}`).toBe(200);
        const html = await res.text();
        expect(html).toContain('aria-current="page"');
        expect(html, "no inline style").not.toMatch(/\sstyle=/);
      }
    }
  });

  it("a signed-out visitor is sent to sign in; another team's id and an unknown id are 404", async () => {
    const team = await consoleTeam("viewer");
    const other = await setupTeam();
    for (const path of ["usage", "requests"]) {
      const out = await page("GET", `/console/teams/${team.teamId}/${path}`);
      expect(out.status).toBe(303);
      expect(out.headers.get("location")).toBe("/console/sign-in");
      for (const id of [other.teamId, "00000000-0000-4000-8000-000000000000"]) {
        const res = await page("GET", `/console/teams/${id}/${path}`, { cookie: team.cookie });
        expect(res.status, `${path} ${id}`).toBe(404);
      }
    }
  });

  it("the pages only read: a POST to them is not a route", async () => {
    const team = await consoleTeam("owner");
    for (const path of ["usage", "requests"]) {
      const res = await page("POST", `/console/teams/${team.teamId}/${path}`, { cookie: team.cookie, form: {} });
      expect(res.status, path).toBe(404);
    }
  });
});

describe("usage page", () => {
  it("shows each metered service with used and limit, a bar with the 80 % and 95 % marks, and a chart of the month", async () => {
    setClock(T0);
    const team = await consoleTeam("viewer", { plan: "free" });
    await setUsage(team.teamId, "2031-06", { mail: 2_700, surveys: 10, logs: 1.5 });
    const res = await page("GET", `/console/teams/${team.teamId}/usage`, { cookie: team.cookie });
    expect(res.status).toBe(200);
    const html = await res.text();
    const limits = planLimits("free").monthly;
    for (const service of services()) {
      const [card] = elements(html, `usage-${service}`);
      expect(card, service).toBeDefined();
      expect(card!["data-limit"]).toBe(String(limits[service]));
    }
    expect(elements(html, "usage-mail")[0]!["data-used"]).toBe("2700");
    expect(elements(html, "usage-surveys")[0]!["data-used"]).toBe("10");
    expect(elements(html, "usage-logs")[0]!["data-used"]).toBe("1.5");
    expect(elements(html, "usage-push")[0]!["data-used"]).toBe("0");
    expect(html).toContain("Mail: 2,700 of 3,000 emails (90 %)");
    // The mail bar is past the first mark: drawn in the warning tone.
    expect(html).toMatch(/class="usage-bar warn"[^>]*aria-labelledby="usage-mail-bar-title"/);
    // Two marks per bar, at 80 and 95.
    expect((html.match(/class="mark" x1="80"/g) ?? []).length).toBe(services().length);
    expect((html.match(/class="mark" x1="95"/g) ?? []).length).toBe(services().length);
    // A chart of June: 30 days, each in the table for screen readers.
    expect(html).toContain("Mail per day, June 2031");
    expect((html.match(/data-point="2031-06-/g) ?? []).length).toBe(30 * services().length);
    expect(html).toContain("<td>2031-06-30</td>");
  });

  it("shows the current rate-limit window of the team", async () => {
    setClock(T0);
    const team = await consoleTeam("developer", { plan: "free", scopes: ["billing:read"] });
    for (let i = 0; i < 3; i++) expect((await call("GET", "usage", { key: team.key })).status).toBe(200);
    const html = await (await page("GET", `/console/teams/${team.teamId}/usage`, { cookie: team.cookie })).text();
    const [window] = elements(html, "rate-limit-window");
    expect(window).toEqual(expect.objectContaining({ "data-limit": "600", "data-remaining": "597" }));
    expect(html).toContain("of 600 requests used in the current minute");
    // Reading the page counted nothing.
    const count = await env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(teamObject(team.teamId))).peek(Math.floor(T0 / 60_000) * 60);
    expect(count).toBe(3);
  });

  it("an enterprise team has no limits: unlimited services and no window", async () => {
    setClock(T0);
    const team = await consoleTeam("owner", { plan: "enterprise" });
    const html = await (await page("GET", `/console/teams/${team.teamId}/usage`, { cookie: team.cookie })).text();
    expect(elements(html, "usage-mail")[0]!["data-limit"]).toBe("unlimited");
    expect(elements(html, "rate-limit-window")[0]!["data-limit"]).toBe("unlimited");
    expect(html).toContain("no per-minute rate limit");
  });
});

describe("charts", () => {
  it("fills every day of the month, sums a day given twice, and knows leap years", () => {
    const days = monthDays("2032-02", [
      { day: "2032-02-03", value: 4 },
      { day: "2032-02-03", value: 1 },
      { day: "2032-02-29", value: 7 },
      { day: "2032-03-01", value: 9 },
    ]);
    expect(days.length).toBe(29);
    expect(days[2]).toEqual({ day: "2032-02-03", value: 5 });
    expect(days[28]).toEqual({ day: "2032-02-29", value: 7 });
    expect(days.reduce((s, d) => s + d.value, 0)).toBe(12);
    expect(monthDays("2031-02", []).length).toBe(28);
  });

  it("draws a bar per day scaled to the peak, with a title and a table of the numbers", async () => {
    const days = monthDays("2031-06", [
      { day: "2031-06-02", value: 50 },
      { day: "2031-06-10", value: 200 },
    ]);
    const html = String(await DailyChart({ id: "c", caption: "Mail per day, June 2031", unit: "emails", days }));
    expect(html).toContain('<title id="c-title">Mail per day, June 2031: 250 emails this month, at most 200 on 2031-06-10</title>');
    expect(html).toContain('role="img" aria-labelledby="c-title"');
    const heights = [...html.matchAll(/height="([\d.]+)" data-point="([\d-]+)" data-value="(\d+)"/g)].map((m) => ({
      h: Number(m[1]),
      day: m[2],
      v: Number(m[3]),
    }));
    expect(heights.length).toBe(30);
    const peak = heights.find((b) => b.day === "2031-06-10")!;
    const small = heights.find((b) => b.day === "2031-06-02")!;
    expect(small.h).toBeCloseTo(peak.h / 4, 1);
    expect(heights.filter((b) => b.v === 0).every((b) => b.h === 0)).toBe(true);
    expect(html).toContain("<caption>Mail per day, June 2031</caption>");
    expect(html).toContain("<td>2031-06-10</td><td>200</td>");
    const empty = String(await DailyChart({ id: "e", caption: "Push", unit: "notifications", days: monthDays("2031-06", []) }));
    expect(empty).toContain("Push: nothing this month yet");
    expect(empty).not.toContain("NaN");
  });

  it("a usage bar fills to the share used, capped at its end, in the tone of the marks passed", async () => {
    expect([percentOf(0, 100), percentOf(79, 100), percentOf(80, 100), percentOf(150, 100), percentOf(5, null)]).toEqual([0, 79, 80, 150, 0]);
    expect([toneOf(79), toneOf(80), toneOf(94), toneOf(95), toneOf(150)]).toEqual(["ok", "warn", "warn", "danger", "danger"]);
    const over = String(await UsageBar({ id: "b", label: "Mail", used: 4_500, limit: 3_000, unit: "emails" }));
    expect(over).toContain('class="fill" x="0" y="0" width="100.00"');
    expect(over).toContain("usage-bar danger");
    expect(over).toContain("Mail: 4,500 of 3,000 emails (150 %)");
    const unlimited = String(await UsageBar({ id: "u", label: "Mail", used: 12, limit: null, unit: "emails" }));
    expect(unlimited).toContain('width="0.00"');
    expect(unlimited).toContain("no monthly limit");
    // A limit of 0: empty and "not included" while nothing is used, full and over once something is; never "0 of 0 (0 %)".
    const none = String(await UsageBar({ id: "z", label: "AI", used: 0, limit: 0, unit: "AI units" }));
    expect(none).toContain('class="fill" x="0" y="0" width="0.00"');
    expect(none).toContain("AI: 0 AI units, not included in the plan");
    const some = String(await UsageBar({ id: "y", label: "AI", used: 2, limit: 0, unit: "AI units" }));
    expect(some).toContain('width="100.00"');
    expect(some).toContain("usage-bar danger");
    expect([percentOf(0, 0), percentOf(2, 0)]).toEqual([0, 100]);
  });

  it("a daily chart of a sliver of a unit never says max 0", async () => {
    const days = monthDays("2026-11", [{ day: "2026-11-03", value: 0.0004 }]);
    const chart = String(await DailyChart({ id: "d", caption: "Log ingest per day", unit: "MB", days }));
    expect(chart).not.toContain("max 0<");
    expect(chart).toContain("max &lt; 0.01");
    expect(formatNumber(0.0004)).toBe("< 0.01");
    expect(formatNumber(0)).toBe("0");
    expect(formatNumber(1234.567)).toBe("1,234.57");
  });
});

describe("requests page", () => {
  const row = (at: number, status: number, path: string, error: string | null = null): RequestLogRow => [
    at,
    "GET",
    path,
    status,
    7,
    "key-id",
    "edp_abcd",
    `req-${path}`,
    error,
  ];

  it("a key's requests show up, newest first, with data-status; an error row opens to its body", async () => {
    const team = await consoleTeam("viewer", { scopes: ["billing:read"] });
    expect((await call("GET", "usage", { key: team.key })).status).toBe(200);
    const missing = await call("GET", "push/apps", { key: team.key });
    expect(missing.status).toBe(403);
    await requestLogSettled(env);
    const html = await (await page("GET", `/console/teams/${team.teamId}/requests`, { cookie: team.cookie })).text();
    const rows = elements(html, "request-row");
    expect(rows.map((r) => r["data-status"])).toEqual(["403", "200"]);
    expect(html).toContain("<summary>Error body</summary>");
    expect(html).toContain("<pre>{&quot;error&quot;:&quot;Insufficient scope&quot;}</pre>");
    expect(html).toContain("/api/v1/push/apps");
    // The time to the second, and the key by its name beside its prefix.
    expect(html).toMatch(/<time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/time>/);
    const keyName = (await env.DB.prepare("SELECT name FROM api_keys WHERE id = ?").bind(team.keyId).first<string>("name"))!;
    expect(html).toContain(`<span class="key-name">${keyName}</span>`);
  });

  it("filters by status class and pages with a cursor", async () => {
    const team = await consoleTeam("developer");
    const now = Date.now();
    const rows = Array.from({ length: 60 }, (_, i) =>
      row(now - 10_000 + i, i % 3 === 0 ? 500 : 200, `/api/v1/r${i}`, i % 3 === 0 ? '{"error":"Internal server error"}' : null),
    );
    await requestLogStore(env, team.teamId).append(rows, now);
    const base = `/console/teams/${team.teamId}/requests`;
    const first = await (await page("GET", base, { cookie: team.cookie })).text();
    expect(elements(first, "request-row").length).toBe(50);
    const next = /href="([^"]*cursor=[^"]*)" rel="next"/.exec(first)![1]!.replace(/&amp;/g, "&");
    const second = await (await page("GET", next, { cookie: team.cookie })).text();
    expect(elements(second, "request-row").length).toBe(10);
    expect(second).not.toContain('rel="next"');
    const errors = await (await page("GET", `${base}?status=5xx`, { cookie: team.cookie })).text();
    const errorRows = elements(errors, "request-row");
    expect(errorRows.length).toBe(20);
    expect(errorRows.every((r) => r["data-status"] === "500")).toBe(true);
    expect(errors).toMatch(/href="[^"]*status=5xx" aria-current="page"/);
    const none = await (await page("GET", `${base}?status=3xx`, { cookie: team.cookie })).text();
    expect(elements(none, "request-row")).toEqual([]);
    expect(none).toContain("No 3xx requests in the last 7 days.");
  });

  it("a bad filter or cursor is a 422 page, never a 500", async () => {
    const team = await consoleTeam("viewer");
    const base = `/console/teams/${team.teamId}/requests`;
    for (const query of ["status=6xx", "status=%3Cscript%3E", "cursor=nope", `cursor=${"a".repeat(201)}`]) {
      const res = await page("GET", `${base}?${query}`, { cookie: team.cookie });
      expect(res.status, query).toBe(422);
      const html = await res.text();
      expect(html).toContain("Check what you entered");
      expect(html).not.toContain("<script>");
    }
  });

  it("shows only the team's own requests; the path and body are escaped", async () => {
    setClock(T0);
    const team = await consoleTeam("owner");
    const other = await setupTeam();
    await requestLogStore(env, other.teamId).append([row(T0, 200, "/api/v1/other-team")], T0);
    await requestLogStore(env, team.teamId).append([row(T0, 404, "/api/v1/<b>x</b>", '{"error":"<img src=x onerror=alert(1)>"}')], T0);
    const html = await (await page("GET", `/console/teams/${team.teamId}/requests`, { cookie: team.cookie })).text();
    expect(html).not.toContain("other-team");
    expect(html).toContain("/api/v1/&lt;b&gt;x&lt;/b&gt;");
    expect(html).not.toContain("<img src=x");
  });

  it("shows the last 7 days only (moved clock)", async () => {
    setClock(T0);
    const team = await consoleTeam("viewer");
    await requestLogStore(env, team.teamId).append([row(T0 - 8 * 86_400_000, 200, "/api/v1/old"), row(T0 - 1000, 200, "/api/v1/new")], T0 - 8 * 86_400_000);
    const html = await (await page("GET", `/console/teams/${team.teamId}/requests`, { cookie: team.cookie })).text();
    expect(html).toContain("/api/v1/new");
    expect(html).not.toContain("/api/v1/old");
  });
});
