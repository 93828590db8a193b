// Bearer authentication and scopes (spec: Authentication 1-3; issue 2: "Teams, keys, auth").
import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { auth, bearerToken, requireScope } from "../../src/platform/auth";
import { handleError } from "../../src/platform/handle-error";
import { requestContext } from "../../src/platform/request-context";
import { createRouter } from "../../src/platform/router";
import { hasScope, specScopes, type Scope } from "../../src/platform/scopes";
import { ADMIN_TOKEN, addKey, admin, call, expectError, setupTeam } from "../helpers/api";

const INVALID_KEY = { error: "Invalid or missing API key" };
const FORBIDDEN = { error: "Insufficient scope" };

function freshIp(): string {
  const r = crypto.getRandomValues(new Uint8Array(3));
  return `10.${r[0]}.${r[1]}.${r[2]}`;
}

/** A tiny app with one route requiring `scope`, composed like src/app.ts. */
function scopedApp(scope: Scope) {
  const app = createRouter();
  app.use("*", requestContext());
  app.get("/scoped", auth(), requireScope(scope), (c) => c.json({ ok: true }));
  app.onError(handleError);
  return app;
}

async function fetchApp(app: ReturnType<typeof scopedApp>, key: string): Promise<Response> {
  const request = new Request("http://app.test/scoped", { headers: { authorization: `Bearer ${key}`, "cf-connecting-ip": freshIp() } });
  return app.fetch(request, env, createExecutionContext());
}

describe("401 Invalid or missing API key", () => {
  it("answers 401 without an Authorization header", async () => {
    await expectError(await call("GET", "usage", { ip: freshIp() }), 401, INVALID_KEY);
  });

  it.each([
    ["another scheme", "Basic dXNlcjpwYXNz"],
    ["Token scheme", "Token edp_abc"],
    ["Bearer without a token", "Bearer"],
    ["Bearer with blanks only", "Bearer    "],
    ["two tokens", "Bearer edp_a edp_b"],
    ["no scheme", "edp_abcdef"],
  ])("answers 401 for a malformed header (%s)", async (_label, header) => {
    const res = await call("GET", "usage", { headers: { authorization: header }, ip: freshIp() });
    await expectError(res, 401, INVALID_KEY);
  });

  it("answers 401 for an unknown key", async () => {
    await expectError(await call("GET", "usage", { key: "edp_doesnotexist0000000000000000000000000", ip: freshIp() }), 401, INVALID_KEY);
  });

  it("answers 401 for a valid key with a character changed", async () => {
    const team = await setupTeam();
    const altered = team.key.slice(0, -1) + (team.key.endsWith("A") ? "B" : "A");
    await expectError(await call("GET", "usage", { key: altered, ip: freshIp() }), 401, INVALID_KEY);
    // The prefix alone is not a credential either.
    await expectError(await call("GET", "usage", { key: team.key.slice(0, 12), ip: freshIp() }), 401, INVALID_KEY);
  });

  it("answers 401 for a revoked key", async () => {
    const team = await setupTeam();
    expect((await call("GET", "usage", { key: team.key })).status).toBe(200);
    expect((await admin("DELETE", `keys/${team.keyId}`)).status).toBe(204);
    await expectError(await call("GET", "usage", { key: team.key, ip: freshIp() }), 401, INVALID_KEY);
  });

  it("checks the credential before the scope: an unknown key gets 401, not 403", async () => {
    await expectError(await call("GET", "usage", { key: "edp_unknown", ip: freshIp() }), 401, INVALID_KEY);
  });

  it("accepts the key in a well-formed Bearer header", async () => {
    const team = await setupTeam({ scopes: ["billing:read"] });
    const res = await call("GET", "usage", { headers: { authorization: `Bearer ${team.key}` } });
    expect(res.status).toBe(200);
  });
});

