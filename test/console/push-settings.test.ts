// The push app's forms in the console: its settings (name and the notification defaults, other
// keys of its settings kept), its deletion after typing its name, removing a subscriber
// (confirmed), and one notification's page. Each: the API's service and a 303 to a page that
// reloads without repeating anything; a refused form at 422 naming the field and changing
// nothing; a viewer refused (403); another team's app 404.
import { describe, expect, it } from "vitest";
import { call, json } from "../helpers/api";
import { consoleTeam, followRedirect, memberOf, page } from "../helpers/console";
import { browserSubscription, createApp, storedNotification, subscribe } from "../products/push/push-helpers";

const path = (teamId: string, rest: string) => `/console/teams/${teamId}/push/${rest}`;
const appOf = async (key: string, id: string) => {
  const res = await call("GET", `push/apps/${id}`, { key });
  return { status: res.status, data: res.status === 200 ? (await json(res)).data : null };
};

describe("push console: an app's settings", () => {
  it("saves the name and defaults, keeps the settings it does not edit, and a reload repeats nothing", async () => {
    const team = await consoleTeam("developer");
    const app = await createApp(team.key, { name: "Shop", settings: { own_key: "kept", default_ttl: 60 } });
    const form = await page("GET", path(team.teamId, `apps/${app.id}/settings`), { cookie: team.cookie });
    expect(form.status).toBe(200);
    expect(await form.text()).toContain('name="default_ttl" min="1" max="2419200" value="60"');
    const res = await page("POST", path(team.teamId, `apps/${app.id}/settings`), {
      cookie: team.cookie,
      form: {
        name: "Shop web",
        default_ttl: "3600",
        default_urgency: "high",
        default_url: "/inbox",
        default_icon: "",
        vapid_subject: "mailto:ops@example.com",
      },
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${path(team.teamId, `apps/${app.id}`)}?notice=saved`);
    expect(await (await followRedirect(res, team.cookie)).text()).toContain("Settings saved.");
    const after = (await appOf(team.key, app.id)).data;
    expect(after.name).toBe("Shop web");
    expect(after.settings).toEqual({
      own_key: "kept",
      default_ttl: 3600,
      default_urgency: "high",
      default_url: "/inbox",
      vapid_subject: "mailto:ops@example.com",
    });
    expect((await page("GET", res.headers.get("location")!, { cookie: team.cookie })).status).toBe(200);
    expect((await appOf(team.key, app.id)).data.updated_at).toBe(after.updated_at);
  });

  it("answers a refused form at 422 naming the field, and changes nothing", async () => {
    const team = await consoleTeam("owner");
    const app = await createApp(team.key, { name: "Shop" });
    const before = (await appOf(team.key, app.id)).data;
    const res = await page("POST", path(team.teamId, `apps/${app.id}/settings`), {
      cookie: team.cookie,
      form: { name: "Shop", vapid_subject: "ops@example.com", default_ttl: "", default_urgency: "", default_url: "", default_icon: "" },
    });
    expect(res.status).toBe(422);
    const html = await res.text();
    expect(html).toContain("<li>vapid subject: must be a mailto: or https: URI</li>");
    expect(html).toContain('value="ops@example.com"');
    expect((await appOf(team.key, app.id)).data).toEqual(before);
  });

  it("deletes an app only after its name is typed; the back button's re-post is 404", async () => {
    const team = await consoleTeam("developer");
    const app = await createApp(team.key, { name: "Shop" });
    const confirm = await page("GET", path(team.teamId, `apps/${app.id}/delete`), { cookie: team.cookie });
    expect(await confirm.text()).toContain('data-testid="confirm-delete-push-app"');
    const wrong = await page("POST", path(team.teamId, `apps/${app.id}/delete`), { cookie: team.cookie, form: { confirm: "yes", confirm_name: "shop" } });
    expect(wrong.status).toBe(422);
    expect((await appOf(team.key, app.id)).status).toBe(200);
    const res = await page("POST", path(team.teamId, `apps/${app.id}/delete`), { cookie: team.cookie, form: { confirm: "yes", confirm_name: "Shop" } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/console/teams/${team.teamId}/push?notice=deleted`);
    expect(await (await followRedirect(res, team.cookie)).text()).toContain("The app was deleted");
    expect((await appOf(team.key, app.id)).status).toBe(404);
    expect(
      (await page("POST", path(team.teamId, `apps/${app.id}/delete`), { cookie: team.cookie, form: { confirm: "yes", confirm_name: "Shop" } })).status,
    ).toBe(404);
  });
});

describe("push console: subscribers and a notification", () => {
  it("lists subscribers and removes one after the confirmation step; a second post is 404", async () => {
    const team = await consoleTeam("developer");
    const app = await createApp(team.key);
    const sub = await subscribe(team.key, app.id, await browserSubscription("https://push.example.com/send/abc"));
    const html = await (await page("GET", path(team.teamId, `apps/${app.id}`), { cookie: team.cookie })).text();
    expect(html.match(/data-testid="subscriber-row"/g)).toHaveLength(1);
    expect(html).toContain("push.example.com");
    // The endpoint's path is the browser's capability: the page shows the push service only.
    expect(html).not.toContain("/send/abc");

    const target = path(team.teamId, `apps/${app.id}/subscribers/${sub.id}/delete`);
    const confirm = await page("POST", target, { cookie: team.cookie, form: {} });
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toContain('data-testid="confirm-remove-subscriber"');
    expect((await appOf(team.key, app.id)).data.subscriber_count).toBe(1);
    const res = await page("POST", target, { cookie: team.cookie, form: { confirm: "yes" } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${path(team.teamId, `apps/${app.id}`)}?notice=subscriber-removed`);
    expect((await appOf(team.key, app.id)).data.subscriber_count).toBe(0);
    expect((await page("POST", target, { cookie: team.cookie, form: { confirm: "yes" } })).status).toBe(404);
  });

  it("shows one notification to any member; another team's app or notification is 404", async () => {
    const team = await consoleTeam("owner");
    const app = await createApp(team.key);
    const n = await storedNotification(team.teamId, app.id);
    const viewer = await memberOf(team.teamId, "viewer");
    const res = await page("GET", path(team.teamId, `apps/${app.id}/notifications/${n.id}`), { cookie: viewer.cookie });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('data-testid="notification"');
    expect(html).toContain("Per subscriber");
    const list = await (await page("GET", path(team.teamId, `apps/${app.id}`), { cookie: viewer.cookie })).text();
    expect(list).toContain(`href="${path(team.teamId, `apps/${app.id}/notifications/${n.id}`)}"`);
    const other = await consoleTeam("owner");
    expect((await page("GET", path(other.teamId, `apps/${app.id}/notifications/${n.id}`), { cookie: other.cookie })).status).toBe(404);
    const otherApp = await createApp(other.key);
    expect((await page("GET", path(other.teamId, `apps/${otherApp.id}/notifications/${n.id}`), { cookie: other.cookie })).status).toBe(404);
  });

  it("refuses a viewer every write (403) and another team every write (404), changing nothing", async () => {
    const team = await consoleTeam("owner");
    const app = await createApp(team.key, { name: "Shop" });
    const sub = await subscribe(team.key, app.id, await browserSubscription());
    const viewer = await memberOf(team.teamId, "viewer");
    const other = await consoleTeam("owner");
    const before = (await appOf(team.key, app.id)).data;
    const writes: Array<[string, Record<string, string>]> = [
      [`apps/${app.id}/settings`, { name: "x" }],
      [`apps/${app.id}/delete`, { confirm: "yes", confirm_name: "Shop" }],
      [`apps/${app.id}/subscribers/${sub.id}/delete`, { confirm: "yes" }],
    ];
    for (const [rest, form] of writes) {
      expect((await page("POST", path(team.teamId, rest), { cookie: viewer.cookie, form })).status, rest).toBe(403);
      expect((await page("POST", path(other.teamId, rest), { cookie: other.cookie, form })).status, rest).toBe(404);
    }
    expect((await appOf(team.key, app.id)).data).toEqual(before);
    const html = await (await page("GET", path(team.teamId, `apps/${app.id}`), { cookie: viewer.cookie })).text();
    expect(html).not.toContain('data-testid="push-app-settings"');
    expect(html).not.toContain("/subscribers/");
  });
});
