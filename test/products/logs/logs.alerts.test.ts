import { createExecutionContext, createMessageBatch, createScheduledController, env, getQueueResult, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../../src/index";
import { setClock } from "../../../src/platform/clock";
import { planLimits } from "../../../src/platform/plans";
import { deliveriesOf } from "../../../src/platform/jobs/queues";
import { alertChecksConsumer, alertNotificationsConsumer } from "../../../src/products/logs/logs.consumer";
import type { AlertCheck, AlertNotification } from "../../../src/products/logs/logs.messages";
import { checkProjects, scheduleAlertChecks, type AlertRunOptions } from "../../../src/products/logs/log-alerts.cron";
import { logStore } from "../../../src/products/logs/logs.store";
import { admin, call, json } from "../../helpers/api";
import { createLink } from "../../../src/console/sign-in.service";
import { getDb } from "../../../src/db/client";
import { setUsed, usedOf } from "../../helpers/usage";
import { ingestBatch, ndjson, setupProject, type LogsFixture } from "./helpers";

const T0 = Date.parse("2026-06-01T12:00:00.000Z");
const MIN = 60_000;

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

/** Runs the cron's fan-out and captures the checks it queues, instead of the queue delivering them later. */
async function queuedChecks(options?: AlertRunOptions): Promise<AlertCheck[]> {
  const checks: AlertCheck[] = [];
  const spy = vi.spyOn(env.ALERT_CHECK_QUEUE, "sendBatch").mockImplementation(async (messages) => {
    for (const m of messages) checks.push(m.body as AlertCheck);
    return undefined as never;
  });
  try {
    await scheduleAlertChecks(env, options);
  } finally {
    spy.mockRestore();
  }
  return checks;
}

/** The every-minute check as the platform runs it: the cron's fan-out, then each queued check. Returns the ids fired. */
async function fireDueAlerts(options?: AlertRunOptions): Promise<string[]> {
  const fired: string[] = [];
  for (const check of await queuedChecks(options)) fired.push(...(await checkProjects(env, check.at, check.project_ids)));
  return fired;
}

async function createAlert(f: LogsFixture, body: Record<string, unknown>) {
  const res = await call("POST", `logs/projects/${f.projectId}/alerts`, {
    key: f.key,
    body: { name: "errors", level: "error", threshold: 3, window_minutes: 5, notify_email: "owner@example.com", ...body },
  });
  expect(res.status).toBe(201);
  return (await json(res)).data;
}

async function entriesAt(f: LogsFixture, ms: number, level: string, n: number) {
  setClock(ms);
  const res = await ingestBatch(f.token, ndjson(Array.from({ length: n }, (_, i) => ({ message: `e${i}`, level }))));
  expect((await json(res)).count).toBe(n);
}

/** Runs the check at `ms`; returns the ids fired and the queued notifications. */
async function checkAt(ms: number): Promise<{ fired: string[]; sent: AlertNotification[] }> {
  setClock(ms);
  const sent: AlertNotification[] = [];
  const spy = vi.spyOn(env.ALERT_QUEUE, "sendBatch").mockImplementation(async (messages) => {
    for (const m of messages) sent.push(m.body as AlertNotification);
    return undefined as never;
  });
  const fired = await fireDueAlerts();
  spy.mockRestore();
  return { fired, sent };
}

async function lastTriggered(alertId: string): Promise<number | null> {
  return (await env.DB.prepare("SELECT last_triggered_at AS t FROM log_alerts WHERE id = ?").bind(alertId).first<{ t: number | null }>())!.t;
}

function fakeBatch(bodies: AlertNotification[], attempts = 1) {
  const messages = bodies.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), body, attempts, ack: vi.fn(), retry: vi.fn() }));
  return { queue: "alert-notifications", messages, ackAll: vi.fn(), retryAll: vi.fn() } as unknown as MessageBatch<AlertNotification> & {
    messages: (typeof messages)[number][];
  };
}

