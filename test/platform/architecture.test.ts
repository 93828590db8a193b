/// <reference types="vite/client" />
// The layout the import scan holds (test/helpers/source-scan.ts, docs/ARCHITECTURE.md "Adding a
// product"): over every file of src/, read as text at build time.
import { describe, expect, it } from "vitest";
import { importsOf, importsOfProducts, longProductFiles, runtimeCycles, sqlOutsideQueries } from "../helpers/source-scan";

const SOURCES = Object.fromEntries(
  Object.entries(
    import.meta.glob(["/src/**/*.ts", "/src/**/*.tsx", "!/src/**/*.d.ts"], { query: "?raw", import: "default", eager: true }) as Record<string, string>,
  ).map(([path, text]) => [path.slice(1), text]),
);
const EDGES = importsOf(SOURCES);

describe("the import scan", () => {
  it("reads the whole of src/", () => {
    expect(Object.keys(SOURCES)).toEqual(expect.arrayContaining(["src/index.ts", "src/app.ts", "src/products/index.ts", "src/platform/products.ts"]));
    expect(Object.keys(SOURCES).length).toBeGreaterThan(200);
    expect(EDGES.some((e) => e.from === "src/products/index.ts" && e.to === "src/products/logs/index.ts")).toBe(true);
  });

  it("finds what it looks for in a made-up tree: an import of a product from outside, a runtime cycle (type imports left out)", () => {
    const tree = {
      "src/products/index.ts": 'import { a } from "./a";',
      "src/products/a/index.ts": 'import { x } from "./x";\nimport type { T } from "../../platform/p";',
      "src/products/a/x.ts": 'export const x = 1;\nimport { b } from "../b/index";',
      "src/products/b/index.ts": "export const b = 2;",
      "src/platform/p.ts": 'import { x } from "../products/a/x";\nimport { q } from "./q";',
      "src/platform/q.ts": 'import { p } from "./p";\nimport type { Y } from "./r";',
      "src/platform/r.ts": 'import type { Q } from "./q";\nexport type R = DurableObjectStub<import("./q").Q>;',
    };
    const edges = importsOf(tree);
    expect(importsOfProducts(edges).map((e) => `${e.from} -> ${e.to}`)).toEqual([
      "src/products/a/x.ts -> src/products/b/index.ts",
      "src/platform/p.ts -> src/products/a/x.ts",
    ]);
    expect(runtimeCycles(edges)).toEqual([["src/platform/p.ts", "src/platform/q.ts"]]);
  });
});

describe("a product is a folder", () => {
  it("no file outside a product's folder imports it but the list, src/products/index.ts: not the entry, the app, env.ts, the platform, the console shell nor another product", () => {
    expect(importsOfProducts(EDGES).map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it("keeps the products' console pages in their folders: the shell's pages are its own", () => {
    const shellPages = Object.keys(SOURCES).filter((path) => path.startsWith("src/console/pages/"));
    expect(shellPages.sort()).toEqual(
      ["index.ts", "keys.tsx", "landing.tsx", "members.tsx", "parts.tsx", "public.tsx", "requests.tsx", "usage.tsx"].map((f) => `src/console/pages/${f}`),
    );
  });

  it("has no runtime import cycle", () => {
    expect(runtimeCycles(EDGES)).toEqual([]);
  });
});

/**
 * Product files over the 400-line rule, with their length. Empty: the console pages were split
 * into a file per page or part and the relay store along its seams, so no file may join it. SQL
 * has no such list: every statement is in a `*.queries.ts`.
 */
const LONG_PRODUCT_FILES: Record<string, number> = {};

describe("SQL text only in *.queries.ts, no product file over 400 lines", () => {
  it("finds SQL handed to prepare(), exec() or deleteInSteps() outside *.queries.ts, and long product files, in a made-up tree", () => {
    const tree = {
      "src/products/a/a.service.ts": 'db.prepare("SELECT id FROM a WHERE x = ?").bind(1);\nstmt.prepare(QUERY);',
      "src/products/a/store/a-store.ts":
        'this.sql.exec(`DELETE FROM b WHERE t < ?`, t);\nthis.sql.exec(DELETE_OLD, t);\nsql.exec<Row & Record<string, V>>(\n  "SELECT changes() AS n");\nthis.sql<{ n: number }>("SELECT count(*) AS n FROM c");\nthis.sql(Q.SELECT_C);',
      "src/products/a/a.queries.ts": 'export const QUERY = "SELECT 1";\ndb.prepare("SELECT 2");',
      "src/products/a/a.cron.ts": 'deleteInSteps(env.DB, "DELETE FROM a WHERE rowid IN (SELECT 1)", []);\ndeleteInSteps(env.DB, DELETE_OLD, []);',
      "src/products/a/long.ts": "x\n".repeat(401),
      "src/platform/long.ts": "x\n".repeat(500),
    };
    expect(sqlOutsideQueries(tree)).toEqual([
      'src/products/a/a.cron.ts: deleteInSteps("DELETE FROM a WHERE…")',
      'src/products/a/a.service.ts: prepare("SELECT id FROM a…")',
      'src/products/a/store/a-store.ts: exec("DELETE FROM b WHERE…")',
      'src/products/a/store/a-store.ts: exec("SELECT changes() AS n…")',
      'src/products/a/store/a-store.ts: sql("SELECT count(*) AS n…")',
    ]);
    expect(longProductFiles(tree)).toEqual(["src/products/a/long.ts (401 lines)"]);
  });

  it("no file writes SQL outside *.queries.ts: D1's prepare(), a Durable Object's exec() and the retention runner take statements from a *.queries.ts", () => {
    expect(sqlOutsideQueries(SOURCES)).toEqual([]);
  });

  it("would find the SQL of a real *.queries.ts under another name (the scan reads the files it exempts)", () => {
    const queries = "src/products/push/push.queries.ts";
    expect(SOURCES[queries]).toBeDefined();
    expect(sqlOutsideQueries({ "src/products/push/push.moved.ts": SOURCES[queries]! })).toEqual([
      'src/products/push/push.moved.ts: prepare("UPDATE push_notifications SET fanout_token…")',
    ]);
    expect(sqlOutsideQueries({ [queries]: SOURCES[queries]! })).toEqual([]);
  });

  it("no product file is over 400 lines beyond the older ones listed, and those are no longer than listed", () => {
    for (const found of longProductFiles(SOURCES)) {
      const [, file, lines] = /^(.*) \((\d+) lines\)$/.exec(found)!;
      expect(Number(lines), file).toBeLessThanOrEqual(LONG_PRODUCT_FILES[file] ?? 400);
    }
  });
});
