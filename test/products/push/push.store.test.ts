// The per-app push store (src/products/push/store/): one object per app holding only that app's
// subscribers and deliveries; the subscriber count exact under parallel registrations and kept in
// step on the app row (D1), also when that second write fails or arrives out of order; a store
// that fails answers 503 with nothing half-stored and nothing charged.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../../src/env";
import { pushStore, syncCount } from "../../../src/products/push/push.store";
import { SYNC_COUNT } from "../../../src/products/push/store/push-store.queries";
import { call, expectError, json, setupTeam } from "../../helpers/api";
import { browserSubscription, createApp, storedNotification, storeRows, subscribe, subscriptionJson } from "./push-helpers";
import { wrappedNamespace } from "../../helpers/counting";

const UNAVAILABLE = { error: "Push storage temporarily unavailable" };

afterEach(() => vi.restoreAllMocks());

async function subscriberCount(key: string, appId: string): Promise<number> {
  return (await json(await call("GET", `push/apps/${appId}`, { key }))).data.subscriber_count;
}

async function listed(key: string, appId: string): Promise<string[]> {
  return (await json(await call("GET", `push/apps/${appId}/subscribers?per_page=100`, { key }))).data.map((s: { id: string }) => s.id);
}

/** A PUSH_STORE whose objects throw on every call (an object that cannot be reached). */
function brokenStore(): Env {
  const broken = wrappedNamespace(env.PUSH_STORE, () => Promise.reject(new Error("Durable Object reset because its code was updated")));
  return { ...(env as Env), PUSH_STORE: broken };
}

describe("push store: one object per app", () => {
  it("two apps keep their subscribers in two objects; the same endpoint registers in each", async () => {
    const a = await setupTeam();
    const b = await setupTeam();
    const appA = await createApp(a.key);
    const appB = await createApp(b.key);
    const sub = await browserSubscription();
    const inA = await subscribe(a.key, appA.id, sub);
    const inB = await subscribe(b.key, appB.id, sub);
    expect(inA.id).not.toBe(inB.id);
    expect(env.PUSH_STORE.idFromName(appA.id).equals(env.PUSH_STORE.idFromName(appB.id))).toBe(false);
    expect(await storeRows(appA.id, "SELECT id FROM subscribers")).toEqual([{ id: inA.id }]);
    expect(await storeRows(appB.id, "SELECT id FROM subscribers")).toEqual([{ id: inB.id }]);
    expect(await listed(a.key, appA.id)).toEqual([inA.id]);
    expect(await listed(b.key, appB.id)).toEqual([inB.id]);
    // Another team's subscriber id under one's own app is unknown there.
    await expectError(await call("DELETE", `push/apps/${appA.id}/subscribers/${inB.id}`, { key: a.key }), 404, { error: "Subscriber not found" });
    expect(await listed(b.key, appB.id)).toEqual([inB.id]);
  });

  it("counts exactly under parallel registrations: new endpoints once each, a repeated endpoint once", async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const app = await createApp(team.key);
    const distinct = await Promise.all(Array.from({ length: 20 }, () => browserSubscription()));
    const repeated = await browserSubscription();
    const bodies = [...distinct.map((s) => subscriptionJson(s)), ...Array.from({ length: 8 }, () => subscriptionJson(repeated))];
    const answers = await Promise.all(bodies.map((body) => call("POST", `push/apps/${app.id}/subscribers`, { key: team.key, body })));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(21);
    expect(statuses.filter((s) => s === 200)).toHaveLength(7);
    expect(await subscriberCount(team.key, app.id)).toBe(21);
    expect(await storeRows(app.id, "SELECT key, value FROM meta WHERE key = 'subscriber_count'")).toEqual([{ key: "subscriber_count", value: 21 }]);
    expect((await json(await call("GET", `push/apps/${app.id}/subscribers`, { key: team.key }))).pagination.total).toBe(21);
    // Parallel deletes of the same subscriber: one 204, the rest 404, the count down by one.
    const victim = (await listed(team.key, app.id))[0];
    const deletes = await Promise.all(Array.from({ length: 5 }, () => call("DELETE", `push/apps/${app.id}/subscribers/${victim}`, { key: team.key })));
    expect(deletes.map((r) => r.status).sort()).toEqual([204, 404, 404, 404, 404]);
    expect(await subscriberCount(team.key, app.id)).toBe(20);
  });

  it("the app row keeps the newest count: an older answer arriving late changes nothing", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    await subscribe(team.key, app.id, await browserSubscription());
    await subscribe(team.key, app.id, await browserSubscription());
    expect(await subscriberCount(team.key, app.id)).toBe(2);
    await syncCount(env, app.id, { count: 1, seq: 1 });
    expect(await subscriberCount(team.key, app.id)).toBe(2);
    await syncCount(env, app.id, { count: 7, seq: 3 });
    expect(await subscriberCount(team.key, app.id)).toBe(7);
  });

  it("a failed count write still answers the stored subscriber; the next change writes the true count", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const prepare = env.DB.prepare.bind(env.DB);
    const failing = vi.spyOn(env.DB, "prepare").mockImplementation((query: string) => {
      if (query === SYNC_COUNT) throw new Error("D1_ERROR: storage unavailable");
      return prepare(query);
    });
    const first = await subscribe(team.key, app.id, await browserSubscription());
    failing.mockRestore();
    expect(errors.mock.calls.some(([line]) => String(line).includes("subscriber_count not written"))).toBe(true);
    expect(await listed(team.key, app.id)).toEqual([first.id]);
    expect(await subscriberCount(team.key, app.id)).toBe(0);
    await subscribe(team.key, app.id, await browserSubscription());
    expect(await subscriberCount(team.key, app.id)).toBe(2);
  });
});

