// Builds the typed client of the e2e run: fetches the live OpenAPI document from a running server,
// generates clients/typescript/schema.d.ts with openapi-typescript and type-checks it together
// with scripts/e2e/typed-client.mjs with TypeScript 5 (clients/typescript/tsconfig.json). Both
// tools live in clients/typescript/ (`npm ci --prefix clients/typescript`): openapi-typescript
// needs the TypeScript 5 compiler API, and the root pins TypeScript 7.
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./dev-server.mjs";

export const CLIENT_DIR = join(ROOT, "clients", "typescript");

function run(what, args) {
  const result = spawnSync(process.execPath, args, { cwd: CLIENT_DIR, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${what} failed:\n${result.stdout}${result.stderr}`);
}

const BINS = {
  generator: join(CLIENT_DIR, "node_modules", "openapi-typescript", "bin", "cli.js"),
  tsc: join(CLIENT_DIR, "node_modules", "typescript", "bin", "tsc"),
};

/** Whether `npm ci --prefix clients/typescript` has run. */
export function clientToolsInstalled() {
  return existsSync(BINS.generator) && existsSync(BINS.tsc);
}

/** The live document of a running server → schema.d.ts → tsc. */
export async function buildTypedClient(serverUrl) {
  const res = await fetch(`${serverUrl}/api/v1/openapi.json`);
  if (res.status !== 200) throw new Error(`GET /api/v1/openapi.json answered ${res.status}`);
  checkTypedClient(await res.text());
}

/** A document (JSON text) → schema.d.ts → tsc. Throws with the compiler's output when anything breaks. */
export function checkTypedClient(documentText) {
  if (!clientToolsInstalled()) throw new Error("the typed client needs its own tools: run `npm ci --prefix clients/typescript` once");
  const bins = BINS;
  writeFileSync(join(CLIENT_DIR, "openapi.json"), documentText);
  // Defaults stay optional: the request schemas (shared components) have defaults a caller may omit.
  run("openapi-typescript", [bins.generator, "openapi.json", "--output", "schema.d.ts", "--default-non-nullable", "false"]);
  run("tsc (clients/typescript/tsconfig.json)", [bins.tsc, "-p", "tsconfig.json"]);
}
