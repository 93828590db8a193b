// The sweeps of push work whose queue message was lost: a fan-out that stopped progressing (the
// minute cron over D1's notifications; UNSTARTED_STUCK_MS for one that never started) and delivery
// rows left pending long past due (each app store's alarm) are re-queued after SWEEP_STUCK_MS, never before, a bounded number per run,
// oldest first; a late original message never makes a second push. The queue is played by the
// test: a recording PUSH_QUEUE (messages accepted, then "lost" or delivered by hand with
// pushSendsConsumer) or one whose send/sendBatch throws. The store's sweep runs as its alarm runs
// it (requeueStuck), with the test's queue; one test runs the real alarm.
import { createScheduledController, env, runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../../src/env";
import worker from "../../../src/index";
import { nowMs, setClock } from "../../../src/platform/clock";
import { FANOUT_CHUNK, pushSendsConsumer, SEND_CHUNK, STALE_CLAIM_MS } from "../../../src/products/push/push.consumer";
import { SWEEP_MAX_FANOUTS, SWEEP_STUCK_MS, sweepPushFanouts, UNSTARTED_STUCK_MS } from "../../../src/products/push/push.cron";
import { pushStore } from "../../../src/products/push/push.store";
import { SWEEP_MAX_ROWS } from "../../../src/products/push/store/push-store.upkeep";
import { requeueStuck } from "../../../src/products/push/store/push-store.types";
import type { PushQueueMessage } from "../../../src/products/push/push.consumer";
import { call, json, setupTeam, type TestTeam } from "../../helpers/api";
import { browserSubscription, createApp, fakeBatch, pushService, storeRows, subscribe, waitForCompletion, type PushRequest } from "./push-helpers";

const MINUTE = 60_000;

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

type FanoutMessage = Extract<PushQueueMessage, { kind: "fanout" }>;
type SendMessage = Extract<PushQueueMessage, { kind: "send" }>;

/** A PUSH_QUEUE that records what is sent: the test decides whether a message is lost, late or delivered. */
function recordingQueue() {
  const sent: PushQueueMessage[] = [];
  const queue = {
    send: async (body: PushQueueMessage) => void sent.push(body),
    sendBatch: async (messages: Array<{ body: PushQueueMessage }>) => void sent.push(...messages.map((m) => m.body)),
  } as unknown as Queue;
  return {
    env: { ...(env as Env), PUSH_QUEUE: queue } as Env,
    sent,
    /** Takes (and forgets) what was sent so far for one notification. */
    take(notificationId: string) {
      const mine = sent.filter((m) => m.notification_id === notificationId);
      for (const m of mine) sent.splice(sent.indexOf(m), 1);
      return { fanouts: mine.filter((m): m is FanoutMessage => m.kind === "fanout"), sends: mine.filter((m): m is SendMessage => m.kind === "send") };
    },
  };
}

/** A PUSH_QUEUE whose send and sendBatch throw. */
function failingQueue(): Env {
  const fail = async () => {
    throw new Error("queue unavailable");
  };
  return { ...(env as Env), PUSH_QUEUE: { send: fail, sendBatch: fail } as unknown as Queue } as Env;
}

/**
 * One run of both sweeps at the platform clock's now: the cron's fan-out sweep, and the alarm's
 * delivery sweep of each app's store, with `target`'s queue. Both run even if one fails; the first
 * error is thrown after both.
 */
async function sweepPush(target: Env, ...appIds: string[]) {
  const runs = await Promise.allSettled([sweepPushFanouts(target), ...appIds.map((appId) => requeueStuck(target.PUSH_QUEUE, pushStore(env, appId), nowMs()))]);
  for (const run of runs) if (run.status === "rejected") throw run.reason;
}

/** Delivers messages to the consumer as the queue would; returns the fake batch records. */
async function consume(target: Env, bodies: PushQueueMessage[], attempts = 1) {
  const { batch, records } = fakeBatch(bodies.map((body) => ({ body, attempts })));
  await pushSendsConsumer.consume(batch, target);
  return records;
}

async function setup(subscribers = 3) {
  const team = await setupTeam();
  const app = await createApp(team.key);
  const subs = [];
  for (let i = 0; i < subscribers; i++) {
    const sub = await browserSubscription();
    subs.push({ ...sub, id: (await subscribe(team.key, app.id, sub)).id });
  }
  return { team, app, subs };
}

async function accept(team: TestTeam, appId: string, queueEnv: Env) {
  const res = await call("POST", `push/apps/${appId}/notifications`, { key: team.key, env: queueEnv, body: { title: "t", body: "b" } });
  expect(res.status).toBe(202);
  return (await json(res)).data.id as string;
}

async function detail(team: TestTeam, appId: string, id: string) {
  return (await json(await call("GET", `push/apps/${appId}/notifications/${id}`, { key: team.key }))).data;
}

function pushesPerEndpoint(requests: PushRequest[]) {
  const counts: Record<string, number> = {};
  for (const r of requests) counts[r.url] = (counts[r.url] ?? 0) + 1;
  return counts;
}

function onceEach(subs: Array<{ endpoint: string }>) {
  return Object.fromEntries(subs.map((s) => [s.endpoint, 1]));
}

describe("push sweep: fan-out", () => {
  it("restarts a fan-out whose message was lost only after the threshold; the late original starts no second chain", async () => {
    const { team, app, subs } = await setup(3);
    const service = pushService();
    const t0 = nowMs();
    setClock(t0);
    const queue = recordingQueue();
    const id = await accept(team, app.id, queue.env);
    const [original] = queue.take(id).fanouts;
    expect(original).toMatchObject({ after: null, token: expect.any(String) });

    // The message is lost. Not yet stuck (a fan-out that never started waits UNSTARTED_STUCK_MS):
    // nothing is re-queued.
    setClock(t0 + UNSTARTED_STUCK_MS);
    await sweepPush(queue.env, app.id);
    expect(queue.take(id)).toEqual({ fanouts: [], sends: [] });

    // Past the threshold: one fan-out message, from the start, with a new token.
    setClock(t0 + UNSTARTED_STUCK_MS + 1000);
    await sweepPush(queue.env, app.id);
    const { fanouts, sends } = queue.take(id);
    expect(sends).toEqual([]);
    expect(fanouts).toHaveLength(1);
    expect(fanouts[0]).toMatchObject({ kind: "fanout", notification_id: id, after: null });
    expect(fanouts[0].token).not.toBe(original.token);
    // Run again at once: the fan-out was just re-queued, so it is not stuck.
    await sweepPush(queue.env, app.id);
    expect(queue.take(id).fanouts).toEqual([]);

    // The original was only late and arrives too: it does nothing; the swept one fans out.
    const records = await consume(queue.env, [original, fanouts[0]]);
    expect(records.every((r) => r.acked)).toBe(true);
    const next = queue.take(id);
    expect(next.fanouts).toEqual([]);
    expect(next.sends).toEqual([{ kind: "send", notification_id: id, subscriber_ids: subs.map((s) => s.id).sort() }]);
    await consume(queue.env, next.sends);
    // And the original once more (at-least-once redelivery): still nothing.
    await consume(queue.env, [original], 2);
    expect(queue.take(id)).toEqual({ fanouts: [], sends: [] });

    expect(pushesPerEndpoint(service.requests)).toEqual(onceEach(subs));
    expect(await detail(team, app.id, id)).toMatchObject({ status: "completed", recipients: 3, counts: { queued: 0, delivered: 3, failed: 0, removed: 0 } });
    const usage = await json(await call("GET", "usage", { key: team.key }));
    expect(usage.data.services.push.used).toBe(3);
  });

  it("a late first message cannot start a second chain mid fan-out; progress keeps the sweep away; a stalled chain resumes after the last written subscriber", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const sub = await browserSubscription();
    const total = FANOUT_CHUNK + 1;
    const subId = (i: number) => `sub-${String(i).padStart(4, "0")}`;
    // Into the app's store, in one statement (the registration endpoint is rate limited).
    await storeRows(
      app.id,
      `WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < ?1 - 1)
       INSERT INTO subscribers (id, endpoint, p256dh, auth, tags, created_at, updated_at)
       SELECT printf('sub-%04d', i), 'https://push.example.com/bulk/' || i, ?2, ?3, '[]', '2020-01-01T00:00:00.000Z', '2020-01-01T00:00:00.000Z' FROM seq`,
      total,
      sub.keys.p256dh,
      sub.keys.auth,
    );
    const t0 = nowMs();
    setClock(t0);
    const queue = recordingQueue();
    const id = await accept(team, app.id, queue.env);
    const [original] = queue.take(id).fanouts;

    // The first message is late; the sweep restarts the chain, whose first step runs at once.
    setClock(t0 + SWEEP_STUCK_MS + MINUTE);
    await sweepPush(queue.env, app.id);
    const [restarted] = queue.take(id).fanouts;
    expect(restarted).toMatchObject({ after: null });
    await consume(queue.env, [restarted]);
    const step = queue.take(id);
    expect(step.fanouts).toEqual([expect.objectContaining({ after: subId(FANOUT_CHUNK - 1), token: restarted.token })]);
    expect(step.sends).toHaveLength(FANOUT_CHUNK / SEND_CHUNK);

    // The late original arrives mid fan-out: it queues nothing (no second chain, no duplicate sends).
    const [late] = await consume(queue.env, [original]);
    expect(late.acked).toBe(true);
    expect(queue.take(id)).toEqual({ fanouts: [], sends: [] });

    // The step's next-step and send messages are lost. 14 minutes after that step (which is
    // progress), nothing is stuck yet.
    const stepAt = t0 + SWEEP_STUCK_MS + MINUTE;
    setClock(stepAt + SWEEP_STUCK_MS - MINUTE);
    await sweepPush(queue.env, app.id);
    expect(queue.take(id)).toEqual({ fanouts: [], sends: [] });

    // 16 minutes after it: the fan-out resumes after the 500th subscriber, and the 500 rows whose
    // send messages were lost are re-queued in messages of SEND_CHUNK.
    setClock(stepAt + SWEEP_STUCK_MS + MINUTE);
    await sweepPush(queue.env, app.id);
    const swept = queue.take(id);
    expect(swept.fanouts).toEqual([expect.objectContaining({ after: subId(FANOUT_CHUNK - 1) })]);
    expect(swept.fanouts[0].token).not.toBe(restarted.token);
    expect(swept.sends.every((m) => m.subscriber_ids.length <= SEND_CHUNK)).toBe(true);
    expect(swept.sends.flatMap((m) => m.subscriber_ids).sort()).toEqual(step.sends.flatMap((m) => m.subscriber_ids).sort());

    // The late next step is ignored; the swept one writes the last row and ends fan-out.
    await consume(queue.env, [step.fanouts[0], swept.fanouts[0]]);
    const last = queue.take(id);
    expect(last.fanouts).toEqual([]);
    expect(last.sends).toEqual([{ kind: "send", notification_id: id, subscriber_ids: [subId(FANOUT_CHUNK)] }]);
    const row = await env.DB.prepare("SELECT fanout_done, recipients FROM push_notifications WHERE id = ?")
      .bind(id)
      .first<{ fanout_done: number; recipients: number }>();
    const [store] = await storeRows(
      app.id,
      "SELECT fanout_done, (SELECT count(*) FROM deliveries WHERE notification_id = ?1) AS n FROM notifications WHERE id = ?1",
      id,
    );
    expect({ ...row, store }).toEqual({ fanout_done: 1, recipients: total, store: { fanout_done: 1, n: total } });
  });

  it("a fan-out step whose sendBatch throws leaves rows the sweep re-queues; a failing sweep send is retried by the next run", async () => {
    const { team, app, subs } = await setup(3);
    const service = pushService();
    vi.spyOn(console, "error").mockImplementation(() => {});
    const t0 = nowMs();
    setClock(t0);
    const queue = recordingQueue();
    const id = await accept(team, app.id, queue.env);
    const [original] = queue.take(id).fanouts;

    // The step writes the delivery rows, then the queue refuses its send messages: the message is
    // retried, and say the queue gives up on it.
    const [first] = await consume(failingQueue(), [original]);
    expect(first.retried).not.toBeNull();
    const rows = await storeRows<{ status: string }>(app.id, "SELECT status FROM deliveries WHERE notification_id = ?", id);
    expect(rows.map((r) => r.status)).toEqual(["queued", "queued", "queued"]);

    // The step recorded no progress in D1: the fan-out counts as never started, and its rows are
    // not stuck yet either.
    setClock(t0 + UNSTARTED_STUCK_MS);
    await sweepPush(queue.env, app.id);
    expect(queue.take(id)).toEqual({ fanouts: [], sends: [] });

    // Past the threshold, but the queue is still down: the run fails and sends nothing...
    setClock(t0 + SWEEP_STUCK_MS + MINUTE);
    await expect(sweepPush(failingQueue(), app.id)).rejects.toThrow("queue unavailable");
    // ...and a later run sends both the fan-out and the rows.
    setClock(t0 + SWEEP_STUCK_MS + 61 * MINUTE);
    await sweepPush(queue.env, app.id);
    const swept = queue.take(id);
    expect(swept.fanouts).toEqual([expect.objectContaining({ after: subs.map((s) => s.id).sort()[2] })]);
    expect(swept.sends).toEqual([{ kind: "send", notification_id: id, subscriber_ids: subs.map((s) => s.id).sort() }]);

    // The original (retried by the queue after all) arrives too; everything runs.
    await consume(queue.env, [original, ...swept.fanouts, ...swept.sends], 2);
    const more = queue.take(id);
    expect(more).toEqual({ fanouts: [], sends: [] });
    expect(pushesPerEndpoint(service.requests)).toEqual(onceEach(subs));
    expect(await detail(team, app.id, id)).toMatchObject({ status: "completed", recipients: 3, counts: { queued: 0, delivered: 3, failed: 0, removed: 0 } });
  });
});

