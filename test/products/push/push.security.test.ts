// Push security: 401 without a key, 403 without the scope, another team's ids answer 404 on every
// route, and no response ever carries the VAPID private key or the FCM/APNs credentials.
import { describe, expect, it } from "vitest";
import { addKey, call, expectError, json, setupTeam } from "../../helpers/api";
import { playedQueue } from "../../helpers/queues";
import { generateVapidKeys } from "../../../src/products/push/vapid";
import { browserSubscription, createApp, pushService, storedNotification, subscribe, subscriptionJson, waitForCompletion } from "./push-helpers";

async function appWithData() {
  const team = await setupTeam();
  const app = await createApp(team.key);
  const sub = await subscribe(team.key, app.id, await browserSubscription());
  const notification = await storedNotification(team.teamId, app.id);
  return { team, app, sub, notification };
}

function routes(appId: string, subscriberId: string, notificationId: string, body: unknown) {
  return [
    { method: "GET", path: "push/apps", scope: "read" },
    { method: "POST", path: "push/apps", scope: "write", body: { name: "x" } },
    { method: "GET", path: `push/apps/${appId}`, scope: "read" },
    { method: "PATCH", path: `push/apps/${appId}`, scope: "write", body: { name: "x" } },
    { method: "DELETE", path: `push/apps/${appId}`, scope: "write" },
    { method: "POST", path: `push/apps/${appId}/subscribers`, scope: "write", body },
    { method: "GET", path: `push/apps/${appId}/subscribers`, scope: "read" },
    { method: "DELETE", path: `push/apps/${appId}/subscribers/${subscriberId}`, scope: "write" },
    { method: "POST", path: `push/apps/${appId}/notifications`, scope: "write", body: { title: "t", body: "b", tags: ["none"] } },
    { method: "GET", path: `push/apps/${appId}/notifications`, scope: "read" },
    { method: "GET", path: `push/apps/${appId}/notifications/${notificationId}`, scope: "read" },
  ] as const;
}

describe("push security", () => {
  it("answers 401 without a valid key on every route", async () => {
    const { app, sub, notification } = await appWithData();
    for (const route of routes(app.id, sub.id, notification.id, {})) {
      for (const key of [null, "edp_wrong"]) {
        await expectError(await call(route.method, route.path, { key, body: "body" in route ? route.body : undefined }), 401, {
          error: "Invalid or missing API key",
        });
      }
    }
  });

  it("answers 403 without the push scope each route needs", async () => {
    const { team, app, sub, notification } = await appWithData();
    const readOnly = await addKey(team.teamId, ["push:read"]);
    const writeOnly = await addKey(team.teamId, ["push:write"]);
    const other = await addKey(team.teamId, ["mail:send", "surveys:write"]);
    const body = subscriptionJson(await browserSubscription());
    for (const route of routes(app.id, sub.id, notification.id, body)) {
      const options = { body: "body" in route ? route.body : undefined };
      const denied = route.scope === "read" ? [writeOnly.key, other.key] : [readOnly.key, other.key];
      for (const key of denied) {
        await expectError(await call(route.method, route.path, { key, ...options }), 403, { error: "Insufficient scope" });
      }
    }
    // Nothing changed.
    expect((await json(await call("GET", `push/apps/${app.id}`, { key: readOnly.key }))).data).toMatchObject({ subscriber_count: 1, name: "My app" });
    expect((await call("GET", `push/apps/${app.id}/notifications/${notification.id}`, { key: readOnly.key })).status).toBe(200);
  });

  it("answers 404 for another team's app, subscriber and notification on every route", async () => {
    const owner = await appWithData();
    const intruder = await setupTeam();
    const intruderApp = await createApp(intruder.key);
    const body = subscriptionJson(await browserSubscription());
    for (const route of routes(owner.app.id, owner.sub.id, owner.notification.id, body)) {
      if (!route.path.includes(owner.app.id)) continue;
      const res = await call(route.method, route.path, { key: intruder.key, body: "body" in route ? route.body : undefined });
      await expectError(res, 404, { error: "App not found" });
    }
    // The intruder's own app id with the owner's subscriber / notification ids.
    await expectError(await call("DELETE", `push/apps/${intruderApp.id}/subscribers/${owner.sub.id}`, { key: intruder.key }), 404, {
      error: "Subscriber not found",
    });
    await expectError(await call("GET", `push/apps/${intruderApp.id}/notifications/${owner.notification.id}`, { key: intruder.key }), 404, {
      error: "Notification not found",
    });
    // The owner's data is intact and unseen in the intruder's lists.
    expect((await json(await call("GET", "push/apps", { key: intruder.key }))).data.map((a: { id: string }) => a.id)).toEqual([intruderApp.id]);
    const ownerApp = (await json(await call("GET", `push/apps/${owner.app.id}`, { key: owner.team.key }))).data;
    expect(ownerApp).toMatchObject({ name: "My app", subscriber_count: 1 });
  });

  it("never returns the VAPID private key or the FCM/APNs credentials", async () => {
    const team = await setupTeam();
    const keys = await generateVapidKeys();
    const secrets = [keys.privateKey, "FCM-SECRET-VALUE", "APNS-SECRET-VALUE"];
    const bodies: string[] = [];
    const record = async (res: Response) => {
      const text = await res.text();
      bodies.push(text);
      return text ? JSON.parse(text) : null;
    };
    const created = await record(
      await call("POST", "push/apps", {
        key: team.key,
        body: {
          name: "secret",
          vapid_public_key: keys.publicKey,
          vapid_private_key: keys.privateKey,
          fcm_credentials: { private_key: "FCM-SECRET-VALUE" },
          apns_credentials: "APNS-SECRET-VALUE",
        },
      }),
    );
    const appId = created.data.id;
    // A refused create must not echo the key either.
    await record(await call("POST", "push/apps", { key: team.key, body: { name: "bad", vapid_public_key: "x", vapid_private_key: keys.privateKey } }));
    await record(await call("GET", "push/apps", { key: team.key }));
    await record(await call("GET", `push/apps/${appId}`, { key: team.key }));
    await record(await call("PATCH", `push/apps/${appId}`, { key: team.key, body: { name: "renamed", fcm_credentials: { private_key: "FCM-SECRET-VALUE" } } }));
    const sub = await browserSubscription();
    await record(await call("POST", `push/apps/${appId}/subscribers`, { key: team.key, body: subscriptionJson(sub) }));
    await record(await call("GET", `push/apps/${appId}/subscribers`, { key: team.key }));
    const service = pushService();
    const queue = playedQueue("push-sends");
    try {
      const sent = await record(await call("POST", `push/apps/${appId}/notifications`, { key: team.key, body: { title: "t", body: "b" }, env: queue.env }));
      await queue.deliver();
      bodies.push(JSON.stringify(await waitForCompletion(team.key, appId, sent.data.id)));
      await record(await call("GET", `push/apps/${appId}/notifications`, { key: team.key }));
      // The push service gets only the public key.
      expect(service.requests).toHaveLength(1);
      bodies.push(JSON.stringify(service.requests[0].headers));
    } finally {
      service.restore();
    }
    await record(await call("DELETE", `push/apps/${appId}`, { key: team.key }));

    expect(bodies.length).toBeGreaterThan(10);
    for (const text of bodies) {
      for (const secret of secrets) expect(text).not.toContain(secret);
      for (const field of ['vapid_private_key":"', "fcm_credentials", "apns_credentials", "_enc"]) expect(text).not.toContain(field);
    }
  });
});
