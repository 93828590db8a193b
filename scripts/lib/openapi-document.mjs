// The OpenAPI document without a server: bundles src/app.ts with the esbuild that wrangler itself
// uses (same resolution conditions as a Worker build), imports the bundle into Node and asks the
// app's own fetch for GET /api/v1/openapi.json. Nothing in the route table runs at import time
// that needs a binding, and the document route only needs the rate limiter, switched off here.
import { createRequire } from "node:module";
import { join } from "node:path";
import { ROOT } from "./dev-server.mjs";

/** The server URL written into the document's `servers` (a real server writes its own origin). */
export const DOCUMENT_ORIGIN = "http://localhost:8787";

/** Bundles the app and returns the parsed document of GET /api/v1/openapi.json. */
export async function buildOpenApiDocument() {
  const requireFromWrangler = createRequire(createRequire(import.meta.url).resolve("wrangler/package.json"));
  const { build } = requireFromWrangler("esbuild");
  const result = await build({
    entryPoints: [join(ROOT, "src", "app.ts")],
    bundle: true,
    format: "esm",
    platform: "node",
    write: false,
    // Only type imports reach cloudflare:* from app.ts; kept external in case that changes.
    external: ["cloudflare:*"],
    conditions: ["workerd", "worker", "browser"],
    logLevel: "warning",
  });
  const code = result.outputFiles[0].text;
  const { app } = await import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`);
  // The document reads no secret, but the app checks them at the door (platform/config.ts): these
  // throwaway values only pass that check, and nothing here encrypts, signs or authenticates.
  const env = {
    RATE_LIMITS: "off",
    ADMIN_TOKEN: "document-build-admin-token",
    ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64url"),
    SIGNING_KEY: "document-build-signing-key-of-32-characters",
  };
  const res = await app.fetch(new Request(`${DOCUMENT_ORIGIN}/api/v1/openapi.json`), env);
  if (res.status !== 200) throw new Error(`GET /api/v1/openapi.json answered ${res.status}: ${await res.text()}`);
  return res.json();
}
