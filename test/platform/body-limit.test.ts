// Every route has a body limit, answered 413 in its product's error shape before anything parses
// the body (DESIGN.md "Sizes"): 1 MB for JSON unless the product documents another. The limit is
// the route's declaration (`body` of RouteNeeds, platform/route-access.ts), checked first, before
// the credential; `{ own: N }` leaves the reading to the handler; the console limits its forms
// itself, and the root holds requests no route answers to the default.
import { z } from "@hono/zod-openapi";
import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { JSON_BODY_LIMIT } from "../../src/platform/body";
import { handleError } from "../../src/platform/handle-error";
import { HASHED_BODY_LIMIT } from "../../src/platform/idempotency";
import { dataResponse, jsonBody, productRoutes } from "../../src/platform/openapi";
import { requestContext } from "../../src/platform/request-context";
import { createRouter } from "../../src/platform/router";
import { activeSurvey } from "../products/surveys/helpers";
import { ADMIN_TOKEN, call, json, setupTeam } from "../helpers/api";

const TOO_LARGE = "Payload too large (max 1MB)";

/** A JSON body one byte over the default limit. */
function oversized(bytes = JSON_BODY_LIMIT + 1): string {
  return JSON.stringify({ name: "x".repeat(bytes - 11) });
}

/** A body sent as a stream, without a Content-Length, so the limit must count bytes as they come. */
function streamed(totalBytes: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= totalBytes) return controller.close();
      const size = Math.min(64 * 1024, totalBytes - sent);
      sent += size;
      controller.enqueue(new Uint8Array(size).fill(0x61));
    },
  });
}

describe("body limits", () => {
  it("answers 413 in each product's shape for a JSON body over 1 MB", async () => {
    const team = await setupTeam();
    const cases: Array<[string, string, unknown]> = [
      ["POST", "surveys", { error: TOO_LARGE }],
      ["POST", "push/apps", { error: TOO_LARGE }],
      ["POST", "logs/projects", { error: TOO_LARGE }],
      ["POST", "webhooks/sources", { error: TOO_LARGE }],
      ["POST", "webhooks", { error: TOO_LARGE }],
      [
        "POST",
        `orgs/${team.teamId}/projects/p1/audit/findings`,
        { data: null, meta: { request_id: expect.any(String) }, error: { code: "payload_too_large", message: TOO_LARGE } },
      ],
    ];
    for (const [method, path, body] of cases) {
      const res = await call(method, path, { key: team.key, raw: oversized(), headers: { "content-type": "application/json" } });
      expect({ path, status: res.status }).toEqual({ path, status: 413 });
      expect({ path, body: await json(res) }).toEqual({ path, body });
    }
  });

  it("refuses an anonymous 30 MB body on a public survey route with 413 without parsing it", async () => {
    const { team, survey } = await activeSurvey([{ type: "text", title: "Q" }]);
    const declared = await call("POST", `surveys/${survey.slug}/responses`, {
      raw: oversized(30 * 1024 * 1024),
      headers: { "content-type": "application/json" },
    });
    expect(declared.status).toBe(413);
    expect(await json(declared)).toEqual({ error: TOO_LARGE });
    // Without a Content-Length the bytes are counted as they arrive.
    const chunked = await call("POST", `surveys/${survey.slug}/responses`, {
      raw: streamed(3 * 1024 * 1024),
      headers: { "content-type": "application/json" },
    });
    expect(chunked.status).toBe(413);
    expect(await json(chunked)).toEqual({ error: TOO_LARGE });
    // Nothing was started.
    const list = await json(await call("GET", `surveys/${survey.id}/responses`, { key: team.key }));
    expect(list.data).toEqual([]);
  });

  it("lets a body at the limit through to validation", async () => {
    const team = await setupTeam();
    const res = await call("POST", "surveys", { key: team.key, raw: oversized(JSON_BODY_LIMIT), headers: { "content-type": "application/json" } });
    expect(res.status).toBe(422);
  });

  it("keeps the documented limits of the routes that read their bodies themselves", async () => {
    const team = await setupTeam();
    // Mail send: 10 MiB, answered as a validation error on `_body` (mail's documented shape).
    const mail = await call("POST", "emails", { key: team.key, raw: oversized(2 * 1024 * 1024), headers: { "content-type": "application/json" } });
    expect(mail.status).toBe(400); // read and parsed: its fields are what is wrong, not its size
    const overMail = await call("POST", "emails", { key: team.key, raw: oversized(10 * 1024 * 1024 + 1), headers: { "content-type": "application/json" } });
    expect(await json(overMail)).toEqual({ error: "Validation failed", details: { _body: ["must be at most 10 MiB"] } });
  });
});

