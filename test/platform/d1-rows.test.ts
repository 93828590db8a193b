// Multi-row inserts in chunks under D1's 100 bound parameters (src/platform/d1-rows.ts), checked
// against D1 itself: each chunk is one real statement.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { D1_MAX_PARAMS, statementChunks } from "../../src/platform/d1-rows";

describe("statementChunks", () => {
  it("keeps every row, in order, in chunks of as many as one statement's parameters take", () => {
    const rows = Array.from({ length: 101 }, (_, i) => ({ a: i, b: i, c: i, d: i, e: i, f: i, g: i }));
    const chunks = statementChunks(rows);
    expect(chunks.map((c) => c.length)).toEqual([14, 14, 14, 14, 14, 14, 14, 3]);
    expect(chunks.flat()).toEqual(rows);
    expect(statementChunks(rows, 4)[0]).toHaveLength(25);
    expect(statementChunks([])).toEqual([]);
    // A row wider than a statement still goes, one per chunk.
    expect(statementChunks([{ wide: 1 }, { wide: 2 }], 150)).toEqual([[{ wide: 1 }], [{ wide: 2 }]]);
  });

  it("each chunk is a statement D1 takes (at the bound exactly), all of them one batch", async () => {
    await env.DB.exec("CREATE TABLE IF NOT EXISTS chunk_probe (a INTEGER, b INTEGER, c INTEGER, d INTEGER)");
    const rows = Array.from({ length: 260 }, (_, i) => ({ a: i, b: 2 * i, c: 3 * i, d: 4 * i }));
    const statements = statementChunks(rows).map((chunk) => {
      expect(chunk.length * 4).toBeLessThanOrEqual(D1_MAX_PARAMS);
      return env.DB.prepare(`INSERT INTO chunk_probe (a, b, c, d) VALUES ${chunk.map(() => "(?, ?, ?, ?)").join(", ")}`).bind(
        ...chunk.flatMap((r) => [r.a, r.b, r.c, r.d]),
      );
    });
    await env.DB.batch(statements);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n, SUM(d) AS d FROM chunk_probe").first()).toEqual({ n: 260, d: 4 * ((259 * 260) / 2) });
  });
});
