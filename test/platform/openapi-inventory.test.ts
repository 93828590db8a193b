// The generated OpenAPI document lists every product's routes, so the reference page is complete.
import { expect, it } from "vitest";
import { call, json } from "../helpers/api";

it("documents every product under /api/v1", async () => {
  const doc = await json(await call("GET", "openapi.json"));
  const paths = Object.keys(doc.paths);
  for (const prefix of [
    "/api/v1/admin",
    "/api/v1/usage",
    "/api/v1/surveys",
    "/api/v1/orgs/{org_id}/projects/{project_id}/audit",
    "/api/v1/logs",
    "/api/v1/webhooks/sources",
    "/api/v1/emails",
    "/api/v1/webhooks",
    "/api/v1/push",
  ]) {
    expect(
      paths.some((p) => p.startsWith(prefix)),
      prefix,
    ).toBe(true);
  }
  const operations = paths.flatMap((p) => Object.keys(doc.paths[p]));
  expect(operations.length).toBeGreaterThan(80);
});
