// The OpenAPI document without a server: bundles src/app.ts into Node (source-bundle.mjs) and asks the
// app's own fetch for GET /api/v1/openapi.json. Nothing in the route table runs at import time
// that needs a binding, and the document route only needs the rate limiter, switched off here.
import { importSource } from "./source-bundle.mjs";

/** The server URL written into the document's `servers` (a real server writes its own origin). */
export const DOCUMENT_ORIGIN = "http://localhost:8787";

/** Bundles the app and returns the parsed document of GET /api/v1/openapi.json. */
export async function buildOpenApiDocument() {
  const { app } = await importSource('export { app } from "./src/app.ts";');
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
