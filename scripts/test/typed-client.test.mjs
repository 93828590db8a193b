// The typed e2e client fails to compile when the OpenAPI document changes under it: types are
// generated from the app's document (built in process) and from altered copies of it, and each
// copy must make TypeScript reject scripts/e2e/typed-client.mjs. Needs the tools of
// clients/typescript (`npm ci --prefix clients/typescript`, as CI does); skipped without them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { buildOpenApiDocument } from "../lib/openapi-document.mjs";
import { checkTypedClient, clientToolsInstalled } from "../lib/typed-client.mjs";

const skip = clientToolsInstalled() ? false : "clients/typescript is not installed (npm ci --prefix clients/typescript)";

/** Compiles against `doc`; returns the compiler's complaint, or null when it compiles. */
function compile(doc) {
  try {
    checkTypedClient(JSON.stringify(doc));
    return null;
  } catch (error) {
    return String(error.message);
  }
}

test("the typed client compiles against the document, and not against a document that breaks it", { skip, timeout: 180_000 }, async () => {
  const doc = await buildOpenApiDocument();
  assert.equal(compile(doc), null);

  const changes = {
    "a path renamed": (d) => {
      d.paths["/api/v1/logs/project-list"] = d.paths["/api/v1/logs/projects"];
      delete d.paths["/api/v1/logs/projects"];
    },
    "a response field renamed": (d) => {
      const schema = d.components.schemas.LogProjectWithToken.allOf[1];
      schema.properties.token = schema.properties.ingest_token;
      delete schema.properties.ingest_token;
      schema.required = ["token"];
    },
    "a new required body field": (d) => {
      d.components.schemas.CreateSurvey.properties.owner = { type: "string" };
      d.components.schemas.CreateSurvey.required.push("owner");
    },
    "a path parameter renamed": (d) => {
      const item = d.paths["/api/v1/surveys/{survey}/responses"];
      for (const op of [item.get, item.post]) for (const p of op.parameters) if (p.name === "survey") p.name = "slug";
      d.paths["/api/v1/surveys/{slug}/responses"] = item;
      delete d.paths["/api/v1/surveys/{survey}/responses"];
    },
  };
  for (const [name, change] of Object.entries(changes)) {
    const altered = structuredClone(doc);
    change(altered);
    const complaint = compile(altered);
    assert.ok(complaint, `${name}: the typed client still compiled`);
    assert.match(complaint, /typed-client\.mjs\(\d+,\d+\): error TS/, `${name}: ${complaint}`);
  }
  // Leave the folder with the types of the real document.
  assert.equal(compile(doc), null);
});
