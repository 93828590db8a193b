// The route helper of platform/openapi.ts: what a product declares once (tags, security, shared
// error responses) lands on every route, a route's own response for a status wins, a route with a
// JSON body documents the 413 of its declared limit, and the handler types stay those of
// createRoute (the @ts-expect-error lines fail `npm run typecheck` if they drift).
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { authResponses, dataResponse, jsonBody, jsonResponse, productRoutes } from "../../src/platform/openapi";

const ProductError = z.object({ error: z.string(), code: z.string() });
const productErrors = {
  404: jsonResponse("Not found", ProductError),
  429: jsonResponse("Rate limit, in the product's shape", ProductError),
};

describe("productRoutes", () => {
  it("gives a bearer route the tags, the bearer requirement and 401/403/429 under the product's own entries", () => {
    const route = productRoutes({ tags: ["Thing"], security: "bearer", errors: productErrors });
    const config = route({ method: "get", path: "/things", responses: { 200: dataResponse("Things", z.array(z.string())) } });
    expect(config.tags).toEqual(["Thing"]);
    expect(config.security).toEqual([{ bearerAuth: [] }]);
    // A route's declared scopes are its requirement: one object per scope, any one suffices.
    const scoped = route({ method: "get", path: "/logs", scope: ["logs:read", "logs:write"], responses: { 200: { description: "ok" } } });
    expect(scoped.security).toEqual([{ bearerAuth: ["logs:read"] }, { bearerAuth: ["logs:write"] }]);
    expect(Object.keys(config.responses).sort()).toEqual(["200", "401", "403", "404", "429"]);
    expect(config.responses[401]).toBe(authResponses[401]);
    expect(config.responses[403]).toBe(authResponses[403]);
    // The product's entry replaces the platform's for the same status.
    expect(config.responses[429]).toBe(productErrors[429]);
    expect(config.responses[404]).toBe(productErrors[404]);
  });

  it("lets a route's own response for a status win over the shared one", () => {
    const route = productRoutes({ tags: ["Thing"], security: "bearer", errors: productErrors });
    const own404 = jsonResponse("Thing or owner not found", ProductError);
    const config = route({ method: "get", path: "/things/{id}", responses: { 200: { description: "ok" }, 404: own404 } });
    expect(config.responses[404]).toBe(own404);
    expect(config.responses[401]).toBe(authResponses[401]);
    // Nothing shared is changed by one route's own entry.
    expect(route({ method: "get", path: "/x", responses: { 200: { description: "ok" } } }).responses[404]).toBe(productErrors[404]);
  });

  it("states public routes with an explicit empty requirement and no auth responses", () => {
    const route = productRoutes({ tags: ["Public"], security: "public" });
    const config = route({ method: "get", path: "/open", responses: { 200: { description: "ok" } } });
    expect(config.security).toEqual([]);
    expect(Object.keys(config.responses)).toEqual(["200"]);
  });

  it("takes another scheme's requirement list as given, with only the product's errors", () => {
    const route = productRoutes({ tags: ["Op"], security: [{ adminToken: [] }], errors: { 401: jsonResponse("No token", ProductError) } });
    const config = route({ method: "post", path: "/op", responses: { 204: { description: "Done" } } });
    expect(config.security).toEqual([{ adminToken: [] }]);
    expect(Object.keys(config.responses).sort()).toEqual(["204", "401"]);
  });

  it("keeps createRoute's routing path and handler typing", async () => {
    const route = productRoutes({ tags: ["Thing"], security: "public" });
    const config = route({
      method: "post",
      path: "/things/{id}",
      request: { params: z.object({ id: z.string() }), body: jsonBody(z.object({ n: z.number() })) },
      responses: { 201: dataResponse("The thing", z.object({ id: z.string(), n: z.number() })) },
    });
    expect(config.getRoutingPath()).toBe("/things/:id");
    const app = new OpenAPIHono();
    app.openapi(config, (c) => {
      const id: string = c.req.valid("param").id;
      const n: number = c.req.valid("json").n;
      // @ts-expect-error the params have no `name`
      void c.req.valid("param").name;
      return c.json({ data: { id, n } }, 201);
    });
    // @ts-expect-error a body that is not the declared 201 schema does not type-check
    app.openapi(config, (c) => c.json({ data: { id: 1 } }, 201));
    const res = await app.request("/things/a1", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n: 2 }) });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ data: { id: "a1", n: 2 } });
  });

  it("documents the 413 of a route's declared JSON limit in the product's error body, where the route takes a body", () => {
    const route = productRoutes({ tags: ["Thing"], security: "bearer", errorBody: ProductError, body: 64 * 1024 });
    const body = { body: jsonBody(z.object({ n: z.number() })) };
    const ok = { 201: { description: "ok" } };
    // Added to the document, not to the handler's typed answers (the 413 is thrown, never returned).
    const r413 = (config: { responses: object }) => (config.responses as Record<string, unknown>)["413"];
    // The product's default, then the route's own declaration.
    const byProduct = route({ method: "post", path: "/a", scope: "logs:write", request: body, responses: ok });
    expect(r413(byProduct)).toEqual(jsonResponse("Payload too large (max 64KB)", ProductError));
    const declared = route({ method: "post", path: "/b", scope: "logs:write", body: 2 * 1024 * 1024, request: body, responses: ok });
    expect(r413(declared)).toEqual(jsonResponse("Payload too large (max 2MB)", ProductError));
    // A route stating its own 413 keeps it; one reading its own body, or taking none, gets none.
    const own413 = jsonResponse("Too big for this one", ProductError);
    expect(route({ method: "post", path: "/c", scope: "logs:write", request: body, responses: { ...ok, 413: own413 } }).responses[413]).toBe(own413);
    expect(route({ method: "post", path: "/d", scope: "logs:write", body: { own: 1024 }, request: body, responses: ok }).responses).not.toHaveProperty("413");
    expect(route({ method: "post", path: "/e", scope: "logs:write", responses: ok }).responses).not.toHaveProperty("413");
    // A product that names no error body states no 413.
    const unnamed = productRoutes({ tags: ["Thing"], security: "public" });
    expect(unnamed({ method: "post", path: "/f", request: body, responses: ok }).responses).not.toHaveProperty("413");
  });
});
