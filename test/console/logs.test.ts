// The console's Logs pages: the projects list (create, the ingest token shown once), a project's
// explorer (search, level, stream, paging, histogram, rows with metadata, the empty state's curl),
// token rotation, alerts with firings, the live tail under the session (ending on sign-out and on
// the end of the membership), and for every page the tenancy, the roles (a viewer never sees a
// secret or a write button) and the signed-out redirect.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { removeMember } from "../../src/console/members.service";
import { setClock } from "../../src/platform/clock";
import { checkAlerts } from "../../src/products/logs/log-alerts.cron";
import { call, json } from "../helpers/api";
import { countingDb } from "../helpers/counting";
import { consoleTeam, followRedirect, memberOf, page, type ConsoleTeam } from "../helpers/console";
import { ingest, ingestBatch, ndjson } from "../products/logs/helpers";

afterEach(() => setClock(null));

const rows = (html: string) => html.match(/data-testid="log-row"/g)?.length ?? 0;

/** A console team (role `owner` unless told) with a project created over the API. */
async function withProject(role: "owner" | "developer" | "viewer" = "owner"): Promise<ConsoleTeam & { projectId: string; token: string }> {
  const team = await consoleTeam(role);
  const res = await call("POST", "logs/projects", { key: team.key, body: { name: "checkout" } });
  expect(res.status).toBe(201);
  const project = (await json(res)).data;
  return { ...team, projectId: project.id, token: project.ingest_token };
}

async function html(res: Response, status = 200): Promise<string> {
  expect(res.status).toBe(status);
  return res.text();
}

