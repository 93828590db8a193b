// Tenant isolation (another team's ids answer 404), scopes (403), authentication (401), the
// webhook URL guard, and the mail webhooks router leaving other /webhooks paths alone.
import { describe, expect, it } from "vitest";
import { addKey, call, expectError, json, setupTeam } from "../../helpers/api";
import { LIVE, send } from "./mail-helpers";

describe("tenant isolation", () => {
  it("another team's email answers 404 and never appears in its list", async () => {
    const a = await setupTeam();
    const b = await setupTeam();
    const email = (await json(await send(a.key, LIVE))).data;
    await expectError(await call("GET", `emails/${email.id}`, { key: b.key }), 404, { error: "Email not found" });
    expect((await json(await call("GET", "emails", { key: b.key }))).data).toEqual([]);
    expect((await json(await call("GET", `emails?recipient=${LIVE.to}`, { key: b.key }))).data).toEqual([]);
    expect((await call("GET", `emails/${email.id}`, { key: a.key })).status).toBe(200);
  });

  it("another team's webhook answers 404 on delete and test, and is not listed", async () => {
    const a = await setupTeam();
    const b = await setupTeam();
    const hook = (await json(await call("POST", "webhooks", { key: a.key, body: { url: "https://hooks.example.com/a", events: ["email.sent"] } }))).data;
    await expectError(await call("DELETE", `webhooks/${hook.id}`, { key: b.key }), 404, { error: "Webhook not found" });
    await expectError(await call("POST", `webhooks/${hook.id}/test`, { key: b.key }), 404, { error: "Webhook not found" });
    expect((await json(await call("GET", "webhooks", { key: b.key }))).data).toEqual([]);
    expect((await json(await call("GET", "webhooks", { key: a.key }))).data).toHaveLength(1);
  });

  it("ids that are not UUIDs answer 404", async () => {
    const team = await setupTeam();
    await expectError(await call("GET", "emails/not-a-uuid", { key: team.key }), 404, { error: "Email not found" });
    await expectError(await call("DELETE", "webhooks/1%27%20OR%201=1", { key: team.key }), 404, { error: "Webhook not found" });
  });
});

describe("authentication and scopes", () => {
  it("answers 401 without a valid key on every route", async () => {
    for (const [method, path] of [
      ["POST", "emails"],
      ["POST", "emails/batch"],
      ["GET", "emails"],
      ["GET", "emails/00000000-0000-4000-8000-000000000000"],
      ["POST", "webhooks"],
      ["GET", "webhooks"],
      ["DELETE", "webhooks/00000000-0000-4000-8000-000000000000"],
      ["POST", "webhooks/00000000-0000-4000-8000-000000000000/test"],
    ]) {
      await expectError(await call(method, path, { key: "edp_wrong", body: method === "GET" ? undefined : {} }), 401, { error: "Invalid or missing API key" });
    }
  });

  it("sending needs mail:send; reading emails needs mail:read (a send-only key cannot read mail)", async () => {
    const team = await setupTeam({ scopes: ["mail:read"] });
    await expectError(await send(team.key, LIVE), 403, { error: "Insufficient scope" });
    await expectError(await call("POST", "emails/batch", { key: team.key, body: { emails: [LIVE] } }), 403, { error: "Insufficient scope" });
    await expectError(await call("POST", "webhooks", { key: team.key, body: { url: "https://x.example.com", events: ["email.sent"] } }), 403, {
      error: "Insufficient scope",
    });
    expect((await call("GET", "emails", { key: team.key })).status).toBe(200);
    expect((await call("GET", "webhooks", { key: team.key })).status).toBe(200);

    const sender = await addKey(team.teamId, ["mail:send"]);
    const email = (await json(await send(sender.key, LIVE))).data;
    await expectError(await call("GET", `emails/${email.id}`, { key: sender.key }), 403, { error: "Insufficient scope" });
    await expectError(await call("GET", "emails", { key: sender.key }), 403, { error: "Insufficient scope" });
    expect((await call("GET", `emails/${email.id}`, { key: team.key })).status).toBe(200);

    const other = await addKey(team.teamId, ["surveys:read", "webhooks:write"]);
    await expectError(await call("GET", "emails", { key: other.key }), 403, { error: "Insufficient scope" });
    await expectError(await call("GET", `emails/${email.id}`, { key: other.key }), 403, { error: "Insufficient scope" });
    await expectError(await call("GET", "webhooks", { key: other.key }), 403, { error: "Insufficient scope" });
    await expectError(await call("DELETE", "webhooks/00000000-0000-4000-8000-000000000000", { key: team.key }), 403, { error: "Insufficient scope" });
  });
});

