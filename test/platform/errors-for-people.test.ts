// Errors that say what to fix, in every product's own shape: 405 with Allow for a known path and a
// wrong method (mail keeps 404), unknown top-level fields of configuration bodies named, one 415
// that names application/json, one wording for malformed JSON, and zod failures in people's words.
import { describe, expect, it } from "vitest";
import { z } from "@hono/zod-openapi";
import { call, expectError, json, setupTeam } from "../helpers/api";
import { zodDetails } from "../../src/platform/errors";
import "../../src/platform/zod-messages";

const SOME_ID = "00000000-0000-4000-8000-000000000001";

describe("405 for a known path and a wrong method", () => {
  it("answers 405 with Allow in each product's shape", async () => {
    const team = await setupTeam();
    const cases: Array<[string, string, string, unknown]> = [
      ["PUT", "surveys", "GET, HEAD, POST", { error: "Method PUT is not allowed here; use GET, HEAD, POST" }],
      ["DELETE", `surveys/${SOME_ID}/activate`, "POST", { error: "Method DELETE is not allowed here; use POST" }],
      ["PATCH", "logs/projects", "GET, HEAD, POST", { error: "Method PATCH is not allowed here; use GET, HEAD, POST" }],
      ["POST", `logs/alerts/${SOME_ID}`, "PUT, DELETE", { error: "Method POST is not allowed here; use PUT, DELETE" }],
      ["PUT", "push/apps", "GET, HEAD, POST", { error: "Method PUT is not allowed here; use GET, HEAD, POST" }],
      ["DELETE", `webhooks/sources/${SOME_ID}/events`, "GET, HEAD", { error: "Method DELETE is not allowed here; use GET, HEAD" }],
      ["PATCH", "usage", "GET, HEAD", { error: "Method PATCH is not allowed here; use GET, HEAD" }],
    ];
    for (const [method, path, allow, body] of cases) {
      const res = await call(method, path, { key: team.key });
      expect(res.headers.get("allow"), `${method} ${path}`).toBe(allow);
      await expectError(res, 405, body);
    }
  });

  it("renders the audit envelope and the relay ingest's shape", async () => {
    const team = await setupTeam();
    const res = await call("PUT", `orgs/${team.teamId}/projects/web/audit/findings`, { key: team.key });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, POST");
    const body = await json(res);
    expect(body).toEqual({
      data: null,
      meta: { request_id: res.headers.get("x-request-id") },
      error: { code: "method_not_allowed", message: "Method PUT is not allowed here; use GET, HEAD, POST" },
    });
    const ingest = await call("GET", "/in/some-slug");
    expect(ingest.headers.get("allow")).toBe("POST");
    await expectError(ingest, 405, { error: "Method GET is not allowed here; use POST" });
  });

  it("keeps 404 on mail's paths (the specification's mail statuses have no 405)", async () => {
    const team = await setupTeam();
    for (const [method, path] of [
      ["PUT", "emails"],
      ["DELETE", "emails/batch"],
      ["PATCH", "webhooks"],
      ["PUT", `webhooks/${SOME_ID}/test`],
      ["PUT", "domains"],
    ]) {
      const res = await call(method, path, { key: team.key });
      expect(res.headers.get("allow"), `${method} ${path}`).toBeNull();
      await expectError(res, 404, { error: "Not found" });
    }
  });

  it("still answers 404 for a path nobody serves", async () => {
    const team = await setupTeam();
    await expectError(await call("GET", "no-such-thing", { key: team.key }), 404, { error: "Not found" });
    await expectError(await call("PUT", "surveys/a/b/c/d/e", { key: team.key }), 404, { error: "Not found" });
  });
});

