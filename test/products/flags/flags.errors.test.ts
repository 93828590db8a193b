// Bad input answered 422 naming the field (reserved keys, types, unknown variants and segments,
// size limits of clause lists, segments and rulesets), the monthly quota's 429, and scheduled
// changes applied by the store's alarm.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { LIMITS } from "../../../src/products/flags/flags.schemas";
import { flagStore } from "../../../src/products/flags/flags.store";
import { call, expectError, json } from "../../helpers/api";
import { createClientKey, createFlag, evaluate, flagsTeam } from "./flags-helpers";

describe("flags: validation", () => {
  it("reserved and malformed keys answer 422", async () => {
    const { key } = await flagsTeam();
    for (const reserved of ["evaluate", "bootstrap", "track", "ruleset", "segments", "environments", "client"]) {
      const res = await call("POST", "flags", { key, body: { key: reserved } });
      expect(res.status).toBe(422);
      expect((await json(res)).details.key[0]).toMatch(/^is reserved/);
    }
    for (const bad of ["Upper", "-lead", "a".repeat(65), "sp ace"]) expect((await call("POST", "flags", { key, body: { key: bad } })).status).toBe(422);
    await createFlag(key, { key: "dup" });
    await expectError(await call("POST", "flags", { key, body: { key: "dup" } }), 409, {
      error: "Flag dup already exists",
    });
    // A conflict is a plain {error}: details belong to "Validation failed" only (the platform's shapes).
    expect(Object.keys(await json(await call("POST", "flags", { key, body: { key: "dup" } })))).toEqual(["error"]);
  });

  it("variants of the wrong type, unknown variants, environments and segments are named", async () => {
    const { key } = await flagsTeam();
    await expectError(await call("POST", "flags", { key, body: { key: "n", type: "number", variants: { a: 1, b: "two" } } }), 422, {
      error: "Validation failed",
      details: { "variants.b": ["must be a number"] },
    });
    await expectError(
      await call("POST", "flags", {
        key,
        body: {
          key: "x",
          environments: {
            staging: { enabled: true },
            production: { rules: [{ clauses: [{ attribute: "key", op: "in_segment", values: ["ghost"] }], serve: { variant: "maybe" } }] },
          },
        },
      }),
      422,
      {
        error: "Validation failed",
        details: {
          "environments.staging": ["is not an environment of the team"],
          "environments.production.rules.0.serve.variant": ["must name one of the variants"],
          "environments.production.rules.0.clauses.0.values": ["names no segment of the team: ghost"],
        },
      },
    );
    const res = await call("POST", "flags", {
      key,
      body: {
        key: "w",
        environments: {
          production: {
            fallthrough: {
              rollout: {
                variations: [
                  { variant: "on", weight: 60_000 },
                  { variant: "off", weight: 30_000 },
                ],
              },
            },
          },
        },
      },
    });
    expect((await json(res)).details).toEqual({ "environments.production.fallthrough.rollout.variations": ["weights must sum to 100000"] });
  });

  it("size limits: clause lists, rules, segments and the ruleset answer 422 naming what is too large", async () => {
    const { key } = await flagsTeam();
    const clause = { attribute: "country", op: "in", values: ["FR"] };
    let res = await call("POST", "flags", {
      key,
      body: { key: "big", environments: { production: { rules: [{ clauses: Array(LIMITS.clauses + 1).fill(clause), serve: { variant: "on" } }] } } },
    });
    expect((await json(res)).details).toEqual({ "environments.production.rules.0.clauses": [`has more than ${LIMITS.clauses} clauses`] });
    res = await call("POST", "flags", {
      key,
      body: {
        key: "big",
        environments: { production: { rules: [{ clauses: [{ ...clause, values: Array(LIMITS.clauseValues + 1).fill("x") }], serve: { variant: "on" } }] } },
      },
    });
    expect((await json(res)).details).toEqual({ "environments.production.rules.0.clauses.0.values": [`has more than ${LIMITS.clauseValues} values`] });
    res = await call("POST", "flags/segments", { key, body: { key: "huge", included: Array.from({ length: LIMITS.segmentKeys + 1 }, (_, i) => `u${i}`) } });
    expect((await json(res)).details).toEqual({ included: [`has more than ${LIMITS.segmentKeys} context keys`] });
    // A segment naming segments is refused too.
    res = await call("POST", "flags/segments", { key, body: { key: "nested", rules: [{ clauses: [{ attribute: "key", op: "in_segment", values: ["x"] }] }] } });
    expect((await json(res)).details).toEqual({ "rules.0.clauses.0.op": ["a segment's rules cannot name segments"] });
    // The ruleset: segments near their own cap fill the team's 4 MB; the next one is refused naming the ruleset.
    const keys = (n: number, p: string) => Array.from({ length: LIMITS.segmentKeys }, (_, i) => `${p}-${n}-${i}`.padEnd(48, "x"));
    let refused: { details: Record<string, string[]> } | null = null;
    for (let n = 0; n < 10 && !refused; n++) {
      const r = await call("POST", "flags/segments", { key, body: { key: `s${n}`, included: keys(n, "a") } });
      if (r.status === 422) refused = await json(r);
      else expect(r.status).toBe(201);
    }
    expect(refused?.details).toEqual({ ruleset: ["would be larger than 4 MB of JSON"] });
  });

  it("PATCH: unknown fields, a type or key change, and an unknown flag", async () => {
    const { key } = await flagsTeam();
    await createFlag(key, { key: "p" });
    await expectError(await call("PATCH", "flags/p", { key, body: { type: "string" } }), 422, {
      error: "Validation failed",
      details: { type: ["is not a known field"] },
    });
    await expectError(await call("PATCH", "flags/nope", { key, body: { name: "x" } }), 404, { error: "Flag not found" });
    await expectError(await call("POST", "flags/p/revert", { key, body: { version: 9 } }), 422, {
      error: "Validation failed",
      details: { version: ["is not a version of flag p"] },
    });
  });
});

