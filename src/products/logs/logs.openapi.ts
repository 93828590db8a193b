// What every authenticated Logs route declares (projects, entries, alerts): the scope middleware,
// attached per route (the ingest router shares the /logs prefix and authenticates with the ingest
// token instead), the route helpers of its two sections, and the error responses in the Logs body
// shape (a route adds those it can answer: list routes have no 404).
import { auth, requireScope } from "../../platform/auth";
import { jsonResponse, productRoutes } from "../../platform/openapi";
import { LogsError } from "./logs.schemas";

export const notFound = (what: string) => ({ 404: jsonResponse(`${what} not found (or another team's)`, LogsError) });
export const validation = { 422: jsonResponse("Validation failed: `{error: 'Validation failed', details: {field: [message]}}`", LogsError) };
export const read = [auth(), requireScope("logs:read")];
export const write = [auth(), requireScope("logs:write")];
/** `createRoute` of the project, stream and entry routes. */
export const route = productRoutes({ tags: ["Logs"], security: "bearer" });
/** `createRoute` of the alert routes. */
export const alertRoute = productRoutes({ tags: ["Logs alerts"], security: "bearer" });
