// What every authenticated relay route declares: its scope middleware (auth() itself runs for the
// whole router, relay.routes.ts), the tag, and the error responses in the relay body shape.
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