describe("flags: monthly quota", () => {
  it("the last unit is spent, then the monthly-quota 429", async () => {
    const { key, teamId } = await flagsTeam({ plan: "free" });
    await createFlag(key, { key: "q" });
    const { getMeter } = await import("../../../src/platform/rate-limit/limiter");
    const { teamObject } = await import("../../../src/platform/rate-limit/buckets");
    // Take all but one of the free plan's 100,000 units in one step.
    await getMeter(env).ask(teamObject(teamId), teamId, { quota: { service: "flags", amount: 99_999, limit: null } });
    expect((await call("POST", "flags/evaluate", { key, body: { environment: "production", context: {} } })).status).toBe(200);
    await expectError(await call("POST", "flags/evaluate", { key, body: { environment: "production", context: {} } }), 429, {
      error: "Monthly usage limit exceeded. Upgrade your plan.",
    });
    const usage = (await json(await call("GET", "usage", { key }))).data.services.flags;
    expect(usage).toEqual({ metric: "evaluations", used: 100_000, limit: 100_000, remaining: 0, unlimited: false });
    // The ruleset spends nothing and still answers.
    expect((await call("GET", "flags/ruleset?environment=production", { key })).status).toBe(200);
  });

  it("a client key's unit is taken ahead with its counts: kept by an evaluation, given back by a 304, an OFREP parse error or a refused origin; at the limit a 304 still answers", async () => {
    const { key, teamId } = await flagsTeam({ plan: "free" });
    await createFlag(key, { key: "q", client_side: true, environments: { production: { enabled: true } } });
    const client = await createClientKey(key, "production", { allowed_origins: ["https://app.example.com"] });
    const used = async () => (await json(await call("GET", "usage", { key }))).data.services.flags.used;
    const first = await call("POST", "flags/client/bootstrap", { key: client.key, body: { context: { key: "u1" } } });
    expect(first.status).toBe(200);
    expect(await used()).toBe(1);
    const etag = first.headers.get("etag")!;
    expect(
      (await call("POST", "flags/client/bootstrap", { key: client.key, body: { context: { key: "u1" } }, headers: { "if-none-match": etag } })).status,
    ).toBe(304);
    expect(
      (await call("POST", "/ofrep/v1/evaluate/flags/q", { key: client.key, raw: "{not json", headers: { "content-type": "application/json" } })).status,
    ).toBe(400);
    expect((await call("POST", "flags/client/bootstrap", { key: client.key, body: { context: {} }, headers: { origin: "https://evil.example" } })).status).toBe(
      403,
    );
    expect(await used()).toBe(1);
    expect((await call("POST", "/ofrep/v1/evaluate/flags/q", { key: client.key, body: { context: { targetingKey: "u1" } } })).status).toBe(200);
    expect(await used()).toBe(2);

    // The month used up: the 304 spends nothing and answers; an evaluation is the monthly 429.
    const { getMeter } = await import("../../../src/platform/rate-limit/limiter");
    const { teamObject } = await import("../../../src/platform/rate-limit/buckets");
    await getMeter(env).ask(teamObject(teamId), teamId, { quota: { service: "flags", amount: 100_000 - 2, limit: null } });
    expect(
      (await call("POST", "flags/client/bootstrap", { key: client.key, body: { context: { key: "u1" } }, headers: { "if-none-match": etag } })).status,
    ).toBe(304);
    await expectError(await call("POST", "flags/client/bootstrap", { key: client.key, body: { context: { key: "u2" } } }), 429, {
      error: "Monthly usage limit exceeded. Upgrade your plan.",
    });
    expect(await used()).toBe(100_000);
  });
});

