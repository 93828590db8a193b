// The plain fast check of an entry must agree with the schema on every input.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { judgeEntry, plainEntry } from "../../../src/products/logs/logs.ingest";
import { LogEntryInput, timestampMs } from "../../../src/products/logs/logs.schemas";

const text = (max: number) => fc.oneof(fc.constant(""), fc.constant(" \t"), fc.string({ maxLength: 8 }), fc.string({ minLength: max - 1, maxLength: max + 1 }));
const anyValue = fc.oneof(fc.constant(null), fc.constant(undefined), fc.integer(), fc.boolean(), fc.constant([]), fc.constant({}), fc.constant({ a: 1 }));
const field = (max: number) => fc.oneof(text(max), anyValue);
// Well-formed and malformed times: ISO with and without zone, impossible dates, fractions, numbers.
const timeLike = fc.oneof(
  anyValue,
  fc.constantFrom(
    "2026-06-01T12:00:00Z",
    "2026-06-01T12:00:00.123456789Z",
    "2026-06-01 12:00:00+02:00",
    "2026-06-01T12:00+0530",
    "2026-06-01T12:00:00",
    "2026-02-30T00:00:00Z",
    "2026-06-01T24:00:00Z",
    "2026-06-01T12:00:00+24:00",
    "0099-01-01T00:00:00Z",
    "yesterday",
    "",
  ),
  fc.double(),
  fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
);
const entryLike = fc.record(
  {
    message: fc.oneof(text(32_768), anyValue),
    level: fc.oneof(fc.constantFrom("debug", "info", "warn", "error", "fatal", "INFO", "trace", ""), anyValue),
    stream: field(128),
    service: field(128),
    trace_id: field(128),
    span_id: field(128),
    metadata: fc.oneof(anyValue, fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }))),
    timestamp: timeLike,
    dt: timeLike,
    time: timeLike,
    extra: anyValue,
  },
  { requiredKeys: [] },
);

const NOW = Date.parse("2026-06-01T12:00:00.000Z");
const HOUR = 3_600_000;

describe("entry judging", () => {
  it("accepts exactly what the schema accepts, with the same result", () => {
    fc.assert(
      fc.property(entryLike, (value) => {
        const plain = plainEntry(value as Record<string, unknown>);
        const parsed = LogEntryInput.safeParse(value);
        expect(plain !== null).toBe(parsed.success);
        if (plain && parsed.success) expect(plain).toEqual(parsed.data);
      }),
      { numRuns: 500 },
    );
    // Regression (a counterexample of the run above): a number past the range of a date is refused
    // by both, as by timestampMs.
    for (const time of [-8_640_000_000_000_001, 8_640_000_000_000_001, Number.MAX_VALUE]) {
      expect(plainEntry({ message: "m", time })).toBeNull();
      expect(LogEntryInput.safeParse({ message: "m", time }).success).toBe(false);
    }
  });

  it("words failures with the schema's first message", () => {
    expect(judgeEntry({ level: "x" })).toEqual({ error: "message is required" });
    expect(judgeEntry({ message: "m", level: "x" })).toEqual({ error: "level must be one of: debug, info, warn, error, fatal" });
    expect(judgeEntry({ message: "m", span_id: "" })).toEqual({ error: "span_id must not be empty" });
    expect(judgeEntry("m")).toEqual({ error: "message is required" });
    expect(judgeEntry({ message: "m", level: null, extra: 1 }, NOW)).toEqual({ entry: { message: "m", level: null, metadata: { extra: 1 } }, ts: NOW });
    expect(judgeEntry({ message: "m", timestamp: "2026-06-01T12:00:00" })).toEqual({
      error: "timestamp must be an ISO 8601 date-time with a time zone (e.g. 2026-01-01T10:00:00.000Z) or epoch milliseconds",
    });
    expect(judgeEntry({ message: "m", dt: true })).toEqual({
      error: "dt must be an ISO 8601 date-time with a time zone (e.g. 2026-01-01T10:00:00.000Z) or epoch milliseconds",
    });
  });
});

