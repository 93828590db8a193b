import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { addKey, call, expectError, json } from "../../helpers/api";
import { allEntries, ingest, ingestBatch, setupProject } from "./helpers";

const BAD_TOKEN = { error: "Invalid or missing ingest token" };
const BAD_KEY = { error: "Invalid or missing API key" };

describe("ingest authentication", () => {
  it("takes only the project ingest token: a team API key, a missing or a wrong token answer 401", async () => {
    const f = await setupProject();
    for (const token of [f.key, null, "lgt_wrong", f.token + "x"]) {
      await expectError(await ingest(token, { message: "m" }), 401, BAD_TOKEN);
      await expectError(await ingestBatch(token, '{"message":"m"}'), 401, BAD_TOKEN);
    }
    await expectError(await call("POST", "logs/ingest", { body: { message: "m" }, headers: { authorization: `Basic ${f.token}` } }), 401, BAD_TOKEN);
    expect(await allEntries(f)).toEqual([]);
  });

  it("stores entries only in the token's own project", async () => {
    const a = await setupProject();
    const b = await setupProject();
    await ingest(a.token, { message: "for a" });
    expect((await allEntries(a)).map((e) => e.message)).toEqual(["for a"]);
    expect(await allEntries(b)).toEqual([]);
  });

  it("does not accept an ingest token on the management endpoints", async () => {
    const f = await setupProject();
    await expectError(await call("GET", "logs/projects", { key: f.token }), 401, BAD_KEY);
    await expectError(await call("GET", `logs/projects/${f.projectId}/entries`, { key: f.token }), 401, BAD_KEY);
  });
});

describe("tenancy", () => {
  it("answers 404 for another team's project and alert on every route with an id", async () => {
    const owner = await setupProject();
    const other = await setupProject();
    const alert = (
      await json(
        await call("POST", `logs/projects/${owner.projectId}/alerts`, {
          key: owner.key,
          body: { name: "a", level: "error", threshold: 1, window_minutes: 1, notify_email: "owner@example.com" },
        }),
      )
    ).data;
    const notFound = { error: "Project not found" };
    await expectError(await call("GET", `logs/projects/${owner.projectId}`, { key: other.key }), 404, notFound);
    await expectError(await call("POST", `logs/projects/${owner.projectId}/rotate-token`, { key: other.key }), 404, notFound);
    await expectError(await call("GET", `logs/projects/${owner.projectId}/streams`, { key: other.key }), 404, notFound);
    await expectError(await call("GET", `logs/projects/${owner.projectId}/entries`, { key: other.key }), 404, notFound);
    await expectError(await call("GET", `logs/projects/${owner.projectId}/alerts`, { key: other.key }), 404, notFound);
    await expectError(await call("GET", `logs/projects/${owner.projectId}/tail`, { key: other.key }), 404, notFound);
    await expectError(await call("GET", `logs/alerts/${alert.id}/firings`, { key: other.key }), 404, { error: "Alert not found" });
    await expectError(
      await call("POST", `logs/projects/${owner.projectId}/alerts`, {
        key: other.key,
        body: { name: "a", level: "error", threshold: 1, window_minutes: 1, notify_email: "owner@example.com" },
      }),
      404,
      notFound,
    );
    await expectError(await call("PUT", `logs/alerts/${alert.id}`, { key: other.key, body: { threshold: 9 } }), 404, { error: "Alert not found" });
    await expectError(await call("DELETE", `logs/alerts/${alert.id}`, { key: other.key }), 404, { error: "Alert not found" });

    const list = await json(await call("GET", "logs/projects", { key: other.key }));
    expect(list.data.map((p: { id: string }) => p.id)).toEqual([other.projectId]);
    // The owner's token still works and its alert is unchanged.
    expect((await ingest(owner.token, { message: "still mine" })).status).toBe(202);
    const alerts = await json(await call("GET", `logs/projects/${owner.projectId}/alerts`, { key: owner.key }));
    expect(alerts.data[0].threshold).toBe(1);
  });
});

describe("scopes", () => {
  it("needs logs:read to read and logs:write to change", async () => {
    const f = await setupProject();
    const alert = (
      await json(
        await call("POST", `logs/projects/${f.projectId}/alerts`, {
          key: f.key,
          body: { name: "a", level: "error", threshold: 1, window_minutes: 1, notify_email: "owner@example.com" },
        }),
      )
    ).data;
    const readOnly = (await addKey(f.teamId, ["logs:read"])).key;
    const writeOnly = (await addKey(f.teamId, ["logs:write"])).key;
    const none = (await addKey(f.teamId, ["mail:send"])).key;
    const scope = { error: "Insufficient scope" };

    const reads = [
      `logs/projects`,
      `logs/projects/${f.projectId}`,
      `logs/projects/${f.projectId}/streams`,
      `logs/projects/${f.projectId}/entries`,
      `logs/projects/${f.projectId}/alerts`,
      `logs/projects/${f.projectId}/tail`,
      `logs/alerts/${alert.id}/firings`,
    ];
    for (const path of reads) {
      const res = await call("GET", path, { key: readOnly });
      expect(res.status).toBe(200);
      await res.body?.cancel(); // the tail is a stream that does not end on its own
      await expectError(await call("GET", path, { key: writeOnly }), 403, scope);
      await expectError(await call("GET", path, { key: none }), 403, scope);
    }
    const writes: [string, string, unknown][] = [
      ["POST", "logs/projects", { name: "x" }],
      ["POST", `logs/projects/${f.projectId}/rotate-token`, undefined],
      ["POST", `logs/projects/${f.projectId}/alerts`, { name: "a", level: "error", threshold: 1, window_minutes: 1, notify_email: "owner@example.com" }],
      ["PUT", `logs/alerts/${alert.id}`, { threshold: 2 }],
      ["DELETE", `logs/alerts/${alert.id}`, undefined],
    ];
    for (const [method, path, body] of writes) {
      await expectError(await call(method, path, { key: readOnly, body }), 403, scope);
    }
    for (const [method, path, body] of writes) {
      expect((await call(method, path, { key: writeOnly, body })).status).toBeLessThan(300);
    }
    await expectError(await call("GET", "logs/projects", {}), 401, BAD_KEY);
  });

  it("never returns the token after creation, nor stores it in plaintext anywhere", async () => {
    const f = await setupProject();
    for (const path of ["logs/projects", `logs/projects/${f.projectId}`]) {
      const text = await (await call("GET", path, { key: f.key })).text();
      expect(text).not.toContain(f.token);
    }
    const rows = await env.DB.prepare("SELECT * FROM log_projects").all();
    expect(JSON.stringify(rows.results)).not.toContain(f.token);
  });
});
