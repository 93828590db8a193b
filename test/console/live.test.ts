// The fragments live console parts refresh from (client/live.ts): a relay event's deliveries and
// an audit scan's status. Served under /console with the session (never a key): the part alone
// (no layout), marked pending while an attempt waits or the scan runs and not once done, with
// the console's headers; another team's ids 404 and no session is sent to sign-in.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { processScan } from "../../src/products/audit/audit-scan.consumer";
import { answer, GOOD_HEADERS, interceptTargets } from "../products/audit/audit-scan-helpers";
import { playedQueue } from "../helpers/queues";
import { call, json } from "../helpers/api";
import { consoleTeam, memberOf, page } from "../helpers/console";
import { createDestination, createSource, ingestSettled, storeSql } from "../products/relay/relay.helpers";
import { auditBase } from "../products/audit/audit-helpers";

afterEach(() => vi.restoreAllMocks());

/** Intercepts outbound fetch to the given URLs with a fixed status each. */
function receiverByUrl(statuses: Record<string, number>) {
  const original = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (!(request.url in statuses)) return original(input, init);
    return new Response("answer", { status: statuses[request.url] });
  });
}

/** A source whose destinations answer `statuses` in order, and one event it received. */
async function eventWith(statuses: number[]) {
  const team = await consoleTeam("developer");
  const source = await createSource(team.key, { name: "Billing" });
  const urls: Record<string, number> = {};
  for (const [i, status] of statuses.entries()) {
    const d = await createDestination(team.key, source.id, { url: `http://127.0.0.1:9/d${i}` });
    urls[d.url] = status;
  }
  receiverByUrl(urls);
  expect((await ingestSettled(source.slug, JSON.stringify({ type: "invoice.paid", id: `evt_${crypto.randomUUID()}` }))).status).toBeLessThan(300);
  const eventId = (await storeSql<{ id: string }>(source.id, "SELECT id FROM events"))[0]!.id;
  const eventPath = `/console/teams/${team.teamId}/relay/sources/${source.id}/events/${eventId}`;
  return { team, source, eventId, eventPath };
}

const pending = (html: string) => /data-live="[^"]+" data-pending="(true|false)"/.exec(html)?.[1];

describe("live parts: a relay event's deliveries", () => {
  it("marks the part pending while a delivery waits for a retry, and serves the part alone", async () => {
    const { team, eventPath } = await eventWith([200, 503]);
    const full = await (await page("GET", eventPath, { cookie: team.cookie })).text();
    expect(full).toContain(`data-live="${eventPath}/deliveries" data-pending="true"`);
    expect(full).toContain("this list refreshes itself");

    const res = await page("GET", `${eventPath}/deliveries`, { cookie: team.cookie });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    const part = await res.text();
    expect(part.startsWith(`<div data-live="${eventPath}/deliveries" data-pending="true"`)).toBe(true);
    expect(part).not.toContain("<html");
    expect(part).not.toContain('data-testid="replay"');
    expect(part.match(/data-testid="delivery"/g)).toHaveLength(2);
    expect(part.match(/data-testid="attempt-row"/g)).toHaveLength(2);
  });

  it("is not pending once every delivery is done, so the page stops polling", async () => {
    const { team, eventPath } = await eventWith([200]);
    expect(pending(await (await page("GET", eventPath, { cookie: team.cookie })).text())).toBe("false");
    const part = await (await page("GET", `${eventPath}/deliveries`, { cookie: team.cookie })).text();
    expect(pending(part)).toBe("false");
    expect(part).not.toContain("refreshes itself");
  });

  it("shows a replay's attempts without a reload: the part after the replay holds them", async () => {
    const { team, eventPath } = await eventWith([200]);
    const before = await (await page("GET", `${eventPath}/deliveries`, { cookie: team.cookie })).text();
    expect(before.match(/data-testid="attempt-row"/g)).toHaveLength(1);
    const replay = await page("POST", `${eventPath}/replay`, { cookie: team.cookie, form: {} });
    expect(replay.status).toBe(303);
    // The replay's first attempt runs in the background of its request; the part picks it up.
    let after = "";
    for (let i = 0; i < 50 && (after.match(/data-testid="attempt-row"/g)?.length ?? 0) < 2; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      after = await (await page("GET", `${eventPath}/deliveries`, { cookie: team.cookie })).text();
    }
    expect(after.match(/data-testid="delivery"/g)).toHaveLength(2);
    expect(after.match(/data-testid="attempt-row"/g)).toHaveLength(2);
  });

  it("answers another team 404, a viewer 200 (read only), and no session a redirect to sign-in", async () => {
    const { team, eventPath } = await eventWith([200]);
    const other = await consoleTeam("owner");
    const foreign = eventPath.replace(team.teamId, other.teamId);
    expect((await page("GET", `${foreign}/deliveries`, { cookie: other.cookie })).status).toBe(404);
    const viewer = await memberOf(team.teamId, "viewer");
    expect((await page("GET", `${eventPath}/deliveries`, { cookie: viewer.cookie })).status).toBe(200);
    const anonymous = await page("GET", `${eventPath}/deliveries`);
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toBe("/console/sign-in");
  });
});

describe("live parts: an audit scan", () => {
  it("is pending while the scan is queued, and not once it finished", async () => {
    const team = await consoleTeam("developer");
    interceptTargets({ "https://site.example": answer(GOOD_HEADERS) });
    const scans = `/console/teams/${team.teamId}/audit/projects/web-app/scans`;
    const started = await page("POST", scans, { cookie: team.cookie, form: { target_url: "https://site.example" } });
    const location = started.headers.get("location")!;
    const id = /\/scans\/([0-9a-f-]{36})$/.exec(location)![1]!;
    const queued = await (await page("GET", location, { cookie: team.cookie })).text();
    expect(queued).toContain(`data-live="${location}/live" data-pending="true"`);
    const part = await page("GET", `${location}/live`, { cookie: team.cookie });
    expect(part.status).toBe(200);
    const partHtml = await part.text();
    expect(partHtml).not.toContain("<html");
    expect(partHtml).toMatch(/data-testid="scan-status">(queued|running|finished)</);

    await processScan(env, { scan_id: id, team_id: team.teamId });
    let done = "";
    for (let i = 0; i < 100 && pending(done) !== "false"; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      done = await (await page("GET", `${location}/live`, { cookie: team.cookie })).text();
    }
    expect(pending(done)).toBe("false");
    expect(done).toContain('data-testid="scan-status">finished<');
  });

  it("answers another team's scan 404", async () => {
    const team = await consoleTeam("developer");
    const queue = playedQueue("audit-scans");
    const other = await consoleTeam("owner");
    const res = await call("POST", `${auditBase(other, "web-app")}/scans`, { key: other.key, body: { target_url: "https://site.example/" }, env: queue.env });
    const theirs = (await json(res)).data.id;
    expect((await page("GET", `/console/teams/${team.teamId}/audit/projects/web-app/scans/${theirs}/live`, { cookie: team.cookie })).status).toBe(404);
  });
});
