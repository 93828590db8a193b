import { describe, expect, it } from "vitest";
import { addKey, call, expectError, json, setupTeam } from "../../helpers/api";
import { createDestination, createSource, ingest, receiver, waitFor } from "./relay.helpers";

async function teamWithEvent() {
  const team = await setupTeam();
  const source = await createSource(team.key);
  const dest = await createDestination(team.key, source.id);
  const rx = receiver([dest.url], [200]);
  try {
    const event = (await json(await ingest(source.slug, JSON.stringify({ type: "a.b" })))).data;
    await waitFor(async () => rx.received.length === 1);
    return { team, source, dest, event };
  } finally {
    rx.restore();
  }
}

describe("tenancy", () => {
  it("answers 404 for another team's source, destination and event on every route", async () => {
    const a = await teamWithEvent();
    const b = await setupTeam();
    const own = await createSource(b.key);
    const S = a.source.id;
    const sourceRoutes: Array<[string, string, unknown?]> = [
      ["GET", `webhooks/sources/${S}`],
      ["PATCH", `webhooks/sources/${S}`, { name: "stolen" }],
      ["DELETE", `webhooks/sources/${S}`],
      ["POST", `webhooks/sources/${S}/destinations`, { url: "https://example.com/x" }],
      ["GET", `webhooks/sources/${S}/destinations`],
      ["PATCH", `webhooks/sources/${S}/destinations/${a.dest.id}`, { enabled: false }],
      ["DELETE", `webhooks/sources/${S}/destinations/${a.dest.id}`],
      ["GET", `webhooks/sources/${S}/events`],
      ["GET", `webhooks/sources/${S}/events/${a.event.id}`],
      ["POST", `webhooks/sources/${S}/events/${a.event.id}/replay`],
    ];
    for (const [method, path, body] of sourceRoutes) {
      await expectError(await call(method, path, { key: b.key, body }), 404, { error: "Source not found" });
    }
    // Team B's own source with team A's destination or event ids.
    await expectError(await call("PATCH", `webhooks/sources/${own.id}/destinations/${a.dest.id}`, { key: b.key, body: { enabled: false } }), 404, {
      error: "Destination not found",
    });
    await expectError(await call("DELETE", `webhooks/sources/${own.id}/destinations/${a.dest.id}`, { key: b.key }), 404, { error: "Destination not found" });
    await expectError(await call("GET", `webhooks/sources/${own.id}/events/${a.event.id}`, { key: b.key }), 404, { error: "Event not found" });
    await expectError(await call("POST", `webhooks/sources/${own.id}/events/${a.event.id}/replay`, { key: b.key }), 404, { error: "Event not found" });
    // Team B's list does not show A's source; A's data is untouched.
    const list = await json(await call("GET", "webhooks/sources", { key: b.key }));
    expect(list.data.map((s: { id: string }) => s.id)).toEqual([own.id]);
    const still = await json(await call("GET", `webhooks/sources/${S}`, { key: a.team.key }));
    expect(still.data).toMatchObject({ name: "src", destinations_count: 1 });
    const dests = await json(await call("GET", `webhooks/sources/${S}/destinations`, { key: a.team.key }));
    expect(dests.data[0].enabled).toBe(true);
  });

  it("answers 404 for unknown ids, and a destination or event of another source of the same team", async () => {
    const a = await teamWithEvent();
    const other = await createSource(a.team.key);
    const missing = crypto.randomUUID();
    await expectError(await call("GET", `webhooks/sources/${missing}`, { key: a.team.key }), 404, { error: "Source not found" });
    await expectError(await call("GET", `webhooks/sources/not-a-uuid/events`, { key: a.team.key }), 404, { error: "Source not found" });
    await expectError(await call("PATCH", `webhooks/sources/${other.id}/destinations/${a.dest.id}`, { key: a.team.key, body: { enabled: false } }), 404, {
      error: "Destination not found",
    });
    await expectError(await call("GET", `webhooks/sources/${other.id}/events/${a.event.id}`, { key: a.team.key }), 404, { error: "Event not found" });
    await expectError(await call("GET", `webhooks/sources/${a.source.id}/events/${missing}`, { key: a.team.key }), 404, { error: "Event not found" });
  });
});

describe("authentication and scopes", () => {
  it("refuses a missing or invalid key with 401", async () => {
    await expectError(await call("GET", "webhooks/sources"), 401, { error: "Invalid or missing API key" });
    await expectError(await call("POST", "webhooks/sources", { key: "edp_nope", body: { name: "x", provider: "generic" } }), 401, {
      error: "Invalid or missing API key",
    });
  });

  it("webhooks:read reads but cannot write; webhooks:write does both; other scopes get 403", async () => {
    const a = await teamWithEvent();
    const reader = await addKey(a.team.teamId, ["webhooks:read"]);
    const writer = await addKey(a.team.teamId, ["webhooks:write"]);
    const stranger = await addKey(a.team.teamId, ["mail:send", "surveys:write"]);
    const S = a.source.id;
    const reads = [
      "webhooks/sources",
      `webhooks/sources/${S}`,
      `webhooks/sources/${S}/destinations`,
      `webhooks/sources/${S}/events`,
      `webhooks/sources/${S}/events/${a.event.id}`,
    ];
    for (const path of reads) {
      expect((await call("GET", path, { key: reader.key })).status).toBe(200);
      expect((await call("GET", path, { key: writer.key })).status).toBe(200);
      await expectError(await call("GET", path, { key: stranger.key }), 403, { error: "Insufficient scope" });
    }
    const writes: Array<[string, string, unknown?]> = [
      ["POST", "webhooks/sources", { name: "x", provider: "generic" }],
      ["PATCH", `webhooks/sources/${S}`, { name: "y" }],
      ["DELETE", `webhooks/sources/${S}`],
      ["POST", `webhooks/sources/${S}/destinations`, { url: "https://example.com/x" }],
      ["PATCH", `webhooks/sources/${S}/destinations/${a.dest.id}`, { enabled: true }],
      ["DELETE", `webhooks/sources/${S}/destinations/${a.dest.id}`],
      ["POST", `webhooks/sources/${S}/events/${a.event.id}/replay`],
    ];
    for (const [method, path, body] of writes) {
      await expectError(await call(method, path, { key: reader.key, body }), 403, { error: "Insufficient scope" });
      await expectError(await call(method, path, { key: stranger.key, body }), 403, { error: "Insufficient scope" });
    }
    expect((await call("PATCH", `webhooks/sources/${S}`, { key: writer.key, body: { name: "by writer" } })).status).toBe(200);
  });

  it("the ingest address needs no credential and ignores one", async () => {
    const team = await setupTeam();
    const source = await createSource(team.key);
    expect((await call("POST", `/in/${source.slug}`, { raw: "{}", key: "edp_garbage" })).status).toBe(202);
  });

  it("documents the relay routes in the OpenAPI document", async () => {
    const doc = await json(await call("GET", "openapi.json"));
    for (const path of [
      "/api/v1/webhooks/sources",
      "/api/v1/webhooks/sources/{source_id}",
      "/api/v1/webhooks/sources/{source_id}/destinations",
      "/api/v1/webhooks/sources/{source_id}/destinations/{destination_id}",
      "/api/v1/webhooks/sources/{source_id}/events",
      "/api/v1/webhooks/sources/{source_id}/events/{event_id}",
      "/api/v1/webhooks/sources/{source_id}/events/{event_id}/replay",
      "/in/{slug}",
    ]) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
  });
});
