/// <reference types="vite/client" />
// The layout the import scan holds (test/helpers/source-scan.ts, docs/ARCHITECTURE.md "Adding a
// product"): over every file of src/, read as text at build time.
import { describe, expect, it } from "vitest";
import { importsOf, importsOfProducts, runtimeCycles } from "../helpers/source-scan";

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
