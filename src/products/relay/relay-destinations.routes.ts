// Authenticated routes of a webhook relay source's destinations: add, list, change, delete.
import { z } from "@hono/zod-openapi";
import { dataResponse, jsonBody } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { route } from "./relay.openapi";
import { CreateDestinationBody, CreatedDestinationSchema, DestinationParam, DestinationSchema, PatchDestinationBody, SourceParam } from "./relay.schemas";
import { createDestination, deleteDestination, listDestinations, patchDestination } from "./relay-destinations.service";

export const relayDestinationsRouter = createRouter();

relayDestinationsRouter.openapi(
  route({
    method: "post",
    path: "/{source_id}/destinations",
    operationId: "createWebhookDestination",
    summary: "Add a destination to a source",
    description:
      "The `url` must pass the SSRF guard (https, no private or internal address). `event_filter` lists event types to forward; an entry ending in `*` admits a prefix (`invoice.*`); empty or absent admits every event. At most 20 destinations per source. The `secret` (`whsec_...`) that signs deliveries is returned only here.",
    scope: "webhooks:write",
    idempotent: true,
    request: { params: SourceParam, body: jsonBody(CreateDestinationBody, { url: "https://hooks.example.com/orders", event_filter: ["order.*"] }) },
    responses: { 201: dataResponse("The destination with its secret", CreatedDestinationSchema) },
  }),
  async (c) => {
    const { source_id } = c.req.valid("param");
    return c.json({ data: await createDestination(c.env, c.get("principal").teamId, source_id, c.req.valid("json")) }, 201);
  },
);

relayDestinationsRouter.openapi(
  route({
    method: "get",
    path: "/{source_id}/destinations",
    operationId: "listWebhookDestinations",
    summary: "List the destinations of a source",
    description: "Oldest first; the secret is never included.",
    scope: "webhooks:read",
    request: { params: SourceParam },
    responses: { 200: dataResponse("The destinations", z.array(DestinationSchema)) },
  }),
  async (c) => c.json({ data: await listDestinations(c.env, c.get("principal").teamId, c.req.valid("param").source_id) }, 200),
);

relayDestinationsRouter.openapi(
  route({
    method: "patch",
    path: "/{source_id}/destinations/{destination_id}",
    operationId: "updateWebhookDestination",
    summary: "Change a destination",
    description:
      "`url` (SSRF-checked), `event_filter` (null or [] admits everything), `enabled` (any change of it clears `failing_since` and `disabled_reason`: re-enabling a destination the relay disabled after 5 days of failures starts afresh). Queued deliveries to a destination disabled meanwhile end as `failed`.",
    scope: "webhooks:write",
    request: { params: DestinationParam, body: jsonBody(PatchDestinationBody, { enabled: false }) },
    responses: { 200: dataResponse("The destination", DestinationSchema) },
  }),
  async (c) => {
    const { source_id, destination_id } = c.req.valid("param");
    return c.json({ data: await patchDestination(c.env, c.get("principal").teamId, source_id, destination_id, c.req.valid("json")) }, 200);
  },
);

relayDestinationsRouter.openapi(
  route({
    method: "delete",
    path: "/{source_id}/destinations/{destination_id}",
    operationId: "deleteWebhookDestination",
    summary: "Delete a destination",
    description: "Deletes the destination and its delivery records.",
    scope: "webhooks:write",
    request: { params: DestinationParam },
    responses: { 204: { description: "Deleted" } },
  }),
  async (c) => {
    const { source_id, destination_id } = c.req.valid("param");
    await deleteDestination(c.env, c.get("principal").teamId, source_id, destination_id);
    return c.body(null, 204);
  },
);