describe("flags: scheduled changes", () => {
  it("a change is applied by the store when due, as a new version by the schedule", async () => {
    const { key, teamId } = await flagsTeam();
    await createFlag(key, { key: "launch" });
    const at = new Date(Date.now() + 3_600_000).toISOString();
    let res = await call("POST", "flags/launch/scheduled-changes", { key, body: { environment: "production", at, enabled: true } });
    expect(res.status).toBe(201);
    const change = (await json(res)).data;
    expect(change).toMatchObject({ status: "pending", environment: "production", enabled: true, at });
    // The alarm is set for it.
    const stub = env.FLAG_STORE.get(env.FLAG_STORE.idFromName(teamId));
    expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).toBe(Date.parse(at));
    // Not yet due: nothing happens.
    expect(await flagStore(env, teamId).runDue(Date.now())).toBe(0);
    expect(await flagStore(env, teamId).runDue(Date.parse(at))).toBe(1);
    res = await call("GET", `flags/launch/scheduled-changes/${change.id}`, { key });
    expect((await json(res)).data).toMatchObject({ status: "applied", applied_version: 2 });
    const history = (await json(await call("GET", "flags/launch/history", { key }))).data;
    expect(history[0]).toMatchObject({ version: 2, actor: { type: "schedule", id: change.id }, changes: ["environments.production.enabled"] });
    // The store's change reaches this isolate within the revalidation bound (its cache is dropped here to stand for 5 s passing).
    const { forgetRulesets } = await import("../../../src/products/flags/flags.store");
    forgetRulesets(teamId);
    expect((await evaluate(key, "production", { key: "u" })).launch.reason).toBe("DEFAULT");
    expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).toBeNull();
  });

  it("a pending change can be cancelled; an unknown environment and an unknown variant are named", async () => {
    const { key } = await flagsTeam();
    await createFlag(key, { key: "c" });
    await expectError(await call("POST", "flags/c/scheduled-changes", { key, body: { environment: "nope", at: "2030-01-01T00:00:00Z", enabled: true } }), 422, {
      error: "Validation failed",
      details: { environment: ["is not an environment of the team"] },
    });
    // A new default rule naming a variant the flag lacks is refused when scheduled, not only when applied.
    const rollout = {
      variations: [
        { variant: "on", weight: 50_000 },
        { variant: "maybe", weight: 50_000 },
      ],
    };
    await expectError(
      await call("POST", "flags/c/scheduled-changes", { key, body: { environment: "production", at: "2030-01-01T00:00:00Z", fallthrough: { rollout } } }),
      422,
      { error: "Validation failed", details: { "fallthrough.rollout.variations.1.variant": ["must name one of the variants"] } },
    );
    const res = await call("POST", "flags/c/scheduled-changes", { key, body: { environment: "production", at: "2030-01-01T00:00:00Z", enabled: true } });
    const { id } = (await json(res)).data;
    expect((await call("DELETE", `flags/c/scheduled-changes/${id}`, { key })).status).toBe(204);
    expect((await json(await call("GET", "flags/c/scheduled-changes", { key }))).data).toEqual([]);
  });
});
