// The plain fast check of an entry must agree with the schema on every input.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { judgeEntry, plainEntry } from "../../../src/products/logs/logs.ingest";
import { LogEntryInput } from "../../../src/products/logs/logs.schemas";

const text = (max: number) =>
  fc.oneof(fc.constant(""), fc.constant(" \t"), fc.string({ maxLength: 8 }), fc.string({ minLength: max - 1, maxLength: max + 1 }));
const anyValue = fc.oneof(fc.constant(null), fc.constant(undefined), fc.integer(), fc.boolean(), fc.constant([]), fc.constant({}), fc.constant({ a: 1 }));
const field = (max: number) => fc.oneof(text(max), anyValue);
const entryLike = fc.record(
  {
    message: fc.oneof(text(32_768), anyValue),
    level: fc.oneof(fc.constantFrom("debug", "info", "warn", "error", "fatal", "INFO", "trace", ""), anyValue),
    stream: field(128),
    service: field(128),
    trace_id: field(128),
    span_id: field(128),
    metadata: fc.oneof(anyValue, fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }))),
    extra: anyValue,
  },
  { requiredKeys: [] },
);

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
  });

  it("words failures with the schema's first message", () => {
    expect(judgeEntry({ level: "x" })).toEqual({ error: "message is required" });
    expect(judgeEntry({ message: "m", level: "x" })).toEqual({ error: "level must be one of: debug, info, warn, error, fatal" });
    expect(judgeEntry({ message: "m", span_id: "" })).toEqual({ error: "span_id must not be empty" });
    expect(judgeEntry("m")).toEqual({ error: "message is required" });
    expect(judgeEntry({ message: "m", level: null, extra: 1 })).toEqual({ entry: { message: "m", level: null } });
  });
});
