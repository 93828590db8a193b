// Bindings that count what a code path asks of them, for tests that prove a read was saved (a
// cache hit, one statement instead of two) without timing anything, or that refuse some of it.
import { env } from "cloudflare:test";

/**
 * The pool's D1 behind a proxy that records every prepared statement (every query prepares one)
 * and counts round trips: a batch is one, a statement run on its own is one.
 */
export function countingDb(): { db: D1Database; statements: () => number; roundTrips: () => number; queries: string[] } {
  const queries: string[] = [];
  let trips = 0;
  const real = env.DB;
  const reals = new WeakMap<object, D1PreparedStatement>();
  const counted = (statement: D1PreparedStatement): D1PreparedStatement => {
    const proxy = new Proxy(statement, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (typeof value !== "function") return value;
        if (prop === "bind") return (...args: unknown[]) => counted(target.bind(...args));
        if (prop === "all" || prop === "raw" || prop === "run" || prop === "first") {
          return (...args: unknown[]) => {
            trips++;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return value.bind(target);
      },
    });
    reals.set(proxy, statement);
    return proxy;
  };
  const db = new Proxy(real, {
    get(target, prop) {
      if (prop === "prepare") {
        return (query: string) => {
          queries.push(query);
          return counted(target.prepare(query));
        };
      }
      if (prop === "batch") {
        return (statements: D1PreparedStatement[]) => {
          trips++;
          return target.batch(statements.map((s) => reals.get(s) ?? s));
        };
      }
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db, statements: () => queries.length, roundTrips: () => trips, queries };
}

/**
 * A Durable Object namespace whose stubs pass every RPC call through `around(method, call, args)`:
 * to count the calls of each method, or to fail one (`call` makes the real call).
 */
export function wrappedNamespace<N extends { idFromName(name: string): DurableObjectId; get(id: DurableObjectId): unknown }>(
  real: N,
  around: (method: string, call: () => unknown, args: unknown[]) => unknown,
): N {
  return {
    idFromName: (name: string) => real.idFromName(name),
    get: (id: DurableObjectId) => {
      const stub = real.get(id) as unknown as Record<string, (...args: unknown[]) => unknown>;
      return new Proxy(stub, {
        get: (target, prop) => {
          // Not a thenable: an awaited stub stays a stub.
          if (prop === "then") return undefined;
          return (...args: unknown[]) => around(String(prop), () => target[prop as string]!(...args), args);
        },
      });
    },
  } as unknown as N;
}