describe("alert check", () => {
  it("fires when the count reaches the threshold, not one entry before", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, {});
    await entriesAt(f, T0, "error", 2);
    await entriesAt(f, T0, "warn", 10); // other levels do not count
    expect((await checkAt(T0 + MIN)).fired).not.toContain(alert.id);
    expect(await lastTriggered(alert.id)).toBeNull();

    await entriesAt(f, T0 + MIN, "error", 1);
    const { fired, sent } = await checkAt(T0 + 2 * MIN);
    expect(fired).toContain(alert.id);
    const mine = sent.filter((n) => n.alert_id === alert.id);
    expect(mine).toEqual([
      {
        firing_id: expect.any(String),
        alert_id: alert.id,
        team_id: f.teamId,
        channel: "email",
        count: 3,
        window_start: new Date(T0 + 2 * MIN - 5 * MIN).toISOString(),
        triggered_at: new Date(T0 + 2 * MIN).toISOString(),
      },
    ]);
    expect(await lastTriggered(alert.id)).toBe(T0 + 2 * MIN);
    const got = await json(await call("GET", `logs/projects/${f.projectId}/alerts`, { key: f.key }));
    expect(got.data[0].last_triggered_at).toBe(new Date(T0 + 2 * MIN).toISOString());
  });

  it("counts only inside the window: an entry exactly window_minutes old is out", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { threshold: 3, window_minutes: 5 });
    await entriesAt(f, T0, "error", 3);
    expect((await checkAt(T0 + 5 * MIN)).fired).not.toContain(alert.id);
    expect((await checkAt(T0 + 5 * MIN - 1)).fired).toContain(alert.id);
  });

  it("does not fire again until window_minutes have passed since the last firing", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { threshold: 2, window_minutes: 10 });
    await entriesAt(f, T0, "error", 5);
    expect((await checkAt(T0 + MIN)).fired).toContain(alert.id);
    await entriesAt(f, T0 + 2 * MIN, "error", 5);
    expect((await checkAt(T0 + 2 * MIN)).fired).not.toContain(alert.id);
    expect((await checkAt(T0 + 11 * MIN - 1)).fired).not.toContain(alert.id);
    expect(await lastTriggered(alert.id)).toBe(T0 + MIN);
    // Ten minutes after the firing: the five entries of T0+2 min are still inside the window.
    expect((await checkAt(T0 + 11 * MIN)).fired).toContain(alert.id);
    expect(await lastTriggered(alert.id)).toBe(T0 + 11 * MIN);
  });

  it("is bounded per run: pages of projects by id from a start, wrapping round, never more than maxPages", async () => {
    const fixtures: LogsFixture[] = [];
    const alertOf = new Map<string, string>();
    for (let i = 0; i < 5; i++) {
      const f = await setupProject();
      fixtures.push(f);
      alertOf.set(f.projectId, (await createAlert(f, { threshold: 1, window_minutes: 5 })).id);
      await entriesAt(f, T0, "error", 1);
    }
    setClock(T0 + MIN);
    vi.spyOn(env.ALERT_QUEUE, "sendBatch").mockResolvedValue(undefined as never);
    const projects = fixtures.map((f) => f.projectId).sort();
    const ids = projects.map((p) => alertOf.get(p)!);
    // Projects with enabled alerts are looked at in id order; a run of one page of 2 sees at most 2.
    const all = await env.DB.prepare("SELECT DISTINCT project_id FROM log_alerts WHERE enabled = 1 ORDER BY project_id").all<{ project_id: string }>();
    const before = all.results.map((r) => r.project_id).filter((id) => id < projects[2]);
    const start = before.length ? before[before.length - 1] : "";
    const checks = await queuedChecks({ pageSize: 2, maxPages: 1, start });
    expect(checks.flatMap((c) => c.project_ids).length).toBeLessThanOrEqual(2);
    const bounded = await fireDueAlerts({ pageSize: 2, maxPages: 1, start });
    expect(bounded.every((id) => ids.includes(id))).toBe(true);
    expect(bounded.length).toBeLessThanOrEqual(2);
    // Starting after the last of ours, the run wraps round to the beginning and reaches the rest.
    const rest = await fireDueAlerts({ pageSize: 2, maxPages: 10_000, start: projects[4] });
    expect([...bounded, ...rest].filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort());
  });

  it("groups projects into queue messages and asks each project's own store", async () => {
    const a = await setupProject();
    const b = await setupProject();
    const alertA = await createAlert(a, { threshold: 2 });
    const alertB = await createAlert(b, { threshold: 2 });
    await entriesAt(a, T0, "error", 2);
    await entriesAt(b, T0, "error", 1);
    setClock(T0 + MIN);
    const checks = await queuedChecks();
    const check = checks.find((c) => c.project_ids.includes(a.projectId))!;
    expect(check.at).toBe(T0 + MIN);
    expect(checks.flatMap((c) => c.project_ids)).toContain(b.projectId);
    vi.spyOn(env.ALERT_QUEUE, "sendBatch").mockResolvedValue(undefined as never);
    const fired = await checkProjects(env, T0 + MIN, [a.projectId, b.projectId]);
    expect(fired).toContain(alertA.id);
    expect(fired).not.toContain(alertB.id);
  });

  it("fires once when two runs overlap", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { threshold: 1, window_minutes: 5 });
    await entriesAt(f, T0, "error", 1);
    setClock(T0 + MIN);
    const spy = vi.spyOn(env.ALERT_QUEUE, "sendBatch").mockResolvedValue(undefined as never);
    const runs = await Promise.all([fireDueAlerts(), fireDueAlerts(), fireDueAlerts()]);
    expect(runs.flat().filter((id) => id === alert.id)).toHaveLength(1);
    const notified = spy.mock.calls.flatMap(([messages]) => [...messages]).filter((m) => (m.body as AlertNotification).alert_id === alert.id);
    expect(notified).toHaveLength(1);
  });

  it("skips disabled alerts, sends one message per channel with an address, gives the claim back when the queue fails", async () => {
    const f = await setupProject();
    const disabled = await createAlert(f, { threshold: 1, enabled: false });
    const both = await createAlert(f, { threshold: 1, notify_webhook: "https://hooks.example.com/a", channels: ["email", "webhook"] });
    const noAddress = await createAlert(f, { threshold: 1, notify_webhook: "https://hooks.example.com/b", channels: ["email", "webhook"] });
    // An address removed behind the API's back: that channel never fires.
    await env.DB.prepare("UPDATE log_alerts SET notify_webhook = NULL WHERE id = ?").bind(noAddress.id).run();
    await entriesAt(f, T0, "error", 1);

    setClock(T0 + MIN);
    vi.spyOn(env.ALERT_QUEUE, "sendBatch").mockRejectedValueOnce(new Error("queue down"));
    await expect(fireDueAlerts()).rejects.toThrow("queue down");
    expect(await lastTriggered(both.id)).toBeNull();
    vi.restoreAllMocks();

    const { fired, sent } = await checkAt(T0 + MIN);
    expect(fired).not.toContain(disabled.id);
    expect(sent.filter((n) => n.alert_id === both.id).map((n) => n.channel)).toEqual(["email", "webhook"]);
    expect(sent.filter((n) => n.alert_id === noAddress.id).map((n) => n.channel)).toEqual(["email"]);
  });

  it("runs from the every-minute cron trigger through the log-alert-checks queue", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { threshold: 1 });
    await entriesAt(f, T0, "error", 1);
    setClock(T0 + MIN);
    const checks: AlertCheck[] = [];
    const fanOut = vi.spyOn(env.ALERT_CHECK_QUEUE, "sendBatch").mockImplementation(async (messages) => {
      for (const m of messages) checks.push(m.body as AlertCheck);
      return undefined as never;
    });
    await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: T0 + MIN }), env);
    fanOut.mockRestore();
    expect(await lastTriggered(alert.id)).toBeNull();
    const mine = checks.filter((c) => c.project_ids.includes(f.projectId));
    expect(mine).toHaveLength(1);

    const notify = vi.spyOn(env.ALERT_QUEUE, "sendBatch").mockResolvedValue(undefined as never);
    const batch = createMessageBatch("log-alert-checks", [{ id: "check-1", timestamp: new Date(), attempts: 1, body: mine[0] }]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks).toEqual(["check-1"]);
    expect(await lastTriggered(alert.id)).toBe(T0 + MIN);
    expect(notify).toHaveBeenCalled();
  });

  it("retries a check whose store did not answer, and the retry fires nothing twice", async () => {
    const f = await setupProject();
    const other = await setupProject();
    const alert = await createAlert(f, { threshold: 1 });
    const otherAlert = await createAlert(other, { threshold: 1 });
    await entriesAt(f, T0, "error", 1);
    await entriesAt(other, T0, "error", 1);
    setClock(T0 + MIN);
    const notify = vi.spyOn(env.ALERT_QUEUE, "sendBatch").mockResolvedValue(undefined as never);
    const broken = {
      ...env,
      LOG_STORE: {
        idFromName: (name: string) => env.LOG_STORE.idFromName(name),
        get: (id: DurableObjectId) =>
          id.equals(env.LOG_STORE.idFromName(f.projectId))
            ? {
                countLevels: async () => {
                  throw new Error("store unreachable");
                },
              }
            : env.LOG_STORE.get(id),
      },
    } as unknown as typeof env;
    const body: AlertCheck = { at: T0 + MIN, project_ids: [f.projectId, other.projectId] };
    const batch = createMessageBatch("log-alert-checks", [{ id: "check-2", timestamp: new Date(), attempts: 1, body }]);
    const ctx = createExecutionContext();
    await alertChecksConsumer.consume(batch, broken);
    const result = await getQueueResult(batch, ctx);
    expect(result.retryMessages.map((m: { msgId: string }) => m.msgId)).toEqual(["check-2"]);
    // The store that answered fired; the other waits for the retry.
    expect(await lastTriggered(otherAlert.id)).toBe(T0 + MIN);
    expect(await lastTriggered(alert.id)).toBeNull();

    expect(await checkProjects(env, T0 + MIN, body.project_ids)).toEqual([alert.id]);
    const announced = notify.mock.calls.flatMap(([messages]) => [...messages]).map((m) => (m.body as AlertNotification).alert_id);
    expect(announced.filter((id) => id === otherAlert.id)).toHaveLength(1);
    expect(announced.filter((id) => id === alert.id)).toHaveLength(1);
  });
});

