import { describe, expect, it } from "vitest";
import { call, json } from "../../helpers/api";

describe("audit in the OpenAPI document", () => {
  it("lists every audit route and the public viewer", async () => {
    const doc = await json(await call("GET", "openapi.json"));
    const paths = Object.keys(doc.paths);
    const base = "/api/v1/orgs/{org_id}/projects/{project_id}/audit";
    for (const path of [
      `${base}/findings`,
      `${base}/findings/{id}`,
      `${base}/findings/{id}/verifications`,
      `${base}/reports/summary`,
      `${base}/reports/export`,
      `${base}/reports`,
      `${base}/reports/{id}`,
      `${base}/reports/{id}/download`,
      `${base}/reports/share`,
      "/insights/audit/reports/shared/{token}",
      "/insights/audit/reports/download/{token}",
    ]) {
      expect(paths, path).toContain(path);
    }
    expect(Object.keys(doc.paths[`${base}/reports/share`]).sort()).toEqual(["delete", "post"]);
  });
});
