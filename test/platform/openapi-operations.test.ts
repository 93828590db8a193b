// The generated OpenAPI document as client generators read it: every operation has a stable,
// unique camelCase operationId (generated method names), states its security (public routes with
// an explicit empty list), and no two path templates differ only in parameter names.
import { beforeAll, describe, expect, it } from "vitest";
import { call, json } from "../helpers/api";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

interface Op {
  key: string;
  path: string;
  method: string;
  operation: any;
}

let doc: any;
let ops: Op[];

beforeAll(async () => {
  const res = await call("GET", "openapi.json");
  expect(res.status).toBe(200);
  doc = await json(res);
  ops = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    Object.entries<any>(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, path, method, operation })),
  );
});

describe("operationId", () => {
  it("every operation has one, in camelCase", () => {
    expect(ops.length).toBeGreaterThan(80);
    const bad = ops.filter((op) => typeof op.operation.operationId !== "string" || !/^[a-z][a-zA-Z0-9]*$/.test(op.operation.operationId));
    expect(bad.map((op) => `${op.key}: ${op.operation.operationId}`)).toEqual([]);
  });

  it("no two operations share one", () => {
    const owners = new Map<string, string[]>();
    for (const op of ops) owners.set(op.operation.operationId, [...(owners.get(op.operation.operationId) ?? []), op.key]);
    const shared = [...owners].filter(([, keys]) => keys.length > 1);
    expect(shared).toEqual([]);
  });

  it("keeps the names clients were generated with", () => {
    // A rename breaks every generated client's method name: these anchors must not move.
    const byKey = Object.fromEntries(ops.map((op) => [op.key, op.operation.operationId]));
    expect(byKey["GET /api/v1/logs/projects"]).toBe("listLogProjects");
    expect(byKey["POST /api/v1/emails"]).toBe("sendEmail");
    expect(byKey["GET /api/v1/surveys/{survey}/responses"]).toBe("listSurveyResponses");
    expect(byKey["POST /api/v1/surveys/{survey}/responses"]).toBe("startSurveyResponse");
    expect(byKey["POST /in/{slug}"]).toBe("ingestWebhook");
  });
});

describe("security", () => {
  it("every operation states it; public ones with an empty list, the others with a declared scheme", () => {
    const schemes = Object.keys(doc.components?.securitySchemes ?? {});
    const missing = ops.filter((op) => !Array.isArray(op.operation.security)).map((op) => op.key);
    expect(missing).toEqual([]);
    const unknown = ops.flatMap((op) =>
      op.operation.security.flatMap((req: object) =>
        Object.keys(req)
          .filter((s) => !schemes.includes(s))
          .map((s) => `${op.key}: ${s}`),
      ),
    );
    expect(unknown).toEqual([]);
    const open = ops
      .filter((op) => op.operation.security.length === 0)
      .map((op) => op.key)
      .sort();
    expect(open).toEqual([
      "GET /a/script.js",
      "GET /api/v1/surveys/{slug}/public",
      "GET /api/v1/surveys/{slug}/responses/{response_id}",
      "GET /f/{form_id}/files/{token}",
      "GET /f/{form_id}/thanks",
      "GET /insights/audit/reports/download/{token}",
      "GET /insights/audit/reports/shared/{token}",
      "POST /api/event",
      "POST /api/v1/surveys/{slug}/responses/{response_id}/answers",
      "POST /api/v1/surveys/{slug}/responses/{response_id}/back",
      "POST /api/v1/surveys/{slug}/responses/{response_id}/complete",
      "POST /api/v1/surveys/{survey}/responses",
      "POST /f/{form_id}",
      "POST /in/{slug}",
    ]);
  });
});

describe("paths", () => {
  it("no two templates differ only in parameter names, and each declares the parameters of its template", () => {
    const shapes = new Map<string, string>();
    for (const path of Object.keys(doc.paths)) {
      const shape = path.replace(/\{[^}]+\}/g, "{}");
      expect(shapes.get(shape), `${path} duplicates ${shapes.get(shape)}`).toBeUndefined();
      shapes.set(shape, path);
    }
    for (const op of ops) {
      const inTemplate = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      const declared = (op.operation.parameters ?? [])
        .filter((p: any) => p.in === "path")
        .map((p: any) => p.name)
        .sort();
      expect(declared, op.key).toEqual(inTemplate);
    }
  });

  it("the merged responses path still answers both operations at their old URLs", async () => {
    // Public start by slug: an unknown slug is the product's 404, not a routing miss or a 422.
    const start = await call("POST", "surveys/no-such-slug-xyz/responses");
    expect(start.status).toBe(404);
    // Authenticated list by id: without a key it is the auth error, so the route is still there.
    const list = await call("GET", `surveys/${crypto.randomUUID()}/responses`);
    expect(list.status).toBe(401);
    expect(await list.json()).toEqual({ error: "Invalid or missing API key" });
  });
});
