// HTTP surface of the webhook relay: the authenticated API under /api/v1/webhooks/sources, one
// router that mounts the routers of each job (relay-sources.routes.ts,
// relay-destinations.routes.ts, relay-events.routes.ts, in the order their operations appear in the
// OpenAPI document), and the public ingest address {APP_URL}/in/<slug> (relay-ingest.routes.ts).
// Both share the relay's error body (relay.openapi.ts).
import { createRouter } from "../../platform/router";
import { relayErrorFormat, route } from "./relay.openapi";
import { relayDestinationsRouter } from "./relay-destinations.routes";
import { relayEventsRouter } from "./relay-events.routes";
import { relaySourcesRouter } from "./relay-sources.routes";

export { ingestRouter } from "./relay-ingest.routes";

export const relayRouter = createRouter({ errorFormat: relayErrorFormat });
relayRouter.route("/", relaySourcesRouter);
relayRouter.route("/", relayDestinationsRouter);
relayRouter.route("/", relayEventsRouter);
// A path no route serves is authenticated like the routes before its 404 or 405.
relayRouter.use("*", ...route.unmatched());
