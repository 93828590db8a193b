// What every relay route shares: the route helper of the authenticated routes (each declares its
// scope there) with the tag and the error responses in the relay body shape; the public ingest
// address has the tag and its own errors.
import type { ErrorFormatter } from "../../platform/errors";
import { jsonResponse, productRoutes } from "../../platform/openapi";
import { RelayErrorSchema } from "./relay.schemas";

const tags = ["Webhook relay"];
/** `createRoute` of the authenticated relay routes. */
export const route = productRoutes({
  tags,
  security: "bearer",
  errorBody: RelayErrorSchema,
  errors: {
    404: jsonResponse("Source, destination or event not found (also for another team's ids)", RelayErrorSchema),
    422: jsonResponse("Validation failed", RelayErrorSchema),
  },
});
/** `createRoute` of the public ingest address: no credential, every error response its own. */
export const publicRoute = productRoutes({ tags, security: "public" });

/** The relay's error body: `{error}` and, on validation failures, `details` at top level (the spec's Validation shape). */
export const relayErrorFormat: ErrorFormatter = (error) => (error.details ? { error: error.message, details: error.details } : { error: error.message });