describe("alerts per project", () => {
  it("regression: 25 parallel creates store exactly 20 alerts on a project, another project keeps its own room", async () => {
    const f = await setupProject();
    const body = { name: "errors", level: "error", threshold: 3, window_minutes: 5, notify_email: "owner@example.com" };
    const results = await Promise.all(Array.from({ length: 25 }, () => call("POST", `logs/projects/${f.projectId}/alerts`, { key: f.key, body })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(20);
    const refused = results.find((r) => r.status !== 201)!;
    expect(refused.status).toBe(422);
    expect(await json(refused)).toEqual({ error: "Validation failed", details: { name: ["a project can have at most 20 alerts"] } });
    expect((await json(await call("GET", `logs/projects/${f.projectId}/alerts`, { key: f.key }))).data).toHaveLength(20);
    const other = await setupProject();
    await createAlert(other, {});
  });
});

describe("alert recipients (issue 23, finding 4)", () => {
  it("regression: notify_email must be an accepted member of the team: 422 on create and on change, nothing stored", async () => {
    const f = await setupProject();
    const base = { name: "errors", level: "error", threshold: 3, window_minutes: 5 };
    const refused = { error: "Validation failed", details: { notify_email: ["must be the address of a member of the team who has accepted"] } };
    const path = `logs/projects/${f.projectId}/alerts`;
    for (const stranger of ["victim@example.org", "owner@example.com.evil.test", "other@example.com"]) {
      const res = await call("POST", path, { key: f.key, body: { ...base, notify_email: stranger } });
      expect({ status: res.status, body: await json(res) }).toEqual({ status: 422, body: refused });
    }
    const count = await env.DB.prepare("SELECT COUNT(*) AS n FROM log_alerts WHERE team_id = ?").bind(f.teamId).first<{ n: number }>();
    expect(count!.n).toBe(0);
    const alert = await createAlert(f, { notify_email: "Owner@Example.com" });
    const changed = await call("PUT", `logs/alerts/${alert.id}`, { key: f.key, body: { notify_email: "victim@example.org" } });
    expect({ status: changed.status, body: await json(changed) }).toEqual({ status: 422, body: refused });
    const stored = await env.DB.prepare("SELECT notify_email FROM log_alerts WHERE id = ?").bind(alert.id).first<{ notify_email: string }>();
    expect(stored!.notify_email).toBe("Owner@Example.com");
  });

  it("a member who has accepted may receive alert emails; an invitee whose link is unused may not", async () => {
    const f = await setupProject();
    const base = { name: "errors", level: "error", threshold: 3, window_minutes: 5 };
    expect((await admin("POST", `teams/${f.teamId}/members`, { email: "Dev@Example.com", role: "viewer" })).status).toBe(201);
    expect((await call("POST", `logs/projects/${f.projectId}/alerts`, { key: f.key, body: { ...base, notify_email: "dev@example.com" } })).status).toBe(201);
    await createLink(getDb(env.DB), { kind: "invite", email: "invitee@example.com", teamId: f.teamId, role: "developer", teamName: "T", invitedBy: null });
    const pending = await call("POST", `logs/projects/${f.projectId}/alerts`, { key: f.key, body: { ...base, notify_email: "invitee@example.com" } });
    expect(pending.status).toBe(422);
  });
});

describe("alert notifications consumer", () => {
  async function firedNote(f: LogsFixture, alertId: string, channel: "email" | "webhook"): Promise<AlertNotification> {
    return {
      firing_id: crypto.randomUUID(),
      alert_id: alertId,
      team_id: f.teamId,
      channel,
      count: 7,
      window_start: new Date(T0 - 5 * MIN).toISOString(),
      triggered_at: new Date(T0).toISOString(),
    };
  }

  it("queues the email in the platform outbox once, even when the message is redelivered", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, {});
    const note = await firedNote(f, alert.id, "email");
    const batch = fakeBatch([note]);
    await alertNotificationsConsumer.consume(batch, env);
    expect(batch.messages[0].ack).toHaveBeenCalled();
    await alertNotificationsConsumer.consume(fakeBatch([note], 2), env);
    const { results } = await env.DB.prepare("SELECT * FROM platform_outbox WHERE team_id = ? AND kind = 'alert'").bind(f.teamId).all<Record<string, string>>();
    expect(results).toHaveLength(1);
    expect(results[0].to).toBe("owner@example.com");
    expect(results[0].subject).toContain("errors");
    expect(results[0].subject).toContain("7 error entries");
  });

  it("regression: an alert name with CR/LF never adds a header line to the alert email", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { name: "x\r\nBcc: attacker@evil.test\r\n\r\nbody" });
    await alertNotificationsConsumer.consume(fakeBatch([await firedNote(f, alert.id, "email")]), env);
    const row = await env.DB.prepare("SELECT subject FROM platform_outbox WHERE team_id = ? AND kind = 'alert'").bind(f.teamId).first<{ subject: string }>();
    expect(row!.subject).not.toMatch(/[\r\n]/);
    expect(row!.subject.startsWith("[Log alert] x Bcc: attacker[at]evil[.]test body")).toBe(true);
  });

  it("regression (issue 23, finding 4): tenant names in alert mail are one plain line of at most 100 characters and never a link", async () => {
    const f = await setupProject();
    const lure = "Your account is locked, verify at https://evil.test/login or www.evil.test or mail help@evil.test " + "x".repeat(100);
    const alert = await createAlert(f, { name: lure });
    await alertNotificationsConsumer.consume(fakeBatch([await firedNote(f, alert.id, "email")]), env);
    const row = await env.DB.prepare("SELECT subject, text, html FROM platform_outbox WHERE team_id = ? AND kind = 'alert'")
      .bind(f.teamId)
      .first<Record<string, string | null>>();
    for (const part of [row!.subject!, row!.text!]) {
      expect(part).not.toMatch(/https?:\/\/evil|evil\.test|www\.evil|help@/);
      expect(part).toContain("verify at evil[.]test/login");
      expect(part).not.toContain("https");
    }
    expect(row!.html).toBeNull();
    const shown = /^\[Log alert\] (.*): 7 error entries/.exec(row!.subject!)![1];
    expect([...shown]).toHaveLength(100);
    expect(shown.endsWith("…")).toBe(true);
    expect(row!.text).toContain(`"${shown}"`);
  });

  it("regression (issue 23, finding 4): an alert whose notify_email left the team sends nothing and spends no unit", async () => {
    setClock(T0);
    const f = await setupProject();
    const alert = await createAlert(f, {});
    await env.DB.prepare("DELETE FROM memberships WHERE team_id = ?").bind(f.teamId).run();
    const note = await firedNote(f, alert.id, "email");
    await alertNotificationsConsumer.consume(fakeBatch([note]), env);
    const outbox = await env.DB.prepare("SELECT COUNT(*) AS n FROM platform_outbox WHERE team_id = ?").bind(f.teamId).first<{ n: number }>();
    expect(outbox!.n).toBe(0);
    expect(await usedOf(f.teamId, "mail")).toBeNull();
    const delivery = await env.DB.prepare("SELECT status, last_error FROM log_alert_deliveries WHERE firing_id = ?").bind(note.firing_id).first();
    expect(delivery).toEqual({ status: "failed", last_error: "notify_email is no longer a member of the team" });
  });

  it("meters each alert email as one unit of the team's mail quota; with none left the email is skipped, not retried", async () => {
    setClock(T0);
    const f = await setupProject();
    const alert = await createAlert(f, {});
    const used = async () => (await usedOf(f.teamId, "mail")) ?? 0;
    await alertNotificationsConsumer.consume(fakeBatch([await firedNote(f, alert.id, "email")]), env);
    expect(await used()).toBe(1);
    const limit = planLimits("pro").monthly.mail as number;
    await setUsed(f.teamId, "mail", limit);
    const note = await firedNote(f, alert.id, "email");
    const batch = fakeBatch([note]);
    await alertNotificationsConsumer.consume(batch, env);
    expect(batch.messages[0].ack).toHaveBeenCalled();
    const outbox = await env.DB.prepare("SELECT COUNT(*) AS n FROM platform_outbox WHERE team_id = ? AND kind = 'alert'").bind(f.teamId).first<{ n: number }>();
    expect(outbox!.n).toBe(1);
    const delivery = await env.DB.prepare("SELECT status, last_error FROM log_alert_deliveries WHERE firing_id = ?").bind(note.firing_id).first();
    expect(delivery).toEqual({ status: "failed", last_error: "monthly mail quota used up" });
  });

  it("posts the webhook through the guard, retries with backoff on failure, and never sends twice", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { notify_email: null, notify_webhook: "https://hooks.example.com/alerts" });
    const note = await firedNote(f, alert.id, "webhook");
    const fetchSpy = vi.spyOn(globalThis, "fetch").mockResolvedValueOnce(new Response("nope", { status: 500 }));

    const first = fakeBatch([note], 1);
    await alertNotificationsConsumer.consume(first, env);
    expect(first.messages[0].retry).toHaveBeenCalledWith({ delaySeconds: 10 });
    expect(first.messages[0].ack).not.toHaveBeenCalled();

    fetchSpy.mockResolvedValueOnce(new Response("ok", { status: 200 }));
    const second = fakeBatch([note], 2);
    await alertNotificationsConsumer.consume(second, env);
    expect(second.messages[0].ack).toHaveBeenCalled();
    expect(fetchSpy).toHaveBeenCalledTimes(2);
    const [url, init] = fetchSpy.mock.calls[1] as [string, RequestInit];
    expect(url).toBe("https://hooks.example.com/alerts");
    expect(init.method).toBe("POST");
    expect(init.signal).toBeInstanceOf(AbortSignal);
    expect(JSON.parse(init.body as string)).toEqual({
      type: "log.alert.triggered",
      firing_id: note.firing_id,
      triggered_at: note.triggered_at,
      window_start: note.window_start,
      count: 7,
      alert: { id: alert.id, name: "errors", project_id: f.projectId, level: "error", threshold: 3, window_minutes: 5 },
    });

    const again = fakeBatch([note], 3);
    await alertNotificationsConsumer.consume(again, env);
    expect(again.messages[0].ack).toHaveBeenCalled();
    expect(fetchSpy).toHaveBeenCalledTimes(2);
    const row = await env.DB.prepare("SELECT status, attempts FROM log_alert_deliveries WHERE firing_id = ?").bind(note.firing_id).first();
    expect(row).toEqual({ status: "sent", attempts: 2 });
  });

  it("gives up after the last attempt and records the failure", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { notify_email: null, notify_webhook: "https://hooks.example.com/alerts" });
    const note = await firedNote(f, alert.id, "webhook");
    vi.spyOn(globalThis, "fetch").mockRejectedValue(new TypeError("connection refused"));
    const batch = fakeBatch([note], deliveriesOf("alert-notifications"));
    await alertNotificationsConsumer.consume(batch, env);
    expect(batch.messages[0].ack).toHaveBeenCalled();
    expect(batch.messages[0].retry).not.toHaveBeenCalled();
    const row = await env.DB.prepare("SELECT status, last_error FROM log_alert_deliveries WHERE firing_id = ?").bind(note.firing_id).first();
    expect(row).toEqual({ status: "failed", last_error: "connection refused" });
  });

  it("refuses a webhook address the SSRF guard forbids and sends nothing for a deleted alert", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { notify_email: null, notify_webhook: "https://hooks.example.com/alerts" });
    await env.DB.prepare("UPDATE log_alerts SET notify_webhook = 'file:///etc/passwd' WHERE id = ?").bind(alert.id).run();
    const fetchSpy = vi.spyOn(globalThis, "fetch");
    const blocked = fakeBatch([await firedNote(f, alert.id, "webhook")], 1);
    await alertNotificationsConsumer.consume(blocked, env);
    expect(blocked.messages[0].retry).toHaveBeenCalled();
    expect(fetchSpy).not.toHaveBeenCalled();

    await call("DELETE", `logs/alerts/${alert.id}`, { key: f.key });
    const gone = fakeBatch([await firedNote(f, alert.id, "webhook")], 1);
    await alertNotificationsConsumer.consume(gone, env);
    expect(gone.messages[0].ack).toHaveBeenCalled();
    expect(fetchSpy).not.toHaveBeenCalled();
  });
});

