// Alert firings: each firing is recorded, resolves (once, with one "resolved" notification per
// channel) when the window falls back under the threshold, and is listed newest first by
// GET /logs/alerts/:id/firings. Also the resolve notifications' delivery and the firings' retention.
import { createScheduledController, env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../../src/index";
import { setClock } from "../../../src/platform/clock";
import { planLimits } from "../../../src/platform/plans";
import { alertNotificationsConsumer } from "../../../src/products/logs/logs.consumer";
import type { AlertNotification } from "../../../src/products/logs/logs.messages";
import { checkAlerts } from "../../../src/products/logs/log-alerts.cron";
import { call, expectError, json } from "../../helpers/api";
import { setUsed, usedOf } from "../../helpers/usage";
import { ingestBatch, ndjson, setupProject, type LogsFixture } from "./helpers";

const T0 = Date.parse("2026-06-01T12:00:00.000Z");
const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

async function createAlert(f: LogsFixture, body: Record<string, unknown> = {}) {
  const res = await call("POST", `logs/projects/${f.projectId}/alerts`, {
    key: f.key,
    body: { name: "errors", level: "error", threshold: 3, window_minutes: 5, notify_email: "owner@example.com", ...body },
  });
  expect(res.status).toBe(201);
  return (await json(res)).data;
}

async function errorsAt(f: LogsFixture, ms: number, n: number) {
  setClock(ms);
  const res = await ingestBatch(f.token, ndjson(Array.from({ length: n }, (_, i) => ({ message: `e${i}`, level: "error" }))));
  expect((await json(res)).count).toBe(n);
}

/** One check of `f`'s project at `ms`, capturing the notifications it queues. */
async function checkAt(f: LogsFixture, ms: number) {
  setClock(ms);
  const sent: AlertNotification[] = [];
  const spy = vi.spyOn(env.ALERT_QUEUE, "sendBatch").mockImplementation(async (messages) => {
    for (const m of messages) sent.push(m.body as AlertNotification);
    return undefined as never;
  });
  const result = await checkAlerts(env, ms, [f.projectId]);
  spy.mockRestore();
  return { ...result, sent };
}

async function firings(f: LogsFixture, alertId: string, query = "") {
  const res = await call("GET", `logs/alerts/${alertId}/firings${query ? `?${query}` : ""}`, { key: f.key });
  expect(res.status).toBe(200);
  return json(res);
}

function fakeBatch(bodies: AlertNotification[], attempts = 1) {
  const messages = bodies.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), body, attempts, ack: vi.fn(), retry: vi.fn() }));
  return { queue: "alert-notifications", messages, ackAll: vi.fn(), retryAll: vi.fn() } as unknown as MessageBatch<AlertNotification> & {
    messages: (typeof messages)[number][];
  };
}

