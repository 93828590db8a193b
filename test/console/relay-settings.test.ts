// The relay's settings forms in the console: a source's settings (name, paused, retention, signing
// secret replaced or removed) and its deletion after typing its name; a destination's edit (URL,
// filter, on/off) and deletion, confirmed. Each: the happy path through the API's service and a
// 303 to a page that reloads without repeating anything; a refused form at 422 naming the field
// and changing nothing; a viewer refused (403); another team's source or destination 404.
import { describe, expect, it } from "vitest";
import { call, json } from "../helpers/api";
import { consoleTeam, followRedirect, memberOf, page } from "../helpers/console";
import { createDestination, createSource } from "../products/relay/relay.helpers";

const path = (teamId: string, rest: string) => `/console/teams/${teamId}/relay/${rest}`;

async function sourceOf(key: string, id: string) {
  const res = await call("GET", `webhooks/sources/${id}`, { key });
  return { status: res.status, data: res.status === 200 ? (await json(res)).data : null };
}

async function destinationsOf(key: string, sourceId: string) {
  return (await json(await call("GET", `webhooks/sources/${sourceId}/destinations`, { key }))).data as Array<{
    id: string;
    url: string;
    event_filter: string[];
    enabled: boolean;
  }>;
}

describe("relay console: a source's settings", () => {
  it("saves name, pause, retention and a new secret; a reload of the page it lands on repeats nothing", async () => {
    const team = await consoleTeam("developer");
    const source = await createSource(team.key, { name: "Billing" });
    const form = await page("GET", path(team.teamId, `sources/${source.id}/settings`), { cookie: team.cookie });
    expect(form.status).toBe(200);
    const body = await form.text();
    expect(body).toContain('data-testid="source-settings-form"');
    expect(body).toContain('value="Billing"');

    const res = await page("POST", path(team.teamId, `sources/${source.id}/settings`), {
      cookie: team.cookie,
      form: { name: "Billing (live)", retention_days: "30", signing_secret: "whsec_new" },
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${path(team.teamId, `sources/${source.id}`)}?notice=saved`);
    const landed = await followRedirect(res, team.cookie);
    expect(landed.status).toBe(200);
    const html = await landed.text();
    expect(html).toContain("Source settings saved.");
    expect(html).toContain("This source is paused");
    expect(html).not.toContain("whsec_new");
    const after = (await sourceOf(team.key, source.id)).data;
    expect(after).toMatchObject({ name: "Billing (live)", enabled: false, retention_days: 30, signature_verification: true });
    // Reloading the page the redirect landed on is a GET: nothing changes again.
    expect((await page("GET", res.headers.get("location")!, { cookie: team.cookie })).status).toBe(200);
    expect((await sourceOf(team.key, source.id)).data.updated_at).toBe(after.updated_at);

    // Removing the secret stops verification; receiving again.
    await page("POST", path(team.teamId, `sources/${source.id}/settings`), {
      cookie: team.cookie,
      form: { name: "Billing (live)", retention_days: "30", enabled: "on", remove_secret: "on" },
    });
    expect((await sourceOf(team.key, source.id)).data).toMatchObject({ enabled: true, signature_verification: false });
  });

  it("answers a refused form at 422 naming the field, and changes nothing", async () => {
    const team = await consoleTeam("owner");
    const source = await createSource(team.key, { name: "Billing" });
    const before = (await sourceOf(team.key, source.id)).data;
    const res = await page("POST", path(team.teamId, `sources/${source.id}/settings`), {
      cookie: team.cookie,
      form: { name: "Renamed", retention_days: "365", enabled: "on" },
    });
    expect(res.status).toBe(422);
    const html = await res.text();
    expect(html).toContain('<ul class="errors"><li>retention days: ');
    // The form keeps what was typed.
    expect(html).toContain('value="Renamed"');
    expect((await sourceOf(team.key, source.id)).data).toEqual(before);
  });

  it("deletes a source only after its name is typed; a second post finds nothing (404)", async () => {
    const team = await consoleTeam("developer");
    const source = await createSource(team.key, { name: "Billing" });
    const confirm = await page("GET", path(team.teamId, `sources/${source.id}/delete`), { cookie: team.cookie });
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toContain('data-testid="confirm-delete-source"');

    const wrong = await page("POST", path(team.teamId, `sources/${source.id}/delete`), {
      cookie: team.cookie,
      form: { confirm: "yes", confirm_name: "Billin" },
    });
    expect(wrong.status).toBe(422);
    expect(await wrong.text()).toContain("type the name of the source exactly");
    expect((await sourceOf(team.key, source.id)).status).toBe(200);

    const res = await page("POST", path(team.teamId, `sources/${source.id}/delete`), {
      cookie: team.cookie,
      form: { confirm: "yes", confirm_name: "Billing" },
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/console/teams/${team.teamId}/relay?notice=deleted`);
    expect(await (await followRedirect(res, team.cookie)).text()).toContain("The source was deleted");
    expect((await sourceOf(team.key, source.id)).status).toBe(404);
    const again = await page("POST", path(team.teamId, `sources/${source.id}/delete`), {
      cookie: team.cookie,
      form: { confirm: "yes", confirm_name: "Billing" },
    });
    expect(again.status).toBe(404);
  });

  it("refuses a viewer (403) and answers another team's source with 404, changing nothing", async () => {
    const team = await consoleTeam("owner");
    const source = await createSource(team.key, { name: "Billing" });
    const viewer = await memberOf(team.teamId, "viewer");
    const other = await consoleTeam("owner");
    const before = (await sourceOf(team.key, source.id)).data;
    for (const [rest, form] of [
      [`sources/${source.id}/settings`, { name: "x", retention_days: "3" }],
      [`sources/${source.id}/delete`, { confirm: "yes", confirm_name: "Billing" }],
    ] as const) {
      expect((await page("POST", path(team.teamId, rest), { cookie: viewer.cookie, form })).status, rest).toBe(403);
      expect((await page("GET", path(team.teamId, rest), { cookie: viewer.cookie })).status, rest).toBe(403);
      expect((await page("POST", path(other.teamId, rest), { cookie: other.cookie, form })).status, rest).toBe(404);
    }
    expect((await sourceOf(team.key, source.id)).data).toEqual(before);
    // A viewer's source page offers no settings.
    expect(await (await page("GET", path(team.teamId, `sources/${source.id}`), { cookie: viewer.cookie })).text()).not.toContain(
      'data-testid="source-settings"',
    );
  });
});

describe("relay console: a destination", () => {
  it("edits URL, filter and on/off through the service, and a reload repeats nothing", async () => {
    const team = await consoleTeam("developer");
    const source = await createSource(team.key, { name: "Billing" });
    const destination = await createDestination(team.key, source.id, { url: "https://hooks.example.com/a" });
    const sourcePage = await (await page("GET", path(team.teamId, `sources/${source.id}`), { cookie: team.cookie })).text();
    expect(sourcePage).toContain(`href="${path(team.teamId, `sources/${source.id}/destinations/${destination.id}`)}"`);
    const form = await page("GET", path(team.teamId, `sources/${source.id}/destinations/${destination.id}`), { cookie: team.cookie });
    expect(form.status).toBe(200);
    expect(await form.text()).toContain('value="https://hooks.example.com/a"');

    const res = await page("POST", path(team.teamId, `sources/${source.id}/destinations/${destination.id}`), {
      cookie: team.cookie,
      form: { url: "https://hooks.example.com/b", event_filter: "invoice.paid, customer.*" },
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${path(team.teamId, `sources/${source.id}`)}?notice=destination-saved`);
    expect(await (await followRedirect(res, team.cookie)).text()).toContain("Destination saved.");
    const [after] = await destinationsOf(team.key, source.id);
    expect(after).toMatchObject({ url: "https://hooks.example.com/b", event_filter: ["invoice.paid", "customer.*"], enabled: false });
  });

  it("refuses an address the SSRF guard refuses, or a bad filter, at 422 naming the field, and changes nothing", async () => {
    const team = await consoleTeam("owner");
    const source = await createSource(team.key, { name: "Billing" });
    const destination = await createDestination(team.key, source.id, { url: "https://hooks.example.com/a" });
    const before = await destinationsOf(team.key, source.id);
    const private_ = await page("POST", path(team.teamId, `sources/${source.id}/destinations/${destination.id}`), {
      cookie: team.cookie,
      form: { url: "http://10.0.0.1/hook", enabled: "on" },
    });
    expect(private_.status).toBe(422);
    const html = await private_.text();
    expect(html).toContain('<ul class="errors"><li>url: ');
    expect(html).toContain('value="http://10.0.0.1/hook"');
    const filter = await page("POST", path(team.teamId, `sources/${source.id}/destinations/${destination.id}`), {
      cookie: team.cookie,
      form: { url: "https://hooks.example.com/a", event_filter: "in*voice", enabled: "on" },
    });
    expect(filter.status).toBe(422);
    expect(await filter.text()).toContain("event filter");
    expect(await destinationsOf(team.key, source.id)).toEqual(before);
  });

  it("deletes a destination after the confirmation step; a second post is 404", async () => {
    const team = await consoleTeam("developer");
    const source = await createSource(team.key, { name: "Billing" });
    const destination = await createDestination(team.key, source.id, { url: "https://hooks.example.com/a" });
    const target = path(team.teamId, `sources/${source.id}/destinations/${destination.id}/delete`);
    const confirm = await page("POST", target, { cookie: team.cookie, form: {} });
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toContain('data-testid="confirm-delete-destination"');
    expect(await destinationsOf(team.key, source.id)).toHaveLength(1);
    const res = await page("POST", target, { cookie: team.cookie, form: { confirm: "yes" } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${path(team.teamId, `sources/${source.id}`)}?notice=destination-deleted`);
    expect(await destinationsOf(team.key, source.id)).toHaveLength(0);
    expect((await page("POST", target, { cookie: team.cookie, form: { confirm: "yes" } })).status).toBe(404);
  });

  it("refuses a viewer (403); another team's source, or a destination of another source, is 404", async () => {
    const team = await consoleTeam("owner");
    const source = await createSource(team.key, { name: "Billing" });
    const second = await createSource(team.key, { name: "Shop" });
    const destination = await createDestination(team.key, source.id, { url: "https://hooks.example.com/a" });
    const viewer = await memberOf(team.teamId, "viewer");
    const other = await consoleTeam("owner");
    const edit = { url: "https://hooks.example.com/x", enabled: "on" };
    expect((await page("POST", path(team.teamId, `sources/${source.id}/destinations/${destination.id}`), { cookie: viewer.cookie, form: edit })).status).toBe(
      403,
    );
    expect(
      (await page("POST", path(team.teamId, `sources/${source.id}/destinations/${destination.id}/delete`), { cookie: viewer.cookie, form: { confirm: "yes" } }))
        .status,
    ).toBe(403);
    expect((await page("POST", path(other.teamId, `sources/${source.id}/destinations/${destination.id}`), { cookie: other.cookie, form: edit })).status).toBe(
      404,
    );
    expect((await page("POST", path(team.teamId, `sources/${second.id}/destinations/${destination.id}`), { cookie: team.cookie, form: edit })).status).toBe(
      404,
    );
    expect(
      (await page("POST", path(team.teamId, `sources/${second.id}/destinations/${destination.id}/delete`), { cookie: team.cookie, form: { confirm: "yes" } }))
        .status,
    ).toBe(404);
    expect((await destinationsOf(team.key, source.id))[0]).toMatchObject({ url: "https://hooks.example.com/a", enabled: true });
  });
});
