// The histogram of a project's entries (log-histogram.ts): entries per bucket by level, counted by
// the project's store in one grouped query, every bucket present, the bucket widened for long
// ranges so a histogram never passes MAX_BUCKETS bars; the filters of the entry query apply; another
// team's project is not found.
import { afterEach, describe, expect, it } from "vitest";
import { env, runInDurableObject } from "cloudflare:test";
import { setClock } from "../../../src/platform/clock";
import { ApiError } from "../../../src/platform/errors";
import { getDb } from "../../../src/db/client";
import { projectEntries } from "../../../src/products/logs/log-entries.service";
import { bucketPlan, entryHistogram, MAX_BUCKETS, projectEntriesWithHistogram } from "../../../src/products/logs/log-histogram";
import { EntriesQuery } from "../../../src/products/logs/logs.schemas";
import { loadProject } from "../../../src/products/logs/logs.service";
import { logStore } from "../../../src/products/logs/logs.store";
import { ingestBatch, ndjson, setupProject } from "./helpers";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
// A round minute, so bucket starts are plain to read.
const NOW = Date.parse("2026-06-01T12:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

afterEach(() => setClock(null));

describe("bucketPlan", () => {
  it("cuts a range of up to two hours into minutes, aligned on the minute", () => {
    expect(bucketPlan(NOW - HOUR, NOW)).toEqual({ start: NOW - HOUR, width: MIN, count: 60 });
    expect(bucketPlan(NOW - HOUR + 30_000, NOW)).toEqual({ start: NOW - HOUR, width: MIN, count: 60 });
    expect(bucketPlan(NOW - 15 * MIN, NOW + 1)).toEqual({ start: NOW - 15 * MIN, width: MIN, count: 16 });
  });

  it("widens the bucket to the next round width for long ranges, never past MAX_BUCKETS", () => {
    expect(bucketPlan(NOW - DAY, NOW)).toEqual({ start: NOW - DAY, width: 15 * MIN, count: 96 });
    const week = bucketPlan(NOW - 7 * DAY, NOW);
    expect(week.width).toBe(2 * HOUR);
    expect(week.count).toBe(84);
    for (const span of [1, MIN, 119 * MIN, 121 * MIN, 3 * DAY, 30 * DAY, 400 * DAY, 20 * 365 * DAY]) {
      const plan = bucketPlan(NOW - span, NOW);
      expect(plan.count).toBeGreaterThan(0);
      expect(plan.count).toBeLessThanOrEqual(MAX_BUCKETS);
      expect(plan.start).toBeLessThanOrEqual(NOW - span);
      // The buckets cover the whole range.
      expect(plan.start + plan.count * plan.width).toBeGreaterThanOrEqual(NOW);
    }
  });
});

describe("entryHistogram", () => {
  async function seeded() {
    const f = await setupProject();
    setClock(NOW);
    const res = await ingestBatch(
      f.token,
      ndjson([
        { message: "a", level: "info", timestamp: iso(NOW - 10 * MIN + 1_000) },
        { message: "b", level: "info", timestamp: iso(NOW - 10 * MIN + 59_000) },
        { message: "payment failed", level: "error", timestamp: iso(NOW - 10 * MIN + 30_000), stream: "billing" },
        { message: "c", level: "warn", timestamp: iso(NOW - 2 * MIN) },
        { message: "payment retried", level: "error", timestamp: iso(NOW - 1), stream: "billing" },
        // Outside the range asked below: before its start, and at its (exclusive) end.
        { message: "old", level: "info", timestamp: iso(NOW - 2 * HOUR) },
        { message: "edge", level: "fatal", timestamp: iso(NOW) },
      ]),
    );
    expect(res.status).toBe(202);
    return f;
  }

  it("counts entries per minute by level, every minute present, the range's end exclusive", async () => {
    const f = await seeded();
    const h = await entryHistogram(env, f.teamId, f.projectId, { since: NOW - HOUR, until: NOW });
    expect(h.bucket_seconds).toBe(60);
    expect(h.buckets).toHaveLength(60);
    expect(h.total).toBe(5);
    expect(h.buckets[0].at).toBe(iso(NOW - HOUR));
    const byAt = new Map(h.buckets.map((b) => [b.at, b]));
    expect(byAt.get(iso(NOW - 10 * MIN))).toEqual({ at: iso(NOW - 10 * MIN), total: 3, counts: { debug: 0, info: 2, warn: 0, error: 1, fatal: 0 } });
    expect(byAt.get(iso(NOW - 2 * MIN))?.counts.warn).toBe(1);
    expect(byAt.get(iso(NOW - MIN))?.counts).toEqual({ debug: 0, info: 0, warn: 0, error: 1, fatal: 0 });
    expect(h.buckets.filter((b) => b.total === 0)).toHaveLength(57);
    expect(h.buckets.reduce((n, b) => n + b.counts.fatal, 0)).toBe(0);
  });

  it("applies the entry query's filters: level, stream and the text search", async () => {
    const f = await seeded();
    const range = { since: NOW - HOUR, until: NOW };
    expect((await entryHistogram(env, f.teamId, f.projectId, range, { level: "error" })).total).toBe(2);
    expect((await entryHistogram(env, f.teamId, f.projectId, range, { stream: "billing" })).total).toBe(2);
    const q = await entryHistogram(env, f.teamId, f.projectId, range, { q: "PAYMENT" });
    expect(q.total).toBe(2);
    expect(q.buckets.filter((b) => b.total > 0).map((b) => b.at)).toEqual([iso(NOW - 10 * MIN), iso(NOW - MIN)]);
    // One or two characters: the LIKE branch of the search.
    expect((await entryHistogram(env, f.teamId, f.projectId, range, { q: "b" })).total).toBe(1);
    expect((await entryHistogram(env, f.teamId, f.projectId, range, { level: "debug" })).total).toBe(0);
  });

  it("widens the bucket over a week and still counts every entry of the range", async () => {
    const f = await seeded();
    const h = await entryHistogram(env, f.teamId, f.projectId, { since: NOW - 7 * DAY, until: NOW + 1 });
    expect(h.bucket_seconds).toBe(2 * 3600);
    expect(h.buckets.length).toBeLessThanOrEqual(MAX_BUCKETS);
    expect(h.total).toBe(7);
    const last = h.buckets[h.buckets.length - 1];
    expect(last.counts).toEqual({ debug: 0, info: 0, warn: 0, error: 0, fatal: 1 });
    expect(h.buckets.reduce((n, b) => n + b.total, 0)).toBe(7);
  });

  it("with a page of entries in one store call (the console's explorer): both as the two calls answer them, the page's cursor not applied to the histogram", async () => {
    const f = await seeded();
    const project = await loadProject(getDb(env.DB), f.teamId, f.projectId);
    const query = EntriesQuery.parse({ since: iso(NOW - HOUR), until: iso(NOW), level: "error", limit: "1" });
    const both = await projectEntriesWithHistogram(env, project, { ...query, since: query.since!, until: query.until! });
    expect(both.entries).toEqual(await projectEntries(env, project, query));
    expect(both.histogram).toEqual(await entryHistogram(env, f.teamId, f.projectId, { since: NOW - HOUR, until: NOW }, { level: "error" }));
    expect(both.entries.data.map((e) => e.message)).toEqual(["payment retried"]);
    expect(both.histogram.total).toBe(2);
    // The next page: its entries move on, the histogram still counts the whole range.
    const next = EntriesQuery.parse({ since: iso(NOW - HOUR), until: iso(NOW), level: "error", limit: "1", cursor: both.entries.pagination.next_cursor! });
    const second = await projectEntriesWithHistogram(env, project, { ...next, since: next.since!, until: next.until! });
    expect(second.entries.data.map((e) => e.message)).toEqual(["payment failed"]);
    expect(second.histogram).toEqual(both.histogram);
  });

  it("answers not found for another team's or an unknown project, before any store is asked", async () => {
    const f = await seeded();
    const other = await setupProject();
    for (const [team, project] of [
      [other.teamId, f.projectId],
      [f.teamId, crypto.randomUUID()],
    ]) {
      const error = await entryHistogram(env, team, project, { since: NOW - HOUR, until: NOW }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).code).toBe("not_found");
    }
  });
});

