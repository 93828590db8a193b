// Retries like the webhook services users compare us with (issue 18): Svix's schedule over about a
// day, held against wrangler.toml; a destination failing every attempt for 5 days is disabled and
// its team's owner emailed once; replay to chosen destinations only. Time moves with the test clock.
import { afterEach, describe, expect, it, vi } from "vitest";
import { tenantText } from "../../../src/platform/platform-mail";
import { webhookDeliveriesQueue } from "../../../src/products/relay/relay.messages";
import { nowMs, setClock } from "../../../src/platform/clock";
import { MAX_ATTEMPTS, QUEUE_MAX_RETRIES, RETRY_SCHEDULE_SECONDS, retryDelaySeconds } from "../../../src/products/relay/relay.retry";
import { DELIVERY_TIMEOUT_MS } from "../../../src/products/relay/relay.consumer";
import { call, expectError, json, setupTeam } from "../../helpers/api";
import {
  callSettled,
  consumeRecorded,
  createDestination,
  createSource,
  env,
  getEvent,
  ingestSettled,
  receiver,
  recordingQueue,
  storeSql,
} from "./relay.helpers";

afterEach(() => {
  vi.restoreAllMocks();
  setClock(null);
});

const T0 = Date.parse("2026-07-01T08:00:00.000Z");
const DAY = 24 * 3600_000;

describe("retry schedule", () => {
  it("is Svix's: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; every delay within the queue's 12 h", () => {
    expect([...RETRY_SCHEDULE_SECONDS]).toEqual([0, 5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(MAX_ATTEMPTS).toBe(8);
    const total = RETRY_SCHEDULE_SECONDS.reduce((a, b) => a + b, 0);
    expect(total / 3600).toBeCloseTo(27.6, 1);
    for (const delay of RETRY_SCHEDULE_SECONDS) expect(delay).toBeLessThanOrEqual(12 * 3600);
    expect([1, 2, 3, 4, 5, 6, 7].map(retryDelaySeconds)).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(retryDelaySeconds(8)).toBeNull();
    expect(retryDelaySeconds(0)).toBeNull();
  });

  it("the queue's claim (declared with it, relay.messages.ts) caps attempts at the schedule's length, under a lease that outlasts a delivery's timeout", () => {
    expect(webhookDeliveriesQueue.claim.maxAttempts).toBe(RETRY_SCHEDULE_SECONDS.length);
    expect(MAX_ATTEMPTS).toBe(webhookDeliveriesQueue.claim.maxAttempts);
    expect(webhookDeliveriesQueue.claim.leaseMs).toBeGreaterThan(DELIVERY_TIMEOUT_MS);
  });

  it("the queue table (held against wrangler.toml) gives the webhook-deliveries consumer the max_retries the schedule needs", () => {
    const maxRetries = webhookDeliveriesQueue.maxRetries;
    expect(maxRetries).toBe(QUEUE_MAX_RETRIES);
    // Even when the queue makes every attempt itself: one delivery and MAX_ATTEMPTS - 1 retries.
    expect(maxRetries).toBeGreaterThanOrEqual(MAX_ATTEMPTS - 1);
  });

  it("a delivery failing every attempt is retried on the schedule for about a day, then marked failed", async () => {
    setClock(T0);
    const team = await setupTeam();
    const source = await createSource(team.key);
    const destination = await createDestination(team.key, source.id);
    const queue = recordingQueue();
    const rx = receiver([destination.url], [503]);
    try {
      const accepted = (await json(await ingestSettled(source.slug, JSON.stringify({ type: "x" }), {}, { env: queue.env }))).data;
      expect(queue.sent[0]!.delaySeconds).toBe(5);
      const delays: Array<number | null> = [];
      let message = queue.sent;
      for (let attempt = 2; attempt <= MAX_ATTEMPTS; attempt++) {
        const detail = (await getEvent(team.key, source.id, accepted.id)).deliveries[0];
        const wait = detail.attempts[detail.attempts.length - 1].retry_in_seconds as number;
        expect(Date.parse(detail.next_attempt_at)).toBe(nowMs() + wait * 1000);
        setClock(nowMs() + wait * 1000);
        const [m] = await consumeRecorded(message, attempt - 1);
        delays.push(wait);
        if (attempt < MAX_ATTEMPTS) expect(m!.retry).toHaveBeenCalledWith({ delaySeconds: RETRY_SCHEDULE_SECONDS[attempt] });
        else expect(m!.ack).toHaveBeenCalled();
        message = queue.sent;
      }
      expect(delays).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
      expect(rx.received).toHaveLength(MAX_ATTEMPTS);
      const delivery = (await getEvent(team.key, source.id, accepted.id)).deliveries[0];
      expect(delivery).toMatchObject({ status: "failed", attempts_count: 8, next_attempt_at: null });
      expect(delivery.attempts.map((a: { retry_in_seconds: number | null }) => a.retry_in_seconds)).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000, null]);
      expect((nowMs() - T0) / 3600_000).toBeCloseTo(27.6, 1);
      // A day of failures is not five: the destination stays enabled.
      const dest = await env.DB.prepare("SELECT enabled, failing_since FROM webhook_destinations WHERE id = ?").bind(destination.id).first();
      expect(dest).toEqual({ enabled: 1, failing_since: new Date(T0).toISOString() });
    } finally {
      rx.restore();
    }
  });
});