describe("the sender's time", () => {
  it("reads ISO 8601 with any zone and fraction, and epoch milliseconds", () => {
    expect(timestampMs("2026-06-01T12:00:00Z")).toBe(NOW);
    expect(timestampMs("2026-06-01T12:00:00.5Z")).toBe(NOW + 500);
    expect(timestampMs("2026-06-01T12:00:00.123456789Z")).toBe(NOW + 123);
    expect(timestampMs("2026-06-01T14:30:00+02:30")).toBe(NOW);
    expect(timestampMs("2026-06-01T07:00-0500")).toBe(NOW);
    expect(timestampMs("2026-06-01 12:00:00z")).toBe(NOW);
    expect(timestampMs(NOW + 0.9)).toBe(NOW);
    for (const bad of [
      "2026-06-01T12:00:00",
      "2026-02-29T00:00:00Z",
      "2026-04-31T00:00:00Z",
      "2026-06-01T12:60:00Z",
      "2026-06-01T12:00:00+25:00",
      "1780000000",
      "",
      "2026-06-01",
    ]) {
      expect(timestampMs(bad), bad).toBeNull();
    }
    expect(timestampMs("2028-02-29T00:00:00Z")).toBe(Date.UTC(2028, 1, 29));
    expect(timestampMs(Number.NaN)).toBeNull();
  });

  it("takes timestamp, then dt, then time; only the one taken must be inside the window", () => {
    const an = (iso: string) => Date.parse(iso);
    expect(judgeEntry({ message: "m", timestamp: "2026-06-01T11:00:00Z", dt: "2026-06-01T10:00:00Z", time: NOW - 3 * HOUR }, NOW)).toMatchObject({
      ts: an("2026-06-01T11:00:00Z"),
    });
    expect(judgeEntry({ message: "m", timestamp: null, dt: "2026-06-01T10:00:00Z", time: NOW - 3 * HOUR }, NOW)).toMatchObject({
      ts: an("2026-06-01T10:00:00Z"),
    });
    expect(judgeEntry({ message: "m", time: NOW - 3 * HOUR }, NOW)).toMatchObject({ ts: NOW - 3 * HOUR });
    // A far-off alias is not looked at when a higher one is set (but it must still be well-formed).
    expect(judgeEntry({ message: "m", timestamp: NOW, time: 5 }, NOW)).toMatchObject({ ts: NOW });
    expect(judgeEntry({ message: "m" }, NOW)).toEqual({ entry: { message: "m" }, ts: NOW });
    // The aliases are fields of their own: never copied into metadata.
    expect(judgeEntry({ message: "m", dt: NOW }, NOW)).toEqual({ entry: { message: "m", dt: NOW }, ts: NOW });
  });

  it("accepts 7 days back and 1 hour ahead, to the millisecond, and no further", () => {
    const DAY = 24 * HOUR;
    expect(judgeEntry({ message: "m", timestamp: NOW - 7 * DAY }, NOW)).toMatchObject({ ts: NOW - 7 * DAY });
    expect(judgeEntry({ message: "m", timestamp: NOW + HOUR }, NOW)).toMatchObject({ ts: NOW + HOUR });
    expect(judgeEntry({ message: "m", timestamp: NOW - 7 * DAY - 1 }, NOW)).toEqual({
      error: "timestamp must not be more than 7 days before the time of receipt",
    });
    expect(judgeEntry({ message: "m", dt: NOW + HOUR + 1 }, NOW)).toEqual({ error: "dt must not be more than 1 hour after the time of receipt" });
    // Epoch seconds read as milliseconds land in 1970: refused, not stored at the wrong time.
    expect(judgeEntry({ message: "m", time: Math.floor(NOW / 1000) }, NOW)).toEqual({ error: "time must not be more than 7 days before the time of receipt" });
  });

  it("keeps unknown top-level fields in metadata; an explicit metadata key wins; the merged object is capped", () => {
    expect(judgeEntry({ message: "m", host: "web-1", pid: 7, metadata: { pid: 8, user: 1 } }, NOW)).toEqual({
      entry: { message: "m", metadata: { host: "web-1", pid: 8, user: 1 } },
      ts: NOW,
    });
    const judged = judgeEntry(JSON.parse('{"message":"m","__proto__":{"polluted":true}}'), NOW) as { entry: { metadata: Record<string, unknown> } };
    expect(Object.getPrototypeOf(judged.entry.metadata)).toBe(Object.prototype);
    expect(JSON.stringify(judged.entry.metadata)).toBe('{"__proto__":{"polluted":true}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();

    const half = "x".repeat(17_000);
    expect(judgeEntry({ message: "m", metadata: { a: half }, extra: half }, NOW)).toEqual({
      error: "metadata must be at most 32768 bytes (unknown top-level fields are kept in metadata and count towards it)",
    });
    expect(judgeEntry({ message: "m", metadata: { a: half + half } }, NOW)).toEqual({ error: "metadata must be at most 32768 bytes" });
    expect(judgeEntry({ message: "m", metadata: { a: half }, extra: "y" }, NOW)).toMatchObject({ entry: { metadata: { a: half, extra: "y" } } });
  });
});
