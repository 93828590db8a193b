// The operator API (DESIGN.md, "Operator API"): admin token, teams, keys, hashed storage.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, ALL_SCOPES, addKey, admin, call, expectError, json, setupTeam } from "../helpers/api";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ADMIN_401 = { error: "Invalid or missing admin token" };

/** A client IP of its own, so 401s here never fill the shared per-IP fallback bucket. */
function freshIp(): string {
  const r = crypto.getRandomValues(new Uint8Array(3));
  return `10.${r[0]}.${r[1]}.${r[2]}`;
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function createTeam(body: Record<string, unknown>): Promise<Response> {
  return admin("POST", "teams", body);
}

describe("operator API authentication", () => {
  it("answers 401 without a token", async () => {
    const res = await call("POST", "admin/teams", { body: { name: "x" }, ip: freshIp() });
    await expectError(res, 401, ADMIN_401);
  });

  it("answers 401 with a wrong token (same length and different length)", async () => {
    const sameLength = ADMIN_TOKEN.replace(/.$/, "X");
    for (const key of [sameLength, "nope", `${ADMIN_TOKEN}x`]) {
      const res = await call("POST", "admin/teams", { key, body: { name: "x" }, ip: freshIp() });
      await expectError(res, 401, ADMIN_401);
    }
  });

  it("answers 401 on every operator route, GET/PATCH/DELETE included", async () => {
    const id = crypto.randomUUID();
    const ip = freshIp();
    for (const [method, path] of [
      ["GET", `admin/teams/${id}`],
      ["PATCH", `admin/teams/${id}`],
      ["POST", `admin/teams/${id}/keys`],
      ["PATCH", `admin/keys/${id}`],
      ["DELETE", `admin/keys/${id}`],
    ]) {
      const res = await call(method, path, { key: "wrong", body: method === "GET" || method === "DELETE" ? undefined : {}, ip });
      await expectError(res, 401, ADMIN_401);
    }
  });

  it("does not accept a team API key as the admin token", async () => {
    const team = await setupTeam();
    const res = await call("GET", `admin/teams/${team.teamId}`, { key: team.key, ip: freshIp() });
    await expectError(res, 401, ADMIN_401);
  });

  it("the admin token is not a team API key", async () => {
    const res = await call("GET", "usage", { key: ADMIN_TOKEN, ip: freshIp() });
    await expectError(res, 401, { error: "Invalid or missing API key" });
  });
});

describe("teams", () => {
  it("creates a team on the free plan by default", async () => {
    const res = await createTeam({ name: "Acme" });
    expect(res.status).toBe(201);
    const { data } = await json(res);
    expect(Object.keys(data).sort()).toEqual(["created_at", "id", "name", "owner_email", "plan"]);
    expect(data.id).toMatch(UUID);
    expect(data.name).toBe("Acme");
    expect(data.plan).toBe("free");
    expect(data.owner_email).toBeNull();
    expect(Number.isNaN(Date.parse(data.created_at))).toBe(false);
  });

  it.each(["free", "starter", "pro", "scale", "enterprise"])("creates a team on the %s plan", async (plan) => {
    const res = await createTeam({ name: `team ${plan}`, plan, owner_email: "owner@example.com" });
    expect(res.status).toBe(201);
    const { data } = await json(res);
    expect(data.plan).toBe(plan);
    expect(data.owner_email).toBe("owner@example.com");
    // The plan really applies: GET returns it too.
    const got = await json(await admin("GET", `teams/${data.id}`));
    expect(got.data).toEqual(data);
  });

  it.each([
    ["missing name", {}, "name"],
    ["empty name", { name: "" }, "name"],
    ["unknown plan", { name: "x", plan: "gold" }, "plan"],
    ["invalid owner_email", { name: "x", owner_email: "not-an-email" }, "owner_email"],
    ["name of the wrong type", { name: 42 }, "name"],
  ])("refuses %s with 422", async (_label, body, field) => {
    const res = await createTeam(body);
    expect(res.status).toBe(422);
    const payload = await json(res);
    expect(payload.error).toBe("Validation failed");
    expect(Object.keys(payload.details)).toContain(field);
  });

  it("gets a team and answers 404 for an unknown one", async () => {
    const created = (await json(await createTeam({ name: "Getme", plan: "starter" }))).data;
    const res = await admin("GET", `teams/${created.id}`);
    expect(res.status).toBe(200);
    expect((await json(res)).data).toEqual(created);

    const missing = await admin("GET", `teams/${crypto.randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(typeof (await json(missing)).error).toBe("string");
  });

  it("patches plan, name and owner_email", async () => {
    const created = (await json(await createTeam({ name: "Before", owner_email: "a@example.com" }))).data;
    const res = await admin("PATCH", `teams/${created.id}`, { plan: "scale", name: "After" });
    expect(res.status).toBe(200);
    const { data } = await json(res);
    expect(data).toEqual({ ...created, plan: "scale", name: "After" });

    const cleared = await json(await admin("PATCH", `teams/${created.id}`, { owner_email: null }));
    expect(cleared.data.owner_email).toBeNull();
    expect(cleared.data.plan).toBe("scale");

    expect((await json(await admin("GET", `teams/${created.id}`))).data).toEqual(cleared.data);
  });

  it("a plan change applies to the team's keys at once", async () => {
    const team = await setupTeam({ plan: "free" });
    const before = await call("GET", "usage", { key: team.key });
    expect(before.headers.get("x-ratelimit-limit")).toBe("600");
    expect((await json(before)).data.plan).toBe("free");
    await admin("PATCH", `teams/${team.teamId}`, { plan: "starter" });
    const after = await call("GET", "usage", { key: team.key });
    expect(after.headers.get("x-ratelimit-limit")).toBe("3000");
    expect((await json(after)).data.plan).toBe("starter");
  });

  it("refuses an invalid patch with 422 and an unknown team with 404", async () => {
    const created = (await json(await createTeam({ name: "Patchy" }))).data;
    const bad = await admin("PATCH", `teams/${created.id}`, { plan: "platinum" });
    expect(bad.status).toBe(422);
    expect((await json(bad)).details).toHaveProperty("plan");

    const missing = await admin("PATCH", `teams/${crypto.randomUUID()}`, { name: "ghost" });
    expect(missing.status).toBe(404);
  });
});

describe("keys", () => {
  it("creates a key: 201 with the plaintext, its prefix, scopes and the default mail policy", async () => {
    const team = (await json(await createTeam({ name: "Keys" }))).data;
    const res = await admin("POST", `teams/${team.id}/keys`, { name: "ci", scopes: ["mail:send", "billing:read"] });
    expect(res.status).toBe(201);
    const { data } = await json(res);
    for (const field of ["id", "key", "name", "scopes", "prefix", "created_at", "mail"]) expect(data).toHaveProperty(field);
    expect(data.id).toMatch(UUID);
    expect(data.name).toBe("ci");
    expect([...data.scopes].sort()).toEqual(["billing:read", "mail:send"]);
    expect(typeof data.key).toBe("string");
    expect(data.key.length).toBeGreaterThanOrEqual(32);
    expect(data.prefix.length).toBeGreaterThan(0);
    expect(data.prefix.length).toBeLessThan(data.key.length);
    expect(data.key.startsWith(data.prefix)).toBe(true);
    expect(data.mail).toEqual({
      sandbox: false,
      allowed_streams: ["transactional", "broadcast"],
      allowed_recipients: [],
      hourly_cap: null,
      daily_cap: null,
      suspended: false,
    });
    // The key works at once.
    const usage = await call("GET", "usage", { key: data.key });
    expect(usage.status).toBe(200);
  });

  it("gives every key a different plaintext and id", async () => {
    const team = await setupTeam();
    const a = await addKey(team.teamId, ["mail:send"]);
    const b = await addKey(team.teamId, ["mail:send"]);
    expect(a.key).not.toBe(b.key);
    expect(a.id).not.toBe(b.id);
    expect(a.key).not.toBe(team.key);
  });

  it("accepts every scope of the specification", async () => {
    const team = await setupTeam();
    const res = await admin("POST", `teams/${team.teamId}/keys`, { scopes: ALL_SCOPES });
    expect(res.status).toBe(201);
    expect([...(await json(res)).data.scopes].sort()).toEqual([...ALL_SCOPES].sort());
    expect([...ALL_SCOPES].sort()).toEqual(
      [
        "surveys:read",
        "surveys:write",
        "audit:read",
        "audit:write",
        "logs:read",
        "logs:write",
        "push:read",
        "push:write",
        "webhooks:read",
        "webhooks:write",
        "mail:send",
        "mail:read",
        "billing:read",
        // The named products' scopes (NAMED-PRODUCTS.md): in the demo key and every full-access key too.
        "flags:read",
        "flags:write",
        "forms:read",
        "forms:write",
        "analytics:read",
        "analytics:write",
      ].sort(),
    );
  });

  it.each([
    ["a scope outside the specification's list", { scopes: ["admin:all"] }],
    ["a mix of valid and unknown scopes", { scopes: ["mail:send", "mail:write"] }],
    ["missing scopes", { name: "no scopes" }],
    ["scopes not an array", { scopes: "mail:send" }],
    ["an empty scope list", { scopes: [] }],
    ["an unknown mail stream", { scopes: ["mail:send"], mail: { allowed_streams: ["promotions"] } }],
    ["an invalid allowed recipient", { scopes: ["mail:send"], mail: { allowed_recipients: ["nope"] } }],
    ["a non-boolean sandbox flag", { scopes: ["mail:send"], mail: { sandbox: "yes" } }],
  ])("refuses %s with 422", async (_label, body) => {
    const team = await setupTeam();
    const res = await admin("POST", `teams/${team.teamId}/keys`, body);
    expect(res.status).toBe(422);
    const payload = await json(res);
    expect(payload.error).toBe("Validation failed");
    expect(payload.details).toBeTypeOf("object");
  });

  it("answers 404 when creating a key for an unknown team", async () => {
    const res = await admin("POST", `teams/${crypto.randomUUID()}/keys`, { scopes: ["mail:send"] });
    expect(res.status).toBe(404);
  });

  it("stores the mail policy given on create", async () => {
    const team = await setupTeam();
    const mail = {
      sandbox: true,
      allowed_streams: ["transactional"],
      allowed_recipients: ["qa@example.com"],
      hourly_cap: 10,
      daily_cap: 100,
    };
    const res = await admin("POST", `teams/${team.teamId}/keys`, { scopes: ["mail:send"], mail });
    expect(res.status).toBe(201);
    expect((await json(res)).data.mail).toEqual({ ...mail, suspended: false });
  });

  it("patches the mail policy (suspension) and keeps the other fields; no plaintext in the answer", async () => {
    const team = await setupTeam({ scopes: ["mail:send"], mail: { sandbox: true, allowed_recipients: ["qa@example.com"], hourly_cap: 5 } });
    const res = await admin("PATCH", `keys/${team.keyId}`, { mail: { suspended: true } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(team.key);
    const { data } = JSON.parse(text);
    expect(data).not.toHaveProperty("key");
    expect(data.id).toBe(team.keyId);
    expect(data.scopes).toEqual(["mail:send"]);
    expect(data.prefix).toBe(team.key.slice(0, data.prefix.length));
    expect(data.mail).toEqual({
      sandbox: true,
      allowed_streams: ["transactional", "broadcast"],
      allowed_recipients: ["qa@example.com"],
      hourly_cap: 5,
      daily_cap: null,
      suspended: true,
    });

    const lifted = await json(await admin("PATCH", `keys/${team.keyId}`, { mail: { suspended: false, daily_cap: 50 } }));
    expect(lifted.data.mail).toEqual({ ...data.mail, suspended: false, daily_cap: 50 });

    // The stored row follows.
    const row = await env.DB.prepare("SELECT mail FROM api_keys WHERE id = ?").bind(team.keyId).first<{ mail: string }>();
    expect(JSON.parse(row!.mail)).toEqual(lifted.data.mail);
  });

  it("refuses an invalid key patch with 422 and an unknown key with 404", async () => {
    const team = await setupTeam();
    const bad = await admin("PATCH", `keys/${team.keyId}`, { mail: { suspended: "maybe" } });
    expect(bad.status).toBe(422);
    const missing = await admin("PATCH", `keys/${crypto.randomUUID()}`, { mail: { suspended: true } });
    expect(missing.status).toBe(404);
  });

  it("deletes a key: 204, then the key answers 401 and cannot be deleted or patched again", async () => {
    const team = await setupTeam();
    const other = await addKey(team.teamId, ["billing:read"]);
    expect((await call("GET", "usage", { key: team.key })).status).toBe(200);

    const res = await admin("DELETE", `keys/${team.keyId}`);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");

    await expectError(await call("GET", "usage", { key: team.key, ip: freshIp() }), 401, { error: "Invalid or missing API key" });
    expect((await admin("DELETE", `keys/${team.keyId}`)).status).toBe(404);
    expect((await admin("PATCH", `keys/${team.keyId}`, { mail: { suspended: true } })).status).toBe(404);
    // The team's other key is unaffected.
    expect((await call("GET", "usage", { key: other.key })).status).toBe(200);
  });

  it("answers 404 when deleting an unknown key", async () => {
    expect((await admin("DELETE", `keys/${crypto.randomUUID()}`)).status).toBe(404);
  });

  it("never returns the plaintext from GET team or PATCH key", async () => {
    const team = await setupTeam();
    const got = await admin("GET", `teams/${team.teamId}`);
    expect(await got.text()).not.toContain(team.key);
    const patched = await admin("PATCH", `keys/${team.keyId}`, { name: "renamed" });
    expect(patched.status).toBe(200);
    const text = await patched.text();
    expect(text).not.toContain(team.key);
    expect(JSON.parse(text).data.name).toBe("renamed");
  });

  it("stores keys only as a SHA-256 hex hash; no column holds the plaintext", async () => {
    const team = await setupTeam();
    const row = await env.DB.prepare("SELECT * FROM api_keys WHERE id = ?").bind(team.keyId).first<Record<string, unknown>>();
    expect(row).not.toBeNull();
    expect(row!.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.key_hash).toBe(await sha256Hex(team.key));
    for (const [column, value] of Object.entries(row!)) {
      expect({ column, holdsKey: String(value).includes(team.key) }).toEqual({ column, holdsKey: false });
    }
    // Nor does any other platform table.
    for (const table of ["teams", "platform_outbox", "usage_counters", "usage_warnings"]) {
      const { results } = await env.DB.prepare(`SELECT * FROM ${table}`).all();
      expect(JSON.stringify(results)).not.toContain(team.key);
    }
  });
});
