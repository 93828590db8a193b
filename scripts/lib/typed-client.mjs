// The TypeScript client package (clients/typescript, `@edge-platform/client`): its committed
// OpenAPI document (openapi.json, the app's own, built in process) and the types generated from it
// (schema.d.ts, openapi-typescript), kept in step by `npm run client:update`; and the type-check
// of the e2e module that drives the package (scripts/e2e/typed-client.mjs) against the types of
// any document, in a scratch copy of the package, so a document that breaks a call used there
// fails to compile. The tools live in clients/typescript/ (`npm ci --prefix clients/typescript`):
// openapi-typescript needs the TypeScript 5 compiler API, and the root pins TypeScript 7.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./dev-server.mjs";
import { buildOpenApiDocument, DOCUMENT_ORIGIN } from "./openapi-document.mjs";

export const CLIENT_DIR = join(ROOT, "clients", "typescript");
export const COMMITTED_DOCUMENT = join(CLIENT_DIR, "openapi.json");
export const COMMITTED_TYPES = join(CLIENT_DIR, "schema.d.ts");

const BINS = {
  generator: join(CLIENT_DIR, "node_modules", "openapi-typescript", "bin", "cli.js"),
  tsc: join(CLIENT_DIR, "node_modules", "typescript", "bin", "tsc"),
};

function run(what, args, cwd = CLIENT_DIR) {
  const result = spawnSync(process.execPath, args, { cwd, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${what} failed:\n${result.stdout}${result.stderr}`);
}

/** Whether `npm ci --prefix clients/typescript` has run. */
export function clientToolsInstalled() {
  return existsSync(BINS.generator) && existsSync(BINS.tsc);
}

function requireTools() {
  if (!clientToolsInstalled()) throw new Error("the TypeScript client needs its own tools: run `npm ci --prefix clients/typescript` once");
}

/** A document as committed: its `servers` is the local default (a live server writes its own origin), 2-space JSON. */
export function documentText(doc) {
  return `${JSON.stringify({ ...doc, servers: [{ url: DOCUMENT_ORIGIN }] }, null, 2)}\n`;
}

/** schema.d.ts for a document (JSON text), written to `output`. */
export function generateTypes(text, output) {
  requireTools();
  const scratch = mkdtempSync(join(tmpdir(), "edge-client-doc-"));
  try {
    writeFileSync(join(scratch, "openapi.json"), text);
    // Defaults stay optional: the request schemas (shared components) have defaults a caller may omit.
    run("openapi-typescript", [BINS.generator, join(scratch, "openapi.json"), "--output", output, "--default-non-nullable", "false"]);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** `npm run client:update`: the app's document and its types into the package. */
export async function updateClient() {
  writeFileSync(COMMITTED_DOCUMENT, documentText(await buildOpenApiDocument()));
  generateTypes(readFileSync(COMMITTED_DOCUMENT, "utf8"), COMMITTED_TYPES);
}

/**
 * Type-checks the package and scripts/e2e/typed-client.mjs against the types of `text` (a
 * document as JSON), in a scratch copy laid out like the repository; throws with the compiler's
 * output when anything breaks.
 */
export function checkTypedClient(text) {
  requireTools();
  const root = mkdtempSync(join(tmpdir(), "edge-client-check-"));
  try {
    const pkg = join(root, "clients", "typescript");
    const e2e = join(root, "scripts", "e2e");
    mkdirSync(pkg, { recursive: true });
    mkdirSync(e2e, { recursive: true });
    for (const file of ["index.js", "index.d.ts", "tsconfig.json"]) copyFileSync(join(CLIENT_DIR, file), join(pkg, file));
    for (const file of ["typed-client.mjs", "http.mjs"]) copyFileSync(join(ROOT, "scripts", "e2e", file), join(e2e, file));
    symlinkSync(join(CLIENT_DIR, "node_modules"), join(pkg, "node_modules"));
    generateTypes(text, join(pkg, "schema.d.ts"));
    run("tsc (clients/typescript/tsconfig.json)", [BINS.tsc, "-p", join(pkg, "tsconfig.json")], pkg);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * The e2e run's set-up: the live server's document must be the committed one (else the package
 * is stale: `npm run client:update`), and the e2e module must compile against its types.
 */
export async function buildTypedClient(serverUrl) {
  const res = await fetch(`${serverUrl}/api/v1/openapi.json`);
  if (res.status !== 200) throw new Error(`GET /api/v1/openapi.json answered ${res.status}`);
  const live = documentText(await res.json());
  if (live !== readFileSync(COMMITTED_DOCUMENT, "utf8")) {
    throw new Error("the served OpenAPI document differs from clients/typescript/openapi.json: run `npm run client:update` and commit the result");
  }
  checkTypedClient(live);
}
