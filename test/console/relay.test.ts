// The console's Webhook relay pages: sources (create, the empty state), a source (its ingest
// address, destinations with health and the signing secret shown once, events newest first with
// each destination's status), an event (attempts, payload, replay to all or chosen destinations),
// and for every page the tenancy, the roles (a viewer never sees a secret or a write button) and
// the signed-out redirect.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { app } from "../../src/app";
import { eventDestinationStatuses } from "../../src/products/relay/relay-events.service";
import { ORIGIN } from "../helpers/api";
import { consoleTeam, followRedirect, memberOf, page } from "../helpers/console";
import { createDestination, createSource, ingestSettled, storeSql } from "../products/relay/relay.helpers";

afterEach(() => vi.restoreAllMocks());

async function html(res: Response, status = 200): Promise<string> {
  expect(res.status).toBe(status);
  return res.text();
}

const count = (body: string, testid: string) => body.match(new RegExp(`data-testid="${testid}"`, "g"))?.length ?? 0;

/** A console form POST whose background work (the replay's first attempt) is awaited. */
async function postSettled(path: string, cookie: string, form: Record<string, string | string[]>): Promise<Response> {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`${ORIGIN}${path}`, {
      method: "POST",
      headers: { cookie, origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
      body: body.toString(),
    }),
    env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

/** A team with a source, two destinations and one delivered event (the first destination answered 200, the second 503). */
async function withEvent(role: "owner" | "viewer" | "developer" = "owner") {
  const team = await consoleTeam(role);
  const source = await createSource(team.key, { name: "Billing" });
  const ok = await createDestination(team.key, source.id, { url: "http://127.0.0.1:9/ok" });
  const down = await createDestination(team.key, source.id, { url: "http://127.0.0.1:9/down" });
  const answers = receiverByUrl({ [ok.url]: 200, [down.url]: 503 });
  const res = await ingestSettled(source.slug, JSON.stringify({ type: "invoice.paid", id: "evt_1", amount: 42 }));
  expect(res.status).toBeLessThan(300);
  const eventId = (await storeSql<{ id: string }>(source.id, "SELECT id FROM events"))[0]!.id;
  return { team, source, ok, down, eventId, answers };
}

/** Intercepts outbound fetch to the given URLs with a fixed status each; counts what each received. */
function receiverByUrl(statuses: Record<string, number>) {
  const received: Record<string, number> = {};
  const original = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (!(request.url in statuses)) return original(input, init);
    received[request.url] = (received[request.url] ?? 0) + 1;
    return new Response(`answer of ${new URL(request.url).pathname}`, { status: statuses[request.url] });
  });
  return received;
}

describe("relay: sources", () => {
  it("teaches the first step, creates a source and shows its ingest address", async () => {
    const team = await consoleTeam("developer");
    const empty = await html(await page("GET", `/console/teams/${team.teamId}/relay`, { cookie: team.cookie }));
    expect(empty).toContain("No sources yet");
    expect(empty).toContain('data-testid="create-source"');
    const res = await page("POST", `/console/teams/${team.teamId}/relay`, {
      cookie: team.cookie,
      form: { name: "Stripe", provider: "stripe", signing_secret: "whsec_test" },
    });
    expect(res.status).toBe(303);
    const location = res.headers.get("location")!;
    expect(location).toMatch(new RegExp(`^/console/teams/${team.teamId}/relay/sources/[0-9a-f-]{36}\\?notice=created$`));
    const body = await html(await page("GET", location, { cookie: team.cookie }));
    expect(body).toMatch(/data-testid="ingest-url">http:\/\/app\.test\/in\/[A-Za-z0-9_-]{24}</);
    expect(body).toContain("Signatures are verified.");
    expect(body).not.toContain("whsec_test");
    expect(body).toContain('data-testid="events-empty"');
    expect(body).toContain("Source created.");
    const list = await html(await page("GET", `/console/teams/${team.teamId}/relay`, { cookie: team.cookie }));
    expect(count(list, "source-row")).toBe(1);
  });

  it("answers the form again with what is wrong, and creates nothing", async () => {
    const team = await consoleTeam("owner");
    const body = await html(await page("POST", `/console/teams/${team.teamId}/relay`, { cookie: team.cookie, form: { name: "x", provider: "paypal" } }), 422);
    expect(body).toContain('class="errors"');
    expect(count(await html(await page("GET", `/console/teams/${team.teamId}/relay`, { cookie: team.cookie })), "source-row")).toBe(0);
  });
});

