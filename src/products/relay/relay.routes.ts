// HTTP surface of the webhook relay: the authenticated API under /api/v1/webhooks/sources, one
// router that runs auth() for every path and mounts the routers of each job (relay-sources.routes.ts,
// relay-destinations.routes.ts, relay-events.routes.ts, in the order their operations appear in the
// OpenAPI document), and the public ingest address {APP_URL}/in/<slug> (relay-ingest.routes.ts).
// Both share the relay's error body, registered here.
import { auth } from "../../platform/auth";
import { registerErrorFormat, type ErrorFormatter } from "../../platform/errors";
import { createRouter } from "../../platform/router";
import { relayDestinationsRouter } from "./relay-destinations.routes";
import { relayEventsRouter } from "./relay-events.routes";
import { relaySourcesRouter } from "./relay-sources.routes";

export { ingestRouter } from "./relay-ingest.routes";

/** `{error}` and, on validation failures, `details` at top level (the spec's Validation shape). */
const relayErrorFormat: ErrorFormatter = (error) => (error.details ? { error: error.message, details: error.details } : { error: error.message });
registerErrorFormat("/api/v1/webhooks/sources", relayErrorFormat);
registerErrorFormat("/in", relayErrorFormat);

export const relayRouter = createRouter();
relayRouter.use("*", auth());
relayRouter.route("/", relaySourcesRouter);
relayRouter.route("/", relayDestinationsRouter);
relayRouter.route("/", relayEventsRouter);
