// The import scan of src/ (test/platform/architecture.test.ts): each file's imports resolved to
// files, and the rules the layout keeps (docs/ARCHITECTURE.md "Adding a product"): a product's
// folder is imported from outside only by the product list, the platform and the console shell
// import no product, no runtime import cycle, SQL text only in `*.queries.ts`, no product file over
// 400 lines. Pure functions of { path: source }, so the test can hand them a made-up tree too.

export type Sources = Readonly<Record<string, string>>;

export interface Import {
  from: string;
  to: string;
  /** `import type` / `export type`: erased at build time, no runtime edge. */
  typeOnly: boolean;
}

const IMPORT = /^\s*(import|export)\s+(type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?["']([^"']+)["']/gm;
/** A dynamic import; `import("./x").Name` is a type, not an import at run time. */
const DYNAMIC = /\bimport\(\s*["']([^"']+)["']\s*\)(?!\.\w)/g;

function dirOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/"));
}

function normalize(path: string): string {
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "..") out.pop();
    else if (part !== "." && part !== "") out.push(part);
  }
  return out.join("/");
}

/** The file a relative specifier names, among `files` (with .ts/.tsx or /index.ts added); null for a package or an asset. */
export function resolve(from: string, specifier: string, files: ReadonlySet<string>): string | null {
  if (!specifier.startsWith(".")) return null;
  const base = normalize(`${dirOf(from)}/${specifier}`);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`]) if (files.has(candidate)) return candidate;
  return null;
}

/** Every import between files of `sources` (packages and assets left out). */
export function importsOf(sources: Sources): Import[] {
  const files = new Set(Object.keys(sources));
  const edges: Import[] = [];
  for (const [from, text] of Object.entries(sources)) {
    for (const m of text.matchAll(IMPORT)) {
      const clause = m[0];
      // `import { type A, type B } from` is type-only too.
      const named = /\{([^}]*)\}/.exec(clause)?.[1];
      const allTypes =
        named !== undefined &&
        !/^\s*(import|export)\s+[\w$]+\s*,/.test(clause) &&
        named.split(",").every((n) => n.trim() === "" || n.trim().startsWith("type "));
      const to = resolve(from, m[3], files);
      if (to) edges.push({ from, to, typeOnly: Boolean(m[2]) || allTypes });
    }
    for (const m of text.matchAll(DYNAMIC)) {
      const to = resolve(from, m[1], files);
      if (to) edges.push({ from, to, typeOnly: false });
    }
  }
  return edges;
}

/** The product a file belongs to (`src/products/<p>/...`), or null (the list itself belongs to none). */
export function productOf(path: string): string | null {
  const m = /^src\/products\/([^/]+)\//.exec(path);
  return m ? m[1] : null;
}

/** Imports of a product's folder from a file outside it, other than the product list. */
export function importsOfProducts(edges: Import[]): Import[] {
  return edges.filter((e) => {
    const target = productOf(e.to);
    return target !== null && productOf(e.from) !== target && e.from !== "src/products/index.ts";
  });
}

/** Runtime import cycles (type-only imports left out), each as the files around it, smallest first. */
export function runtimeCycles(edges: Import[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) if (!e.typeOnly) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  // Tarjan's strongly connected components: a component of more than one file is a cycle.
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string) => {
    order.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const to of next.get(node) ?? []) {
      if (!order.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, order.get(to)!));
    }
    if (low.get(node) === order.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (next.get(node) ?? []).includes(node)) cycles.push(component.sort());
    }
  };
  for (const node of next.keys()) if (!order.has(node)) visit(node);
  return cycles.sort((a, b) => a.length - b.length);
}

/**
 * SQL text handed to D1's `prepare("…")`, a Durable Object's `sql.exec("…")` (or a store's own
 * `this.sql("…")` wrapper of it) or the retention runner's `deleteInSteps(db, "…")` outside
 * `*.queries.ts`: file and statement start.
 */
export function sqlOutsideQueries(sources: Sources): string[] {
  const found: string[] = [];
  // `sql(…)` too: a store's own wrapper of `ctx.storage.sql.exec` (Drizzle's sql`…` is a tagged
  // template, not a call, and is not matched).
  const CALL = /\b(prepare|exec|sql)(?:<(?:[^<>]|<[^<>]*>)*>)?\(\s*(["'`])([\s\S]*?)\2/g;
  const STEPS = /\b(deleteInSteps)\(\s*[\w.]+\s*,\s*(["'`])([\s\S]*?)\2/g;
  for (const [path, text] of Object.entries(sources)) {
    if (path.endsWith(".queries.ts")) continue;
    for (const m of [...text.matchAll(CALL), ...text.matchAll(STEPS)]) {
      if (/^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|WITH|PRAGMA|REPLACE)\b/i.test(m[3]))
        found.push(`${path}: ${m[1]}("${m[3].trim().split(/\s+/).slice(0, 4).join(" ")}…")`);
    }
  }
  return found.sort();
}

/** Product files (src/products/**) over `max` lines. */
export function longProductFiles(sources: Sources, max = 400): string[] {
  return Object.entries(sources)
    .filter(([path]) => productOf(path) !== null)
    .map(([path, text]) => ({ path, lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0) }))
    .filter((f) => f.lines > max)
    .map((f) => `${f.path} (${f.lines} lines)`)
    .sort();
}
