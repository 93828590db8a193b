// What every authenticated Logs route shares (projects, entries, alerts): the route helpers of its
// two sections (each route declares its scope there; the ingest router shares the /logs prefix and
// authenticates with the ingest token instead), and the error responses in the Logs body shape (a
// route adds those it can answer: list routes have no 404).
import { jsonResponse, productRoutes } from "../../platform/openapi";
import { LogsError } from "./logs.schemas";

export const notFound = (what: string) => ({ 404: jsonResponse(`${what} not found (or another team's)`, LogsError) });
export const validation = { 422: jsonResponse("Validation failed: `{error: 'Validation failed', details: {field: [message]}}`", LogsError) };
/** `createRoute` of the project, stream and entry routes. */
export const route = productRoutes({ tags: ["Logs"], security: "bearer", errorBody: LogsError });
/** `createRoute` of the alert routes. */
export const alertRoute = productRoutes({ tags: ["Logs alerts"], security: "bearer", errorBody: LogsError });
