// HTTP surface of the webhook relay: the authenticated API under /api/v1/webhooks/sources (sources,
// destinations, events, replay) and the public ingest address {APP_URL}/in/<slug>.
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../env";
import { readBodyCapped } from "../../platform/body";
import { createRoute, z } from "@hono/zod-openapi";
import { auth, requireScope } from "../../platform/auth";
import { ApiError, registerErrorFormat, type ErrorFormatter } from "../../platform/errors";
import { authResponses, dataResponse, jsonBody, jsonContent, jsonResponse } from "../../platform/openapi";
import { clientIp, enforceBucket } from "../../platform/rate-limit/middleware";
import { bearerSecurity, createRouter, publicSecurity } from "../../platform/router";
import {
  CreateDestinationBody,
  CreatedDestinationSchema,
  CreateSourceBody,
  DestinationParam,
  DestinationSchema,
  EventDetailSchema,
  EventParam,
  EventsQuery,
  EventSummarySchema,
  IngestAcceptedSchema,
  MAX_BODY_BYTES,
  PaginationSchema,
  PatchDestinationBody,
  PatchSourceBody,
  RelayErrorSchema,
  ReplayBody,
  ReplaySchema,
  SlugParam,
  SourceParam,
  SourceSchema,
} from "./relay.schemas";
import {
  createDestination,
  createSource,
  deleteDestination,
  deleteSource,
  getEvent,
  getSource,
  listDestinations,
  listEvents,
  listSources,
  patchDestination,
  patchSource,
  replayEvent,
} from "./relay.service";
import { loadIngestSource, receiveWebhook, type IngestSource } from "./relay.ingest";

/** `{error}` and, on validation failures, `details` at top level (the spec's Validation shape). */
const relayErrorFormat: ErrorFormatter = (error) => (error.details ? { error: error.message, details: error.details } : { error: error.message });
registerErrorFormat("/api/v1/webhooks/sources", relayErrorFormat);
registerErrorFormat("/in", relayErrorFormat);

const TAG = "Webhook relay";
const read = requireScope("webhooks:read");
const write = requireScope("webhooks:write");
const errors = {
  ...authResponses,
  404: jsonResponse("Source, destination or event not found (also for another team's ids)", RelayErrorSchema),
  422: jsonResponse("Validation failed", RelayErrorSchema),
};

/**
 * An empty body is no body, whatever its content type: replay took no body before
 * `destination_ids`, and clients that send a bare `content-type: application/json` with nothing
 * after it keep replaying to every destination instead of getting "Malformed JSON".
 */
const emptyBodyIsNone: MiddlewareHandler<AppEnv> = async function emptyBodyIsNone(c, next) {
  const raw = c.req.raw;
  const length = raw.headers.get("content-length");
  const empty = raw.body === null || (length !== null ? Number(length) === 0 : (await raw.clone().arrayBuffer()).byteLength === 0);
  if (empty && raw.headers.has("content-type")) {
    const headers = new Headers(raw.headers);
    headers.delete("content-type");
    c.req.raw = new Request(raw.url, { method: raw.method, headers });
  }
  await next();
};

export const relayRouter = createRouter();
relayRouter.use("*", auth());

// ---------------------------------------------------------------- sources

relayRouter.openapi(
  createRoute({
    method: "post",
    path: "/",
    operationId: "createWebhookSource",
    tags: [TAG],
    summary: "Create a source (a public ingest address)",
    description:
      "Answers the source with its ingest `url` (`{APP_URL}/in/<slug>`, the slug being 24 random URL-safe characters). `provider` is one of `stripe`, `github`, `standard`, `generic`; it decides how inbound signatures are verified when `signing_secret` is set. `retention_days`: 1 to 90, default 7. The secret is stored encrypted and never returned.",
    security: bearerSecurity,
    middleware: [write],
    request: { body: jsonBody(CreateSourceBody) },
    responses: { 201: dataResponse("The source", SourceSchema), ...errors },
  }),
  async (c) => c.json({ data: await createSource(c.env, c.get("principal").teamId, c.req.valid("json")) }, 201),
);

relayRouter.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listWebhookSources",
    tags: [TAG],
    summary: "List sources",
    description: "Every source of the team, newest first.",
    security: bearerSecurity,
    middleware: [read],
    responses: { 200: dataResponse("The sources", z.array(SourceSchema)), ...errors },
  }),
  async (c) => c.json({ data: await listSources(c.env, c.get("principal").teamId) }, 200),
);

