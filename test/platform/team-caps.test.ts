// Per-team caps on what a tenant configures: each log project may hold a store of its own, each
// relay source is a public ingest address, each push app holds keys and subscribers. A team holds
// a bounded number of each, checked and written in one statement, so parallel creates cannot pass
// the cap, and another team keeps its own room.
import { describe, expect, it } from "vitest";
import { MAX_PROJECTS_PER_TEAM } from "../../src/products/logs/logs.service";
import { MAX_APPS_PER_TEAM } from "../../src/products/push/push-apps.service";
import { MAX_SOURCES_PER_TEAM } from "../../src/products/relay/relay-sources.service";
import { call, json, setupTeam } from "../helpers/api";

async function createInParallel(key: string, path: string, n: number, body: (i: number) => unknown) {
  return Promise.all(Array.from({ length: n }, (_, i) => call("POST", path, { key, body: body(i) })));
}

describe("per-team caps under parallel creates", () => {
  it(`log projects: ${MAX_PROJECTS_PER_TEAM} per team`, async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const results = await createInParallel(team.key, "logs/projects", MAX_PROJECTS_PER_TEAM + 5, (i) => ({ name: `p${i}` }));
    expect(results.filter((r) => r.status === 201)).toHaveLength(MAX_PROJECTS_PER_TEAM);
    const refused = results.find((r) => r.status !== 201)!;
    expect(refused.status).toBe(422);
    expect(await json(refused)).toEqual({ error: "Validation failed", details: { name: [`a team can have at most ${MAX_PROJECTS_PER_TEAM} log projects`] } });
    expect((await json(await call("GET", "logs/projects", { key: team.key }))).data).toHaveLength(MAX_PROJECTS_PER_TEAM);
    const other = await setupTeam({ plan: "enterprise" });
    expect((await call("POST", "logs/projects", { key: other.key, body: { name: "mine" } })).status).toBe(201);
  });

  it(`relay sources: ${MAX_SOURCES_PER_TEAM} per team`, async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const results = await createInParallel(team.key, "webhooks/sources", MAX_SOURCES_PER_TEAM + 5, (i) => ({ name: `s${i}`, provider: "generic" }));
    expect(results.filter((r) => r.status === 201)).toHaveLength(MAX_SOURCES_PER_TEAM);
    const refused = results.find((r) => r.status !== 201)!;
    expect(refused.status).toBe(422);
    expect(await json(refused)).toEqual({ error: "Validation failed", details: { name: [`a team can have at most ${MAX_SOURCES_PER_TEAM} sources`] } });
    const other = await setupTeam({ plan: "enterprise" });
    expect((await call("POST", "webhooks/sources", { key: other.key, body: { name: "mine", provider: "generic" } })).status).toBe(201);
  });

  it(`push apps: ${MAX_APPS_PER_TEAM} per team`, async () => {
    const team = await setupTeam({ plan: "enterprise" });
    const results = await createInParallel(team.key, "push/apps", MAX_APPS_PER_TEAM + 5, (i) => ({ name: `a${i}` }));
    expect(results.filter((r) => r.status === 201)).toHaveLength(MAX_APPS_PER_TEAM);
    const refused = results.find((r) => r.status !== 201)!;
    expect(refused.status).toBe(422);
    expect(await json(refused)).toEqual({ error: "Validation failed", details: { name: [`a team can have at most ${MAX_APPS_PER_TEAM} push apps`] } });
    const other = await setupTeam({ plan: "enterprise" });
    expect((await call("POST", "push/apps", { key: other.key, body: { name: "mine" } })).status).toBe(201);
  });
});