describe("push store: a store that fails", () => {
  it("answers 503 on every route that needs the store; nothing is stored, charged or deleted", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const kept = await subscribe(team.key, app.id, await browserSubscription());
    vi.spyOn(console, "error").mockImplementation(() => {});
    const broken = brokenStore();
    const sub = subscriptionJson(await browserSubscription());
    const base = `push/apps/${app.id}`;
    await expectError(await call("POST", `${base}/subscribers`, { key: team.key, body: sub, env: broken }), 503, UNAVAILABLE);
    await expectError(await call("GET", `${base}/subscribers`, { key: team.key, env: broken }), 503, UNAVAILABLE);
    await expectError(await call("DELETE", `${base}/subscribers/${kept.id}`, { key: team.key, env: broken }), 503, UNAVAILABLE);
    await expectError(await call("POST", `${base}/notifications`, { key: team.key, body: { title: "t", body: "b" }, env: broken }), 503, UNAVAILABLE);
    await expectError(await call("DELETE", base, { key: team.key, env: broken }), 503, UNAVAILABLE);
    // Listing and reading apps call no store.
    expect((await call("GET", "push/apps", { key: team.key, env: broken })).status).toBe(200);
    expect((await call("GET", base, { key: team.key, env: broken })).status).toBe(200);

    expect(await listed(team.key, app.id)).toEqual([kept.id]);
    expect(await subscriberCount(team.key, app.id)).toBe(1);
    const notifications = await env.DB.prepare("SELECT count(*) AS n FROM push_notifications WHERE app_id = ?").bind(app.id).first<{ n: number }>();
    expect(notifications!.n).toBe(0);
    const usage = await json(await call("GET", "usage", { key: team.key }));
    expect(usage.data.services.push.used).toBe(0);

    // A notification accepted while the store worked: its list and detail answer 503 once it does not.
    const sent = await storedNotification(team.teamId, app.id);
    await expectError(await call("GET", `${base}/notifications`, { key: team.key, env: broken }), 503, UNAVAILABLE);
    await expectError(await call("GET", `${base}/notifications/${sent.id}`, { key: team.key, env: broken }), 503, UNAVAILABLE);
  });

  it("a write that fails inside the store leaves nothing behind: no subscriber, no count; a delete that fails keeps the subscriber", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const kept = await subscribe(team.key, app.id, await browserSubscription());
    vi.spyOn(console, "error").mockImplementation(() => {});
    // The insert fails after the count was raised in the same transaction (the trigger runs last).
    await storeRows(app.id, "CREATE TRIGGER fail_meta AFTER UPDATE ON meta BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END");
    const res = await call("POST", `push/apps/${app.id}/subscribers`, { key: team.key, body: subscriptionJson(await browserSubscription()) });
    await expectError(res, 503, UNAVAILABLE);
    await expectError(await call("DELETE", `push/apps/${app.id}/subscribers/${kept.id}`, { key: team.key }), 503, UNAVAILABLE);
    await storeRows(app.id, "DROP TRIGGER fail_meta");
    expect(await listed(team.key, app.id)).toEqual([kept.id]);
    expect(await storeRows(app.id, "SELECT value FROM meta WHERE key = 'subscriber_count'")).toEqual([{ value: 1 }]);
    expect(await subscriberCount(team.key, app.id)).toBe(1);
  });

  it("a deleted app's store answers nothing and holds nothing", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    await subscribe(team.key, app.id, await browserSubscription());
    expect((await call("DELETE", `push/apps/${app.id}`, { key: team.key })).status).toBe(204);
    const outcome = await pushStore(env, app.id)
      .count()
      .then(
        () => "answered",
        (error: unknown) => String(error),
      );
    expect(outcome).toContain("push store deleted");
  });
});
