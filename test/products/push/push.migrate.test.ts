// The operator's one-time move of push subscribers and deliveries from the former D1 tables into
// each app's store (POST /api/v1/admin/push/migrate-stores): in steps, every row read back through
// the API afterwards with the app's subscriber_count, repeatable with nothing doubled (also after a
// step that stopped between import and delete or a store that failed), operator only.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { admin as adminCall, call, expectError, json, setupTeam, type TestTeam } from "../../helpers/api";
import { browserSubscription, createApp, storeRows, subscribe } from "./push-helpers";

afterEach(() => vi.restoreAllMocks());

const T = "2026-01-01T00:00:00.000Z";

function admin(body: Record<string, unknown>) {
  return adminCall("POST", "push/migrate-stores", body);
}

/** Runs steps until `more` is false; returns them. */
async function migrateAll(limit: number) {
  const steps = [];
  for (;;) {
    const res = await admin({ limit });
    expect(res.status).toBe(200);
    const step = (await json(res)).data;
    steps.push(step);
    if (!step.more) return steps;
  }
}

/** Rows of the former tables: `n` subscribers of an app, and a finished notification with a delivery row for each. */
async function legacyApp(team: TestTeam, n: number) {
  const app = await createApp(team.key);
  const sub = await browserSubscription();
  const ids = Array.from({ length: n }, (_, i) => `legacy-${app.id.slice(0, 8)}-${i}`);
  const notificationId = crypto.randomUUID();
  await env.DB.batch([
    ...ids.map((id, i) =>
      env.DB.prepare(
        `INSERT INTO push_subscribers (id, team_id, app_id, endpoint, p256dh, auth, tags, external_id, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, '["old"]', ?, ?, ?)`,
      ).bind(id, team.teamId, app.id, `https://push.example.com/legacy/${id}`, sub.keys.p256dh, sub.keys.auth, `user-${i}`, T, T),
    ),
    env.DB.prepare(
      `INSERT INTO push_notifications (id, team_id, app_id, payload, ttl, urgency, target, vapid_subject, recipients, fanout_done, created_at, completed_at)
       VALUES (?, ?, ?, '{"title":"t"}', 60, 'normal', '{"type":"all"}', 'mailto:ops@example.com', ?, 1, ?, ?)`,
    ).bind(notificationId, team.teamId, app.id, n, T, T),
    ...ids.map((id, i) =>
      env.DB.prepare("INSERT INTO push_deliveries (notification_id, subscriber_id, status, attempts, status_code, updated_at) VALUES (?, ?, ?, 1, ?, ?)").bind(
        notificationId,
        id,
        i === 0 ? "removed" : "delivered",
        i === 0 ? 410 : 201,
        T,
      ),
    ),
    env.DB.prepare("UPDATE push_apps SET subscriber_count = ? WHERE id = ?").bind(n, app.id),
  ]);
  return { app, ids, notificationId };
}

async function legacyLeft(appId: string) {
  const row = await env.DB.prepare(
    `SELECT (SELECT count(*) FROM push_subscribers WHERE app_id = ?1) AS subscribers,
            (SELECT count(*) FROM push_deliveries d JOIN push_notifications n ON n.id = d.notification_id WHERE n.app_id = ?1) AS deliveries`,
  )
    .bind(appId)
    .first<{ subscribers: number; deliveries: number }>();
  return row!;
}

async function readBack(team: TestTeam, appId: string, notificationId: string) {
  const app = (await json(await call("GET", `push/apps/${appId}`, { key: team.key }))).data;
  const list = await json(await call("GET", `push/apps/${appId}/subscribers?per_page=100`, { key: team.key }));
  const notification = (await json(await call("GET", `push/apps/${appId}/notifications/${notificationId}`, { key: team.key }))).data;
  return { count: app.subscriber_count, total: list.pagination.total, ids: list.data.map((s: { id: string }) => s.id), list: list.data, notification };
}