describe("logs: projects", () => {
  it("teaches the first step when the team has no project, then shows a new project's token once", async () => {
    const team = await consoleTeam("developer");
    const empty = await html(await page("GET", `/console/teams/${team.teamId}/logs`, { cookie: team.cookie }));
    expect(empty).toContain("No log projects yet");
    expect(empty).toContain('data-testid="create-project"');

    const posted = await page("POST", `/console/teams/${team.teamId}/logs`, { cookie: team.cookie, form: { name: "web", daily_limit_mb: "50" } });
    // Post/redirect/get: the project's own page, the token shown once through the flash.
    expect(posted.headers.get("location")).toMatch(new RegExp(`^/console/teams/${team.teamId}/logs/[0-9a-f-]{36}\\?notice=created$`));
    const created = await html(await followRedirect(posted, team.cookie));
    const token = /data-testid="new-token">([^<]+)</.exec(created)?.[1];
    expect(token).toMatch(/^lgt_/);
    const reloaded = await html(await page("GET", posted.headers.get("location")!, { cookie: team.cookie }));
    expect(reloaded).not.toContain(token!);
    expect(reloaded).toContain("shown once");
    expect(await env.DB.prepare("SELECT count(*) AS n FROM log_projects WHERE team_id = ?").bind(team.teamId).first("n")).toBe(1);
    // The first command with the real ingest address and the token itself.
    expect(created).toContain("http://app.test/api/v1/logs/ingest");
    expect((await ingest(token!, { message: "from the console's token" })).status).toBe(202);

    const list = await html(await page("GET", `/console/teams/${team.teamId}/logs`, { cookie: team.cookie }));
    expect(list).toContain('data-testid="project-row"');
    expect(list).toContain(token!.slice(0, 12));
    expect(list).not.toContain(token!);
  });

  it("answers the form again with what is wrong, and stores nothing", async () => {
    const team = await consoleTeam("owner");
    const res = await page("POST", `/console/teams/${team.teamId}/logs`, { cookie: team.cookie, form: { name: "  ", daily_limit_mb: "0" } });
    const body = await html(res, 422);
    expect(body).toContain('class="errors"');
    const list = await json(await call("GET", "logs/projects", { key: team.key }));
    expect(list.data).toEqual([]);
  });

  it("lets a viewer read but never create, rotate or see a token", async () => {
    const owner = await withProject("owner");
    const viewer = await memberOf(owner.teamId, "viewer");
    const list = await html(await page("GET", `/console/teams/${owner.teamId}/logs`, { cookie: viewer.cookie }));
    expect(list).toContain("checkout");
    expect(list).not.toContain('data-testid="create-project"');
    expect(list).not.toContain(owner.token);
    const project = await html(await page("GET", `/console/teams/${owner.teamId}/logs/${owner.projectId}`, { cookie: viewer.cookie }));
    expect(project).not.toContain('data-testid="rotate-token"');
    expect(project).not.toContain(owner.token);
    expect((await page("POST", `/console/teams/${owner.teamId}/logs`, { cookie: viewer.cookie, form: { name: "x" } })).status).toBe(403);
    for (const form of [{}, { confirm: "yes" }] as Record<string, string>[]) {
      expect((await page("POST", `/console/teams/${owner.teamId}/logs/${owner.projectId}/rotate-token`, { cookie: viewer.cookie, form })).status).toBe(403);
    }
    // The token still works: nothing was rotated.
    expect((await ingest(owner.token, { message: "still mine" })).status).toBe(202);
  });

  it("answers 404 for another team's project or team, and redirects without a session", async () => {
    const mine = await withProject();
    const theirs = await withProject();
    for (const path of [
      `/console/teams/${mine.teamId}/logs/${theirs.projectId}`,
      `/console/teams/${mine.teamId}/logs/${theirs.projectId}/tail`,
      `/console/teams/${mine.teamId}/logs/${crypto.randomUUID()}`,
      `/console/teams/${theirs.teamId}/logs`,
      `/console/teams/${theirs.teamId}/logs/${theirs.projectId}`,
    ]) {
      expect((await page("GET", path, { cookie: mine.cookie })).status, path).toBe(404);
    }
    const rotate = await page("POST", `/console/teams/${mine.teamId}/logs/${theirs.projectId}/rotate-token`, { cookie: mine.cookie, form: { confirm: "yes" } });
    expect(rotate.status).toBe(404);
    expect((await ingest(theirs.token, { message: "untouched" })).status).toBe(202);
    for (const path of [
      `/console/teams/${mine.teamId}/logs`,
      `/console/teams/${mine.teamId}/logs/${mine.projectId}`,
      `/console/teams/${mine.teamId}/logs/${mine.projectId}/tail`,
    ]) {
      const res = await page("GET", path);
      expect(res.status, path).toBe(303);
      expect(res.headers.get("location")).toBe("/console/sign-in");
    }
    // State changes need the console's Origin.
    expect((await page("POST", `/console/teams/${mine.teamId}/logs`, { cookie: mine.cookie, form: { name: "x" }, origin: null })).status).toBe(403);
  });
});

