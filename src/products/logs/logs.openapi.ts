// What every authenticated Logs route declares (projects, entries, alerts): the scope middleware,
// attached per route (the ingest router shares the /logs prefix and authenticates with the ingest
// token instead), and the error responses in the Logs body shape.
import { auth, requireScope } from "../../platform/auth";
import { jsonResponse } from "../../platform/openapi";
import { LogsError } from "./logs.schemas";

export const notFound = (what: string) => ({ 404: jsonResponse(`${what} not found (or another team's)`, LogsError) });
export const validation = { 422: jsonResponse("Validation failed: `{error: 'Validation failed', details: {field: [message]}}`", LogsError) };
export const read = [auth(), requireScope("logs:read")];
export const write = [auth(), requireScope("logs:write")];