describe("push migration to the per-app stores", () => {
  it("moves every subscriber and delivery in steps; each reads back through the API; a repeat moves nothing", async () => {
    const a = await setupTeam();
    const b = await setupTeam();
    const first = await legacyApp(a, 5);
    const second = await legacyApp(b, 3);
    // A subscriber registered after the deploy, in the store, beside legacy rows of the same app.
    const fresh = await subscribe(a.key, first.app.id, await browserSubscription());

    const steps = await migrateAll(2);
    expect(steps.length).toBeGreaterThan(2);
    expect(await legacyLeft(first.app.id)).toEqual({ subscribers: 0, deliveries: 0 });
    expect(await legacyLeft(second.app.id)).toEqual({ subscribers: 0, deliveries: 0 });

    const one = await readBack(a, first.app.id, first.notificationId);
    expect(one.count).toBe(6);
    expect(one.total).toBe(6);
    expect(one.ids.sort()).toEqual([...first.ids, fresh.id].sort());
    expect(one.list.find((s: { id: string }) => s.id === first.ids[1])).toMatchObject({
      app_id: first.app.id,
      tags: ["old"],
      external_id: "user-1",
      created_at: T,
    });
    expect(one.notification).toMatchObject({ status: "completed", recipients: 5, counts: { queued: 0, delivered: 4, failed: 0, removed: 1 } });
    expect(one.notification.results).toHaveLength(5);
    expect(one.notification.results[0]).toMatchObject({ subscriber_id: first.ids[0], status: "removed", status_code: 410, attempts: 1 });
    const two = await readBack(b, second.app.id, second.notificationId);
    expect(two).toMatchObject({ count: 3, total: 3, notification: { counts: { delivered: 2, removed: 1 } } });
    expect(two.ids.sort()).toEqual([...second.ids].sort());

    // Repeated: nothing left to move, nothing doubled.
    expect((await json(await admin({}))).data).toEqual({ subscribers: 0, deliveries: 0, dropped: 0, more: false });
    expect((await readBack(a, first.app.id, first.notificationId)).count).toBe(6);
  });

  it("repeats nothing when a step stopped between import and delete, and keeps a newer registration of the same endpoint", async () => {
    const team = await setupTeam();
    const { app, ids, notificationId } = await legacyApp(team, 4);
    // The browser of the last legacy subscriber registered again after the deploy (in the store).
    const sub = await browserSubscription(`https://push.example.com/legacy/${ids[3]}`);
    const again = await subscribe(team.key, app.id, sub);
    const prepare = env.DB.prepare.bind(env.DB);
    const failDelete = vi.spyOn(env.DB, "prepare").mockImplementation((query: string) => {
      if (query.startsWith("DELETE FROM push_subscribers")) throw new Error("D1 unavailable");
      return prepare(query);
    });
    vi.spyOn(console, "error").mockImplementation(() => {});
    expect((await admin({ limit: 1000 })).status).toBe(500);
    failDelete.mockRestore();
    expect((await legacyLeft(app.id)).subscribers).toBe(4);
    expect(await storeRows(app.id, "SELECT count(*) AS n FROM subscribers")).toEqual([{ n: 4 }]);

    await migrateAll(1000);
    expect(await legacyLeft(app.id)).toEqual({ subscribers: 0, deliveries: 0 });
    const back = await readBack(team, app.id, notificationId);
    expect(back).toMatchObject({ count: 4, total: 4 });
    expect(back.ids.sort()).toEqual([...ids.slice(0, 3), again.id].sort());
    expect(back.notification.results).toHaveLength(4);
  });

  // (Rows of deleted apps cannot be made here: the former tables cascade with the app, and D1 keeps
  // foreign keys on. The step drops them all the same should a database hold some.)
  it("answers 503 when a store fails (the rest is moved, the failed share stays in D1 for the next step), and needs the operator token", async () => {
    const team = await setupTeam();
    const kept = await legacyApp(team, 2);
    await expectError(await call("POST", "admin/push/migrate-stores", { key: team.key, body: {} }), 401, { error: "Invalid or missing admin token" });
    await expectError(await admin({ limit: 0 }), 422, expect.anything());

    const failing = await legacyApp(team, 2);
    await storeRows(failing.app.id, "CREATE TRIGGER fail_import BEFORE INSERT ON subscribers BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END");
    vi.spyOn(console, "error").mockImplementation(() => {});
    await expectError(await admin({ limit: 1000 }), 503, { error: "A push store did not answer; what was moved is recorded, run the step again" });
    expect(await legacyLeft(kept.app.id)).toEqual({ subscribers: 0, deliveries: 0 });
    expect(await legacyLeft(failing.app.id)).toEqual({ subscribers: 2, deliveries: 2 });

    await storeRows(failing.app.id, "DROP TRIGGER fail_import");
    await migrateAll(1000);
    expect(await legacyLeft(failing.app.id)).toEqual({ subscribers: 0, deliveries: 0 });
    expect((await readBack(team, failing.app.id, failing.notificationId)).count).toBe(2);
  });
});
