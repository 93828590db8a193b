// Tenancy and scopes: another team's flags, segments, environments, client keys and scheduled
// changes answer 404; one team's ruleset never reaches another's evaluation; flags:read cannot
// write, flags:write includes flags:read; the strict `flags` family counts evaluate, bootstrap and
// track apart from the team's other strict families.
import { describe, expect, it } from "vitest";
import { addKey, call, expectError, json } from "../../helpers/api";
import { createClientKey, createFlag, evaluate, flagsTeam } from "./flags-helpers";

describe("flags: security", () => {
  it("another team's resources answer 404 and are never changed", async () => {
    const a = await flagsTeam();
    const b = await flagsTeam();
    await createFlag(a.key, { key: "secret" });
    await call("POST", "flags/segments", { key: a.key, body: { key: "vips" } });
    const client = await createClientKey(a.key);
    const sched = (
      await json(
        await call("POST", "flags/secret/scheduled-changes", { key: a.key, body: { environment: "production", at: "2030-01-01T00:00:00Z", enabled: true } }),
      )
    ).data;
    await expectError(await call("GET", "flags/secret", { key: b.key }), 404, { error: "Flag not found" });
    await expectError(await call("PATCH", "flags/secret", { key: b.key, body: { name: "x" } }), 404, { error: "Flag not found" });
    await expectError(await call("DELETE", "flags/secret", { key: b.key }), 404, { error: "Flag not found" });
    await expectError(await call("GET", "flags/secret/history", { key: b.key }), 404, { error: "Flag not found" });
    await expectError(await call("POST", "flags/secret/revert", { key: b.key, body: { version: 1 } }), 404, { error: "Flag not found" });
    await expectError(await call("GET", `flags/secret/scheduled-changes/${sched.id}`, { key: b.key }), 404, { error: "Flag not found" });
    await expectError(await call("GET", "flags/secret/insights", { key: b.key }), 404, { error: "Flag not found" });
    await expectError(await call("GET", "flags/segments/vips", { key: b.key }), 404, { error: "Segment not found" });
    await expectError(await call("DELETE", "flags/segments/vips", { key: b.key }), 404, { error: "Segment not found" });
    await expectError(await call("DELETE", `flags/environments/production/client-keys/${client.id}`, { key: b.key }), 404, { error: "Client key not found" });
    expect((await json(await call("GET", "flags/environments/production/client-keys", { key: b.key }))).data).toEqual([]);
    expect((await json(await call("GET", "flags/secret", { key: a.key }))).data.version).toBe(1);
  });

  it("tenant isolation of evaluation: the same keys in two teams never mix", async () => {
    const a = await flagsTeam();
    const b = await flagsTeam();
    await createFlag(a.key, { key: "same", environments: { production: { enabled: true } } });
    await createFlag(b.key, { key: "same" });
    await call("POST", "flags/segments", { key: a.key, body: { key: "seg", included: ["alice"] } });
    await call("POST", "flags/segments", { key: b.key, body: { key: "seg", included: ["bob"] } });
    await call("PATCH", "flags/same", {
      key: b.key,
      body: {
        environments: {
          production: { enabled: true, rules: [{ clauses: [{ attribute: "key", op: "in_segment", values: ["seg"] }], serve: { variant: "off" } }] },
        },
      },
    });
    expect((await evaluate(a.key, "production", { key: "bob" })).same).toMatchObject({ value: true, reason: "DEFAULT" });
    expect((await evaluate(b.key, "production", { key: "bob" })).same).toMatchObject({ value: false, reason: "TARGETING_MATCH" });
    expect((await evaluate(b.key, "production", { key: "alice" })).same).toMatchObject({ value: true, reason: "DEFAULT", version: 2 });
    const ca = await createClientKey(a.key);
    const res = await call("POST", "/ofrep/v1/evaluate/flags/same", { key: ca.key, body: { context: { targetingKey: "bob" } } });
    expect(res.status).toBe(404); // not client-side in team a; team b's is never seen
  });

  it("flags:read reads and evaluates but cannot write; flags:write includes flags:read; other keys 403", async () => {
    const t = await flagsTeam();
    await createFlag(t.key, { key: "f" });
    const reader = await addKey(t.teamId, ["flags:read"]);
    const writer = await addKey(t.teamId, ["flags:write"]);
    const other = await addKey(t.teamId, ["surveys:read"]);
    expect((await call("GET", "flags/f", { key: reader.key })).status).toBe(200);
    expect((await call("POST", "flags/evaluate", { key: reader.key, body: { environment: "production", context: {} } })).status).toBe(200);
    await expectError(await call("PATCH", "flags/f", { key: reader.key, body: { name: "x" } }), 403, { error: "Insufficient scope" });
    await expectError(
      await call("POST", "flags/track", { key: reader.key, body: { environment: "production", events: [{ kind: "custom", name: "n", context_key: "u" }] } }),
      403,
      {
        error: "Insufficient scope",
      },
    );
    expect((await call("PATCH", "flags/f", { key: writer.key, body: { name: "x" } })).status).toBe(200);
    expect((await call("GET", "flags/f", { key: writer.key })).status).toBe(200);
    await expectError(await call("GET", "flags", { key: other.key }), 403, { error: "Insufficient scope" });
    await expectError(await call("GET", "flags/unknown/path/here", { key: other.key }), 403, { error: "Insufficient scope" });
  });

  it("evaluate, bootstrap and track count in the strict flags family: 30 per window, apart from other families", async () => {
    const t = await flagsTeam();
    await createFlag(t.key, { key: "f" });
    for (let i = 0; i < 30; i++) {
      const path = ["flags/evaluate", "flags/bootstrap"][i % 2];
      const res = await call("POST", path, { key: t.key, body: { environment: "production", context: { key: `u${i}` } } });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("30");
    }
    const refused = await call("POST", "flags/track", {
      key: t.key,
      body: { environment: "production", events: [{ kind: "custom", name: "n", context_key: "u" }] },
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe(String((await refused.json<{ retry_after: number }>()).retry_after));
    // Management and the ruleset are in the default bucket only.
    expect((await call("GET", "flags/ruleset?environment=production", { key: t.key })).status).toBe(200);
    expect((await call("PATCH", "flags/f", { key: t.key, body: { name: "still" } })).status).toBe(200);
  });
});
