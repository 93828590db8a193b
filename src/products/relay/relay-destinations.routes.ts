// Authenticated routes of a webhook relay source's destinations: add, list, change, delete.
import { createRoute, z } from "@hono/zod-openapi";
import { dataResponse, jsonBody } from "../../platform/openapi";
import { bearerSecurity, createRouter } from "../../platform/router";
import { errors, read, tags, write } from "./relay.openapi";
import { CreateDestinationBody, CreatedDestinationSchema, DestinationParam, DestinationSchema, PatchDestinationBody, SourceParam } from "./relay.schemas";
import { createDestination, deleteDestination, listDestinations, patchDestination } from "./relay-destinations.service";

export const relayDestinationsRouter = createRouter();

relayDestinationsRouter.openapi(
  createRoute({
    method: "post",
    path: "/{source_id}/destinations",
    operationId: "createWebhookDestination",
    tags,
    summary: "Add a destination to a source",
    description:
      "The `url` must pass the SSRF guard (https, no private or internal address). `event_filter` lists event types to forward; an entry ending in `*` admits a prefix (`invoice.*`); empty or absent admits every event. At most 20 destinations per source. The `secret` (`whsec_...`) that signs deliveries is returned only here.",
    security: bearerSecurity,
    middleware: [write],
    request: { params: SourceParam, body: jsonBody(CreateDestinationBody) },
    responses: { 201: dataResponse("The destination with its secret", CreatedDestinationSchema), ...errors },
  }),
  async (c) => {
    const { source_id } = c.req.valid("param");
    return c.json({ data: await createDestination(c.env, c.get("principal").teamId, source_id, c.req.valid("json")) }, 201);
  },
);

relayDestinationsRouter.openapi(
  createRoute({
    method: "get",
    path: "/{source_id}/destinations",
    operationId: "listWebhookDestinations",
    tags,
    summary: "List the destinations of a source",
    description: "Oldest first; the secret is never included.",
    security: bearerSecurity,
    middleware: [read],
    request: { params: SourceParam },
    responses: { 200: dataResponse("The destinations", z.array(DestinationSchema)), ...errors },
  }),
  async (c) => c.json({ data: await listDestinations(c.env, c.get("principal").teamId, c.req.valid("param").source_id) }, 200),
);

relayDestinationsRouter.openapi(
  createRoute({
    method: "patch",
    path: "/{source_id}/destinations/{destination_id}",
    operationId: "updateWebhookDestination",
    tags,
    summary: "Change a destination",
    description:
      "`url` (SSRF-checked), `event_filter` (null or [] admits everything), `enabled` (any change of it clears `failing_since` and `disabled_reason`: re-enabling a destination the relay disabled after 5 days of failures starts afresh). Queued deliveries to a destination disabled meanwhile end as `failed`.",
    security: bearerSecurity,
    middleware: [write],
    request: { params: DestinationParam, body: jsonBody(PatchDestinationBody) },
    responses: { 200: dataResponse("The destination", DestinationSchema), ...errors },
  }),
  async (c) => {
    const { source_id, destination_id } = c.req.valid("param");
    return c.json({ data: await patchDestination(c.env, c.get("principal").teamId, source_id, destination_id, c.req.valid("json")) }, 200);
  },
);

relayDestinationsRouter.openapi(
  createRoute({
    method: "delete",
    path: "/{source_id}/destinations/{destination_id}",
    operationId: "deleteWebhookDestination",
    tags,
    summary: "Delete a destination",
    description: "Deletes the destination and its delivery records.",
    security: bearerSecurity,
    middleware: [write],
    request: { params: DestinationParam },
    responses: { 204: { description: "Deleted" }, ...errors },
  }),
  async (c) => {
    const { source_id, destination_id } = c.req.valid("param");
    await deleteDestination(c.env, c.get("principal").teamId, source_id, destination_id);
    return c.body(null, 204);
  },
);
