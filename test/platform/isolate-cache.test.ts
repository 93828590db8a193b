// The one per-isolate cache (platform/isolate-cache.ts) that the key cache and the relay's source
// cache are made of: freshness by a moved clock, the size bound (oldest first out), forgetting that
// wins over a look-up in flight, and forgetting a team in every cache at once.
import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../src/platform/clock";
import { forgetTeamEverywhere, IsolateCache } from "../../src/platform/isolate-cache";

const T0 = Date.UTC(2031, 0, 1);
afterEach(() => setClock(null));

describe("IsolateCache", () => {
  it("serves an entry while 0 ≤ age < ttl, and not when the clock moves past it or back", () => {
    setClock(T0);
    const cache = new IsolateCache<string>({ ttlMs: 1_000, max: 10 });
    cache.set("a", "A", cache.mark());
    expect(cache.get("a")).toBe("A");
    setClock(T0 + 999);
    expect(cache.get("a")).toBe("A");
    setClock(T0 + 1_000);
    expect(cache.get("a")).toBeUndefined();
    setClock(T0 - 1);
    expect(cache.get("a")).toBeUndefined();
  });

  it("keeps at most `max` entries, dropping the oldest stored", () => {
    setClock(T0);
    const cache = new IsolateCache<number>({ ttlMs: 60_000, max: 3 });
    for (const [i, key] of ["a", "b", "c"].entries()) cache.set(key, i, cache.mark());
    cache.set("a", 10, cache.mark()); // stored again: now the youngest
    cache.set("d", 3, cache.mark());
    expect(cache.size).toBe(3);
    expect(cache.get("b")).toBeUndefined();
    expect([cache.get("a"), cache.get("c"), cache.get("d")]).toEqual([10, 2, 3]);
  });

  it("does not store the answer of a look-up that a forget overtook", async () => {
    const cache = new IsolateCache<string>({ ttlMs: 60_000, max: 10 });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const loading = cache.getOrLoad("k", async () => {
      await gate;
      return "stale";
    });
    cache.forget(() => true);
    release();
    expect(await loading).toBe("stale");
    expect(cache.get("k")).toBeUndefined();
    expect(await cache.getOrLoad("k", async () => "fresh")).toBe("fresh");
    expect(cache.get("k")).toBe("fresh");
  });

  it("loads once while fresh and never stores a null answer", async () => {
    const cache = new IsolateCache<string>({ ttlMs: 60_000, max: 10 });
    let loads = 0;
    const load = async () => (++loads, "v");
    await cache.getOrLoad("k", load);
    await cache.getOrLoad("k", load);
    expect(loads).toBe(1);
    expect(await cache.getOrLoad("missing", async () => null)).toBeNull();
    expect(cache.size).toBe(1);
  });

  it("forgets a team's entries in every cache that knows teams, and nothing else", () => {
    const byTeam = new IsolateCache<{ team: string }>({ ttlMs: 60_000, max: 10, teamOf: (v) => v.team });
    const other = new IsolateCache<{ team: string }>({ ttlMs: 60_000, max: 10, teamOf: (v) => v.team });
    const teamless = new IsolateCache<{ team: string }>({ ttlMs: 60_000, max: 10 });
    for (const cache of [byTeam, other, teamless]) {
      cache.set("x", { team: "t1" }, cache.mark());
      cache.set("y", { team: "t2" }, cache.mark());
    }
    forgetTeamEverywhere("t1");
    expect([byTeam.get("x"), other.get("x")]).toEqual([undefined, undefined]);
    expect([byTeam.get("y"), other.get("y")]).toEqual([{ team: "t2" }, { team: "t2" }]);
    expect(teamless.size).toBe(2);
  });
});
