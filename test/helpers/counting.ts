// Bindings that count what a code path asks of them, for tests that prove a read was saved (a
// cache hit, one statement instead of two) without timing anything.
import { env } from "cloudflare:test";

/** The pool's D1 behind a proxy that records every prepared statement (every query prepares one). */
export function countingDb(): { db: D1Database; statements: () => number; queries: string[] } {
  const queries: string[] = [];
  const real = env.DB;
  const db = new Proxy(real, {
    get(target, prop) {
      if (prop === "prepare") {
        return (query: string) => {
          queries.push(query);
          return target.prepare(query);
        };
      }
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db, statements: () => queries.length, queries };
}
