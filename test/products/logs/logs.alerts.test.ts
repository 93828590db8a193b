import { createScheduledController, env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../../src/index";
import { setClock } from "../../../src/platform/clock";
import { planLimits } from "../../../src/platform/plans";
import { monthOf } from "../../../src/platform/quota";
import { consumeAlertNotifications, MAX_ATTEMPTS, type AlertNotification } from "../../../src/products/logs/logs.consumer";
import { fireDueAlerts } from "../../../src/products/logs/logs.cron";
import { call, json } from "../../helpers/api";
import { ingestBatch, ndjson, setupProject, type LogsFixture } from "./helpers";

const T0 = Date.parse("2026-06-01T12:00:00.000Z");
const MIN = 60_000;

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

async function createAlert(f: LogsFixture, body: Record<string, unknown>) {
  const res = await call("POST", `logs/projects/${f.projectId}/alerts`, {
    key: f.key,
    body: { name: "errors", level: "error", threshold: 3, window_minutes: 5, notify_email: "ops@example.com", ...body },
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
  const fired = await fireDueAlerts(env);
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

  it("is bounded per run: pages of alerts by id from a start, wrapping round, never more than maxPages", async () => {
    const f = await setupProject();
    const alerts = [];
    for (let i = 0; i < 5; i++) alerts.push(await createAlert(f, { threshold: 1, window_minutes: 5 }));
    await entriesAt(f, T0, "error", 1);
    setClock(T0 + MIN);
    vi.spyOn(env.ALERT_QUEUE, "sendBatch").mockResolvedValue(undefined as never);
    const ids = alerts.map((a) => a.id as string).sort();
    // Every alert of the table is looked at in id order; a run of one page of 2 sees at most 2 alerts.
    const all = await env.DB.prepare("SELECT id FROM log_alerts ORDER BY id").all<{ id: string }>();
    const before = all.results.map((r) => r.id).filter((id) => id < ids[2]);
    const start = before.length ? before[before.length - 1] : "";
    const bounded = await fireDueAlerts(env, { pageSize: 2, maxPages: 1, start });
    expect(bounded.every((id) => ids.includes(id))).toBe(true);
    expect(bounded.length).toBeLessThanOrEqual(2);
    // Starting after the last of ours, the run wraps round to the beginning and reaches the rest.
    const rest = await fireDueAlerts(env, { pageSize: 2, maxPages: 10_000, start: ids[4] });
    expect([...bounded, ...rest].filter((id) => ids.includes(id)).sort()).toEqual(ids);
  });

  it("fires once when two runs overlap", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { threshold: 1, window_minutes: 5 });
    await entriesAt(f, T0, "error", 1);
    setClock(T0 + MIN);
    const spy = vi.spyOn(env.ALERT_QUEUE, "sendBatch").mockResolvedValue(undefined as never);
    const runs = await Promise.all([fireDueAlerts(env), fireDueAlerts(env), fireDueAlerts(env)]);
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
    await expect(fireDueAlerts(env)).rejects.toThrow("queue down");
    expect(await lastTriggered(both.id)).toBeNull();
    vi.restoreAllMocks();

    const { fired, sent } = await checkAt(T0 + MIN);
    expect(fired).not.toContain(disabled.id);
    expect(sent.filter((n) => n.alert_id === both.id).map((n) => n.channel)).toEqual(["email", "webhook"]);
    expect(sent.filter((n) => n.alert_id === noAddress.id).map((n) => n.channel)).toEqual(["email"]);
  });

  it("runs from the every-minute cron trigger", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { threshold: 1 });
    await entriesAt(f, T0, "error", 1);
    setClock(T0 + MIN);
    const spy = vi.spyOn(env.ALERT_QUEUE, "sendBatch").mockResolvedValue(undefined as never);
    await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: T0 + MIN }), env);
    expect(await lastTriggered(alert.id)).toBe(T0 + MIN);
    expect(spy).toHaveBeenCalled();
  });
});