describe("logs: the explorer", () => {
  it("reads the session, the teams, the project and its streams, alerts and firings in one D1 round trip, and finds another team's project 404 all the same", async () => {
    const f = await withProject("viewer");
    expect((await json(await ingestBatch(f.token, ndjson([{ message: "one", level: "info", stream: "web" }])))).count).toBe(1);
    const counted = countingDb();
    const body = await html(await page("GET", `/console/teams/${f.teamId}/logs/${f.projectId}`, { cookie: f.cookie, env: { ...env, DB: counted.db } }));
    expect(rows(body)).toBe(1);
    expect(body).toContain('<option value="web"');
    expect(counted.roundTrips()).toBe(1);

    // The page's reads ran before team access was checked: another team's project id in this
    // team's URL, and this project under another team's URL, are both the 404 page.
    const other = await withProject("owner");
    expect((await page("GET", `/console/teams/${f.teamId}/logs/${other.projectId}`, { cookie: f.cookie })).status).toBe(404);
    expect((await page("GET", `/console/teams/${other.teamId}/logs/${f.projectId}`, { cookie: f.cookie })).status).toBe(404);
  });

  it("shows the curl command with the real ingest address while the project is empty", async () => {
    const f = await withProject("viewer");
    const body = await html(await page("GET", `/console/teams/${f.teamId}/logs/${f.projectId}`, { cookie: f.cookie }));
    expect(body).toContain('data-testid="logs-empty"');
    expect(body).toContain("curl -X POST http://app.test/api/v1/logs/ingest");
    expect(body).toContain('data-testid="tail-toggle"');
    expect(rows(body)).toBe(0);
  });

  it("searches by text, level and stream, pages with a cursor and draws the histogram of what matched", async () => {
    const f = await withProject("viewer");
    const lines = Array.from({ length: 60 }, (_, i) => ({ message: `request ${i} served`, level: "info", stream: "web" }));
    lines.push({ message: "payment <b>declined</b> for order 7", level: "error", stream: "billing", metadata: { order: 7, card: "visa" } } as never);
    expect((await json(await ingestBatch(f.token, ndjson(lines)))).count).toBe(61);
    const base = `/console/teams/${f.teamId}/logs/${f.projectId}`;

    const first = await html(await page("GET", base, { cookie: f.cookie }));
    expect(rows(first)).toBe(50);
    expect(first).toContain('data-testid="histogram" data-total="61"');
    expect(first).toContain("<title");
    const older = /href="([^"]+)" rel="next" data-testid="older"/.exec(first)?.[1];
    expect(older).toBeDefined();
    const second = await html(await page("GET", older!.replace(/&amp;/g, "&"), { cookie: f.cookie }));
    expect(rows(second)).toBe(11);
    expect(second).not.toContain('data-testid="older"');

    const search = await html(await page("GET", `${base}?q=DECLINED`, { cookie: f.cookie }));
    expect(rows(search)).toBe(1);
    // Escaped, never markup; the metadata is in the row's disclosure.
    expect(search).toContain("payment &lt;b&gt;declined&lt;/b&gt; for order 7");
    expect(search).toMatch(/<pre class="log-metadata">\{\n {2}&quot;order&quot;: 7,\n {2}&quot;card&quot;: &quot;visa&quot;\n\}<\/pre>/);
    expect(search).toContain('data-testid="histogram" data-total="1"');
    expect(search).toContain('value="DECLINED"');
    expect(search).toContain(`data-tail-url="${base}/tail?q=DECLINED"`);

    expect(rows(await html(await page("GET", `${base}?level=error`, { cookie: f.cookie })))).toBe(1);
    expect(rows(await html(await page("GET", `${base}?stream=web&range=1h`, { cookie: f.cookie })))).toBe(50);
    const none = await html(await page("GET", `${base}?q=nothing+like+this`, { cookie: f.cookie }));
    expect(rows(none)).toBe(0);
    expect(none).toContain("No entries match");
    expect(none).not.toContain('data-testid="logs-empty"');
    // Bad input is the explorer's 422 page, never a 500.
    expect((await page("GET", `${base}?level=loud`, { cookie: f.cookie })).status).toBe(422);
    expect((await page("GET", `${base}?cursor=nope`, { cookie: f.cookie })).status).toBe(422);
    expect((await page("GET", `${base}?until=yesterday`, { cookie: f.cookie })).status).toBe(422);
  });

  it("shows entries of the range only: older entries need a wider range", async () => {
    const f = await withProject();
    const now = Date.parse("2026-06-01T12:00:00Z");
    setClock(now);
    await ingest(f.token, { message: "two hours ago", timestamp: new Date(now - 2 * 3_600_000).toISOString() });
    const base = `/console/teams/${f.teamId}/logs/${f.projectId}`;
    expect(rows(await html(await page("GET", `${base}?range=1h`, { cookie: f.cookie })))).toBe(0);
    expect(rows(await html(await page("GET", `${base}?range=6h`, { cookie: f.cookie })))).toBe(1);
  });

  it("rotates the token after a confirmation and shows the new one once", async () => {
    const f = await withProject("developer");
    const path = `/console/teams/${f.teamId}/logs/${f.projectId}/rotate-token`;
    const confirm = await html(await page("POST", path, { cookie: f.cookie }));
    expect(confirm).toContain('data-testid="confirm-rotate"');
    expect((await ingest(f.token, { message: "before" })).status).toBe(202);
    const rotated = await html(await followRedirect(await page("POST", path, { cookie: f.cookie, form: { confirm: "yes" } }), f.cookie));
    const token = /data-testid="new-token">([^<]+)</.exec(rotated)?.[1];
    expect(token).toMatch(/^lgt_/);
    expect(token).not.toBe(f.token);
    expect((await ingest(f.token, { message: "old" })).status).toBe(401);
    expect((await ingest(token!, { message: "new" })).status).toBe(202);
    const again = await html(await page("GET", `/console/teams/${f.teamId}/logs/${f.projectId}`, { cookie: f.cookie }));
    expect(again).not.toContain(token!);
  });

  it("lists alerts with their firings and resolves", async () => {
    const f = await withProject("viewer");
    const owner = await memberOf(f.teamId, "owner");
    const res = await call("POST", `logs/projects/${f.projectId}/alerts`, {
      key: f.key,
      body: { name: "Checkout errors", level: "error", threshold: 2, window_minutes: 5, notify_email: owner.email },
    });
    expect(res.status).toBe(201);
    const t0 = Date.parse("2026-06-01T12:00:00Z");
    setClock(t0);
    await ingestBatch(
      f.token,
      ndjson([
        { message: "e1", level: "error" },
        { message: "e2", level: "error" },
      ]),
    );
    expect((await checkAlerts(env, t0 + 1_000, [f.projectId])).fired).toHaveLength(1);
    let body = await html(await page("GET", `/console/teams/${f.teamId}/logs/${f.projectId}`, { cookie: f.cookie }));
    expect(body).toContain('data-testid="alert-row"');
    expect(body).toContain("Checkout errors");
    expect(body).toContain("still firing");
    expect(body.match(/data-testid="firing-row"/g)).toHaveLength(1);
    // Ten minutes on, the window is calm: the firing resolves.
    setClock(t0 + 10 * 60_000);
    expect((await checkAlerts(env, t0 + 10 * 60_000, [f.projectId])).resolved).toHaveLength(1);
    body = await html(await page("GET", `/console/teams/${f.teamId}/logs/${f.projectId}`, { cookie: f.cookie }));
    expect(body).not.toContain("still firing");
    expect(body).toContain("2026-06-01 12:10 UTC");
  });
});

