// The per-source forward cap (issue 37, finding 5: a destination looping through a third party that
// drops our headers): what one source forwards per minute is counted in its store, exactly under
// parallel ingests; past the cap the ingest answers the platform's rate-limit 429 with Retry-After,
// stores nothing and gives the units back, so the sender retries and a loop slows to the cap.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { app } from "../../../src/app";
import type { Env } from "../../../src/env";
import { setClock } from "../../../src/platform/clock";
import { DEFAULTS, settings } from "../../../src/platform/config";
import { call, ORIGIN, setupTeam } from "../../helpers/api";
import { usedOf } from "../../helpers/usage";
import { createDestination, createSource, env, eventCount, ingest, receiver, storeSql, waitFor } from "./relay.helpers";

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

/** The start of the current minute of real time, so a pinned clock stays in this month. */
const MINUTE_START = Math.floor(Date.now() / 60_000) * 60_000;

/** The pool's bindings with another cap (settings are read per environment object). */
function withCap(cap: number): Env {
  return { ...(env as Env), RELAY_FORWARDS_PER_MINUTE: String(cap) } as Env;
}

describe("per-source forward cap", () => {
  it("has a documented default of 600 deliveries a minute per source", () => {
    expect(DEFAULTS.RELAY_FORWARDS_PER_MINUTE).toBe("600");
    expect(settings(env as Env).relayForwardsPerMinute).toBe(600);
    expect(settings({ RELAY_FORWARDS_PER_MINUTE: "25" }).relayForwardsPerMinute).toBe(25);
    // Not a positive integer: the default.
    expect(settings({ RELAY_FORWARDS_PER_MINUTE: "0" }).relayForwardsPerMinute).toBe(600);
  });

  it("stops a loop through a third party that drops our headers: each hop is an event until the cap, then 429 with Retry-After, nothing stored, the unit given back", async () => {
    setClock(MINUTE_START + 15_000);
    const capped = withCap(5);
    const team = await setupTeam();
    const source = await createSource(team.key);
    const destination = await createDestination(team.key, source.id);
    // The third party: takes our delivery and posts its body back to the source's ingest address,
    // without any of our headers (no webhook-id, so nothing identifies the event as a copy).
    const hops: Array<{ status: number; retryAfter: string | null; body: unknown }> = [];
    const settled: Promise<void>[] = [];
    const original = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      if (request.url !== destination.url) return original(input, init);
      const ctx = createExecutionContext();
      const res = await app.fetch(
        new Request(`${ORIGIN}/in/${source.slug}`, { method: "POST", headers: { "content-type": "application/json" }, body: await request.text() }),
        capped,
        ctx,
      );
      hops.push({ status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.json() });
      settled.push(waitOnExecutionContext(ctx));
      return new Response("ok", { status: 200 });
    });

    const first = await ingest(source.slug, JSON.stringify({ type: "loop.test" }), {}, { env: capped });
    expect(first.status).toBe(202);
    const last = await waitFor(async () => hops.find((hop) => hop.status === 429));
    await Promise.all(settled);

    // The first event and four hops fill the minute's 5 forwards; the fifth hop is refused.
    expect(hops.map((hop) => hop.status)).toEqual([202, 202, 202, 202, 429]);
    expect(last.body).toEqual({ error: "Rate limit exceeded", retry_after: 45 });
    expect(last.retryAfter).toBe("45");
    expect(await eventCount(source.id)).toBe(5);
    expect(await storeSql(source.id, "SELECT count(*) AS n FROM deliveries")).toEqual([{ n: 5 }]);
    // One unit per stored event: the refused one took none.
    expect(await usedOf(team.teamId, "webhooks")).toBe(5);
  });

  it("counts exactly under parallel ingests, per delivery, per source and per minute", async () => {
    setClock(MINUTE_START + 30_000);
    const capped = withCap(10);
    const team = await setupTeam();
    const source = await createSource(team.key);
    const other = await createSource(team.key);
    const destinations = [await createDestination(team.key, source.id), await createDestination(team.key, source.id)];
    const elsewhere = await createDestination(team.key, other.id);
    const rx = receiver([...destinations.map((d) => d.url), elsewhere.url]);
    try {
      // Two destinations: each event is two forwards, so 5 of 20 parallel events fit in 10.
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, n) => ingest(source.slug, JSON.stringify({ type: "burst", n }), { "x-event-id": `burst-${n}` }, { env: capped })),
      );
      const statuses = answers.map((res) => res.status);
      expect(statuses.filter((s) => s === 202)).toHaveLength(5);
      expect(statuses.filter((s) => s === 429)).toHaveLength(15);
      for (const res of answers.filter((r) => r.status === 429)) {
        expect(res.headers.get("retry-after")).toBe("30");
        expect(await res.json()).toEqual({ error: "Rate limit exceeded", retry_after: 30 });
      }
      expect(await eventCount(source.id)).toBe(5);
      expect(await storeSql(source.id, "SELECT count(*) AS n FROM deliveries")).toEqual([{ n: 10 }]);
      expect(await usedOf(team.teamId, "webhooks")).toBe(5);

      // Another source counts on its own.
      expect((await ingest(other.slug, JSON.stringify({ type: "burst" }), {}, { env: capped })).status).toBe(202);

      // At the cap, a copy of a stored event is still answered as a duplicate (it forwards nothing),
      // and an event no destination admits is stored (nothing to forward).
      const storedN = statuses.indexOf(202);
      const copy = await ingest(source.slug, JSON.stringify({ type: "burst", n: storedN }), { "x-event-id": `burst-${storedN}` }, { env: capped });
      expect(copy.status).toBe(202);
      expect(await copy.json()).toMatchObject({ data: { duplicate: true } });
      for (const d of destinations)
        expect(
          (await call("PATCH", `webhooks/sources/${source.id}/destinations/${d.id}`, { key: team.key, body: { event_filter: ["only.this"] } })).status,
        ).toBe(200);
      const unadmitted = await ingest(source.slug, JSON.stringify({ type: "other.type" }), {}, { env: capped });
      expect(unadmitted.status).toBe(202);
      expect(await unadmitted.json()).toMatchObject({ data: { duplicate: false, deliveries: 0 } });
      expect((await ingest(source.slug, JSON.stringify({ type: "only.this" }), {}, { env: capped })).status).toBe(429);

      // The next minute has room again.
      setClock(MINUTE_START + 60_000);
      const next = await ingest(source.slug, JSON.stringify({ type: "only.this" }), {}, { env: capped });
      expect(next.status).toBe(202);
      expect(await eventCount(source.id)).toBe(7);
    } finally {
      rx.restore();
    }
  });
});