describe("firings", () => {
  it("records a firing and resolves it once the window falls back under the threshold, on every channel", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { notify_webhook: "https://hooks.example.com/a", channels: ["email", "webhook"] });
    await errorsAt(f, T0, 3);
    const fired = await checkAt(f, T0 + MIN);
    expect(fired.fired).toEqual([alert.id]);
    const firingId = fired.sent[0].firing_id;
    expect((await firings(f, alert.id)).data).toEqual([{ id: firingId, alert_id: alert.id, fired_at: iso(T0 + MIN), count: 3, resolved_at: null }]);

    // Still 3 inside the window: nothing to resolve.
    expect((await checkAt(f, T0 + 4 * MIN)).sent).toEqual([]);
    // One entry later, the first three leave the window: 1 < 3.
    await errorsAt(f, T0 + 4 * MIN, 1);
    const calm = await checkAt(f, T0 + 5 * MIN);
    expect(calm.fired).toEqual([]);
    expect(calm.resolved).toEqual([firingId]);
    expect(calm.sent).toEqual(
      (["email", "webhook"] as const).map((channel) => ({
        kind: "resolved",
        firing_id: firingId,
        alert_id: alert.id,
        team_id: f.teamId,
        channel,
        count: 1,
        window_start: iso(T0),
        triggered_at: iso(T0 + MIN),
        resolved_at: iso(T0 + 5 * MIN),
      })),
    );
    expect((await firings(f, alert.id)).data[0].resolved_at).toBe(iso(T0 + 5 * MIN));
    // Resolved once: later checks send nothing more.
    expect((await checkAt(f, T0 + 6 * MIN)).sent).toEqual([]);
  });

  it("resolves once when checks overlap, and gives the claim back when the queue refuses the notifications", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { threshold: 1 });
    await errorsAt(f, T0, 1);
    const { sent } = await checkAt(f, T0 + MIN);
    const firingId = sent[0].firing_id;

    setClock(T0 + 10 * MIN);
    const refuse = vi.spyOn(env.ALERT_QUEUE, "sendBatch").mockRejectedValueOnce(new Error("queue down"));
    await expect(checkAlerts(env, T0 + 10 * MIN, [f.projectId])).rejects.toThrow("queue down");
    refuse.mockRestore();
    expect((await firings(f, alert.id)).data[0].resolved_at).toBeNull();

    const spy = vi.spyOn(env.ALERT_QUEUE, "sendBatch").mockResolvedValue(undefined as never);
    const runs = await Promise.all([1, 2, 3].map(() => checkAlerts(env, T0 + 10 * MIN, [f.projectId])));
    expect(runs.flatMap((r) => r.resolved)).toEqual([firingId]);
    const notes = spy.mock.calls.flatMap(([messages]) => [...messages]).map((m) => m.body as AlertNotification);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ kind: "resolved", firing_id: firingId, count: 0 });
  });

  it("a firing of the same alert while the last is open closes it silently; the list is newest first and paginated", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { threshold: 2, window_minutes: 5 });
    await errorsAt(f, T0, 2);
    const first = await checkAt(f, T0 + MIN);
    // Still over the threshold when the cool-down ends: a new firing, no resolve notification.
    await errorsAt(f, T0 + 5 * MIN, 2);
    const second = await checkAt(f, T0 + 6 * MIN);
    expect(second.fired).toEqual([alert.id]);
    expect(second.sent.map((n) => n.kind ?? "triggered")).toEqual(["triggered"]);
    await errorsAt(f, T0 + 10 * MIN, 2);
    const third = await checkAt(f, T0 + 11 * MIN);
    expect(third.fired).toEqual([alert.id]);

    const all = (await firings(f, alert.id)).data;
    expect(all.map((x: any) => [x.id, x.fired_at, x.resolved_at])).toEqual([
      [third.sent[0].firing_id, iso(T0 + 11 * MIN), null],
      [second.sent[0].firing_id, iso(T0 + 6 * MIN), iso(T0 + 11 * MIN)],
      [first.sent[0].firing_id, iso(T0 + MIN), iso(T0 + 6 * MIN)],
    ]);
    const page1 = await firings(f, alert.id, "limit=2");
    expect(page1.data.map((x: any) => x.fired_at)).toEqual([iso(T0 + 11 * MIN), iso(T0 + 6 * MIN)]);
    expect(page1.pagination.limit).toBe(2);
    const page2 = await firings(f, alert.id, `limit=2&cursor=${page1.pagination.next_cursor}`);
    expect(page2.data.map((x: any) => x.fired_at)).toEqual([iso(T0 + MIN)]);
    expect(page2.pagination.next_cursor).toBeNull();
  });

  it("gives the firing row back with the claim when the queue refuses the firing's notifications", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { threshold: 2 });
    await errorsAt(f, T0, 2);
    await checkAt(f, T0 + MIN);
    await errorsAt(f, T0 + 5 * MIN, 2);
    setClock(T0 + 6 * MIN);
    vi.spyOn(env.ALERT_QUEUE, "sendBatch").mockRejectedValueOnce(new Error("queue down"));
    await expect(checkAlerts(env, T0 + 6 * MIN, [f.projectId])).rejects.toThrow("queue down");
    // No unannounced firing, and the open one is open again.
    expect((await firings(f, alert.id)).data.map((x: any) => [x.fired_at, x.resolved_at])).toEqual([[iso(T0 + MIN), null]]);
  });

  it("disabling an alert closes its open firing without a notification", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { threshold: 1 });
    await errorsAt(f, T0, 1);
    await checkAt(f, T0 + MIN);
    setClock(T0 + 2 * MIN);
    expect((await call("PUT", `logs/alerts/${alert.id}`, { key: f.key, body: { enabled: false } })).status).toBe(200);
    expect((await firings(f, alert.id)).data[0].resolved_at).toBe(iso(T0 + 2 * MIN));
    expect((await checkAt(f, T0 + 20 * MIN)).sent).toEqual([]);
  });

  it("answers 404 for another team's or an unknown alert, 422 for a bad cursor or limit; needs logs:read", async () => {
    const f = await setupProject();
    const other = await setupProject();
    const alert = await createAlert(f);
    await expectError(await call("GET", `logs/alerts/${alert.id}/firings`, { key: other.key }), 404, { error: "Alert not found" });
    await expectError(await call("GET", `logs/alerts/${crypto.randomUUID()}/firings`, { key: f.key }), 404, { error: "Alert not found" });
    await expectError(await call("GET", `logs/alerts/${alert.id}/firings?cursor=nope`, { key: f.key }), 422, {
      error: "Validation failed",
      details: { cursor: ["is invalid"] },
    });
    expect((await call("GET", `logs/alerts/${alert.id}/firings?limit=0`, { key: f.key })).status).toBe(422);
    const writeOnly = await setupProject({ scopes: ["logs:write"] });
    const theirs = await createAlert(writeOnly);
    await expectError(await call("GET", `logs/alerts/${theirs.id}/firings`, { key: writeOnly.key }), 403, { error: "Insufficient scope" });
    expect((await firings(f, alert.id)).data).toEqual([]);
  });

  it("keeps firings 90 days: the hourly job deletes older ones", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { threshold: 1, window_minutes: 1 });
    await errorsAt(f, T0, 1);
    await checkAt(f, T0 + 30_000);
    await errorsAt(f, T0 + 89 * 24 * 60 * MIN, 1);
    await checkAt(f, T0 + 89 * 24 * 60 * MIN + 30_000);
    const at = T0 + 90 * 24 * 60 * MIN + 60 * MIN;
    setClock(at);
    await worker.scheduled(createScheduledController({ cron: "0 * * * *", scheduledTime: at }), env);
    expect((await firings(f, alert.id)).data.map((x: any) => x.fired_at)).toEqual([iso(T0 + 89 * 24 * 60 * MIN + 30_000)]);
  });

  it("deleting the alert deletes its firings", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { threshold: 1 });
    await errorsAt(f, T0, 1);
    await checkAt(f, T0 + MIN);
    expect((await call("DELETE", `logs/alerts/${alert.id}`, { key: f.key })).status).toBe(204);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM log_alert_firings WHERE alert_id = ?").bind(alert.id).first<{ n: number }>();
    expect(left!.n).toBe(0);
  });
});