relayRouter.openapi(
  createRoute({
    method: "get",
    path: "/{source_id}",
    operationId: "getWebhookSource",
    tags: [TAG],
    summary: "Get a source",
    security: bearerSecurity,
    middleware: [read],
    request: { params: SourceParam },
    responses: { 200: dataResponse("The source", SourceSchema), ...errors },
  }),
  async (c) => c.json({ data: await getSource(c.env, c.get("principal").teamId, c.req.valid("param").source_id) }, 200),
);

relayRouter.openapi(
  createRoute({
    method: "patch",
    path: "/{source_id}",
    operationId: "updateWebhookSource",
    tags: [TAG],
    summary: "Change a source",
    description: "`name`, `enabled`, `retention_days` (1 to 90; the next hourly clean-up applies it) and `signing_secret` (null stops verification). A disabled source answers 410 at its ingest address.",
    security: bearerSecurity,
    middleware: [write],
    request: { params: SourceParam, body: jsonBody(PatchSourceBody) },
    responses: { 200: dataResponse("The source", SourceSchema), ...errors },
  }),
  async (c) => c.json({ data: await patchSource(c.env, c.get("principal").teamId, c.req.valid("param").source_id, c.req.valid("json")) }, 200),
);

relayRouter.openapi(
  createRoute({
    method: "delete",
    path: "/{source_id}",
    operationId: "deleteWebhookSource",
    tags: [TAG],
    summary: "Delete a source",
    description: "Deletes the source with its destinations, events, deliveries and attempts. Queued deliveries are dropped.",
    security: bearerSecurity,
    middleware: [write],
    request: { params: SourceParam },
    responses: { 204: { description: "Deleted" }, ...errors },
  }),
  async (c) => {
    await deleteSource(c.env, c.get("principal").teamId, c.req.valid("param").source_id);
    return c.body(null, 204);
  },
);

// ---------------------------------------------------------------- destinations