describe("push sweep: deliveries", () => {
  /** A notification fanned out whose send message was recorded (not delivered). */
  async function fannedOut(queue: ReturnType<typeof recordingQueue>) {
    const { team, app, subs } = await setup(3);
    const id = await accept(team, app.id, queue.env);
    await consume(queue.env, queue.take(id).fanouts);
    const { sends } = queue.take(id);
    expect(sends).toHaveLength(1);
    return { team, app, subs, id, original: sends[0] };
  }

  it("re-queues a send message that was lost or late; whichever copy comes first sends, the other sends nothing", async () => {
    const service = pushService();
    const t0 = nowMs();
    setClock(t0);
    const queue = recordingQueue();
    const a = await fannedOut(queue);
    const b = await fannedOut(queue);
    const c = await fannedOut(queue);

    setClock(t0 + SWEEP_STUCK_MS - MINUTE);
    await sweepPush(queue.env, a.app.id, b.app.id, c.app.id);
    for (const n of [a, b, c]) expect(queue.take(n.id)).toEqual({ fanouts: [], sends: [] });

    setClock(t0 + SWEEP_STUCK_MS + MINUTE);
    await sweepPush(queue.env, a.app.id, b.app.id, c.app.id);
    const swept = Object.fromEntries([a, b, c].map((n) => [n.id, queue.take(n.id).sends]));
    for (const n of [a, b, c]) expect(swept[n.id]).toEqual([n.original]);

    // a: the swept copy first, then the late original.
    const aSwept = await consume(queue.env, swept[a.id]);
    const aLate = await consume(queue.env, [a.original]);
    expect([aSwept[0].acked, aLate[0].acked]).toEqual([true, true]);
    // b: the late original first, then the swept copy.
    await consume(queue.env, [b.original]);
    await consume(queue.env, swept[b.id]);
    // c: both at the same time in two consumers: one sends, the other finds the rows claimed and
    // comes back after the claim window, when they are finished.
    const [c1, c2] = await Promise.all([consume(queue.env, [c.original]), consume(queue.env, swept[c.id])]);
    const retried = [c1[0], c2[0]].filter((r) => r.retried);
    expect(retried.length).toBeLessThanOrEqual(1);
    for (const r of retried) expect(r.retried).toEqual({ delaySeconds: STALE_CLAIM_MS / 1000 });
    await consume(queue.env, [c.original, ...swept[c.id]], 2);

    expect(pushesPerEndpoint(service.requests)).toEqual(onceEach([...a.subs, ...b.subs, ...c.subs]));
    for (const n of [a, b, c]) {
      expect(await detail(n.team, n.app.id, n.id)).toMatchObject({ status: "completed", counts: { queued: 0, delivered: 3, failed: 0, removed: 0 } });
    }
    // Finished rows are never swept again.
    setClock(t0 + 3 * SWEEP_STUCK_MS);
    await sweepPush(queue.env, a.app.id, b.app.id, c.app.id);
    for (const n of [a, b, c]) expect(queue.take(n.id)).toEqual({ fanouts: [], sends: [] });
  });

  it("a retry waiting for the push service's Retry-After is not swept until 15 minutes past it", async () => {
    const { team, app, subs } = await setup(1);
    const service = pushService((_, i) => (i === 0 ? new Response("busy", { status: 503, headers: { "retry-after": "3600" } }) : 201));
    const t0 = nowMs();
    setClock(t0);
    const queue = recordingQueue();
    const id = await accept(team, app.id, queue.env);
    await consume(queue.env, queue.take(id).fanouts);
    const [send] = queue.take(id).sends;
    const [first] = await consume(queue.env, [send]);
    expect(first.retried).toEqual({ delaySeconds: 3600 });

    // The retry is due at t0 + 1 h: 16 minutes in, and 14 minutes past it, it is not stuck.
    setClock(t0 + SWEEP_STUCK_MS + MINUTE);
    await sweepPush(queue.env, app.id);
    expect(queue.take(id).sends).toEqual([]);
    setClock(t0 + 60 * MINUTE + SWEEP_STUCK_MS - MINUTE);
    await sweepPush(queue.env, app.id);
    expect(queue.take(id).sends).toEqual([]);
    // 16 minutes past it, the retry message is considered lost.
    setClock(t0 + 60 * MINUTE + SWEEP_STUCK_MS + MINUTE);
    await sweepPush(queue.env, app.id);
    const swept = queue.take(id).sends;
    expect(swept).toEqual([send]);
    await consume(queue.env, swept);
    await consume(queue.env, [send], 2);
    expect(service.requests).toHaveLength(2);
    expect(await detail(team, app.id, id)).toMatchObject({
      status: "completed",
      results: [expect.objectContaining({ subscriber_id: subs[0].id, status: "delivered", attempts: 2 })],
    });
  });

  it("re-queues a row whose consumer died holding the claim, 15 minutes after the claim could be taken over", async () => {
    const { team, app, subs } = await setup(1);
    const service = pushService();
    const t0 = nowMs();
    setClock(t0);
    const queue = recordingQueue();
    const id = await accept(team, app.id, queue.env);
    await consume(queue.env, queue.take(id).fanouts);
    const [send] = queue.take(id).sends;
    // A consumer claims the row and dies before sending (here: it cannot decrypt the VAPID key);
    // its message is then lost.
    vi.spyOn(console, "error").mockImplementation(() => {});
    const broken = { ...queue.env, ENCRYPTION_KEY: btoa(String.fromCharCode(...new Uint8Array(32).fill(7))) } as Env;
    const [died] = await consume(broken, [send]);
    expect(died.retried).not.toBeNull();
    expect(service.requests).toHaveLength(0);
    const [claimed] = await storeRows(app.id, "SELECT status, lease_until, next_attempt_at FROM deliveries WHERE notification_id = ?", id);
    expect(claimed).toEqual({ status: "sending", lease_until: t0 + STALE_CLAIM_MS, next_attempt_at: new Date(t0 + STALE_CLAIM_MS).toISOString() });

    setClock(t0 + STALE_CLAIM_MS + SWEEP_STUCK_MS - MINUTE);
    await sweepPush(queue.env, app.id);
    expect(queue.take(id).sends).toEqual([]);
    setClock(t0 + STALE_CLAIM_MS + SWEEP_STUCK_MS + MINUTE);
    await sweepPush(queue.env, app.id);
    const swept = queue.take(id).sends;
    expect(swept).toEqual([send]);
    await consume(queue.env, swept);
    await consume(queue.env, [send], 2);
    expect(pushesPerEndpoint(service.requests)).toEqual(onceEach(subs));
    expect(await detail(team, app.id, id)).toMatchObject({ status: "completed", counts: { delivered: 1 } });
  });

  it("the minute cron runs the sweep", async () => {
    const { team, app } = await setup(1);
    const t0 = nowMs();
    setClock(t0);
    const queue = recordingQueue();
    const id = await accept(team, app.id, queue.env);
    queue.take(id);
    setClock(t0 + SWEEP_STUCK_MS + MINUTE);
    await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: nowMs() }), queue.env);
    expect(queue.take(id).fanouts).toEqual([expect.objectContaining({ kind: "fanout", notification_id: id, after: null })]);
  });

  it("a notification whose fan-out message the queue refused is accepted (202, units kept) and started by the minute cron within two minutes", async () => {
    const { team, app, subs } = await setup(2);
    const service = pushService();
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const t0 = nowMs();
    setClock(t0);
    const id = await accept(team, app.id, failingQueue());
    expect(errors.mock.calls.map(([line]) => String(line)).some((line) => line.includes("push notification: enqueue failed"))).toBe(true);
    expect(await detail(team, app.id, id)).toMatchObject({ status: "queued", recipients: 2 });
    expect((await json(await call("GET", "usage", { key: team.key }))).data.services.push.used).toBe(2);

    const queue = recordingQueue();
    setClock(t0 + UNSTARTED_STUCK_MS + 1000);
    await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: nowMs() }), queue.env);
    const { fanouts } = queue.take(id);
    expect(fanouts).toEqual([expect.objectContaining({ kind: "fanout", notification_id: id, after: null })]);
    await consume(queue.env, fanouts);
    await consume(queue.env, queue.take(id).sends);
    expect(pushesPerEndpoint(service.requests)).toEqual(onceEach(subs));
  });
});