/** Reads SSE blocks off a response body. */
class Events {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private buffer = "";
  constructor(res: Response) {
    this.reader = res.body!.getReader();
  }
  /** The next block that is not a comment, or null at the end of the stream. */
  async next(): Promise<string | null> {
    for (;;) {
      const at = this.buffer.indexOf("\n\n");
      if (at !== -1) {
        const block = this.buffer.slice(0, at);
        this.buffer = this.buffer.slice(at + 2);
        if (block.split("\n").every((line) => line.startsWith(":") || line.startsWith("retry:"))) continue;
        return block;
      }
      const { value, done } = await this.reader.read();
      if (done) return null;
      this.buffer += this.decoder.decode(value, { stream: true });
    }
  }
}

describe("logs: the live tail", () => {
  async function openTail(f: { teamId: string; projectId: string; cookie: string }, query = "") {
    const res = await page("GET", `/console/teams/${f.teamId}/logs/${f.projectId}/tail${query}`, { cookie: f.cookie });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    return new Events(res);
  }

  it("streams matching entries as they arrive, from the same store as the API's tail", async () => {
    const f = await withProject("viewer");
    const tail = await openTail(f, "?level=error");
    await ingestBatch(
      f.token,
      ndjson([
        { message: "quiet", level: "info" },
        { message: "boom", level: "error", stream: "jobs" },
      ]),
    );
    const block = await tail.next();
    const entry = JSON.parse(block!.replace(/^data: /, ""));
    expect(entry).toMatchObject({ message: "boom", level: "error", stream: "jobs", project_id: f.projectId });
  });

  it("ends within seconds of sign-out", async () => {
    const f = await withProject("developer");
    const tail = await openTail(f);
    expect((await page("POST", "/console/sign-out", { cookie: f.cookie })).status).toBe(303);
    // Nothing else happens on the stream: the next thing it says is why it ends, then it ends.
    expect(await tail.next()).toBe('event: end\ndata: {"reason":"signed_out"}');
    expect(await tail.next()).toBeNull();
  });

  it("ends within seconds of the end of the membership, and refuses to open again", async () => {
    const owner = await withProject("owner");
    const member = await memberOf(owner.teamId, "developer");
    const f = { ...owner, cookie: member.cookie };
    const tail = await openTail(f);
    await removeMember(getDb(env.DB), owner.teamId, { email: owner.email, role: "owner", userId: "x" }, member.userId);
    expect(await tail.next()).toBe('event: end\ndata: {"reason":"membership_ended"}');
    expect(await tail.next()).toBeNull();
    expect((await page("GET", `/console/teams/${owner.teamId}/logs/${owner.projectId}/tail`, { cookie: member.cookie })).status).toBe(404);
  });

  it("refuses bad filters with 422", async () => {
    const f = await withProject();
    expect((await page("GET", `/console/teams/${f.teamId}/logs/${f.projectId}/tail?level=loud`, { cookie: f.cookie })).status).toBe(422);
  });
});

