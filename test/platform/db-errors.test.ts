// The one recogniser of constraint failures, against the errors real D1 throws (direct and through
// Drizzle, which wraps them as `cause`).
import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client";
import { isCheckViolation, isUniqueViolation } from "../../src/platform/db-errors";

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

describe("db-errors", () => {
  it("tells UNIQUE and CHECK violations apart, by column and constraint, through Drizzle's wrapping", async () => {
    await env.DB.prepare("CREATE TABLE IF NOT EXISTS dbe (slug TEXT UNIQUE, n INTEGER, CONSTRAINT dbe_cap CHECK (n <= 3))").run();
    await env.DB.prepare("INSERT INTO dbe (slug, n) VALUES ('a', 1)").run();

    const unique = await failure(() => env.DB.prepare("INSERT INTO dbe (slug, n) VALUES ('a', 1)").run());
    expect(isUniqueViolation(unique)).toBe(true);
    expect(isUniqueViolation(unique, "dbe.slug")).toBe(true);
    expect(isUniqueViolation(unique, "surveys.slug")).toBe(false);
    expect(isCheckViolation(unique)).toBe(false);

    const check = await failure(() => env.DB.prepare("INSERT INTO dbe (slug, n) VALUES ('b', 9)").run());
    expect(isCheckViolation(check)).toBe(true);
    expect(isCheckViolation(check, "dbe_cap")).toBe(true);
    expect(isCheckViolation(check, "log_stream_cap")).toBe(false);
    expect(isUniqueViolation(check)).toBe(false);

    const wrapped = await failure(() => getDb(env.DB).run(sql`INSERT INTO dbe (slug, n) VALUES ('a', 2)`));
    expect(isUniqueViolation(wrapped, "dbe.slug")).toBe(true);
    expect(isUniqueViolation(new Error("network down"))).toBe(false);
    expect(isCheckViolation("CHECK constraint failed: x")).toBe(true);
  });
});