describe("alerts per project", () => {
  it("regression: 25 parallel creates store exactly 20 alerts on a project, another project keeps its own room", async () => {
    const f = await setupProject();
    const body = { name: "errors", level: "error", threshold: 3, window_minutes: 5, notify_email: "ops@example.com" };
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
    await consumeAlertNotifications(batch, env);
    expect(batch.messages[0].ack).toHaveBeenCalled();
    await consumeAlertNotifications(fakeBatch([note], 2), env);
    const { results } = await env.DB.prepare("SELECT * FROM platform_outbox WHERE team_id = ? AND kind = 'alert'").bind(f.teamId).all<Record<string, string>>();
    expect(results).toHaveLength(1);
    expect(results[0].to).toBe("ops@example.com");
    expect(results[0].subject).toContain("errors");
    expect(results[0].subject).toContain("7 error entries");
  });

  it("regression: an alert name with CR/LF never adds a header line to the alert email", async () => {
    const f = await setupProject();
    const alert = await createAlert(f, { name: "x\r\nBcc: attacker@evil.test\r\n\r\nbody" });
    await consumeAlertNotifications(fakeBatch([await firedNote(f, alert.id, "email")]), env);
    const row = await env.DB.prepare("SELECT subject FROM platform_outbox WHERE team_id = ? AND kind = 'alert'").bind(f.teamId).first<{ subject: string }>();
    expect(row!.subject).not.toMatch(/[\r\n]/);
    expect(row!.subject.startsWith("[Log alert] x Bcc: attacker@evil.test body")).toBe(true);
  });

  it("meters each alert email as one unit of the team's mail quota; with none left the email is skipped, not retried", async () => {
    setClock(T0);
    const f = await setupProject();
    const alert = await createAlert(f, {});
    const period = monthOf(T0).period;
    const used = async () =>
      (await env.DB.prepare("SELECT used FROM usage_counters WHERE team_id = ? AND service = 'mail' AND period = ?").bind(f.teamId, period).first<{ used: number }>())?.used ?? 0;
    await consumeAlertNotifications(fakeBatch([await firedNote(f, alert.id, "email")]), env);
    expect(await used()).toBe(1);
    const limit = planLimits("pro").monthly.mail as number;
    await env.DB.prepare("UPDATE usage_counters SET used = ? WHERE team_id = ? AND service = 'mail' AND period = ?").bind(limit, f.teamId, period).run();
    const note = await firedNote(f, alert.id, "email");
    const batch = fakeBatch([note]);
    await consumeAlertNotifications(batch, env);
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
    await consumeAlertNotifications(first, env);
    expect(first.messages[0].retry).toHaveBeenCalledWith({ delaySeconds: 10 });
    expect(first.messages[0].ack).not.toHaveBeenCalled();

    fetchSpy.mockResolvedValueOnce(new Response("ok", { status: 200 }));
    const second = fakeBatch([note], 2);
    await consumeAlertNotifications(second, env);
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
    await consumeAlertNotifications(again, env);
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
    const batch = fakeBatch([note], MAX_ATTEMPTS);
    await consumeAlertNotifications(batch, env);
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
    await consumeAlertNotifications(blocked, env);
    expect(blocked.messages[0].retry).toHaveBeenCalled();
    expect(fetchSpy).not.toHaveBeenCalled();

    await call("DELETE", `logs/alerts/${alert.id}`, { key: f.key });
    const gone = fakeBatch([await firedNote(f, alert.id, "webhook")], 1);
    await consumeAlertNotifications(gone, env);
    expect(gone.messages[0].ack).toHaveBeenCalled();
    expect(fetchSpy).not.toHaveBeenCalled();
  });
});

describe("retention", () => {
  it("deletes entries older than the project's retention_days on the hourly cron", async () => {
    const short = await setupProject({ retention_days: 1 });
    const long = await setupProject({ retention_days: 7 });
    await entriesAt(short, T0, "info", 3);
    await entriesAt(long, T0, "info", 2);
    await entriesAt(short, T0 + 20 * 60 * MIN, "info", 1);

    setClock(T0 + 25 * 60 * MIN);
    await worker.scheduled(createScheduledController({ cron: "0 * * * *", scheduledTime: T0 + 25 * 60 * MIN }), env);

    const count = async (f: LogsFixture) =>
      (await env.DB.prepare("SELECT count(*) AS n FROM log_entries WHERE project_id = ?").bind(f.projectId).first<{ n: number }>())!.n;
    expect(await count(short)).toBe(1);
    expect(await count(long)).toBe(2);
  });
});