relayRouter.openapi(
  createRoute({
    method: "post",
    path: "/{source_id}/destinations",
    operationId: "createWebhookDestination",
    tags: [TAG],
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

relayRouter.openapi(
  createRoute({
    method: "get",
    path: "/{source_id}/destinations",
    operationId: "listWebhookDestinations",
    tags: [TAG],
    summary: "List the destinations of a source",
    description: "Oldest first; the secret is never included.",
    security: bearerSecurity,
    middleware: [read],
    request: { params: SourceParam },
    responses: { 200: dataResponse("The destinations", z.array(DestinationSchema)), ...errors },
  }),
  async (c) => c.json({ data: await listDestinations(c.env, c.get("principal").teamId, c.req.valid("param").source_id) }, 200),
);

relayRouter.openapi(
  createRoute({
    method: "patch",
    path: "/{source_id}/destinations/{destination_id}",
    operationId: "updateWebhookDestination",
    tags: [TAG],
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

relayRouter.openapi(
  createRoute({
    method: "delete",
    path: "/{source_id}/destinations/{destination_id}",
    operationId: "deleteWebhookDestination",
    tags: [TAG],
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

// ---------------------------------------------------------------- events

relayRouter.openapi(
  createRoute({
    method: "get",
    path: "/{source_id}/events",
    operationId: "listWebhookEvents",
    tags: [TAG],
    summary: "List the events of a source",
    description:
      "Newest first, cursor-paginated (`limit` 1 to 100, default 25; pass `pagination.next_cursor` as `cursor`). Filters: `type` (exact, or a prefix ending in `*`) and `status`, the delivery roll-up of the event (`failed`, `pending`, `delivered`, `none`), judged on the latest delivery to each destination.",
    security: bearerSecurity,
    middleware: [read],
    request: { params: SourceParam, query: EventsQuery },
    responses: {
      200: jsonResponse("A page of events", z.object({ data: z.array(EventSummarySchema), pagination: PaginationSchema })),
      ...errors,
    },
  }),
  async (c) => c.json(await listEvents(c.env, c.get("principal").teamId, c.req.valid("param").source_id, c.req.valid("query")), 200),
);

relayRouter.openapi(
  createRoute({
    method: "get",
    path: "/{source_id}/events/{event_id}",
    operationId: "getWebhookEvent",
    tags: [TAG],
    summary: "Get an event with its deliveries and attempts",
    description: "The stored body, content type and filtered headers, and every delivery (ingest and replays) with each attempt: time, status code, duration, error, the first 1 KB of the answer and the delay before the next try.",
    security: bearerSecurity,
    middleware: [read],
    request: { params: EventParam },
    responses: { 200: dataResponse("The event", EventDetailSchema), ...errors },
  }),
  async (c) => {
    const { source_id, event_id } = c.req.valid("param");
    return c.json({ data: await getEvent(c.env, c.get("principal").teamId, source_id, event_id) }, 200);
  },
);

relayRouter.openapi(
  createRoute({
    method: "post",
    path: "/{source_id}/events/{event_id}/replay",
    operationId: "replayWebhookEvent",
    tags: [TAG],
    summary: "Replay an event",
    description:
      "Queues a new delivery of the stored event to every enabled destination whose filter admits it now, or, with `destination_ids`, to those destinations only (each must belong to this source, be enabled and admit the event's type: 422 with `details.destination_ids` otherwise, the same for an unknown id and another source's or team's). Answers 202 with their count and ids (0 when none admits it); the first attempt starts at once. Each delivery a replay creates consumes one unit of the monthly `webhooks` quota (429 and nothing queued when the quota cannot cover them all).",
    security: bearerSecurity,
    middleware: [write, emptyBodyIsNone],
    request: { params: EventParam, body: { required: false, content: jsonContent(ReplayBody) } },
    responses: { 202: dataResponse("Deliveries queued", ReplaySchema), ...errors },
  }),
  async (c) => {
    const { source_id, event_id } = c.req.valid("param");
    const { destination_ids } = c.req.valid("json");
    return c.json({ data: await replayEvent(c.env, c.get("principal"), source_id, event_id, c.executionCtx, destination_ids) }, 202);
  },
);

// ---------------------------------------------------------------- public ingest

export const ingestRouter = createRouter();

ingestRouter.openapi(
  createRoute({
    method: "post",
    path: "/{slug}",
    operationId: "ingestWebhook",
    security: publicSecurity,
    tags: [TAG],
    summary: "Public ingest address of a source",
    description:
      "No credential; the `public` bucket (200 requests per 60 s per client IP). Any content type; the body must be UTF-8 text of at most 1 MB (413 above, 415 when not UTF-8). When the source has a signing secret, the provider's signature is verified first (401, nothing stored). Duplicates of a provider event id answer 202 with `duplicate: true` and are not forwarded again. Unknown slug 404; disabled source 410; monthly `webhooks` quota exhausted 429 (an event costs one unit per started 64 KB of body). Answers 202 once the event is stored and its deliveries are queued; the first delivery attempt then starts at once, in the background of this request (the queue retries failures).",
    request: { params: SlugParam },
    responses: {
      202: dataResponse("Stored and queued", IngestAcceptedSchema),
      401: jsonResponse("Invalid webhook signature", RelayErrorSchema),
      404: jsonResponse("Source not found", RelayErrorSchema),
      410: jsonResponse("Source is disabled", RelayErrorSchema),
      413: jsonResponse("Payload too large (max 1 MB)", RelayErrorSchema),
      415: jsonResponse("Body is not UTF-8 text", RelayErrorSchema),
      429: jsonResponse("Rate limit exceeded, or monthly quota", RelayErrorSchema),
      503: jsonResponse("Could not queue; retry", RelayErrorSchema),
    },
  }),
  async (c) => {
    // The `public` bucket, the body and the source are independent I/O: all three at once, then
    // refused in the order a sender expects (429, then 413/415, then 404).
    const [limited, body, found] = await Promise.allSettled([
      enforceBucket(c, "public", `ip:${clientIp(c)}`),
      readBody(c.req.raw),
      loadIngestSource(c.env, c.req.valid("param").slug),
    ]);
    for (const outcome of [limited, body, found]) if (outcome.status === "rejected") throw outcome.reason;
    const inbound = { headers: c.req.raw.headers, body: (body as PromiseFulfilledResult<string>).value, contentType: c.req.header("content-type") ?? null };
    const result = await receiveWebhook(c.env, (found as PromiseFulfilledResult<IngestSource>).value, inbound, c.executionCtx);
    return c.json({ data: result }, 202);
  },
);

const tooLarge = () => new ApiError("payload_too_large", "Payload too large (max 1MB)");

/** Reads the request body as UTF-8 text, refusing more than MAX_BODY_BYTES without buffering it all. */
async function readBody(request: Request): Promise<string> {
  const bytes = await readBodyCapped(request, MAX_BODY_BYTES, tooLarge);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new ApiError("unsupported_media_type", "Body must be UTF-8 text", { status: 415 });
  }
}