/** An app serving routes declared with `productRoutes`, as the products declare theirs. */
function declaredApp() {
  // A product whose routes default to 4 KB.
  const route = productRoutes({ tags: ["T"], security: "public", body: 4096 });
  const Body = jsonBody(z.object({ name: z.string() }));
  const served = { 200: dataResponse("Served", z.number()) };
  const app = createRouter();
  app.use("*", requestContext());
  app.openapi(route({ method: "post", path: "/declared", body: 2048, request: { body: Body }, responses: served }), (c) =>
    c.json({ data: c.req.valid("json").name.length }, 200),
  );
  app.openapi(route({ method: "post", path: "/product-default", request: { body: Body }, responses: served }), (c) =>
    c.json({ data: c.req.valid("json").name.length }, 200),
  );
  // Reads its body itself: nothing in front of the handler limits it.
  app.openapi(route({ method: "post", path: "/own", body: { own: 16 }, responses: served }), async (c) => c.json({ data: (await c.req.text()).length }, 200));
  app.onError(handleError);
  return (path: string, body: BodyInit) =>
    Promise.resolve(
      app.fetch(
        new Request(`http://app.test${path}`, { method: "POST", headers: { "content-type": "application/json", "cf-connecting-ip": "203.0.113.202" }, body }),
        env as Env,
        createExecutionContext(),
      ),
    );
}

describe("a route's declared body limit", () => {
  it("replaces the product's default, which replaces 1 MB; the 413 names the declared size", async () => {
    const send = declaredApp();
    const declared = await send("/declared", oversized(2049));
    expect(declared.status).toBe(413);
    expect(await json(declared)).toEqual({ error: "Payload too large (max 2KB)" });
    // At the limit: read and parsed.
    expect(await json(await send("/declared", oversized(2048)))).toEqual({ data: 2037 });
    // Streamed, without a Content-Length: counted as it arrives.
    expect((await send("/declared", streamed(2049))).status).toBe(413);
    // A route that declares none has its product's 4 KB, not 2 KB and not 1 MB.
    expect((await send("/product-default", oversized(4096))).status).toBe(200);
    const overProduct = await send("/product-default", oversized(4097));
    expect(overProduct.status).toBe(413);
    expect(await json(overProduct)).toEqual({ error: "Payload too large (max 4KB)" });
  });

  it("attaches no limit to a route that reads its body itself ({ own })", async () => {
    const send = declaredApp();
    // Far past the product's 4 KB and past 1 MB: the handler is the one reading (here, all of it).
    const res = await send("/own", oversized(JSON_BODY_LIMIT + 1));
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ data: JSON_BODY_LIMIT + 1 });
  });

  it("refuses an idempotent route whose limit passes the size the idempotency check hashes", () => {
    const route = productRoutes({ tags: ["T"], security: "bearer" });
    const declare = (body: number | { own: number }) => () =>
      route({ method: "post", path: "/x", scope: "mail:send", idempotent: true, body, responses: { 201: { description: "ok" } } });
    expect(declare({ own: HASHED_BODY_LIMIT + 1 })).toThrow(/HASHED_BODY_LIMIT/);
    expect(declare(HASHED_BODY_LIMIT + 1)).toThrow(/HASHED_BODY_LIMIT/);
    expect(declare({ own: HASHED_BODY_LIMIT })).not.toThrow();
  });
});

