// Push apps CRUD, VAPID keys (generated and supplied), subscribers (dedupe, exact count, list).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, json, setupTeam } from "../../helpers/api";
import { playedQueue } from "../../helpers/queues";
import { decryptSecret } from "../../../src/platform/crypto";
import { generateVapidKeys } from "../../../src/products/push/vapid";
import { browserSubscription, createApp, pushService, signJwt, storeRows, subscribe, subscriptionJson, verifyJwt, waitForCompletion } from "./push-helpers";

async function storedPrivateKey(appId: string): Promise<string> {
  const row = await env.DB.prepare("SELECT vapid_private_key_enc FROM push_apps WHERE id = ?").bind(appId).first<{ vapid_private_key_enc: string }>();
  return decryptSecret(env.ENCRYPTION_KEY, row!.vapid_private_key_enc);
}

describe("push apps", () => {
  it("creates, lists, gets, patches and deletes an app", async () => {
    const team = await setupTeam();
    const res = await call("POST", "push/apps", { key: team.key, body: { name: "Web", settings: { default_icon: "/icon.png", theme: "dark" } } });
    expect(res.status).toBe(201);
    const app = (await json(res)).data;
    expect(Object.keys(app).sort()).toEqual(["created_at", "id", "name", "settings", "subscriber_count", "updated_at", "vapid_public_key"]);
    expect(app).toMatchObject({ name: "Web", subscriber_count: 0, settings: { default_icon: "/icon.png", theme: "dark" } });
    expect(app.id).toMatch(/^[0-9a-f-]{36}$/);

    const list = await json(await call("GET", "push/apps", { key: team.key }));
    expect(list).toEqual({ data: [app] });
    expect(await json(await call("GET", `push/apps/${app.id}`, { key: team.key }))).toEqual({ data: app });

    const patched = await call("PATCH", `push/apps/${app.id}`, { key: team.key, body: { name: "Web 2" } });
    expect(patched.status).toBe(200);
    const afterName = (await json(patched)).data;
    expect(afterName).toMatchObject({ name: "Web 2", settings: app.settings, vapid_public_key: app.vapid_public_key });
    const afterSettings = (
      await json(await call("PATCH", `push/apps/${app.id}`, { key: team.key, body: { settings: { default_url: "https://example.com/" } } }))
    ).data;
    expect(afterSettings).toMatchObject({ name: "Web 2", settings: { default_url: "https://example.com/" } });

    const deleted = await call("DELETE", `push/apps/${app.id}`, { key: team.key });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe("");
    expect((await call("GET", `push/apps/${app.id}`, { key: team.key })).status).toBe(404);
    expect(await json(await call("GET", "push/apps", { key: team.key }))).toEqual({ data: [] });
  });

  it("generates a valid VAPID pair: a JWT signed with the stored private key verifies with the public key", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    expect(Buffer.from(app.vapid_public_key, "base64url")).toHaveLength(65);
    const privateKey = await storedPrivateKey(app.id);
    expect(Buffer.from(privateKey, "base64url")).toHaveLength(32);
    const jwt = await signJwt({ aud: "https://push.example.com", sub: "mailto:a@example.com" }, app.vapid_public_key, privateKey);
    expect(await verifyJwt(jwt, app.vapid_public_key)).toEqual({ aud: "https://push.example.com", sub: "mailto:a@example.com" });
    // Another app gets another pair.
    const other = await createApp(team.key);
    expect(other.vapid_public_key).not.toBe(app.vapid_public_key);
  });

  it("accepts a supplied key pair, and derives the public key from a private key alone", async () => {
    const team = await setupTeam();
    const keys = await generateVapidKeys();
    const both = await createApp(team.key, { name: "both", vapid_public_key: keys.publicKey, vapid_private_key: keys.privateKey });
    expect(both.vapid_public_key).toBe(keys.publicKey);
    expect(await storedPrivateKey(both.id)).toBe(keys.privateKey);

    const onlyPrivate = await createApp(team.key, { name: "private only", vapid_private_key: keys.privateKey });
    expect(onlyPrivate.vapid_public_key).toBe(keys.publicKey);
  });

  it("stores the private key and credentials encrypted", async () => {
    const team = await setupTeam();
    const keys = await generateVapidKeys();
    const app = await createApp(team.key, {
      name: "creds",
      vapid_public_key: keys.publicKey,
      vapid_private_key: keys.privateKey,
      fcm_credentials: { project_id: "p", private_key: "FCM-SECRET" },
      apns_credentials: "APNS-SECRET",
    });
    const row = await env.DB.prepare("SELECT * FROM push_apps WHERE id = ?").bind(app.id).first<Record<string, string>>();
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(keys.privateKey);
    expect(stored).not.toContain("FCM-SECRET");
    expect(stored).not.toContain("APNS-SECRET");
    expect(JSON.parse(await decryptSecret(env.ENCRYPTION_KEY, row!.fcm_credentials_enc))).toEqual({ project_id: "p", private_key: "FCM-SECRET" });
    expect(await decryptSecret(env.ENCRYPTION_KEY, row!.apns_credentials_enc)).toBe("APNS-SECRET");
  });
});

