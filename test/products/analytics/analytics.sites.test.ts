// Sites: create (Idempotency-Key, the team's cap, validation), list, read, change, delete; scopes
// (`analytics:write` includes `analytics:read`) and another team's ids answering 404.
import { describe, expect, it } from "vitest";
import { addKey, call, expectError, json, setupTeam } from "../../helpers/api";
import { MAX_SITES_PER_TEAM } from "../../../src/products/analytics/analytics.schemas";
import { createSite, pageview, sendEvent } from "./analytics.helpers";

describe("sites", () => {
  it("creates, lists, reads, changes and deletes a site", async () => {
    const team = await setupTeam();
    const site = await createSite(team.key, { domain: " WWW.Example.COM " });
    expect(site).toMatchObject({ domain: "example.com", keep_query_string: false });
    expect(site.snippet).toContain(`data-domain="${site.id}"`);
    expect(site.snippet).toContain("/a/script.js");
    const listed = (await json(await call("GET", "analytics/sites", { key: team.key }))).data;
    expect(listed.map((s: { id: string }) => s.id)).toEqual([site.id]);
    expect((await json(await call("GET", `analytics/sites/${site.id}`, { key: team.key }))).data).toEqual(site);
    const patched = await call("PATCH", `analytics/sites/${site.id}`, { key: team.key, body: { domain: "shop.example.org", keep_query_string: true } });
    expect(patched.status).toBe(200);
    expect((await json(patched)).data).toMatchObject({ id: site.id, domain: "shop.example.org", keep_query_string: true });
    expect((await call("DELETE", `analytics/sites/${site.id}`, { key: team.key })).status).toBe(204);
    await expectError(await call("GET", `analytics/sites/${site.id}`, { key: team.key }), 404, { error: "Site not found" });
    // Its events answer 404 from then on.
    await expectError(await sendEvent(pageview(site.id, "https://shop.example.org/")), 404, { error: "Site not found" });
  });

  it("validates the domain in the product's shape", async () => {
    const team = await setupTeam();
    for (const domain of ["https://example.com", "example.com/path", "", "exa mple.com", "example.com:8080"]) {
      const res = await call("POST", "analytics/sites", { key: team.key, body: { domain } });
      expect(res.status, domain).toBe(422);
      const body = await json(res);
      expect(body.error).toBe("Validation failed");
      expect(Object.keys(body.details)).toEqual(["domain"]);
    }
    await expectError(await call("POST", "analytics/sites", { key: team.key, body: { domain: "a.com", extra: 1 } }), 422, {
      error: "Validation failed",
      details: { extra: ["is not a known field"] },
    });
  });

  it("replays a create with the same Idempotency-Key instead of making a second site", async () => {
    const team = await setupTeam();
    const headers = { "idempotency-key": crypto.randomUUID() };
    const first = await call("POST", "analytics/sites", { key: team.key, body: { domain: "example.com" }, headers });
    const again = await call("POST", "analytics/sites", { key: team.key, body: { domain: "example.com" }, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await json(again)).data.id).toBe((await json(first)).data.id);
    expect((await json(await call("GET", "analytics/sites", { key: team.key }))).data).toHaveLength(1);
  });

  it(`holds a team to ${MAX_SITES_PER_TEAM} sites under parallel creates`, async () => {
    const team = await setupTeam();
    const answers = await Promise.all(
      Array.from({ length: MAX_SITES_PER_TEAM + 5 }, (_, i) => call("POST", "analytics/sites", { key: team.key, body: { domain: `s${i}.example.com` } })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(MAX_SITES_PER_TEAM);
    const refused = answers.filter((r) => r.status === 422);
    expect(refused).toHaveLength(5);
    await expectError(refused[0], 422, { error: "Validation failed", details: { domain: [`a team can have at most ${MAX_SITES_PER_TEAM} sites`] } });
  });
});

describe("security", () => {
  it("answers 404 for another team's site on every route, and for ids that are not UUIDs", async () => {
    const a = await setupTeam();
    const b = await setupTeam();
    const site = await createSite(a.key);
    const routes: Array<[string, string, unknown?]> = [
      ["GET", `analytics/sites/${site.id}`],
      ["PATCH", `analytics/sites/${site.id}`, { domain: "stolen.com" }],
      ["DELETE", `analytics/sites/${site.id}`],
      ["GET", `analytics/sites/${site.id}/realtime`],
      ["POST", "analytics/query", { site_id: site.id, metrics: ["visitors"], date_range: "day" }],
      ["GET", "analytics/sites/not-a-uuid"],
    ];
    for (const [method, path, body] of routes) await expectError(await call(method, path, { key: b.key, body }), 404, { error: "Site not found" });
    expect((await json(await call("GET", "analytics/sites", { key: b.key }))).data).toEqual([]);
    // Still there for its team.
    expect((await call("GET", `analytics/sites/${site.id}`, { key: a.key })).status).toBe(200);
  });

  it("checks scopes: read cannot write, write includes read, other products' scopes see nothing", async () => {
    const team = await setupTeam();
    const site = await createSite(team.key);
    const reader = await addKey(team.teamId, ["analytics:read"]);
    const writer = await addKey(team.teamId, ["analytics:write"]);
    const other = await addKey(team.teamId, ["logs:read"]);
    await expectError(await call("POST", "analytics/sites", { key: reader.key, body: { domain: "a.com" } }), 403, { error: "Insufficient scope" });
    await expectError(await call("DELETE", `analytics/sites/${site.id}`, { key: reader.key }), 403, { error: "Insufficient scope" });
    expect((await call("GET", "analytics/sites", { key: reader.key })).status).toBe(200);
    expect((await call("GET", `analytics/sites/${site.id}`, { key: writer.key })).status).toBe(200);
    expect((await call("POST", "analytics/query", { key: writer.key, body: { site_id: site.id, metrics: ["events"], date_range: "day" } })).status).toBe(200);
    await expectError(await call("GET", "analytics/sites", { key: other.key }), 403, { error: "Insufficient scope" });
    await expectError(await call("GET", "analytics/sites"), 401, { error: "Invalid or missing API key" });
  });
});
