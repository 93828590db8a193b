// Platform checks: operator API, auth, scopes, rate-limit headers, usage, docs.
import { assert, request } from "./http.mjs";

export async function platformChecks({ url, adminToken, createTeamWithKey }) {
  const team = await createTeamWithKey({ plan: "starter" });
  return {
    "health answers": async () => {
      const res = await request(url, "GET", "/health");
      assert.equal(res.status, 200);
    },
    "operator API refuses a wrong token": async () => {
      const res = await request(url, "POST", "/api/v1/admin/teams", { key: "wrong", body: { name: "x" } });
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { error: "Invalid or missing admin token" });
    },
    "usage with the team key, with rate-limit headers": async () => {
      const res = await request(url, "GET", "/api/v1/usage", { key: team.key });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.plan, "starter");
      assert.equal(res.headers.get("x-ratelimit-limit"), "3000");
      assert.ok(Number(res.headers.get("x-ratelimit-reset")) % 60 === 0);
    },
    "missing key answers 401 with the spec body": async () => {
      const res = await request(url, "GET", "/api/v1/usage");
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { error: "Invalid or missing API key" });
    },
    "a key without the scope answers 403": async () => {
      const key = await request(url, "POST", `/api/v1/admin/teams/${team.teamId}/keys`, { key: adminToken, body: { scopes: ["surveys:read"] } });
      assert.equal(key.status, 201);
      const res = await request(url, "GET", "/api/v1/usage", { key: key.body.data.key });
      assert.equal(res.status, 403);
      assert.deepEqual(res.body, { error: "Insufficient scope" });
    },
    "a revoked key answers 401": async () => {
      const key = await request(url, "POST", `/api/v1/admin/teams/${team.teamId}/keys`, { key: adminToken, body: { scopes: ["billing:read"] } });
      const del = await request(url, "DELETE", `/api/v1/admin/keys/${key.body.data.id}`, { key: adminToken });
      assert.equal(del.status, 204);
      const res = await request(url, "GET", "/api/v1/usage", { key: key.body.data.key });
      assert.equal(res.status, 401);
    },
    "OpenAPI document and reference page": async () => {
      const doc = await request(url, "GET", "/api/v1/openapi.json");
      assert.equal(doc.status, 200);
      assert.equal(doc.body.openapi, "3.1.0");
      assert.ok(doc.body.paths["/api/v1/usage"]);
      const page = await request(url, "GET", "/api/v1/docs");
      assert.equal(page.status, 200);
      assert.match(page.body, /\/standalone\.js/);
      assert.doesNotMatch(page.body, /cdn\.jsdelivr\.net/);
      const script = await fetch(`${url}/standalone.js`);
      assert.equal(script.status, 200);
      await script.arrayBuffer();
    },
  };
}