describe("push subscribers", () => {
  it("registers a PushSubscription, updates on the same endpoint, and keeps subscriber_count exact", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const sub = await browserSubscription();

    const first = await call("POST", `push/apps/${app.id}/subscribers`, {
      key: team.key,
      body: subscriptionJson(sub, { expirationTime: 1_900_000_000_000.4, tags: ["news", "news", "sport"], external_id: "user-1" }),
    });
    expect(first.status).toBe(201);
    expect(first.headers.get("x-ratelimit-limit")).toBe("30");
    const created = (await json(first)).data;
    expect(created).toMatchObject({
      app_id: app.id,
      endpoint: sub.endpoint,
      expiration_time: 1_900_000_000_000,
      tags: ["news", "sport"],
      external_id: "user-1",
    });
    expect(created).not.toHaveProperty("keys");

    // Same endpoint again with rotated keys: the same subscriber, updated; tags kept when omitted.
    const rotated = await browserSubscription(sub.endpoint);
    const second = await call("POST", `push/apps/${app.id}/subscribers`, { key: team.key, body: subscriptionJson(rotated) });
    expect(second.status).toBe(200);
    const updated = (await json(second)).data;
    expect(updated).toMatchObject({ id: created.id, tags: ["news", "sport"], external_id: "user-1", expiration_time: null });
    // Read inside the app's store.
    const [row] = await storeRows(app.id, "SELECT p256dh, auth FROM subscribers WHERE id = ?", created.id);
    expect(row).toEqual({ p256dh: rotated.keys.p256dh, auth: rotated.keys.auth });

    const other = await subscribe(team.key, app.id, await browserSubscription(), { tags: ["sport"] });
    expect((await json(await call("GET", `push/apps/${app.id}`, { key: team.key }))).data.subscriber_count).toBe(2);
    const [count] = await storeRows<{ n: number }>(app.id, "SELECT count(*) AS n FROM subscribers");
    expect(count.n).toBe(2);

    // List: paginated, filterable.
    const page1 = await json(await call("GET", `push/apps/${app.id}/subscribers?per_page=1`, { key: team.key }));
    expect(page1.pagination).toEqual({ page: 1, per_page: 1, total: 2, total_pages: 2 });
    expect(page1.data.map((s: { id: string }) => s.id)).toEqual([created.id]);
    const page2 = await json(await call("GET", `push/apps/${app.id}/subscribers?per_page=1&page=2`, { key: team.key }));
    expect(page2.data.map((s: { id: string }) => s.id)).toEqual([other.id]);
    const news = await json(await call("GET", `push/apps/${app.id}/subscribers?tag=news`, { key: team.key }));
    expect(news.data.map((s: { id: string }) => s.id)).toEqual([created.id]);
    const byExternal = await json(await call("GET", `push/apps/${app.id}/subscribers?external_id=user-1`, { key: team.key }));
    expect(byExternal.pagination.total).toBe(1);

    // Delete: the count drops once; a second delete is a 404 and changes nothing.
    expect((await call("DELETE", `push/apps/${app.id}/subscribers/${created.id}`, { key: team.key })).status).toBe(204);
    expect((await call("DELETE", `push/apps/${app.id}/subscribers/${created.id}`, { key: team.key })).status).toBe(404);
    expect((await json(await call("GET", `push/apps/${app.id}`, { key: team.key }))).data.subscriber_count).toBe(1);
    const listed = (await json(await call("GET", "push/apps", { key: team.key }))).data;
    expect(listed[0].subscriber_count).toBe(1);
  });

  it("deleting an app removes its notifications and wipes its store (subscribers, deliveries)", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    await subscribe(team.key, app.id, await browserSubscription());
    // No queue consumer must reach this app's notification before the delete: a stored row with
    // its fan-out done (a notification without recipients is refused over the API, 422).
    const notification = { id: crypto.randomUUID() };
    await env.DB.prepare(
      `INSERT INTO push_notifications (id, team_id, app_id, payload, ttl, urgency, target, vapid_subject, recipients, fanout_done, created_at, completed_at)
       VALUES (?1, ?2, ?3, '{}', 60, 'normal', '{"type":"all"}', 'mailto:o@example.com', 1, 1, ?4, ?4)`,
    )
      .bind(notification.id, team.teamId, app.id, new Date().toISOString())
      .run();
    await storeRows(app.id, "INSERT INTO deliveries (notification_id, subscriber_id, status, updated_at) VALUES (?, 'x', 'failed', 'now')", notification.id);
    expect((await call("DELETE", `push/apps/${app.id}`, { key: team.key })).status).toBe(204);
    const row = await env.DB.prepare("SELECT count(*) AS n FROM push_notifications WHERE app_id = ?").bind(app.id).first<{ n: number }>();
    expect(row!.n).toBe(0);
    // The store holds nothing: its tables went with deleteAll.
    expect(
      await storeRows(app.id, "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('subscribers', 'deliveries', 'notifications', 'meta')"),
    ).toEqual([]);
    expect((await call("GET", `push/apps/${app.id}`, { key: team.key })).status).toBe(404);
  });

  it("lists notifications with their counts and targets subscribers by id", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key, { name: "a", settings: { default_ttl: 60, default_urgency: "low" } });
    const a = await subscribe(team.key, app.id, await browserSubscription());
    await subscribe(team.key, app.id, await browserSubscription());
    const service = pushService();
    const queue = playedQueue("push-sends");
    const res = await call("POST", `push/apps/${app.id}/notifications`, {
      key: team.key,
      body: { title: "t", body: "b", subscriber_ids: [a.id, a.id] },
      env: queue.env,
    });
    expect(res.status).toBe(202);
    const sent = (await json(res)).data;
    expect(sent).toMatchObject({ recipients: 1, ttl: 60, urgency: "low", target: { type: "subscribers", subscriber_ids: [a.id] } });
    const list = await json(await call("GET", `push/apps/${app.id}/notifications`, { key: team.key }));
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({ id: sent.id, recipients: 1 });
    try {
      await queue.deliver();
      const done = await waitForCompletion(team.key, app.id, sent.id);
      expect(done.results.map((r: { subscriber_id: string }) => r.subscriber_id)).toEqual([a.id]);
      expect(service.requests).toHaveLength(1);
    } finally {
      service.restore();
    }
  });
});

describe("push OpenAPI", () => {
  it("documents every push route in the generated document", async () => {
    const res = await call("GET", "openapi.json");
    expect(res.status).toBe(200);
    const doc = await json(res);
    const paths = Object.keys(doc.paths).filter((p) => p.startsWith("/api/v1/push"));
    expect(paths.sort()).toEqual([
      "/api/v1/push/apps",
      "/api/v1/push/apps/{app_id}",
      "/api/v1/push/apps/{app_id}/notifications",
      "/api/v1/push/apps/{app_id}/notifications/{id}",
      "/api/v1/push/apps/{app_id}/subscribers",
      "/api/v1/push/apps/{app_id}/subscribers/{subscriber_id}",
    ]);
    expect(Object.keys(doc.components.schemas.PushApp.properties)).not.toContain("vapid_private_key");
  });
});
