// What a route's declaration attaches (src/platform/route-access.ts, productRoutes in
// src/platform/openapi.ts): a forgotten scope or credential check fails closed, the product's
// guards run after authentication and before the scope check, idempotency runs after both (and
// hashes a body a guard has read already), and a path no route serves gets the product's check
// before its 404 or 405, while a served path never reaches that check.
import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { handleError } from "../../src/platform/handle-error";
import { dataResponse, productRoutes } from "../../src/platform/openapi";
import { requestContext } from "../../src/platform/request-context";
import { createRouter } from "../../src/platform/router";
import { z } from "@hono/zod-openapi";
import { call, json, setupTeam } from "../helpers/api";

function appOf(route: ReturnType<typeof productRoutes>, config: Parameters<ReturnType<typeof productRoutes>>[0]) {
  const app = createRouter();
  app.use("*", requestContext());
  app.openapi(route(config), (c) => c.json({ data: "served" }, 200));
  app.onError(handleError);
  return app;
}

function get(app: ReturnType<typeof createRouter>, path: string, key?: string): Promise<Response> {
  const headers: Record<string, string> = { "cf-connecting-ip": "203.0.113.201" };
  if (key) headers.authorization = `Bearer ${key}`;
  return Promise.resolve(app.fetch(new Request(`http://app.test${path}`, { headers }), env as Env, createExecutionContext()));
}

const ok = { 200: dataResponse("Served", z.string()) };

describe("a declaration that forgets its check fails closed", () => {
  it("a bearer route that names no scope serves no key, not even one holding every scope (403)", async () => {
    const team = await setupTeam();
    const app = appOf(productRoutes({ tags: ["T"], security: "bearer" }), { method: "get", path: "/thing", responses: ok });
    expect((await get(app, "/thing")).status).toBe(401);
    expect((await get(app, "/thing", team.key)).status).toBe(403);
  });

  it("a product with a scheme of its own but no check answers 401 to everyone", async () => {
    const team = await setupTeam();
    const app = appOf(productRoutes({ tags: ["T"], security: [{ otherToken: [] }] }), { method: "get", path: "/thing", responses: ok });
    expect((await get(app, "/thing", team.key)).status).toBe(401);
  });

  it("a declared scope serves the keys holding it (or implying it) and refuses the others", async () => {
    const writer = await setupTeam({ scopes: ["webhooks:write"] });
    const other = await setupTeam({ scopes: ["logs:read"] });
    const app = appOf(productRoutes({ tags: ["T"], security: "bearer" }), { method: "get", path: "/thing", scope: "webhooks:read", responses: ok });
    const served = await get(app, "/thing", writer.key);
    expect(served.status).toBe(200);
    expect(await json(served)).toEqual({ data: "served" });
    expect((await get(app, "/thing", other.key)).status).toBe(403);
  });
});

describe("the order of the attached checks (audit: guards between authentication and scope)", () => {
  it("another team's org answers 404 before the scope is asked; the own org without the scope 403", async () => {
    const team = await setupTeam({ scopes: ["logs:read"] });
    const other = await setupTeam();
    expect((await call("GET", `orgs/${other.teamId}/projects/web/audit/findings`, { key: team.key })).status).toBe(404);
    expect((await call("GET", `orgs/${team.teamId}/projects/web/audit/findings`, { key: team.key })).status).toBe(403);
  });

  it("an audit create is replayed under its Idempotency-Key though the JSON guard read the body first", async () => {
    const team = await setupTeam();
    const path = `orgs/${team.teamId}/projects/web/audit/findings`;
    const body = { title: "Open redirect", priority_score: 5 };
    const headers = { "idempotency-key": `audit-${crypto.randomUUID()}` };
    const first = await call("POST", path, { key: team.key, body, headers });
    expect(first.status).toBe(201);
    const again = await call("POST", path, { key: team.key, body, headers });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await json(again)).data.id).toBe((await json(first)).data.id);
    const rows = await env.DB.prepare("SELECT COUNT(*) AS n FROM audit_findings WHERE team_id = ?").bind(team.teamId).first<{ n: number }>();
    expect(rows!.n).toBe(1);
    // Another body under the same key is another request: 422, nothing created.
    const different = await call("POST", path, { key: team.key, body: { ...body, title: "XSS" }, headers });
    expect(different.status).toBe(422);
  });
});

describe("paths no route serves", () => {
  it("under an authenticated product: 401 without a key, a counted 404 with one", async () => {
    const team = await setupTeam();
    expect((await call("GET", "webhooks/sources/x/y/z", {})).status).toBe(401);
    const known = await call("GET", "webhooks/sources/x/y/z", { key: team.key });
    expect(known.status).toBe(404);
    expect(known.headers.get("x-ratelimit-limit")).toBe("6000");
    expect((await call("PUT", "push/apps", {})).status).toBe(401);
    expect((await call("PUT", "push/apps", { key: team.key })).status).toBe(405);
  });

  it("a served path never reaches the product's check of unmatched paths: one count per request", async () => {
    const team = await setupTeam();
    const first = await call("GET", "push/apps", { key: team.key });
    const second = await call("GET", "push/apps", { key: team.key });
    expect(first.status).toBe(200);
    expect(Number(first.headers.get("x-ratelimit-remaining")) - Number(second.headers.get("x-ratelimit-remaining"))).toBe(1);
  });
});
