// Authenticated routes of webhook relay sources: create, list, read, change, delete.
import { z } from "@hono/zod-openapi";
import { dataResponse, jsonBody } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { route } from "./relay.openapi";
import { CreateSourceBody, PatchSourceBody, SourceParam, SourceSchema } from "./relay.schemas";
import { createSource, deleteSource, getSource, listSources, patchSource } from "./relay-sources.service";

export const relaySourcesRouter = createRouter();

relaySourcesRouter.openapi(
  route({
    method: "post",
    path: "/",
    operationId: "createWebhookSource",
    summary: "Create a source (a public ingest address)",
    description:
      "Answers the source with its ingest `url` (`{APP_URL}/in/<slug>`, the slug being 24 random URL-safe characters). `provider` is one of `stripe`, `github`, `standard`, `generic`; it decides how inbound signatures are verified when `signing_secret` is set. `retention_days`: 1 to 90, default 7. The secret is stored encrypted and never returned.",
    scope: "webhooks:write",
    idempotent: true,
    request: { body: jsonBody(CreateSourceBody, { name: "Shop", provider: "generic", signing_secret: "whsec_example_secret", retention_days: 7 }) },
    responses: { 201: dataResponse("The source", SourceSchema) },
  }),
  async (c) => c.json({ data: await createSource(c.env, c.get("principal").teamId, c.req.valid("json")) }, 201),
);

relaySourcesRouter.openapi(
  route({
    method: "get",
    path: "/",
    operationId: "listWebhookSources",
    summary: "List sources",
    description: "Every source of the team, newest first.",
    scope: "webhooks:read",
    responses: { 200: dataResponse("The sources", z.array(SourceSchema)) },
  }),
  async (c) => c.json({ data: await listSources(c.env, c.get("principal").teamId) }, 200),
);

relaySourcesRouter.openapi(
  route({
    method: "get",
    path: "/{source_id}",
    operationId: "getWebhookSource",
    summary: "Get a source",
    description:
      "Requires `webhooks:read`. The source with its public ingest `url`, `retention_days` and destination count; the signing secret is never returned (`signature_verification` says whether one is set).",
    scope: "webhooks:read",
    request: { params: SourceParam },
    responses: { 200: dataResponse("The source", SourceSchema) },
  }),
  async (c) => c.json({ data: await getSource(c.env, c.get("principal").teamId, c.req.valid("param").source_id) }, 200),
);

relaySourcesRouter.openapi(
  route({
    method: "patch",
    path: "/{source_id}",
    operationId: "updateWebhookSource",
    summary: "Change a source",
    description:
      "`name`, `enabled`, `retention_days` (1 to 90; the next hourly clean-up applies it) and `signing_secret` (null stops verification). A disabled source answers 410 at its ingest address.",
    scope: "webhooks:write",
    request: { params: SourceParam, body: jsonBody(PatchSourceBody, { name: "Shop (live)", retention_days: 14 }) },
    responses: { 200: dataResponse("The source", SourceSchema) },
  }),
  async (c) => c.json({ data: await patchSource(c.env, c.get("principal").teamId, c.req.valid("param").source_id, c.req.valid("json")) }, 200),
);

relaySourcesRouter.openapi(
  route({
    method: "delete",
    path: "/{source_id}",
    operationId: "deleteWebhookSource",
    summary: "Delete a source",
    description: "Deletes the source with its destinations, events, deliveries and attempts. Queued deliveries are dropped.",
    scope: "webhooks:write",
    request: { params: SourceParam },
    responses: { 204: { description: "Deleted" } },
  }),
  async (c) => {
    await deleteSource(c.env, c.get("principal").teamId, c.req.valid("param").source_id);
    return c.body(null, 204);
  },
);