describe("logs: alerts in the console", () => {
  const alertsOf = async (f: ConsoleTeam & { projectId: string }) =>
    (await json(await call("GET", `logs/projects/${f.projectId}/alerts`, { key: f.key }))).data as Array<Record<string, any>>;

  it("creates, edits, tests, switches off and deletes an alert with the API's services; each POST redirects and a reload repeats nothing", async () => {
    const f = await withProject("developer");
    const base = `/console/teams/${f.teamId}/logs/${f.projectId}`;
    const empty = await html(await page("GET", base, { cookie: f.cookie }));
    expect(empty).toContain('data-testid="create-alert"');
    for (const name of ['name="name"', 'name="level"', 'name="threshold"', 'name="window_minutes"']) expect(empty).toContain(name);

    const created = await page("POST", `${base}/alerts`, {
      cookie: f.cookie,
      form: { name: "Checkout errors", level: "error", threshold: "2", window_minutes: "5", notify_email: f.email, notify_webhook: "" },
    });
    expect(created.status).toBe(303);
    expect(created.headers.get("location")).toBe(`${base}?notice=alert-created`);
    for (let i = 0; i < 2; i++) {
      const body = await html(await page("GET", created.headers.get("location")!, { cookie: f.cookie }));
      expect(body.match(/data-testid="alert-row"/g)).toHaveLength(1);
    }
    let [alert] = await alertsOf(f);
    expect(alert).toMatchObject({
      name: "Checkout errors",
      level: "error",
      threshold: 2,
      window_minutes: 5,
      channels: ["email"],
      notify_email: f.email,
      enabled: true,
    });

    // Test: three errors now, over the threshold of 2; the verdict once, nothing sent.
    await ingestBatch(f.token, ndjson([1, 2, 3].map((n) => ({ message: `e${n}`, level: "error" }))));
    const tested = await page("POST", `${base}/alerts/${alert.id}/test`, { cookie: f.cookie });
    const verdict = await html(await followRedirect(tested, f.cookie));
    expect(verdict).toMatch(/data-testid="alert-test-result">3 error entries in the last 5 minutes, at or over the threshold of 2: it fires/);
    expect(await html(await page("GET", tested.headers.get("location")!, { cookie: f.cookie }))).not.toContain("alert-test-result");
    expect(await env.DB.prepare("SELECT count(*) AS n FROM log_alert_firings WHERE alert_id = ?").bind(alert.id).first("n")).toBe(0);

    // Edit: a higher threshold, a webhook instead of the mail, switched off.
    const saved = await page("POST", `${base}/alerts/${alert.id}`, {
      cookie: f.cookie,
      form: { name: "Checkout errors", level: "fatal", threshold: "50", window_minutes: "15", notify_email: "", notify_webhook: "http://127.0.0.1:9/hook" },
    });
    expect(saved.status).toBe(303);
    [alert] = await alertsOf(f);
    expect(alert).toMatchObject({ level: "fatal", threshold: 50, window_minutes: 15, channels: ["webhook"], notify_email: null, enabled: false });

    // The API's rules: no address at all, a zero threshold, a stranger's address; nothing changes.
    const refused: Record<string, string>[] = [
      { name: "x", level: "error", threshold: "1", window_minutes: "5", notify_email: "", notify_webhook: "" },
      { name: "x", level: "error", threshold: "0", window_minutes: "5", notify_email: f.email },
      { name: "x", level: "error", threshold: "1", window_minutes: "5", notify_email: "stranger@example.com" },
    ];
    for (const form of refused) {
      expect((await page("POST", `${base}/alerts`, { cookie: f.cookie, form })).status, JSON.stringify(form)).toBe(422);
    }
    expect(await alertsOf(f)).toHaveLength(1);

    expect((await page("POST", `${base}/alerts/${alert.id}/delete`, { cookie: f.cookie })).status).toBe(303);
    expect(await alertsOf(f)).toEqual([]);
  });

  it("refuses a viewer's alert writes, and 404s an alert of another project or team", async () => {
    const f = await withProject("owner");
    const res = await call("POST", `logs/projects/${f.projectId}/alerts`, {
      key: f.key,
      body: { name: "A", level: "error", threshold: 1, window_minutes: 5, notify_email: f.email },
    });
    const alert = (await json(res)).data;
    const base = `/console/teams/${f.teamId}/logs/${f.projectId}`;
    const viewer = await memberOf(f.teamId, "viewer");
    const seen = await html(await page("GET", base, { cookie: viewer.cookie }));
    expect(seen).toContain('data-testid="alert-row"');
    expect(seen).not.toContain('data-testid="create-alert"');
    for (const path of ["/alerts", `/alerts/${alert.id}`, `/alerts/${alert.id}/delete`, `/alerts/${alert.id}/test`]) {
      expect(
        (await page("POST", `${base}${path}`, { cookie: viewer.cookie, form: { name: "B", level: "error", threshold: "1", window_minutes: "5" } })).status,
        path,
      ).toBe(403);
    }
    // The same team's other project does not reach it; another team's member does not either.
    const other = await call("POST", "logs/projects", { key: f.key, body: { name: "other" } });
    const otherBase = `/console/teams/${f.teamId}/logs/${(await json(other)).data.id}`;
    expect((await page("POST", `${otherBase}/alerts/${alert.id}/delete`, { cookie: f.cookie })).status).toBe(404);
    const stranger = await consoleTeam("owner");
    expect((await page("POST", `/console/teams/${stranger.teamId}/logs/${f.projectId}/alerts/${alert.id}/delete`, { cookie: stranger.cookie })).status).toBe(
      404,
    );
    expect(await alertsOfApi(f.key, f.projectId)).toHaveLength(1);
  });
});

async function alertsOfApi(key: string, projectId: string) {
  return (await json(await call("GET", `logs/projects/${projectId}/alerts`, { key }))).data as unknown[];
}