describe("the limit comes before the credential", () => {
  const big = () => ({ raw: oversized(), headers: { "content-type": "application/json" } });

  it("an oversized body without a key answers 413 in the product's shape; the same small body 401", async () => {
    const team = await setupTeam();
    const cases: Array<[string, unknown]> = [
      ["surveys", { error: TOO_LARGE }],
      ["push/apps", { error: TOO_LARGE }],
      ["webhooks", { error: TOO_LARGE }],
      [
        `orgs/${team.teamId}/projects/p1/audit/findings`,
        { data: null, meta: { request_id: expect.any(String) }, error: { code: "payload_too_large", message: TOO_LARGE } },
      ],
      ["admin/teams", { error: TOO_LARGE }],
    ];
    for (const [path, body] of cases) {
      const res = await call("POST", path, big());
      expect({ path, status: res.status, body: await json(res) }).toEqual({ path, status: 413, body });
      const small = await call("POST", path, { body: { name: "x" } });
      expect({ path, status: small.status }).toEqual({ path, status: 401 });
    }
  });

  it("an oversized body with a key lacking the route's scope, or with a team key on the operator API, answers 413", async () => {
    const team = await setupTeam({ scopes: ["logs:read"] });
    for (const path of ["surveys", "push/apps", "logs/projects", "webhooks/sources", "domains", "keys", "admin/teams"]) {
      const res = await call("POST", path, { key: team.key, ...big() });
      expect({ path, status: res.status, body: await json(res) }).toEqual({ path, status: 413, body: { error: TOO_LARGE } });
      // Control: the same key with a small body is refused for its scope (or its credential).
      const small = await call("POST", path, { key: team.key, body: { name: "x" } });
      expect({ path, refused: [401, 403].includes(small.status) }).toEqual({ path, refused: true });
    }
  });

  it("a path no route serves holds the limit too: under a product before its credential, elsewhere before the 404", async () => {
    const underProduct = await call("POST", "push/no-such-route", big());
    expect(underProduct.status).toBe(413);
    expect(await json(underProduct)).toEqual({ error: TOO_LARGE });
    expect((await call("POST", "push/no-such-route", { body: {} })).status).toBe(401);
    const nowhere = await call("POST", "/no-such-page", big());
    expect(nowhere.status).toBe(413);
    expect((await call("POST", "/no-such-page", { body: {} })).status).toBe(404);
  });

  it("the console refuses an oversized form with a 413 page, before the Origin check", async () => {
    const res = await call("POST", "/console/sign-in", {
      raw: `email=${"a".repeat(JSON_BODY_LIMIT)}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const page = await res.text();
    expect(page).toContain("Too large");
    expect(page).toContain("more than a console form takes (1 MB at most)");
    // Control: a small form without Origin is refused by the Origin rule.
    expect((await call("POST", "/console/sign-in", { raw: "email=a%40b.c", headers: { "content-type": "application/x-www-form-urlencoded" } })).status).toBe(
      403,
    );
  });

  it("keeps the operator token's own check after the limit", async () => {
    const res = await call("POST", "admin/teams", { key: ADMIN_TOKEN, body: { name: "n" } });
    expect(res.status).toBe(201);
  });
});

describe("one limit per request", () => {
  it("a body sent with a key to a product's unserved path is read by one limit only: 404 in the product's shape, never a 500", async () => {
    // Found by the fuzz test: the unserved path's limit and the root's limit for what no route
    // answers both wrapped the body, and the second found its stream locked (500).
    const team = await setupTeam();
    const paths = [
      `orgs/${team.teamId}/projects/x/audit`,
      `orgs/${team.teamId}/projects/'%20OR%201%3D1%20--/audit/findings/..`,
      "surveys/none/unknown",
      "webhooks/sources/none/unknown",
    ];
    for (const path of paths) {
      for (const raw of ["", "{}"]) {
        const res = await call("PATCH", path, { key: team.key, headers: { "content-type": "application/json" }, raw });
        expect([404, 405], `${path} ${JSON.stringify(raw)}`).toContain(res.status);
      }
    }
    const audit = await call("PATCH", `orgs/${team.teamId}/projects/x/audit`, { key: team.key, headers: { "content-type": "application/json" }, raw: "{}" });
    expect(await json(audit)).toMatchObject({ data: null, error: { code: "not_found" } });
    // The first limit still refuses an oversized body.
    const big = await call("PATCH", `orgs/${team.teamId}/projects/x/audit`, {
      key: team.key,
      headers: { "content-type": "application/json" },
      raw: "x".repeat(JSON_BODY_LIMIT + 1),
    });
    expect(big.status).toBe(413);
  });
});
