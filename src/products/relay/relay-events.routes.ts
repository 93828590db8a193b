// Authenticated routes of a webhook relay source's events: the list, one event with its deliveries
// and attempts, and replay.
import type { MiddlewareHandler } from "hono";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { dataResponse, jsonResponse } from "../../platform/openapi";
import { backgroundOf } from "../../platform/request-context";
import { createRouter } from "../../platform/router";
import { route } from "./relay.openapi";
import { EventDetailSchema, EventParam, EventsQuery, EventSummarySchema, PaginationSchema, ReplayBody, ReplaySchema, SourceParam } from "./relay.schemas";
import { getEvent, listEvents } from "./relay-events.service";
import { replayEvent } from "./relay-replay.service";

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

export const relayEventsRouter = createRouter();

relayEventsRouter.openapi(
  route({
    method: "get",
    path: "/{source_id}/events",
    operationId: "listWebhookEvents",
    summary: "List the events of a source",
    description:
      "Newest first, cursor-paginated (`limit` 1 to 100, default 25; pass `pagination.next_cursor` as `cursor`). Filters: `type` (exact, or a prefix ending in `*`) and `status`, the delivery roll-up of the event (`failed`, `pending`, `delivered`, `none`), judged on the latest delivery to each destination.",
    scope: "webhooks:read",
    request: { params: SourceParam, query: EventsQuery },
    responses: {
      200: jsonResponse("A page of events", z.object({ data: z.array(EventSummarySchema), pagination: PaginationSchema })),
    },
  }),
  async (c) => c.json(await listEvents(c.env, c.get("principal").teamId, c.req.valid("param").source_id, c.req.valid("query")), 200),
);

relayEventsRouter.openapi(
  route({
    method: "get",
    path: "/{source_id}/events/{event_id}",
    operationId: "getWebhookEvent",
    summary: "Get an event with its deliveries and attempts",
    description:
      "The stored body, content type and filtered headers, and every delivery (ingest and replays) with each attempt: time, status code, duration, error, the first 1 KB of the answer and the delay before the next try.",
    scope: "webhooks:read",
    request: { params: EventParam },
    responses: { 200: dataResponse("The event", EventDetailSchema) },
  }),
  async (c) => {
    const { source_id, event_id } = c.req.valid("param");
    return c.json({ data: await getEvent(c.env, c.get("principal").teamId, source_id, event_id) }, 200);
  },
);

relayEventsRouter.openapi(
  route({
    method: "post",
    path: "/{source_id}/events/{event_id}/replay",
    operationId: "replayWebhookEvent",
    summary: "Replay an event",
    description:
      "Queues a new delivery of the stored event to every enabled destination whose filter admits it now, or, with `destination_ids`, to those destinations only (each must belong to this source, be enabled and admit the event's type: 422 with `details.destination_ids` otherwise, the same for an unknown id and another source's or team's). Answers 202 with their count and ids (0 when none admits it); the first attempt starts at once. Each delivery a replay creates consumes one unit of the monthly `webhooks` quota (429 and nothing queued when the quota cannot cover them all).",
    scope: "webhooks:write",
    idempotent: true,
    middleware: [emptyBodyIsNone],
    request: { params: EventParam, body: { required: false, content: { "application/json": { schema: ReplayBody, example: {} } } } },
    responses: { 202: dataResponse("Deliveries queued", ReplaySchema) },
  }),
  async (c) => {
    const { source_id, event_id } = c.req.valid("param");
    const { destination_ids } = c.req.valid("json");
    return c.json({ data: await replayEvent(c.env, c.get("principal"), source_id, event_id, backgroundOf(c), destination_ids) }, 202);
  },
);