describe("resolve notifications", () => {
  const resolvedNote = (f: LogsFixture, alertId: string, channel: "email" | "webhook", firingId = crypto.randomUUID()): AlertNotification => ({
    kind: "resolved",
    firing_id: firingId,
    alert_id: alertId,
    team_id: f.teamId,
    channel,
    count: 1,
    window_start: iso(T0),
    triggered_at: iso(T0 - 4 * MIN),
    resolved_at: iso(T0 + 5 * MIN),
  });

  it("posts log.alert.resolved to the webhook once, beside (not instead of) the firing's own notification", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { notify_email: null, notify_webhook: "https://hooks.example.com/alerts" });
    const fetchSpy = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
    const firingId = crypto.randomUUID();
    const triggered: AlertNotification = { ...resolvedNote(f, alert.id, "webhook", firingId), kind: undefined, resolved_at: undefined };
    delete triggered.kind;
    delete triggered.resolved_at;
    await alertNotificationsConsumer.consume(fakeBatch([triggered]), env);
    const note = resolvedNote(f, alert.id, "webhook", firingId);
    await alertNotificationsConsumer.consume(fakeBatch([note]), env);
    await alertNotificationsConsumer.consume(fakeBatch([note], 2), env);
    expect(fetchSpy).toHaveBeenCalledTimes(2);
    const [, init] = fetchSpy.mock.calls[1] as [string, RequestInit];
    expect((init.headers as Record<string, string>)["x-alert-firing-id"]).toBe(firingId);
    expect(JSON.parse(init.body as string)).toEqual({
      type: "log.alert.resolved",
      firing_id: firingId,
      triggered_at: note.triggered_at,
      resolved_at: note.resolved_at,
      window_start: note.window_start,
      count: 1,
      alert: { id: alert.id, name: "errors", project_id: f.projectId, level: "error", threshold: 3, window_minutes: 5 },
    });
    expect(JSON.parse((fetchSpy.mock.calls[0][1] as RequestInit).body as string).type).toBe("log.alert.triggered");
  });

  it("emails 'resolved' and meters it as one unit of mail quota; with none left it is skipped", async () => {
    setClock(T0);
    const f = await setupProject();
    const alert = await createAlert(f);
    const used = async () => (await usedOf(f.teamId, "mail")) ?? 0;
    await alertNotificationsConsumer.consume(fakeBatch([resolvedNote(f, alert.id, "email")]), env);
    expect(await used()).toBe(1);
    const row = await env.DB.prepare("SELECT subject, text FROM platform_outbox WHERE team_id = ? AND kind = 'alert'")
      .bind(f.teamId)
      .first<{ subject: string; text: string }>();
    expect(row!.subject).toBe("[Log alert resolved] errors: 1 error entries in the last 5 minute(s) (threshold 3)");

    await setUsed(f.teamId, "mail", planLimits("pro").monthly.mail as number);
    const note = resolvedNote(f, alert.id, "email");
    const batch = fakeBatch([note]);
    await alertNotificationsConsumer.consume(batch, env);
    expect(batch.messages[0].ack).toHaveBeenCalled();
    const delivery = await env.DB.prepare("SELECT status, last_error FROM log_alert_deliveries WHERE firing_id = ?").bind(`${note.firing_id}:resolved`).first();
    expect(delivery).toEqual({ status: "failed", last_error: "monthly mail quota used up" });
    const outbox = await env.DB.prepare("SELECT COUNT(*) AS n FROM platform_outbox WHERE team_id = ? AND kind = 'alert'").bind(f.teamId).first<{ n: number }>();
    expect(outbox!.n).toBe(1);
  });
});