describe("retention", () => {
  it("each store deletes entries older than its project's retention_days, oldest first", async () => {
    const short = await setupProject({ retention_days: 1 });
    const long = await setupProject({ retention_days: 7 });
    await entriesAt(short, T0, "info", 3);
    await entriesAt(long, T0, "info", 2);
    await entriesAt(short, T0 + 20 * 60 * MIN, "info", 1);

    const later = T0 + 25 * 60 * MIN;
    expect(await logStore(env, short.projectId).purgeExpired(later)).toEqual({ deleted: 3, more: false });
    expect(await logStore(env, long.projectId).purgeExpired(later)).toEqual({ deleted: 0, more: false });
    expect(await logStore(env, short.projectId).count()).toBe(1);
    expect(await logStore(env, long.projectId).count()).toBe(2);
    // The search index follows the deletes.
    setClock(later);
    expect((await call("GET", `logs/projects/${short.projectId}/entries?q=e0`, { key: short.key }).then(json)).data).toHaveLength(1);
  });

  it("runs from the store's alarm, which an append sets", async () => {
    const f = await setupProject({ retention_days: 1 });
    await entriesAt(f, Date.now() - 3 * 24 * 60 * MIN, "info", 2);
    setClock(null);
    await ingestBatch(f.token, ndjson([{ message: "fresh" }]));
    const stub = logStore(env, f.projectId);
    await runInDurableObject(stub, async (instance, state) => {
      expect(await state.storage.getAlarm()).not.toBeNull();
      await instance.alarm!();
      expect(await state.storage.getAlarm()).not.toBeNull();
    });
    expect(await stub.count()).toBe(1);
  });

  it("the hourly cron deletes old counters, notification records and leftover rows of the former D1 table", async () => {
    const f = await setupProject({ retention_days: 1 });
    await env.DB.prepare(
      "INSERT INTO log_entries (id, team_id, project_id, level, message, created_at) VALUES ('old', ?1, ?2, 'info', 'legacy', ?3), ('new', ?1, ?2, 'info', 'legacy', ?4)",
    )
      .bind(f.teamId, f.projectId, T0, T0 + 24 * 60 * MIN)
      .run();
    setClock(T0 + 25 * 60 * MIN);
    await worker.scheduled(createScheduledController({ cron: "0 * * * *", scheduledTime: T0 + 25 * 60 * MIN }), env);
    const { results } = await env.DB.prepare("SELECT id FROM log_entries WHERE project_id = ?").bind(f.projectId).all<{ id: string }>();
    expect(results.map((r) => r.id)).toEqual(["new"]);
  });
});
