// The Logs product's HTTP surface. Two routers: `logsIngestRouter` (mounted at /logs/ingest,
// ingest token only, body `{ok: true}` / `{error}`; log-ingest.routes.ts) and `logsRouter` (projects,
// entries, alerts: team API key with logs:read / logs:write, body `{data: ...}` / `{error[, details]}`),
// which mounts the projects and alerts routers (log-projects.routes.ts, log-alerts.routes.ts) in the
// order their operations appear in the OpenAPI document.
import type { ErrorFormatter } from "../../platform/errors";
import { createRouter } from "../../platform/router";
import { logAlertsRouter } from "./log-alerts.routes";
import { logProjectsRouter } from "./log-projects.routes";

export { logsIngestRouter } from "./log-ingest.routes";

/** /logs (not ingest) uses the Validation shape, with `details` only on field validation failures. */
const logsErrorFormat: ErrorFormatter = (error) => (error.details ? { error: error.message, details: error.details } : { error: error.message });

export const logsRouter = createRouter({ errorFormat: logsErrorFormat });
logsRouter.route("/", logProjectsRouter);
logsRouter.route("/", logAlertsRouter);
