// The console's audit scan pages: start a scan (303 to its page), a scan's tests and grade once it
// ran, the list with grades, schedules added and deleted; viewers read only, another team's ids 404.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { processScan } from "../../src/products/audit/audit-scan.consumer";
import { auditBase } from "../products/audit/audit-helpers";
import { answer, GOOD_HEADERS, interceptTargets } from "../products/audit/audit-scan-helpers";
import { playedQueue } from "../helpers/queues";
import { call, json } from "../helpers/api";
import { consoleTeam, memberOf, page } from "../helpers/console";

afterEach(() => vi.restoreAllMocks());

const teamPage = (teamId: string, rest: string) => `/console/teams/${teamId}/${rest}`;

describe("audit scans in the console", () => {
  it("starts a scan with a form (303 to the scan's page), shows its tests and grade, lists it, manages schedules", async () => {
    const team = await consoleTeam("developer");
    const { "x-content-type-options": _, ...noXcto } = GOOD_HEADERS;
    interceptTargets({ "https://site.example": answer(noXcto) });
    const scans = teamPage(team.teamId, "audit/projects/web-app/scans");
    const empty = await (await page("GET", scans, { cookie: team.cookie })).text();
    expect(empty).toContain('data-testid="start-scan"');
    expect(empty).toContain("No scan yet.");

    const started = await page("POST", scans, { cookie: team.cookie, form: { target_url: "https://site.example" } });
    expect(started.status).toBe(303);
    const location = started.headers.get("location")!;
    const id = /\/scans\/([0-9a-f-]{36})$/.exec(location)?.[1];
    expect(id).toBeTruthy();
    const queued = await (await page("GET", location, { cookie: team.cookie })).text();
    expect(queued).toContain('data-testid="scan-status">queued<');

    // Run it as the queue would (the console sent its message to the real queue, which may run it
    // too: whichever claims it first runs it, the other finds it done or busy).
    await processScan(env, { scan_id: id!, team_id: team.teamId });
    let done = "";
    for (let i = 0; i < 100 && !done.includes('data-testid="scan-status">finished<'); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      done = await (await page("GET", location, { cookie: team.cookie })).text();
    }
    expect(done).toContain('data-testid="scan-status">finished<');
    expect(done).toMatch(/data-testid="scan-grade">[A-F][+-]?</);
    expect([...done.matchAll(/data-testid="scan-test-row" data-pass="(true|false)"/g)]).toHaveLength(8);
    expect(done).toContain("Add X-Content-Type-Options: nosniff.");

    const list = await (await page("GET", scans, { cookie: team.cookie })).text();
    expect(list).toMatch(/data-testid="scan-row" data-status="finished" data-grade="[A-F][+-]?"/);
    // The project page links to its scans; the finding the scan opened is the project's.
    expect(await (await page("GET", teamPage(team.teamId, "audit/projects/web-app"), { cookie: team.cookie })).text()).toContain(
      'data-testid="audit-scans-link"',
    );
    expect((await json(await call("GET", `${auditBase(team, "web-app")}/findings`, { key: team.key }))).data).toHaveLength(1);

    const added = await page("POST", teamPage(team.teamId, "audit/projects/web-app/scan-schedules"), {
      cookie: team.cookie,
      form: { target_url: "https://site.example/", every: "week" },
    });
    expect(added.status).toBe(303);
    const schedules = (await json(await call("GET", `${auditBase(team, "web-app")}/scan-schedules`, { key: team.key }))).data;
    expect(schedules).toMatchObject([{ target_url: "https://site.example/", every: "week" }]);
    expect(await (await page("GET", scans, { cookie: team.cookie })).text()).toContain('data-testid="scan-schedule-row"');
    const deleted = await page("POST", teamPage(team.teamId, `audit/projects/web-app/scan-schedules/${schedules[0].id}/delete`), { cookie: team.cookie });
    expect(deleted.status).toBe(303);
    expect((await json(await call("GET", `${auditBase(team, "web-app")}/scan-schedules`, { key: team.key }))).data).toEqual([]);
  });

  it("refuses a forbidden target at 422, a viewer's start at 403, and another team's scan with 404", async () => {
    const team = await consoleTeam("developer");
    const scans = teamPage(team.teamId, "audit/projects/web-app/scans");
    const fetchSpy = vi.spyOn(globalThis, "fetch");
    expect((await page("POST", scans, { cookie: team.cookie, form: { target_url: "http://169.254.169.254/" } })).status).toBe(422);
    expect((await page("POST", scans, { cookie: team.cookie, form: { target_url: "https://site.example/" }, origin: "http://evil.test" })).status).toBe(403);
    const viewer = await memberOf(team.teamId, "viewer");
    expect((await page("POST", scans, { cookie: viewer.cookie, form: { target_url: "https://site.example/" } })).status).toBe(403);
    expect(await (await page("GET", scans, { cookie: viewer.cookie })).text()).not.toContain('data-testid="start-scan"');
    expect(fetchSpy).not.toHaveBeenCalled();

    const queue = playedQueue("audit-scans");
    const other = await consoleTeam("owner");
    const res = await call("POST", `${auditBase(other, "web-app")}/scans`, { key: other.key, body: { target_url: "https://site.example/" }, env: queue.env });
    const theirs = (await json(res)).data.id;
    expect((await page("GET", `${scans}/${theirs}`, { cookie: team.cookie })).status).toBe(404);
  });
});