describe("a destination that keeps failing", () => {
  async function outbox(teamId: string) {
    return (
      await env.DB.prepare("SELECT kind, \"to\", subject, text FROM platform_outbox WHERE team_id = ? AND kind = 'relay_destination_disabled'")
        .bind(teamId)
        .all<{
          kind: string;
          to: string;
          subject: string;
          text: string;
        }>()
    ).results;
  }

  it("is disabled by the first failure after 5 days of failing every attempt, and the owner is emailed once", async () => {
    setClock(T0);
    const team = await setupTeam({ ownerEmail: "owner@acme.dev" });
    const source = await createSource(team.key);
    const failing = await createDestination(team.key, source.id);
    const healthy = await createDestination(team.key, source.id);
    const queue = recordingQueue();
    const healthyRx: string[] = [];
    const real = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      if (request.url === healthy.url) {
        healthyRx.push(request.url);
        return new Response("ok");
      }
      if (request.url === failing.url) return new Response("down", { status: 500 });
      return real(input, init);
    });
    const ingestAt = async (at: number) => {
      setClock(at);
      const res = await ingestSettled(source.slug, JSON.stringify({ type: "x", at }), {}, { env: queue.env });
      expect(res.status).toBe(202);
      return (await json(res)).data.id as string;
    };
    const destinationRow = () =>
      env.DB.prepare("SELECT enabled, disabled_reason, failing_since FROM webhook_destinations WHERE id = ?").bind(failing.id).first();

    await ingestAt(T0);
    expect(await destinationRow()).toEqual({ enabled: 1, disabled_reason: null, failing_since: new Date(T0).toISOString() });
    await ingestAt(T0 + 4 * DAY);
    await ingestAt(T0 + 5 * DAY - 1000);
    expect((await destinationRow())!.enabled).toBe(1);
    expect(await outbox(team.teamId)).toEqual([]);

    const last = await ingestAt(T0 + 5 * DAY);
    expect(await destinationRow()).toEqual({ enabled: 0, disabled_reason: "failing", failing_since: new Date(T0).toISOString() });
    // The failure that disabled it ends its delivery: nothing left to retry.
    const delivery = (await getEvent(team.key, source.id, last)).deliveries.find((d: { destination_id: string }) => d.destination_id === failing.id);
    expect(delivery).toMatchObject({ status: "failed", attempts_count: 1, next_attempt_at: null });
    const mails = await outbox(team.teamId);
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatchObject({ to: "owner@acme.dev", subject: `Webhook destination disabled after 5 days of failures: ${tenantText(failing.url)}` });
    // Our mail never carries a tenant's URL as a link.
    expect(mails[0]!.text).not.toContain(failing.url);
    expect(mails[0]!.text).toContain(failing.id);
    expect(mails[0]!.text).toContain('"destination_ids"');

    // Deliveries still queued for it end as failed without a send, and no second email goes out.
    const sendsBefore = (vi.mocked(globalThis.fetch).mock.calls as unknown[][]).length;
    const pendingIds = await storeSql<{ id: string }>(source.id, "SELECT id FROM deliveries WHERE destination_id = ? AND status = 'pending'", failing.id);
    expect(pendingIds.length).toBeGreaterThan(0);
    const messages = await consumeRecorded(
      pendingIds.map((r) => ({ body: { delivery_id: r.id, source_id: source.id }, delaySeconds: undefined })),
      2,
    );
    for (const m of messages) expect(m.ack).toHaveBeenCalled();
    expect((vi.mocked(globalThis.fetch).mock.calls as unknown[][]).length).toBe(sendsBefore);
    expect(await outbox(team.teamId)).toHaveLength(1);
    // New events skip it; the healthy destination got every one.
    await ingestAt(T0 + 5 * DAY + 60_000);
    expect(healthyRx).toHaveLength(5);

    const listed = (await json(await call("GET", `webhooks/sources/${source.id}/destinations`, { key: team.key }))).data;
    expect(listed.find((d: { id: string }) => d.id === failing.id)).toMatchObject({
      enabled: false,
      disabled_reason: "failing",
      failing_since: new Date(T0).toISOString(),
    });
    expect(listed.find((d: { id: string }) => d.id === healthy.id)).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });

    // Enabled again by its owner: a fresh start.
    const patched = await call("PATCH", `webhooks/sources/${source.id}/destinations/${failing.id}`, { key: team.key, body: { enabled: true } });
    expect((await json(patched)).data).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
    await ingestAt(T0 + 6 * DAY);
    expect(await destinationRow()).toEqual({ enabled: 1, disabled_reason: null, failing_since: new Date(T0 + 6 * DAY).toISOString() });
  });

  it("any successful attempt restarts the 5 days", async () => {
    setClock(T0);
    const team = await setupTeam();
    const source = await createSource(team.key);
    const destination = await createDestination(team.key, source.id);
    const queue = recordingQueue();
    const rx = receiver([destination.url], [500, 200, 500, 500]);
    try {
      const row = () => env.DB.prepare("SELECT enabled, failing_since FROM webhook_destinations WHERE id = ?").bind(destination.id).first();
      await ingestSettled(source.slug, JSON.stringify({ type: "a" }), {}, { env: queue.env });
      expect(await row()).toEqual({ enabled: 1, failing_since: new Date(T0).toISOString() });
      setClock(T0 + 3 * DAY);
      await ingestSettled(source.slug, JSON.stringify({ type: "b" }), {}, { env: queue.env });
      expect(await row()).toEqual({ enabled: 1, failing_since: null });
      setClock(T0 + 4 * DAY);
      await ingestSettled(source.slug, JSON.stringify({ type: "c" }), {}, { env: queue.env });
      setClock(T0 + 6 * DAY);
      await ingestSettled(source.slug, JSON.stringify({ type: "d" }), {}, { env: queue.env });
      // Failing for 2 days since the last success, not 6.
      expect(await row()).toEqual({ enabled: 1, failing_since: new Date(T0 + 4 * DAY).toISOString() });
      expect(rx.received).toHaveLength(4);
    } finally {
      rx.restore();
    }
  });
});

