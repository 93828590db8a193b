// The sender's time over HTTP: single and batch ingest keep `timestamp` (or `dt`, `time`), refuse
// (single) or drop (batch) one outside its window, keep unknown fields in metadata, and the entry
// query's order and since/until, and the alert windows, follow the entry's time, not its arrival.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { setClock } from "../../../src/platform/clock";
import { checkProjects } from "../../../src/products/logs/log-alerts.cron";
import { call, expectError, json } from "../../helpers/api";
import { allEntries, ingest, ingestBatch, ndjson, setupProject } from "./helpers";

const NOW = Date.parse("2026-06-01T12:00:00.000Z");
const MIN = 60_000;
const HOUR = 60 * MIN;
const iso = (ms: number) => new Date(ms).toISOString();

afterEach(() => {
  setClock(null);
  vi.restoreAllMocks();
});

describe("entry time", () => {
  it("keeps the sender's timestamp beside the receive time; without one both are the receive time", async () => {
    const f = await setupProject();
    setClock(NOW);
    expect((await ingest(f.token, { message: "sent earlier", timestamp: "2026-06-01T13:30:00+02:00" })).status).toBe(202);
    expect((await ingest(f.token, { message: "now" })).status).toBe(202);
    const entries = await allEntries(f);
    expect(entries.map((e) => [e.message, e.timestamp, e.created_at])).toEqual([
      ["now", iso(NOW), iso(NOW)],
      ["sent earlier", iso(NOW - 30 * MIN), iso(NOW)],
    ]);
    expect(entries[1].metadata).toBeNull();
  });

  it("orders and filters by the entry's time: a backfilled batch lands in its own past", async () => {
    const f = await setupProject();
    setClock(NOW);
    await ingestBatch(f.token, ndjson([{ message: "live" }]));
    // Buffered by a shipper and sent a minute later: Vector's nanosecond ISO, Better Stack's dt, pino's epoch ms time.
    setClock(NOW + MIN);
    const res = await ingestBatch(
      f.token,
      ndjson([
        { message: "vector", timestamp: "2026-06-01T11:00:00.123456789Z" },
        { message: "betterstack", dt: "2026-06-01T10:00:00Z" },
        { message: "pino", time: NOW - 3 * HOUR },
        { message: "both", timestamp: iso(NOW - 4 * HOUR), time: NOW },
      ]),
    );
    expect(await json(res)).toEqual({ ok: true, count: 4, dropped: 0 });
    expect((await allEntries(f)).map((e) => e.message)).toEqual(["live", "vector", "betterstack", "pino", "both"]);
    expect((await allEntries(f, `since=${iso(NOW - 2 * HOUR)}`)).map((e) => e.message)).toEqual(["live", "vector", "betterstack"]);
    expect((await allEntries(f, `until=${iso(NOW - 2 * HOUR)}`)).map((e) => e.message)).toEqual(["pino", "both"]);
    const vector = (await allEntries(f, "q=vector"))[0];
    expect(vector).toMatchObject({ timestamp: "2026-06-01T11:00:00.123Z", created_at: iso(NOW + MIN) });

    // The cursor walks the entry time too: page by page gives the same order.
    const first = await json(await call("GET", `logs/projects/${f.projectId}/entries?limit=2`, { key: f.key }));
    const second = await json(await call("GET", `logs/projects/${f.projectId}/entries?limit=10&cursor=${first.pagination.next_cursor}`, { key: f.key }));
    expect([...first.data, ...second.data].map((e: { message: string }) => e.message)).toEqual(["live", "vector", "betterstack", "pino", "both"]);
  });

  it("refuses a single entry outside the window with 422 and drops such lines from a batch", async () => {
    const f = await setupProject();
    setClock(NOW);
    await expectError(await ingest(f.token, { message: "old", timestamp: iso(NOW - 8 * 24 * HOUR) }), 422, {
      error: "timestamp must not be more than 7 days before the time of receipt",
    });
    await expectError(await ingest(f.token, { message: "ahead", dt: NOW + 2 * HOUR }), 422, {
      error: "dt must not be more than 1 hour after the time of receipt",
    });
    await expectError(await ingest(f.token, { message: "seconds", time: NOW / 1000 }), 422, {
      error: "time must not be more than 7 days before the time of receipt",
    });
    await expectError(await ingest(f.token, { message: "local", timestamp: "2026-06-01T12:00:00" }), 422, {
      error: "timestamp must be an ISO 8601 date-time with a time zone (e.g. 2026-01-01T10:00:00.000Z) or epoch milliseconds",
    });
    const res = await ingestBatch(
      f.token,
      ndjson([
        { message: "edge past", timestamp: NOW - 7 * 24 * HOUR },
        { message: "too old", timestamp: NOW - 7 * 24 * HOUR - 1 },
        { message: "edge future", timestamp: NOW + HOUR },
        { message: "too new", timestamp: NOW + HOUR + 1 },
        { message: "bad", timestamp: "soon" },
      ]),
    );
    expect(await json(res)).toEqual({ ok: true, count: 2, dropped: 3 });
    expect((await allEntries(f)).map((e) => e.message)).toEqual(["edge future", "edge past"]);
  });

  it("keeps unknown top-level fields in metadata, refuses a merged metadata over the cap", async () => {
    const f = await setupProject();
    setClock(NOW);
    expect((await ingest(f.token, { message: "m", host: "web-1", source_type: "file", metadata: { host: "explicit", user: 42 } })).status).toBe(202);
    const [entry] = await allEntries(f);
    expect(entry.metadata).toEqual({ host: "explicit", source_type: "file", user: 42 });
    expect(entry).not.toHaveProperty("source_type");

    const big = "x".repeat(20_000);
    await expectError(await ingest(f.token, { message: "m", metadata: { a: big }, extra: big }), 422, {
      error: "metadata must be at most 32768 bytes (unknown top-level fields are kept in metadata and count towards it)",
    });
    expect(
      await json(
        await ingestBatch(
          f.token,
          ndjson([
            { message: "fits", k: "v" },
            { message: "too big", a: big, b: big },
          ]),
        ),
      ),
    ).toEqual({
      ok: true,
      count: 1,
      dropped: 1,
    });
    expect((await allEntries(f)).map((e) => [e.message, e.metadata])).toEqual([
      ["fits", { k: "v" }],
      ["m", { host: "explicit", source_type: "file", user: 42 }],
    ]);
  });

  it("counts a backfilled entry in the alert window of its own time, not of its arrival", async () => {
    const f = await setupProject();
    const res = await call("POST", `logs/projects/${f.projectId}/alerts`, {
      key: f.key,
      body: { name: "errors", level: "error", threshold: 2, window_minutes: 5, notify_email: "owner@example.com" },
    });
    const alert = (await json(res)).data;
    vi.spyOn(env.ALERT_QUEUE, "sendBatch").mockResolvedValue(undefined as never);
    // Two errors that happened an hour ago arrive now: outside the 5-minute window that ends now.
    setClock(NOW);
    await ingestBatch(
      f.token,
      ndjson([
        { message: "e", level: "error", timestamp: NOW - HOUR },
        { message: "e", level: "error", timestamp: NOW - HOUR + MIN },
      ]),
    );
    expect(await checkProjects(env, NOW, [f.projectId])).not.toContain(alert.id);
    // Two errors stamped within the last five minutes, arriving late together, do count.
    await ingestBatch(
      f.token,
      ndjson([
        { message: "e", level: "error", timestamp: NOW - 4 * MIN },
        { message: "e", level: "error", timestamp: NOW - MIN },
      ]),
    );
    expect(await checkProjects(env, NOW, [f.projectId])).toEqual([alert.id]);
  });
});