describe("403 Insufficient scope", () => {
  it("answers 403 for a key without the endpoint's scope", async () => {
    const team = await setupTeam({ scopes: ["surveys:read", "push:write"] });
    await expectError(await call("GET", "usage", { key: team.key }), 403, FORBIDDEN);
  });

  it("scopes are per key: another key of the same team with the scope passes", async () => {
    const team = await setupTeam({ scopes: ["logs:read"] });
    const other = await addKey(team.teamId, ["mail:read"]);
    await expectError(await call("GET", "usage", { key: team.key }), 403, FORBIDDEN);
    expect((await call("GET", "usage", { key: other.key })).status).toBe(200);
  });

  it("requireScope: the exact scope passes, a missing one answers 403", async () => {
    const team = await setupTeam({ scopes: ["surveys:read"] });
    expect((await fetchApp(scopedApp("surveys:read"), team.key)).status).toBe(200);
    await expectError(await fetchApp(scopedApp("surveys:write"), team.key), 403, FORBIDDEN);
  });

  it("requireScope: webhooks:write includes webhooks:read", async () => {
    const writer = await setupTeam({ scopes: ["webhooks:write"] });
    const reader = await setupTeam({ scopes: ["webhooks:read"] });
    expect((await fetchApp(scopedApp("webhooks:read"), writer.key)).status).toBe(200);
    expect((await fetchApp(scopedApp("webhooks:write"), writer.key)).status).toBe(200);
    await expectError(await fetchApp(scopedApp("webhooks:write"), reader.key), 403, FORBIDDEN);
  });

  it("requireScope: no key answers 401 before any scope check", async () => {
    const app = scopedApp("surveys:read");
    const res = await app.fetch(new Request("http://app.test/scoped", { headers: { "cf-connecting-ip": freshIp() } }), env, createExecutionContext());
    await expectError(res, 401, INVALID_KEY);
  });
});

describe("hasScope", () => {
  it("webhooks:write implies webhooks:read, not the reverse", () => {
    expect(hasScope(["webhooks:write"], "webhooks:read")).toBe(true);
    expect(hasScope(["webhooks:write"], "webhooks:write")).toBe(true);
    expect(hasScope(["webhooks:read"], "webhooks:write")).toBe(false);
  });

  it("every scope grants itself; no scope grants anything", () => {
    for (const scope of specScopes()) {
      expect(hasScope([scope], scope)).toBe(true);
      expect(hasScope([], scope)).toBe(false);
    }
  });

  it("webhooks:write grants nothing but the webhook scopes", () => {
    for (const scope of specScopes()) {
      expect({ scope, granted: hasScope(["webhooks:write"], scope) }).toEqual({ scope, granted: scope.startsWith("webhooks:") });
    }
  });

  it("the scope list is the specification's", () => {
    expect([...specScopes()].sort()).toEqual(
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
        // NAMED-PRODUCTS.md's scopes, in the demo key too.
        "analytics:read",
        "analytics:write",
        "flags:read",
        "flags:write",
        "forms:read",
        "forms:write",
      ].sort(),
    );
  });
});

describe("bearerToken", () => {
  it("extracts the token of a Bearer header and nothing else", () => {
    expect(bearerToken("Bearer abc")).toBe("abc");
    expect(bearerToken(undefined)).toBeNull();
    expect(bearerToken("")).toBeNull();
    expect(bearerToken("Bearer")).toBeNull();
    expect(bearerToken("Basic abc")).toBeNull();
    expect(bearerToken("Bearer a b")).toBeNull();
  });
});

describe("x-request-id", () => {
  it("is present on 200, 401 and 403 responses, a different id each", async () => {
    const team = await setupTeam({ scopes: ["surveys:read"] });
    const full = await setupTeam();
    const responses = [
      await call("GET", "usage", { key: full.key }),
      await call("GET", "usage", { ip: freshIp() }),
      await call("GET", "usage", { key: team.key }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 401, 403]);
    const ids = responses.map((r) => r.headers.get("x-request-id") ?? "(missing)");
    for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("is present on the 404 of an unknown path", async () => {
    // src/platform/request-context.ts promises the header "whatever produced the response".
    for (const path of ["no-such-route", "/nowhere", "admin/no-such-thing"]) {
      const res = await call("GET", path, { ip: freshIp(), key: path.startsWith("admin") ? ADMIN_TOKEN : undefined });
      expect(res.status).toBe(404);
      expect({ path, id: res.headers.get("x-request-id") ?? "(missing)" }).toEqual({ path, id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    }
  });

  it("echoes a well-formed incoming id and replaces a malformed one", async () => {
    const echoed = await call("GET", "usage", { headers: { "x-request-id": "trace-123.abc" }, ip: freshIp() });
    expect(echoed.headers.get("x-request-id")).toBe("trace-123.abc");
    const replaced = await call("GET", "usage", { headers: { "x-request-id": "bad id <script>" }, ip: freshIp() });
    const id = replaced.headers.get("x-request-id");
    expect(id).not.toBe("bad id <script>");
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
  });
});