describe("relay: a source and its events", () => {
  it("lists destinations with their health and events newest first with each destination's status", async () => {
    const f = await withEvent("viewer");
    const body = await html(await page("GET", `/console/teams/${f.team.teamId}/relay/sources/${f.source.id}`, { cookie: f.team.cookie }));
    expect(count(body, "destination-row")).toBe(2);
    expect(body).toContain("healthy");
    expect(body).toContain("failing since");
    expect(count(body, "event-row")).toBe(1);
    // The 503 is being retried: the event is pending, its destinations delivered and pending.
    expect(body).toContain('data-status="pending"');
    expect(body).toContain('127.0.0.1:9/ok</span> <span class="badge ok">delivered</span>');
    expect(body).toContain('127.0.0.1:9/down</span> <span class="badge warn">pending</span>');
    expect(body).toContain("invoice.paid");
    // A viewer: no forms that change anything, no secrets.
    expect(body).not.toContain('data-testid="create-destination"');
    expect(body).not.toContain(f.ok.secret);
    const statuses = await eventDestinationStatuses(env, f.team.teamId, f.source.id, [f.eventId]);
    expect(Object.fromEntries(statuses.get(f.eventId)!)).toEqual({ [f.ok.id]: "delivered", [f.down.id]: "pending" });
    // Another team's source answers the relay's 404, its store never asked.
    const other = await consoleTeam("owner");
    await expect(eventDestinationStatuses(env, other.teamId, f.source.id, [f.eventId])).rejects.toMatchObject({ status: 404 });
  });

  it("adds a destination and shows its signing secret once; a refused URL is the form again", async () => {
    const team = await consoleTeam("developer");
    const source = await createSource(team.key);
    const path = `/console/teams/${team.teamId}/relay/sources/${source.id}`;
    const posted = await page("POST", `${path}/destinations`, {
      cookie: team.cookie,
      form: { url: "http://127.0.0.1:9/hook", event_filter: "invoice.*, customer.created" },
    });
    // Post/redirect/get: the source's page, the secret there once; a reload shows it no more.
    expect(posted.headers.get("location")).toBe(`${path}?notice=destination-added`);
    const added = await html(await followRedirect(posted, team.cookie));
    const secret = /data-testid="new-secret">([^<]+)</.exec(added)?.[1];
    expect(secret).toMatch(/^whsec_/);
    const again = await html(await page("GET", `${path}?notice=destination-added`, { cookie: team.cookie }));
    expect(again).not.toContain(secret!);
    expect(again).toContain("invoice.*");
    expect(again).toContain("customer.created");
    const refused = await html(await page("POST", `${path}/destinations`, { cookie: team.cookie, form: { url: "ftp://example.com/x" } }), 422);
    expect(refused).toContain('class="errors"');
    expect(count(await html(await page("GET", path, { cookie: team.cookie })), "destination-row")).toBe(1);
    // The form's own address, opened (the dead end), leads to the source's page.
    const opened = await page("GET", `${path}/destinations`, { cookie: team.cookie });
    expect(opened.status).toBe(303);
    expect(opened.headers.get("location")).toBe(path);
  });

  it("shows an event's attempts and payload, and replays to a chosen destination", async () => {
    const f = await withEvent("developer");
    const path = `/console/teams/${f.team.teamId}/relay/sources/${f.source.id}/events/${f.eventId}`;
    const body = await html(await page("GET", path, { cookie: f.team.cookie }));
    expect(count(body, "attempt-row")).toBe(2);
    expect(body).toContain('data-status-code="200"');
    expect(body).toContain('data-status-code="503"');
    expect(body).toContain("answer of /down");
    expect(body).toMatch(/<pre class="code-sample payload" data-testid="payload">\{\n {2}&quot;type&quot;: &quot;invoice.paid&quot;/);
    expect(body).toContain('data-testid="replay"');

    // The failed destination gets it again; the healthy one does not.
    const before = { ...f.answers };
    const res = await postSettled(`${path}/replay`, f.team.cookie, { destination_ids: [f.down.id] });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${path}?notice=replayed`);
    expect(f.answers[f.down.url]).toBe(before[f.down.url] + 1);
    expect(f.answers[f.ok.url]).toBe(before[f.ok.url]);
    const after = await html(await page("GET", `${path}?notice=replayed`, { cookie: f.team.cookie }));
    expect(count(after, "attempt-row")).toBe(3);
    expect(after).toContain("Replay queued.");

    // To all: every enabled destination that admits it.
    expect((await postSettled(`${path}/replay`, f.team.cookie, {})).status).toBe(303);
    expect(f.answers[f.ok.url]).toBe(before[f.ok.url] + 1);
    expect(count(await html(await page("GET", path, { cookie: f.team.cookie })), "attempt-row")).toBe(5);
  });

  it("refuses a replay to another source's destination with the form again, and queues nothing", async () => {
    const f = await withEvent("owner");
    const otherSource = await createSource(f.team.key);
    const foreign = await createDestination(f.team.key, otherSource.id);
    const path = `/console/teams/${f.team.teamId}/relay/sources/${f.source.id}/events/${f.eventId}`;
    const body = await html(await postSettled(`${path}/replay`, f.team.cookie, { destination_ids: [foreign.id] }), 422);
    expect(body).toContain("is not a destination of this source");
    expect(count(body, "attempt-row")).toBe(2);
  });

  it("lets a viewer read an event but never replay it", async () => {
    const f = await withEvent("owner");
    const viewer = await memberOf(f.team.teamId, "viewer");
    const path = `/console/teams/${f.team.teamId}/relay/sources/${f.source.id}/events/${f.eventId}`;
    const body = await html(await page("GET", path, { cookie: viewer.cookie }));
    expect(count(body, "attempt-row")).toBe(2);
    expect(body).not.toContain('data-testid="replay"');
    expect((await postSettled(`${path}/replay`, viewer.cookie, {})).status).toBe(403);
    expect((await page("POST", `/console/teams/${f.team.teamId}/relay`, { cookie: viewer.cookie, form: { name: "x", provider: "generic" } })).status).toBe(403);
    expect(
      (
        await page("POST", `/console/teams/${f.team.teamId}/relay/sources/${f.source.id}/destinations`, {
          cookie: viewer.cookie,
          form: { url: "http://127.0.0.1:9/x" },
        })
      ).status,
    ).toBe(403);
  });

  it("answers 404 for another team's source, event or team, and redirects without a session", async () => {
    const mine = await withEvent("owner");
    const theirs = await withEvent("owner");
    const t = mine.team.teamId;
    for (const path of [
      `/console/teams/${t}/relay/sources/${theirs.source.id}`,
      `/console/teams/${t}/relay/sources/${theirs.source.id}/events/${theirs.eventId}`,
      // My source with their event: still not found.
      `/console/teams/${t}/relay/sources/${mine.source.id}/events/${theirs.eventId}`,
      `/console/teams/${t}/relay/sources/${crypto.randomUUID()}`,
      `/console/teams/${theirs.team.teamId}/relay`,
    ]) {
      expect((await page("GET", path, { cookie: mine.team.cookie })).status, path).toBe(404);
    }
    const replay = await postSettled(`/console/teams/${t}/relay/sources/${theirs.source.id}/events/${theirs.eventId}/replay`, mine.team.cookie, {});
    expect(replay.status).toBe(404);
    const add = await page("POST", `/console/teams/${t}/relay/sources/${theirs.source.id}/destinations`, {
      cookie: mine.team.cookie,
      form: { url: "http://127.0.0.1:9/x" },
    });
    expect(add.status).toBe(404);
    for (const path of [
      `/console/teams/${t}/relay`,
      `/console/teams/${t}/relay/sources/${mine.source.id}`,
      `/console/teams/${t}/relay/sources/${mine.source.id}/events/${mine.eventId}`,
    ]) {
      const res = await page("GET", path);
      expect(res.status, path).toBe(303);
      expect(res.headers.get("location")).toBe("/console/sign-in");
    }
  });
});

describe("what viewers see of relay (regression, issue 37 finding 6)", () => {
  it("secrets in stored event headers are masked for viewers (developers see them); an unsigned source's ingest address is hidden from viewers", async () => {
    const team = await consoleTeam("owner");
    const source = await createSource(team.key);
    const res = await ingestSettled(source.slug, '{"type":"x","id":"e1"}', {
      "x-api-key": "sk_live_SENDERSECRET1",
      authorization: "Bearer SENDERSECRET2",
      cookie: "session=SENDERSECRET3",
      "x-hub-signature-256": "sha256=SENDERSECRET4",
      "x-webhook-token": "SENDERSECRET5",
      "x-request-id": "visible-id",
    });
    expect(res.status).toBe(202);
    const eventId = ((await res.json()) as { data: { id: string } }).data.id;
    const viewer = await memberOf(team.teamId, "viewer");
    const path = `/console/teams/${team.teamId}/relay/sources/${source.id}/events/${eventId}`;
    const seen = await html(await page("GET", path, { cookie: viewer.cookie }));
    expect(seen).not.toContain("SENDERSECRET");
    expect(seen).toContain("visible-id");
    const developer = await memberOf(team.teamId, "developer");
    expect(await html(await page("GET", path, { cookie: developer.cookie }))).toContain("SENDERSECRET1");

    const sourcePage = `/console/teams/${team.teamId}/relay/sources/${source.id}`;
    expect(await html(await page("GET", sourcePage, { cookie: viewer.cookie }))).not.toContain(source.slug);
    expect(await html(await page("GET", sourcePage, { cookie: developer.cookie }))).toContain(source.slug);
  });
});
