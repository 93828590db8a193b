// The stub of a named Durable Object (platform/durable-objects.ts): the id an isolate keeps for a
// name is the one `idFromName` derives, per namespace, within its bound; and the stub reaches that
// object (what one stub writes, another stub of the same name reads).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { namedObject, OBJECT_IDS_MAX, objectId } from "../../src/platform/durable-objects";
import { teamObject } from "../../src/platform/rate-limit/buckets";

describe("named Durable Objects", () => {
  it("keeps the id idFromName derives, once per name and namespace", () => {
    const name = `team-${crypto.randomUUID()}`;
    const first = objectId(env.RATE_LIMITER, name);
    expect(first.equals(env.RATE_LIMITER.idFromName(name))).toBe(true);
    expect(objectId(env.RATE_LIMITER, name)).toBe(first);
    // Another namespace derives its own id for the same name.
    const other = objectId(env.RELAY_STORE, name);
    expect(other.equals(env.RELAY_STORE.idFromName(name))).toBe(true);
    expect(other).not.toBe(first);
    expect(objectId(env.RATE_LIMITER, `${name}-2`).equals(first)).toBe(false);
  });

  it("keeps at most OBJECT_IDS_MAX ids per namespace, dropping the oldest, and derives a dropped one again", () => {
    const prefix = crypto.randomUUID();
    const oldest = objectId(env.LOG_STORE, `${prefix}-0`);
    for (let i = 1; i <= OBJECT_IDS_MAX; i++) objectId(env.LOG_STORE, `${prefix}-${i}`);
    const again = objectId(env.LOG_STORE, `${prefix}-0`);
    expect(again).not.toBe(oldest);
    expect(again.equals(oldest)).toBe(true);
    // The newest are still kept.
    expect(objectId(env.LOG_STORE, `${prefix}-${OBJECT_IDS_MAX}`)).toBe(objectId(env.LOG_STORE, `${prefix}-${OBJECT_IDS_MAX}`));
  });

  it("reaches the same object from every stub of a name", async () => {
    const teamId = `team-${crypto.randomUUID()}`;
    const at = Date.now();
    const counter = { name: "default", limit: 10 };
    const [first] = await namedObject(env.RATE_LIMITER, teamObject(teamId)).meter(at, teamId, [{ counters: [counter] }]);
    const [second] = await namedObject(env.RATE_LIMITER, teamObject(teamId)).meter(at, teamId, [{ counters: [counter] }]);
    expect(first?.counts).toEqual([1]);
    expect(second?.counts).toEqual([2]);
  });
});
