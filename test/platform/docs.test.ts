// The generated OpenAPI document, the interactive reference, 404s and error rendering.
import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/platform/errors";
import { handleError } from "../../src/platform/handle-error";
import { requestContext } from "../../src/platform/request-context";
import { createRouter } from "../../src/platform/router";
import { ADMIN_TOKEN, call, expectError, json } from "../helpers/api";

function freshIp(): string {
  const r = crypto.getRandomValues(new Uint8Array(3));
  return `10.${r[0]}.${r[1]}.${r[2]}`;
}

const STACK = /\bat\s+\S+\s+\(|\.ts:\d+|\.js:\d+|node_modules|stack/i;

describe("GET /api/v1/openapi.json", () => {
  it("is an OpenAPI 3.1 document listing the operator and usage paths and the bearerAuth scheme", async () => {
    const res = await call("GET", "openapi.json", { ip: freshIp() });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    const doc = await json(res);
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(typeof doc.info.title).toBe("string");
    expect(typeof doc.info.version).toBe("string");
    const paths = Object.keys(doc.paths);
    for (const path of ["/api/v1/admin/teams", "/api/v1/admin/teams/{id}", "/api/v1/admin/teams/{id}/keys", "/api/v1/admin/keys/{id}"]) {
      expect(paths).toContain(path);
    }
    expect(paths.some((p) => p === "/api/v1/usage" || p === "/api/v1/usage/")).toBe(true);
    expect(Object.keys(doc.paths["/api/v1/admin/teams"])).toContain("post");
    expect(Object.keys(doc.paths["/api/v1/admin/teams/{id}"]).sort()).toEqual(expect.arrayContaining(["get", "patch"]));
    expect(Object.keys(doc.paths["/api/v1/admin/keys/{id}"]).sort()).toEqual(expect.arrayContaining(["delete", "patch"]));
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
  });

  it("declares bearer security on /usage and documents its 200, 401, 403 and 429", async () => {
    const doc = await json(await call("GET", "openapi.json", { ip: freshIp() }));
    const usage = doc.paths["/api/v1/usage"] ?? doc.paths["/api/v1/usage/"];
    // Any one of its scopes suffices: one requirement object per scope.
    expect(usage.get.security).toEqual([{ bearerAuth: ["mail:send"] }, { bearerAuth: ["mail:read"] }, { bearerAuth: ["billing:read"] }]);
    expect(Object.keys(usage.get.responses)).toEqual(expect.arrayContaining(["200", "401", "403", "429"]));
  });

  it("generates request schemas from the validating zod schemas (team create requires name, plan enum)", async () => {
    const doc = await json(await call("GET", "openapi.json", { ip: freshIp() }));
    const body = doc.paths["/api/v1/admin/teams"].post.requestBody.content["application/json"].schema;
    const schema = body.$ref ? doc.components.schemas[body.$ref.split("/").pop()] : body;
    expect(schema.required).toContain("name");
    expect(schema.properties.plan.enum).toEqual(["free", "starter", "pro", "scale", "enterprise"]);
  });

  it("needs no credential", async () => {
    expect((await call("GET", "openapi.json", { ip: freshIp() })).status).toBe(200);
    expect((await call("GET", "openapi.json", { ip: freshIp(), key: "edp_garbage" })).status).toBe(200);
  });
});

describe("GET /api/v1/docs", () => {
  it("answers HTML that loads /standalone.js and the document, and no external CDN host", async () => {
    const res = await call("GET", "docs", { ip: freshIp() });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    expect(html).toMatch(/<script[^>]+src=["']\/standalone\.js["']/);
    expect(html).toContain("/api/v1/openapi.json");
    const hosts = [...html.matchAll(/(?:https?:)?\/\/([a-z0-9.-]+\.[a-z]{2,})/gi)].map((m) => m[1].toLowerCase());
    expect(hosts).toEqual([]);
    for (const cdn of ["cdn.jsdelivr.net", "unpkg.com", "cdnjs", "fonts.googleapis.com", "scalar.com"]) expect(html).not.toContain(cdn);
  });

  it("the script it loads is one of the Worker's static assets (served offline, 200 JavaScript)", async () => {
    // The asset layer in front of the Worker serves it (wrangler.toml [assets]); here it is read
    // through the ASSETS binding of the same configuration.
    expect(env.ASSETS).toBeDefined();
    const res = await env.ASSETS!.fetch("http://app.test/standalone.js");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("javascript");
    const script = await res.text();
    expect(script.length).toBeGreaterThan(100_000);
    expect(script).toContain("createApiReference");
  });
});

describe("the reference, configured for us", () => {
  it("has no AI agent, MCP or developer-tools (Deploy) buttons, no web fonts, no telemetry, and our title and logo", async () => {
    const html = await (await call("GET", "docs", { ip: freshIp() })).text();
    const config = JSON.parse(html.match(/createApiReference\('#app', (\{[\s\S]*?\})\)\s*<\/script>/)![1]);
    expect(config).toMatchObject({
      agent: { disabled: true },
      mcp: { disabled: true },
      showDeveloperTools: "never",
      withDefaultFonts: false,
      telemetry: false,
    });
    expect(html).toContain("<title>Edge Platform API reference</title>");
    expect(config.favicon).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(atob(config.favicon.split(",")[1])).toContain("<svg");
    expect(config.customCss).toContain("--scalar-font: system-ui");
  });

  it("lists every tag in reading order with a description, Operator last", async () => {
    const doc = await json(await call("GET", "openapi.json", { ip: freshIp() }));
    const used = new Set<string>();
    for (const item of Object.values<Record<string, { tags?: string[] }>>(doc.paths))
      for (const op of Object.values(item)) for (const tag of op.tags ?? []) used.add(tag);
    const names = doc.tags.map((tag: { name: string }) => tag.name);
    expect(new Set(names)).toEqual(used);
    expect(names.at(-1)).toBe("Operator");
    for (const tag of doc.tags) expect(tag.description, tag.name).toMatch(/\S{3,}/);
  });

  it("describes every operation", async () => {
    const doc = await json(await call("GET", "openapi.json", { ip: freshIp() }));
    const bare: string[] = [];
    for (const [path, item] of Object.entries<Record<string, { description?: string; operationId: string }>>(doc.paths)) {
      for (const [method, op] of Object.entries(item))
        if (!op.description || op.description.trim().length < 20) bare.push(`${method} ${path} ${op.operationId}`);
    }
    expect(bare).toEqual([]);
  });

  it("says which credential an operation takes when it is not a team key", async () => {
    const doc = await json(await call("GET", "openapi.json", { ip: freshIp() }));
    const silent: string[] = [];
    for (const item of Object.values<Record<string, { description: string; operationId: string; security?: Array<Record<string, string[]>> }>>(doc.paths)) {
      for (const op of Object.values(item)) {
        const scheme = Object.keys(op.security?.[0] ?? {})[0];
        if (scheme === "adminToken" && !op.description.startsWith("Operator token only")) silent.push(op.operationId);
        if (scheme === "ingestToken" && !op.description.includes("ingest token")) silent.push(op.operationId);
      }
    }
    expect(silent).toEqual([]);
  });
});

describe("404 and error rendering", () => {
  // `/` is the landing page (test/console/shell.test.ts).
  it.each(["no-such-thing", "surveys-typo/1", "/nowhere", "/api/v2/usage"])("an unknown path (%s) answers 404 {error: 'Not found'}", async (path) => {
    await expectError(await call("GET", path, { ip: freshIp() }), 404, { error: "Not found" });
  });

  it("GET /health answers 200 {ok: true}", async () => {
    const res = await call("GET", "/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });

  it("malformed JSON to POST /admin/teams answers 400 without a stack trace", async () => {
    const res = await call("POST", "admin/teams", {
      key: ADMIN_TOKEN,
      raw: '{"name": "broken",',
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    const text = await res.text();
    const body = JSON.parse(text);
    expect(typeof body.error).toBe("string");
    expect(text).not.toMatch(STACK);
    expect(text).not.toContain("SyntaxError");
  });

  it("a JSON body that is not an object answers 400 or 422, never 500", async () => {
    for (const raw of ["[]", '"text"', "null", "42"]) {
      const res = await call("POST", "admin/teams", { key: ADMIN_TOKEN, raw, headers: { "content-type": "application/json" } });
      expect({ raw, ok: [400, 422].includes(res.status) }).toEqual({ raw, ok: true });
      expect(await res.text()).not.toMatch(STACK);
    }
  });

  it("an unexpected error renders 500 {error: 'Internal server error'} without the stack or message", async () => {
    const tiny = createRouter();
    tiny.use("*", requestContext());
    tiny.get("/boom", () => {
      throw new Error("database password is hunter2");
    });
    tiny.get("/boom-string", () => {
      throw new TypeError("cannot read properties of undefined");
    });
    tiny.onError(handleError);
    for (const path of ["/boom", "/boom-string"]) {
      const res = await tiny.fetch(new Request(`http://app.test${path}`), env, createExecutionContext());
      expect(res.headers.get("x-request-id")).toBeTruthy();
      const text = await res.clone().text();
      expect(text).not.toContain("hunter2");
      expect(text).not.toMatch(STACK);
      await expectError(res, 500, { error: "Internal server error" });
    }
  });

  it("ApiError codes map to their statuses and the default body", async () => {
    const tiny = createRouter();
    tiny.use("*", requestContext());
    tiny.get("/conflict", () => {
      throw new ApiError("conflict", "Slug already taken");
    });
    tiny.get("/validation", () => {
      throw ApiError.validation({ slug: ["has already been taken"] });
    });
    tiny.get("/limited", () => {
      throw ApiError.rateLimited(7);
    });
    tiny.onError(handleError);
    const get = (path: string) => tiny.fetch(new Request(`http://app.test${path}`), env, createExecutionContext());
    await expectError(await get("/conflict"), 409, { error: "Slug already taken" });
    await expectError(await get("/validation"), 422, { error: "Validation failed", details: { slug: ["has already been taken"] } });
    const limited = await get("/limited");
    expect(limited.headers.get("retry-after")).toBe("7");
    await expectError(limited, 429, { error: "Rate limit exceeded", retry_after: 7 });
  });
});