describe("push sweep: bounds", () => {
  it("re-queues at most SWEEP_MAX_FANOUTS fan-outs and SWEEP_MAX_ROWS rows of a store per run, oldest first", async () => {
    const team = await setupTeam();
    const app = await createApp(team.key);
    const extraRows = 30;
    const extraFanouts = 5;
    // Stuck work from long ago (older than anything else in the database, so it comes first):
    // one fanned-out notification with SWEEP_MAX_ROWS + 30 queued rows in the app's store, due one
    // second apart, and SWEEP_MAX_FANOUTS + 5 notifications whose fan-out stalled, a minute apart.
    const target = crypto.randomUUID();
    const stalled = Array.from({ length: SWEEP_MAX_FANOUTS + extraFanouts }, (_, i) => ({
      id: crypto.randomUUID(),
      at: new Date(Date.UTC(2000, 0, 1, 0, i)).toISOString(),
    }));
    const insertNotification = (id: string, done: number, at: string | null) =>
      env.DB.prepare(
        `INSERT INTO push_notifications (id, team_id, app_id, payload, ttl, urgency, target, vapid_subject, recipients, fanout_done, fanout_token, fanout_at, created_at)
         VALUES (?, ?, ?, '{"title":"t"}', 60, 'normal', '{"type":"all"}', 'mailto:ops@example.com', 1, ?, 'old', ?, '2000-01-01T00:00:00.000Z')`,
      ).bind(id, team.teamId, app.id, done, at);
    await env.DB.batch([insertNotification(target, 1, null), ...stalled.map((n) => insertNotification(n.id, 0, n.at))]);
    await storeRows(
      app.id,
      `WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < ?2 - 1)
       INSERT INTO deliveries (notification_id, subscriber_id, status, attempts, next_attempt_at, updated_at)
       SELECT ?1, printf('sub-%05d', i), 'queued', 0, strftime('%Y-%m-%dT%H:%M:%fZ', '2000-01-01T00:00:00.000Z', '+' || i || ' seconds'), '2000-01-01T00:00:00.000Z' FROM seq`,
      target,
      SWEEP_MAX_ROWS + extraRows,
    );
    const rowIds = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `sub-${String(from + i).padStart(5, "0")}`);
    const stalledIds = new Set(stalled.map((n) => n.id));

    const queue = recordingQueue();
    const run = async () => {
      await sweepPush(queue.env, app.id);
      const sends = queue.take(target).sends;
      const fanouts = queue.sent.filter((m) => stalledIds.has(m.notification_id));
      queue.sent.length = 0;
      return { rows: sends.flatMap((m) => m.subscriber_ids).sort(), fanouts: fanouts.map((m) => m.notification_id), sends };
    };
    try {
      const first = await run();
      expect(first.rows).toEqual(rowIds(0, SWEEP_MAX_ROWS));
      expect(first.sends.every((m) => m.subscriber_ids.length <= SEND_CHUNK)).toBe(true);
      expect(first.fanouts.sort()).toEqual(
        stalled
          .slice(0, SWEEP_MAX_FANOUTS)
          .map((n) => n.id)
          .sort(),
      );

      const second = await run();
      expect(second.rows).toEqual(rowIds(SWEEP_MAX_ROWS, SWEEP_MAX_ROWS + extraRows));
      expect(second.fanouts.sort()).toEqual(
        stalled
          .slice(SWEEP_MAX_FANOUTS)
          .map((n) => n.id)
          .sort(),
      );

      // Everything was just re-queued: a third run right away finds nothing of it.
      const third = await run();
      expect(third).toMatchObject({ rows: [], fanouts: [] });
    } finally {
      await env.DB.prepare("DELETE FROM push_notifications WHERE app_id = ?").bind(app.id).run();
    }
  });
});

