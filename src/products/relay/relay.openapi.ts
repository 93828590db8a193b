// What every authenticated relay route declares: its scope middleware (auth() itself runs for the
// whole router, relay.routes.ts), the tag, and the error responses in the relay body shape.
import type { ErrorFormatter } from "../../platform/errors";
import { requireScope } from "../../platform/auth";
import { authResponses, jsonResponse } from "../../platform/openapi";
import { RelayErrorSchema } from "./relay.schemas";

export const tags = ["Webhook relay"];
export const read = requireScope("webhooks:read");
export const write = requireScope("webhooks:write");
export const errors = {
  ...authResponses,
  404: jsonResponse("Source, destination or event not found (also for another team's ids)", RelayErrorSchema),
  422: jsonResponse("Validation failed", RelayErrorSchema),
};

/** The relay's error body: `{error}` and, on validation failures, `details` at top level (the spec's Validation shape). */
export const relayErrorFormat: ErrorFormatter = (error) => (error.details ? { error: error.message, details: error.details } : { error: error.message });