describe("mail webhooks input", () => {
  it("refuses URLs the SSRF guard refuses and unknown events (422)", async () => {
    const team = await setupTeam();
    await expectError(await call("POST", "webhooks", { key: team.key, body: { url: "ftp://hooks.example.com", events: ["email.sent"] } }), 422, {
      error: "Validation failed",
      details: { url: ["must use https"] },
    });
    await expectError(await call("POST", "webhooks", { key: team.key, body: { url: "https://user:pw@hooks.example.com", events: ["email.sent"] } }), 422, {
      error: "Validation failed",
      details: { url: ["must not contain credentials"] },
    });
    const res = await call("POST", "webhooks", { key: team.key, body: { url: "https://hooks.example.com", events: ["email.opened"] } });
    expect(res.status).toBe(422);
    expect(Object.keys((await json(res)).details)).toEqual(["events.0"]);
    await expectError(await call("POST", "webhooks", { key: team.key, raw: "{", headers: { "content-type": "application/json" } }), 400, {
      error: expect.any(String),
    });
  });

  it("keeps at most 10 webhooks per team", async () => {
    const team = await setupTeam();
    for (let i = 0; i < 10; i++) {
      expect((await call("POST", "webhooks", { key: team.key, body: { url: `https://hooks.example.com/${i}`, events: ["email.sent"] } })).status).toBe(201);
    }
    await expectError(await call("POST", "webhooks", { key: team.key, body: { url: "https://hooks.example.com/11", events: ["email.sent"] } }), 422, {
      error: "Validation failed",
      details: { url: ["a team can have at most 10 mail webhooks"] },
    });
  });

  it("regression: 25 parallel creates store exactly 10 webhooks (the cap is checked and written in one statement)", async () => {
    const team = await setupTeam();
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        call("POST", "webhooks", { key: team.key, body: { url: `https://hooks.example.com/p${i}`, events: ["email.sent"] } }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    expect(results.filter((r) => r.status === 422)).toHaveLength(15);
    expect((await json(await call("GET", "webhooks", { key: team.key }))).data).toHaveLength(10);
  });

  it("leaves other /webhooks paths to their own routers (no mail route for /webhooks/sources)", async () => {
    const team = await setupTeam({ scopes: ["webhooks:write"] });
    // A key without any mail scope reaches the relay's routes: the mail router never answers them.
    const res = await call("GET", "webhooks/sources", { key: team.key });
    expect(res.status).toBe(200);
    expect(Array.isArray((await res.json<{ data: unknown[] }>()).data)).toBe(true);
    const nested = await call("POST", `webhooks/sources/${crypto.randomUUID()}/destinations`, {
      key: team.key,
      body: { url: "https://example.com/hook" },
    });
    expect(nested.status).toBe(404);
    expect(await nested.json()).toEqual({ error: "Source not found" });
  });
});

describe("injection", () => {
  it("refuses line breaks in the subject and display names (no header injection)", async () => {
    const team = await setupTeam();
    await expectError(await send(team.key, { ...LIVE, subject: "Hi\r\nBcc: victim@example.com" }), 422, {
      error: "Validation failed",
      details: { subject: ["must not contain line breaks"] },
    });
    await expectError(await send(team.key, { ...LIVE, from: "Evil\r\nBcc: x@example.com <a@acme.dev>" }), 422, {
      error: "Validation failed",
      details: { from: ["must be a valid email address"] },
    });
  });
});
