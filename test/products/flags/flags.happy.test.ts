// The flags server API as a user meets it: create, change with versions and history, revert,
// If-Match, evaluate and bootstrap, the ruleset with ETag/304, segments and environments.
import { describe, expect, it } from "vitest";
import { call, expectError, json } from "../../helpers/api";
import { createFlag, evaluate, flagsTeam, patchFlag } from "./flags-helpers";

describe("flags: happy paths", () => {
  it("a new boolean flag: defaults, version 1, every environment off", async () => {
    const { key } = await flagsTeam();
    const flag = await createFlag(key, { key: "new-checkout", client_side: true, tags: ["checkout"] });
    expect(flag).toMatchObject({
      key: "new-checkout",
      name: "new-checkout",
      type: "boolean",
      variants: { on: true, off: false },
      off_variant: "off",
      version: 1,
      client_side: true,
      tags: ["checkout"],
      environments: {
        production: { enabled: false, rules: [], fallthrough: { variant: "on" } },
        development: { enabled: false, rules: [], fallthrough: { variant: "on" } },
      },
    });
    expect(flag.salt).toMatch(/^[A-Za-z0-9_-]{16}$/);
    const got = await call("GET", "flags/new-checkout", { key });
    expect(got.headers.get("etag")).toBe('"1"');
    expect((await json(got)).data.salt).toBe(flag.salt);
    expect(await evaluate(key, "production", { key: "u1" })).toEqual({ "new-checkout": { value: false, variant: "off", reason: "DISABLED", version: 1 } });
  });

  it("every change is a version with its actor; history newest first; revert makes a new version", async () => {
    const { key, keyId } = await flagsTeam();
    await createFlag(key, { key: "kill" });
    let res = await patchFlag(key, "kill", { environments: { production: { enabled: true } } });
    expect(res.status).toBe(200);
    expect((await json(res)).data.version).toBe(2);
    // The isolate that made the change sees it at once.
    expect((await evaluate(key, "production", { key: "u1" })).kill).toEqual({ value: true, variant: "on", reason: "DEFAULT", version: 2 });
    res = await patchFlag(key, "kill", { environments: { production: { enabled: false } }, name: "Kill switch" });
    expect((await json(res)).data.version).toBe(3);
    expect((await evaluate(key, "production", { key: "u1" })).kill.reason).toBe("DISABLED");

    const history = (await json(await call("GET", "flags/kill/history", { key }))).data;
    expect(history.map((h: { version: number }) => h.version)).toEqual([3, 2, 1]);
    expect(history[0]).toMatchObject({ changes: ["name", "environments.production.enabled"], actor: { type: "key", id: keyId } });
    expect(history[2].changes).toEqual(["created"]);

    res = await call("POST", "flags/kill/revert", { key, body: { version: 2 } });
    const reverted = (await json(res)).data;
    expect(reverted).toMatchObject({ version: 4, name: "kill", environments: { production: { enabled: true } } });
    expect((await evaluate(key, "production", { key: "u1" })).kill.value).toBe(true);
  });

  it("If-Match: the stored version changes; another answers 412 and changes nothing", async () => {
    const { key } = await flagsTeam();
    await createFlag(key, { key: "guarded" });
    expect((await patchFlag(key, "guarded", { name: "A" }, { "if-match": '"1"' })).status).toBe(200);
    await expectError(await patchFlag(key, "guarded", { name: "B" }, { "if-match": '"1"' }), 412, { error: "Flag guarded is at version 2, not 1" });
    await expectError(await patchFlag(key, "guarded", { name: "B" }, { "if-match": "nonsense" }), 412, { error: "Flag guarded is at version 2, not -1" });
    expect((await json(await call("GET", "flags/guarded", { key }))).data).toMatchObject({ name: "A", version: 2 });
  });

  it("If-Match on revert: a stale version answers 412 and changes nothing, a malformed one too (as PATCH), the current one reverts", async () => {
    const { key } = await flagsTeam();
    await createFlag(key, { key: "undo" });
    expect((await patchFlag(key, "undo", { name: "Second" })).status).toBe(200);
    expect((await patchFlag(key, "undo", { name: "Third" })).status).toBe(200);
    const revert = (ifMatch: string) => call("POST", "flags/undo/revert", { key, body: { version: 1 }, headers: { "if-match": ifMatch } });
    await expectError(await revert('"2"'), 412, { error: "Flag undo is at version 3, not 2" });
    await expectError(await revert("nonsense"), 412, { error: "Flag undo is at version 3, not -1" });
    let flag = (await json(await call("GET", "flags/undo", { key }))).data;
    expect(flag).toMatchObject({ name: "Third", version: 3 });
    expect((await json(await call("GET", "flags/undo/history", { key }))).data).toHaveLength(3);

    const res = await revert('W/"3"');
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBe('"4"');
    flag = (await json(res)).data;
    expect(flag).toMatchObject({ name: "undo", version: 4 });
    // `*` is unconditional, as PATCH takes it.
    expect((await revert("*")).status).toBe(200);
    expect((await json(await call("GET", "flags/undo", { key }))).data).toMatchObject({ name: "undo", version: 5 });
  });

  it("If-Match on scheduling a change: a stale version answers 412 and schedules nothing, the current one schedules", async () => {
    const { key } = await flagsTeam();
    await createFlag(key, { key: "later" });
    expect((await patchFlag(key, "later", { name: "Second" })).status).toBe(200);
    const schedule = (ifMatch: string) =>
      call("POST", "flags/later/scheduled-changes", {
        key,
        body: { environment: "production", at: "2031-01-01T09:00:00Z", enabled: true },
        headers: { "if-match": ifMatch },
      });
    await expectError(await schedule('"1"'), 412, { error: "Flag later is at version 2, not 1" });
    expect((await json(await call("GET", "flags/later/scheduled-changes", { key }))).data).toEqual([]);
    expect((await schedule('"2"')).status).toBe(201);
    expect((await json(await call("GET", "flags/later/scheduled-changes", { key }))).data).toHaveLength(1);
  });

  it("targeting rules, segments and a rollout evaluate as the contract says, in each environment", async () => {
    const { key } = await flagsTeam();
    let res = await call("POST", "flags/segments", {
      key,
      body: { key: "beta", included: ["vip"], excluded: ["banned"], rules: [{ clauses: [{ attribute: "plan", op: "in", values: ["beta"] }] }] },
    });
    expect(res.status).toBe(201);
    await createFlag(key, {
      key: "banner",
      type: "string",
      variants: { blue: "blue", red: "red", none: "" },
      off_variant: "none",
      environments: {
        production: {
          enabled: true,
          rules: [
            { id: "fr", clauses: [{ attribute: "country", op: "in", values: ["FR"] }], serve: { variant: "blue" } },
            { clauses: [{ attribute: "key", op: "in_segment", values: ["beta"] }], serve: { variant: "red" } },
          ],
          fallthrough: {
            rollout: {
              variations: [
                { variant: "blue", weight: 50_000 },
                { variant: "red", weight: 50_000 },
              ],
            },
          },
        },
      },
    });
    const flags = await evaluate(key, "production", { key: "someone", country: "FR" }, ["banner", "missing"]);
    expect(flags).toEqual({
      banner: { value: "blue", variant: "blue", reason: "TARGETING_MATCH", version: 1 },
      missing: { value: null, variant: null, reason: "ERROR", version: null, error_code: "FLAG_NOT_FOUND" },
    });
    expect((await evaluate(key, "production", { targetingKey: "vip" })).banner.variant).toBe("red");
    expect((await evaluate(key, "production", { key: "x", plan: "beta" })).banner.variant).toBe("red");
    expect((await evaluate(key, "production", { key: "banned", plan: "beta" })).banner.reason).toBe("SPLIT");
    // development was never configured: off.
    expect((await evaluate(key, "development", { key: "vip" })).banner).toMatchObject({ variant: "none", reason: "DISABLED" });
    // The segment a flag uses cannot go.
    await expectError(await call("DELETE", "flags/segments/beta", { key }), 409, { error: "Segment beta is used by flags: banner" });
    // Bootstrap: every flag.
    res = await call("POST", "flags/bootstrap", { key, body: { environment: "production", context: { key: "vip" } } });
    expect(Object.keys((await json(res)).data.flags)).toEqual(["banner"]);
  });

  it("the ruleset has an ETag and answers 304 until something changes", async () => {
    const { key } = await flagsTeam();
    await createFlag(key, { key: "a" });
    let res = await call("GET", "flags/ruleset?environment=production", { key });
    expect(res.status).toBe(200);
    const etag = res.headers.get("etag")!;
    const body = (await json(res)).data;
    expect(body.environment).toBe("production");
    expect(body.flags.a).toMatchObject({ key: "a", off_variant: "off", version: 1 });
    res = await call("GET", "flags/ruleset?environment=production", { key, headers: { "if-none-match": etag } });
    expect(res.status).toBe(304);
    await patchFlag(key, "a", { environments: { production: { enabled: true } } });
    res = await call("GET", "flags/ruleset?environment=production", { key, headers: { "if-none-match": etag } });
    expect(res.status).toBe(200);
    expect((await json(res)).data.flags.a.config.enabled).toBe(true);
  });

  it("environments: two from the start, more up to 10", async () => {
    const { key } = await flagsTeam();
    const list = (await json(await call("GET", "flags/environments", { key }))).data;
    expect(list.map((e: { key: string }) => e.key)).toEqual(["production", "development"]);
    for (let i = 0; i < 8; i++) expect((await call("POST", "flags/environments", { key, body: { key: `env-${i}` } })).status).toBe(201);
    await expectError(await call("POST", "flags/environments", { key, body: { key: "one-more" } }), 422, {
      error: "Validation failed",
      details: { environments: ["a team has at most 10 environments"] },
    });
    await createFlag(key, { key: "f", environments: { "env-3": { enabled: true } } });
    expect((await evaluate(key, "env-3", { key: "u" })).f.reason).toBe("DEFAULT");
  });
});
