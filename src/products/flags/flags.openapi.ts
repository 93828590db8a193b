// What every route file of the flags server API shares: its error body, the route helper with the
// product's tag and credential, and the documented 404 and 422 entries.
import { z } from "@hono/zod-openapi";
import type { ErrorFormatter } from "../../platform/errors";
import { jsonResponse, productRoutes } from "../../platform/openapi";

/** Flags errors: `{error}`, plus `details` on validation failures. */
export const flagsErrorFormat: ErrorFormatter = (error) => (error.details ? { error: error.message, details: error.details } : { error: error.message });
export const FlagsErrorSchema = z.object({ error: z.string() }).openapi("FlagsError");
const ValidationErrorSchema = z.object({ error: z.string(), details: z.record(z.string(), z.array(z.string())) }).openapi("FlagsValidationError");
export const flagsInvalid = { 422: jsonResponse("Validation failed (or a list past its size limit, named in `details`)", ValidationErrorSchema) };
export const flagNotFoundResponse = { 404: jsonResponse("Flag not found (or another team's)", FlagsErrorSchema) };
export const flagsRoute = productRoutes({ tags: ["Feature flags"], security: "bearer", errorBody: FlagsErrorSchema });