describe("replay to chosen destinations", () => {
  async function setup() {
    const team = await setupTeam();
    const source = await createSource(team.key);
    const ok = await createDestination(team.key, source.id);
    const missed = await createDestination(team.key, source.id);
    const queue = recordingQueue();
    const rx = receiver([ok.url, missed.url], [200]);
    const event = (await json(await ingestSettled(source.slug, JSON.stringify({ type: "invoice.paid" }), {}, { env: queue.env }))).data;
    return { team, source, ok, missed, queue, rx, event };
  }

  it("resends to the listed destination only and answers {count, destination_ids}", async () => {
    const { team, source, ok, missed, queue, rx, event } = await setup();
    try {
      expect(rx.received).toHaveLength(2);
      const res = await callSettled("POST", `webhooks/sources/${source.id}/events/${event.id}/replay`, {
        key: team.key,
        env: queue.env,
        body: { destination_ids: [missed.id, missed.id] },
      });
      expect(res.status).toBe(202);
      expect(await json(res)).toEqual({ data: { count: 1, destination_ids: [missed.id] } });
      expect(rx.received.map((r) => r.url)).toEqual(expect.arrayContaining([ok.url, missed.url]));
      expect(rx.received).toHaveLength(3);
      expect(rx.received[2]!.url).toBe(missed.url);
      const replays = (await getEvent(team.key, source.id, event.id)).deliveries.filter((d: { trigger: string }) => d.trigger === "replay");
      expect(replays.map((d: { destination_id: string }) => d.destination_id)).toEqual([missed.id]);
      // Without a body (even with a bare JSON content type), or with an empty object: every
      // destination that admits the event, as before destination_ids existed.
      const path = `webhooks/sources/${source.id}/events/${event.id}/replay`;
      for (const options of [{ body: {} }, {}, { raw: "", headers: { "content-type": "application/json" } }]) {
        const all = await callSettled("POST", path, { key: team.key, env: queue.env, ...options });
        expect(all.status).toBe(202);
        expect((await json(all)).data).toEqual({ count: 2, destination_ids: [ok.id, missed.id] });
      }
    } finally {
      rx.restore();
    }
  });

  it("refuses unknown, another source's, another team's, disabled or non-admitting destinations with the same 422 shape, creating nothing", async () => {
    const { team, source, missed, rx, event } = await setup();
    rx.restore();
    const otherSource = await createSource(team.key);
    const sibling = await createDestination(team.key, otherSource.id);
    const stranger = await setupTeam();
    const strangerSource = await createSource(stranger.key);
    const foreign = await createDestination(stranger.key, strangerSource.id);
    const disabled = await createDestination(team.key, source.id, { enabled: false });
    const filtered = await createDestination(team.key, source.id, { event_filter: ["customer.*"] });
    const replay = (body: unknown) => call("POST", `webhooks/sources/${source.id}/events/${event.id}/replay`, { key: team.key, body });
    const unknown = crypto.randomUUID();
    for (const id of [unknown, sibling.id, foreign.id, "not-a-uuid"]) {
      await expectError(await replay({ destination_ids: [missed.id, id] }), 422, {
        error: "Validation failed",
        details: { destination_ids: [`${id} is not a destination of this source`] },
      });
    }
    await expectError(await replay({ destination_ids: [disabled.id] }), 422, {
      error: "Validation failed",
      details: { destination_ids: [`${disabled.id} is disabled; enable it first`] },
    });
    await expectError(await replay({ destination_ids: [filtered.id] }), 422, {
      error: "Validation failed",
      details: { destination_ids: [`${filtered.id} does not admit event type invoice.paid`] },
    });
    for (const body of [
      { destination_ids: [] },
      { destination_ids: "x" },
      { destination_ids: [1] },
      { destination_ids: Array.from({ length: 21 }, () => missed.id) },
      null,
      [],
    ]) {
      const res = await replay(body);
      expect(res.status).toBe(422);
      const parsed = await json(res);
      expect(parsed.error).toBe("Validation failed");
      expect(Object.keys(parsed.details).every((k) => k.startsWith("destination_ids") || k === "_body")).toBe(true);
    }
    const replays = (await getEvent(team.key, source.id, event.id)).deliveries.filter((d: { trigger: string }) => d.trigger === "replay");
    expect(replays).toEqual([]);
    // Another team's event stays a 404, whatever the body.
    await expectError(
      await call("POST", `webhooks/sources/${strangerSource.id}/events/${event.id}/replay`, { key: stranger.key, body: { destination_ids: [foreign.id] } }),
      404,
      { error: "Event not found" },
    );
  });
});