describe("unknown top-level fields on configuration bodies", () => {
  it("answers 422 naming the field, in each product's shape", async () => {
    const team = await setupTeam();
    const named = { retention: ["is not a known field"] };
    const cases: Array<[string, string, Record<string, unknown>, unknown]> = [
      ["POST", "logs/projects", { name: "api", retention: 3 }, { error: "Validation failed", details: named }],
      [
        "POST",
        `logs/projects/${SOME_ID}/alerts`,
        { name: "a", level: "error", threshold: 1, window_minutes: 5, retention: 3 },
        { error: "Validation failed", details: named },
      ],
      ["PUT", `logs/alerts/${SOME_ID}`, { retention: 3 }, { error: "Validation failed", details: named }],
      ["POST", "webhooks/sources", { name: "s", provider: "generic", retention: 3 }, { error: "Validation failed", details: named }],
      ["PATCH", `webhooks/sources/${SOME_ID}`, { retention: 3 }, { error: "Validation failed", details: named }],
      ["POST", `webhooks/sources/${SOME_ID}/destinations`, { url: "https://example.com", retention: 3 }, { error: "Validation failed", details: named }],
      ["PATCH", `webhooks/sources/${SOME_ID}/destinations/${SOME_ID}`, { retention: 3 }, { error: "Validation failed", details: named }],
      ["POST", "push/apps", { name: "app", retention: 3 }, { error: "Validation failed", details: named }],
      ["PATCH", `push/apps/${SOME_ID}`, { retention: 3 }, { error: "Validation failed", details: named }],
      ["POST", "surveys", { name: "s", slug: "unknown-field", retention: 3 }, { error: "Validation failed", errors: named }],
      ["PATCH", `surveys/${SOME_ID}`, { retention: 3 }, { error: "Validation failed", errors: named }],
      ["POST", `surveys/${SOME_ID}/questions`, { type: "text", title: "t", position: 1, retention: 3 }, { error: "Validation failed", errors: named }],
      ["PATCH", `surveys/${SOME_ID}/questions/${SOME_ID}`, { retention: 3 }, { error: "Validation failed", errors: named }],
      ["POST", `surveys/${SOME_ID}/webhooks`, { url: "https://example.com/h", retention: 3 }, { error: "Validation failed", errors: named }],
      ["POST", "domains", { name: "mail.example.org", retention: 3 }, { error: "Validation failed", details: named }],
      ["POST", "webhooks", { url: "https://example.com/h", events: ["email.delivered"], retention: 3 }, { error: "Validation failed", details: named }],
    ];
    for (const [method, path, body, expected] of cases) {
      const res = await call(method, path, { key: team.key, body });
      expect({ at: `${method} ${path}`, status: res.status, body: await json(res) }).toEqual({ at: `${method} ${path}`, status: 422, body: expected });
    }
    // Nothing was created by the refused bodies.
    expect((await json(await call("GET", "logs/projects", { key: team.key }))).data).toEqual([]);
    expect((await json(await call("GET", "surveys", { key: team.key }))).data).toEqual([]);
  });

  it("names every unknown field, nested ones by their path", async () => {
    const team = await setupTeam();
    const res = await call("POST", "surveys", { key: team.key, body: { name: "s", slug: "nested", colour: "red", size: 1 } });
    await expectError(res, 422, { error: "Validation failed", errors: { colour: ["is not a known field"], size: ["is not a known field"] } });
  });

  it("leaves free-form objects free-form", async () => {
    const team = await setupTeam();
    const survey = await call("POST", "surveys", { key: team.key, body: { name: "s", slug: "free-form", mode: "ai", ai_config: { goal: "g", anything: 1 } } });
    expect(survey.status).toBe(201);
    const app = await call("POST", "push/apps", { key: team.key, body: { name: "app", settings: { default_icon: "/i.png", custom: true } } });
    expect(app.status).toBe(201);
  });
});