describe("push store alarm", () => {
  it("the alarm re-queues a lost send on the real queue (the subscriber gets it once), purges old notifications' rows and rewrites a count D1 lost", async () => {
    const { team, app, subs } = await setup(2);
    const service = pushService();
    const queue = recordingQueue();
    const id = await accept(team, app.id, queue.env);
    await consume(queue.env, queue.take(id).fanouts);
    // The send message is lost; the rows were written long ago (the alarm runs on real time).
    expect(queue.take(id).sends).toHaveLength(1);
    await storeRows(app.id, "UPDATE deliveries SET next_attempt_at = '2000-01-01T00:00:00.000Z' WHERE notification_id = ?", id);
    // An old notification's rows, past retention, and a count D1 did not get.
    const old = crypto.randomUUID();
    await storeRows(
      app.id,
      "INSERT INTO notifications (id, created_at, fanout_done, completed_at) VALUES (?, '2000-01-01T00:00:00.000Z', 1, '2000-01-01T00:00:00.000Z')",
      old,
    );
    await storeRows(
      app.id,
      "INSERT INTO deliveries (notification_id, subscriber_id, status, updated_at) VALUES (?, 'x', 'delivered', '2000-01-01T00:00:00.000Z')",
      old,
    );
    // As if the second registration's D1 write had failed: D1 holds the first one's count.
    await env.DB.prepare("UPDATE push_apps SET subscriber_count = 1, subscriber_count_seq = 1 WHERE id = ?").bind(app.id).run();

    expect(await runDurableObjectAlarm(pushStore(env, app.id))).toBe(true);
    const done = await waitForCompletion(team.key, app.id, id);
    expect(done.counts).toEqual({ queued: 0, delivered: 2, failed: 0, removed: 0 });
    expect(pushesPerEndpoint(service.requests)).toEqual(onceEach(subs));
    expect(await storeRows(app.id, "SELECT * FROM deliveries WHERE notification_id = ?", old)).toEqual([]);
    expect(await storeRows(app.id, "SELECT * FROM notifications WHERE id = ?", old)).toEqual([]);
    expect((await json(await call("GET", `push/apps/${app.id}`, { key: team.key }))).data.subscriber_count).toBe(2);
  });
});