/** The roll-up of a project's store beside the same counts grouped from its entries. */
async function rollUp(projectId: string) {
  return runInDurableObject(logStore(env, projectId), (_store, state) => {
    const sql = state.storage.sql;
    const held = sql.exec("SELECT minute, level, n FROM entry_counts ORDER BY minute, level").toArray();
    const truth = sql.exec("SELECT ts / 60000 AS minute, level, count(*) AS n FROM entries GROUP BY 1, 2 ORDER BY 1, 2").toArray();
    return { held, truth };
  });
}

describe("the per-minute roll-up", () => {
  it("counts whole minutes from the roll-up and the partial minutes at the range's ends from the entries", async () => {
    const f = await setupProject();
    setClock(NOW);
    const at = (ms: number, level = "info") => ({ message: `m${ms}`, level, timestamp: iso(ms) });
    await ingestBatch(
      f.token,
      ndjson([
        at(NOW - HOUR + 10_000), // before the range's start (same minute)
        at(NOW - HOUR + 40_000, "warn"), // in the range's first, partial minute
        at(NOW - 10 * MIN, "error"),
        at(NOW - 10 * MIN + 5_000, "error"),
        at(NOW - 40_000), // in the last, partial minute
        at(NOW - 20_000), // after the range's end (same minute)
      ]),
    );
    const range = { since: NOW - HOUR + 30_000, until: NOW - 30_000 };
    const h = await entryHistogram(env, f.teamId, f.projectId, range);
    expect(h.total).toBe(4);
    const nonEmpty = h.buckets.filter((b) => b.total > 0).map((b) => [b.at, b.counts.info, b.counts.warn, b.counts.error]);
    expect(nonEmpty).toEqual([
      [iso(NOW - HOUR), 0, 1, 0],
      [iso(NOW - 10 * MIN), 0, 0, 2],
      [iso(NOW - MIN), 1, 0, 0],
    ]);
    // The level filter reads the roll-up too.
    expect((await entryHistogram(env, f.teamId, f.projectId, range, { level: "error" })).total).toBe(2);
    expect((await entryHistogram(env, f.teamId, f.projectId, range, { level: "warn" })).total).toBe(1);
    // A range inside one minute is counted from the entries alone.
    expect((await entryHistogram(env, f.teamId, f.projectId, { since: NOW - 50_000, until: NOW - 30_000 })).total).toBe(1);
  });

  it("stays equal to the entries through appends and retention steps", async () => {
    const f = await setupProject({ retention_days: 1 });
    setClock(NOW);
    const lines = Array.from({ length: 300 }, (_, i) => ({
      message: `l${i}`,
      level: ["info", "warn", "error"][i % 3],
      timestamp: iso(NOW - 3 * DAY + i * 7_000),
    }));
    await ingestBatch(f.token, ndjson(lines.slice(0, 150)));
    await ingestBatch(f.token, ndjson(lines.slice(150)));
    await ingestBatch(f.token, ndjson([{ message: "now", level: "fatal" }]));
    let { held, truth } = await rollUp(f.projectId);
    expect(held).toEqual(truth);
    expect(held.reduce((n, r) => n + Number(r.n), 0)).toBe(301);
    // Retention: a cut inside a minute, so one minute keeps part of its entries.
    const cutoff = NOW - 3 * DAY + 150 * 7_000 + 3_000;
    expect(await logStore(env, f.projectId).purgeExpired(cutoff + DAY)).toEqual({ deleted: 151, more: false });
    ({ held, truth } = await rollUp(f.projectId));
    expect(held).toEqual(truth);
    expect(held.reduce((n, r) => n + Number(r.n), 0)).toBe(150);
    const h = await entryHistogram(env, f.teamId, f.projectId, { since: NOW - 4 * DAY, until: NOW + 1 });
    expect(h.total).toBe(150);
  });
});
