// The ruleset cache: an evaluation makes no store call (and no D1 read) while its ruleset was
// checked less than 5 s ago; a change made elsewhere (another isolate, the alarm) is seen once 5 s
// have passed, and the isolate that made a change sees it at once. A client key deleted elsewhere
// is refused within the same bound.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../../src/platform/clock";
import { flagStore, RULESET_REVALIDATE_MS, rulesetCalls } from "../../../src/products/flags/flags.store";
import { call, json } from "../../helpers/api";
import { createClientKey, createFlag, evaluate, flagsTeam } from "./flags-helpers";

afterEach(() => setClock(null));

describe("flags: propagation", () => {
  it("no store call while current; another isolate's change within 5 s; this isolate's at once", async () => {
    const start = Date.now();
    setClock(start);
    const { key, teamId } = await flagsTeam();
    await createFlag(key, { key: "p" });
    await evaluate(key, "production", { key: "u" });
    const calls = rulesetCalls.count;
    for (let i = 0; i < 20; i++) await evaluate(key, "production", { key: `u${i}` });
    expect(rulesetCalls.count).toBe(calls);

    // A change written to the store without this isolate (as another isolate would).
    const changed = await flagStore(env, teamId).updateFlag(
      "p",
      { environments: { production: { enabled: true } } },
      null,
      { type: "key", id: "elsewhere", label: "edp_x" },
      new Date().toISOString(),
    );
    expect(changed.ok).toBe(true);
    setClock(start + RULESET_REVALIDATE_MS - 1);
    expect((await evaluate(key, "production", { key: "u" })).p.reason).toBe("DISABLED");
    setClock(start + RULESET_REVALIDATE_MS + 1);
    expect((await evaluate(key, "production", { key: "u" })).p.reason).toBe("DEFAULT");
    expect(rulesetCalls.count).toBe(calls + 1);

    // A kill switch through this isolate: at once.
    await call("PATCH", "flags/p", { key, body: { environments: { production: { enabled: false } } } });
    expect((await evaluate(key, "production", { key: "u" })).p.reason).toBe("DISABLED");
  });

  it("an unchanged ruleset is revalidated without being carried again", async () => {
    const start = Date.now();
    setClock(start);
    const { key, teamId } = await flagsTeam();
    await createFlag(key, { key: "p" });
    const store = flagStore(env, teamId);
    const { revision } = (await store.ruleset("production", null))!;
    expect(await store.ruleset("production", revision)).toEqual({ revision, ruleset: null });
    await evaluate(key, "production", {});
    setClock(start + RULESET_REVALIDATE_MS * 3);
    expect((await evaluate(key, "production", {})).p.version).toBe(1);
  });

  it("a client key deleted on another isolate is refused within 5 s", async () => {
    const start = Date.now();
    setClock(start);
    const { key } = await flagsTeam();
    const client = await createClientKey(key);
    expect((await call("POST", "flags/client/bootstrap", { key: client.key, body: { context: {} } })).status).toBe(200);
    await env.DB.prepare("DELETE FROM flag_client_keys WHERE id = ?").bind(client.id).run();
    // Still trusted within the bound (the isolate has not asked D1 again)…
    setClock(start + 4_000);
    expect((await call("POST", "flags/client/bootstrap", { key: client.key, body: { context: {} } })).status).toBe(200);
    // …and refused once it has passed.
    setClock(start + 5_000);
    const res = await call("POST", "flags/client/bootstrap", { key: client.key, body: { context: {} } });
    expect(res.status).toBe(401);
    expect(await json(res)).toEqual({ error: "Invalid or missing client key" });
  });
});