describe("415 and malformed JSON", () => {
  it("a form-encoded body answers 415 saying to send application/json", async () => {
    const team = await setupTeam();
    for (const path of ["surveys", "logs/projects", "push/apps", "webhooks/sources"]) {
      const res = await call("POST", path, { key: team.key, raw: "name=x", headers: { "content-type": "application/x-www-form-urlencoded" } });
      await expectError(res, 415, { error: "Unsupported Media Type: send the body as JSON with Content-Type: application/json" });
    }
  });

  it("malformed JSON has one wording in every shape with a message", async () => {
    const team = await setupTeam();
    const headers = { "content-type": "application/json" };
    for (const path of ["surveys", "logs/projects", "push/apps", "webhooks/sources", "domains", "webhooks", "emails", "emails/batch"]) {
      const res = await call("POST", path, { key: team.key, raw: "{bad", headers });
      expect({ path, status: res.status, body: await json(res) }).toEqual({ path, status: 400, body: { error: "Malformed JSON in request body" } });
    }
  });
});

describe("messages written for people", () => {
  it("says what is missing and what is allowed", async () => {
    const team = await setupTeam();
    await expectError(await call("POST", "surveys", { key: team.key, body: { mode: "x" } }), 422, {
      error: "Validation failed",
      errors: { name: ["is required"], slug: ["is required"], mode: ["must be one of: manual, ai"] },
    });
    await expectError(await call("POST", "webhooks/sources", { key: team.key, body: {} }), 422, {
      error: "Validation failed",
      details: { name: ["is required"], provider: ["is required"] },
    });
    await expectError(await call("POST", "logs/projects", { key: team.key, body: { name: "x".repeat(201), daily_limit_mb: 1.5, retention_days: 0 } }), 422, {
      error: "Validation failed",
      details: { name: ["must be at most 200 characters"], daily_limit_mb: ["must be a whole number"], retention_days: ["must be at least 1"] },
    });
    await expectError(await call("POST", "push/apps", { key: team.key, body: [] }), 422, {
      error: "Validation failed",
      details: { _body: ["must be an object"] },
    });
  });

  it("maps each kind of zod failure to a sentence", () => {
    const schema = z.strictObject({
      s: z.string(),
      b: z.boolean(),
      a: z.array(z.string()).min(1),
      many: z.array(z.string()).max(2),
      e: z.string().email(),
      u: z.string().url(),
      lit: z.literal("only"),
      blank: z.string().min(1),
      big: z.number().max(10),
      pos: z.number().positive(),
      own: z.string().regex(/^a/, "must start with a"),
      obj: z.strictObject({ inner: z.number() }),
    });
    const result = schema.safeParse({
      s: 1,
      b: "yes",
      a: [],
      many: ["1", "2", "3"],
      e: "no",
      u: "no",
      lit: "other",
      blank: "",
      big: 11,
      pos: 0,
      own: "b",
      obj: { inner: "x", extra: 1 },
      more: 1,
    });
    expect(result.success).toBe(false);
    expect(zodDetails(result.error!)).toEqual({
      s: ["must be a string"],
      b: ["must be true or false"],
      a: ["must not be empty"],
      many: ["must have at most 2 items"],
      e: ["must be a valid email address"],
      u: ["must be a valid URL"],
      lit: ["must be only"],
      blank: ["can't be blank"],
      big: ["must be at most 10"],
      pos: ["must be greater than 0"],
      own: ["must start with a"],
      "obj.inner": ["must be a number"],
      "obj.extra": ["is not a known field"],
      more: ["is not a known field"],
    });
  });
});

describe("a caller's __proto__ key", () => {
  it("is named as an unknown field like any other, an own key of the details (never the prototype)", () => {
    const result = z.strictObject({ ref: z.string() }).safeParse(JSON.parse('{"__proto__": {"x": 1}, "ref": 1}'));
    expect(result.success).toBe(false);
    const details = zodDetails(result.error!);
    expect(Object.hasOwn(details, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(details)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(details))).toEqual(JSON.parse('{"__proto__": ["is not a known field"], "ref": ["must be a string"]}'));
  });

  it("answers 422 through a route, not 500 (the fuzz's counterexample on the public back route)", async () => {
    const res = await call("POST", "surveys/%7D8x/responses/-1/back", {
      raw: '{"__proto__": {"a": true}, "ref": [null, true]}',
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBeLessThan(500);
    expect([404, 422]).toContain(res.status);
  });
});
