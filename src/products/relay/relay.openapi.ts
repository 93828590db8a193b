// What every relay route shares: the scope middleware of the authenticated routes (auth() itself
// runs for the whole router, relay.routes.ts), and their route helper with the tag and the error
// responses in the relay body shape; the public ingest address has the tag and its own errors.
import type { ErrorFormatter } from "../../platform/errors";
import { requireScope } from "../../platform/auth";
import { jsonResponse, productRoutes } from "../../platform/openapi";
import { RelayErrorSchema } from "./relay.schemas";

const tags = ["Webhook relay"];
export const read = requireScope("webhooks:read");
export const write = requireScope("webhooks:write");
/** `createRoute` of the authenticated relay routes. */
export const route = productRoutes({
  tags,
  security: "bearer",
  errors: {
    404: jsonResponse("Source, destination or event not found (also for another team's ids)", RelayErrorSchema),
    422: jsonResponse("Validation failed", RelayErrorSchema),
  },
});
/** `createRoute` of the public ingest address: no credential, every error response its own. */
export const publicRoute = productRoutes({ tags, security: "public" });

/** The relay's error body: `{error}` and, on validation failures, `details` at top level (the spec's Validation shape). */
export const relayErrorFormat: ErrorFormatter = (error) => (error.details ? { error: error.message, details: error.details } : { error: error.message });
