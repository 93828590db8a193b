// The push product's HTTP surface: apps (spec), subscribers and notifications (docs/ARCHITECTURE.md
// extension). Bodies `{data: ...}`; errors `{error}` or the spec's Validation shape.
import { z } from "@hono/zod-openapi";
import type { ErrorFormatter } from "../../platform/errors";
import { dataResponse, jsonBody, jsonResponse, productRoutes } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import {
  AppIdParam,
  CreateAppSchema,
  ListNotificationsQuery,
  ListSubscribersQuery,
  NotificationDetailSchema,
  NotificationParams,
  NotificationQuery,
  NotificationSchema,
  PaginationSchema,
  PushAppSchema,
  SendSchema,
  SubscribeSchema,
  SubscriberParams,
  SubscriberSchema,
  UpdateAppSchema,
} from "./push.schemas";
import { createApp, deleteApp, getApp, listApps, updateApp } from "./push-apps.service";
import { getNotification, listNotifications, sendNotification } from "./push-notifications.service";
import { deleteSubscriber, listSubscribers, registerSubscriber } from "./push-subscribers.service";

/** Push errors: `{error}`, plus `details` on validation failures. */
const pushErrorFormat: ErrorFormatter = (error) => (error.details ? { error: error.message, details: error.details } : { error: error.message });

const ErrorSchema = z.object({ error: z.string() }).openapi("PushError");
const ValidationErrorSchema = z
  .object({ error: z.literal("Validation failed"), details: z.record(z.string(), z.array(z.string())) })
  .openapi("PushValidationError");

const notFound = (what: string) => ({ 404: jsonResponse(`${what} not found (or another team's)`, ErrorSchema) });
const invalid = { 422: jsonResponse("Validation failed", ValidationErrorSchema) };
const route = productRoutes({ tags: ["Push"], security: "bearer", errorBody: ErrorSchema });

export const pushRouter = createRouter({ errorFormat: pushErrorFormat });

// Apps ----------------------------------------------------------------------------------------

pushRouter.openapi(
  route({
    method: "get",
    path: "/apps",
    operationId: "listPushApps",
    scope: "push:read",
    summary: "List push apps",
    description: "Every push app of the team, newest first. Private keys and credentials are never returned.",
    responses: { 200: dataResponse("Push apps", z.array(PushAppSchema)) },
  }),
  async (c) => c.json({ data: await listApps(c.env, c.get("principal").teamId) }, 200),
);

pushRouter.openapi(
  route({
    method: "post",
    path: "/apps",
    operationId: "createPushApp",
    scope: "push:write",
    idempotent: true,
    summary: "Create a push app",
    description:
      "Creates an app with a VAPID key pair (ECDSA P-256). A key is generated for each of `vapid_public_key` / `vapid_private_key` that is absent: with neither, a new pair; with only the private key, the public key is derived from it; a public key alone is refused (no private key can be generated for it). Supplied keys must be base64url: the public key the raw 65-byte uncompressed point, the private key the 32-byte `d`, and they must belong together. The private key, `fcm_credentials` and `apns_credentials` are stored AES-256-GCM-encrypted and never returned.",
    request: {
      body: jsonBody(CreateAppSchema, { name: "Web app", settings: { default_icon: "https://example.com/icon.png", default_url: "https://example.com" } }),
    },
    responses: { 201: dataResponse("The app", PushAppSchema), ...invalid },
  }),
  async (c) => c.json({ data: await createApp(c.env, c.get("principal").teamId, c.req.valid("json")) }, 201),
);

pushRouter.openapi(
  route({
    method: "get",
    path: "/apps/{app_id}",
    operationId: "getPushApp",
    scope: "push:read",
    summary: "Get a push app",
    description:
      "Requires `push:read`. The app with its VAPID public key and subscriber count; the private key and the FCM and APNs credentials are never returned.",
    request: { params: AppIdParam },
    responses: { 200: dataResponse("The app", PushAppSchema), ...notFound("App") },
  }),
  async (c) => c.json({ data: await getApp(c.env, c.get("principal").teamId, c.req.valid("param").app_id) }, 200),
);

pushRouter.openapi(
  route({
    method: "patch",
    path: "/apps/{app_id}",
    operationId: "updatePushApp",
    scope: "push:write",
    summary: "Update a push app",
    description:
      "Only the given fields change. `settings` replaces the stored settings object. `fcm_credentials` / `apns_credentials` may be replaced (or cleared with null); VAPID keys cannot be changed.",
    request: { params: AppIdParam, body: jsonBody(UpdateAppSchema, { name: "Web app (production)" }) },
    responses: { 200: dataResponse("The app", PushAppSchema), ...notFound("App"), ...invalid },
  }),
  async (c) => c.json({ data: await updateApp(c.env, c.get("principal").teamId, c.req.valid("param").app_id, c.req.valid("json")) }, 200),
);

pushRouter.openapi(
  route({
    method: "delete",
    path: "/apps/{app_id}",
    operationId: "deletePushApp",
    scope: "push:write",
    summary: "Delete a push app",
    description: "Deletes the app with its subscribers, notifications and delivery results.",
    request: { params: AppIdParam },
    responses: { 204: { description: "Deleted" }, ...notFound("App") },
  }),
  async (c) => {
    await deleteApp(c.env, c.get("principal").teamId, c.req.valid("param").app_id);
    return c.body(null, 204);
  },
);

// Subscribers ---------------------------------------------------------------------------------

pushRouter.openapi(
  route({
    method: "post",
    path: "/apps/{app_id}/subscribers",
    operationId: "createPushSubscriber",
    scope: "push:write",
    strict: "push_subscribers",
    summary: "Register a subscriber",
    description:
      "Takes a browser `PushSubscription` as `subscription.toJSON()` gives it (`endpoint`, `keys.p256dh`, `keys.auth`, optional `expirationTime`) plus optional `tags` and `external_id`. The endpoint must be https and pass the SSRF guard. Registering an endpoint already known to the app updates that subscriber (201 when new, 200 when updated); omitted `tags` / `external_id` keep their stored values. Strict bucket (30 requests per 60 s per team).",
    request: {
      params: AppIdParam,
      body: jsonBody(SubscribeSchema, {
        endpoint: "https://push.example.com/send/abc123",
        keys: { p256dh: "BOHq2f1hbbox-ZLG10bOLf9IN6wIhXIG07NEFRx3PtbO_y9C8VrEQvOdV_Lt7F1BCukVCjiPVXHuF8u9tGHCFro", auth: "o3DwdUsf-_NAFRFI5xJmZQ" },
        tags: ["beta"],
      }),
    },
    responses: {
      201: dataResponse("New subscriber", SubscriberSchema),
      200: dataResponse("Existing subscriber updated", SubscriberSchema),
      ...notFound("App"),
      ...invalid,
    },
  }),
  async (c) => {
    const { subscriber, created } = await registerSubscriber(c.env, c.get("principal").teamId, c.req.valid("param").app_id, c.req.valid("json"));
    return created ? c.json({ data: subscriber }, 201) : c.json({ data: subscriber }, 200);
  },
);

pushRouter.openapi(
  route({
    method: "get",
    path: "/apps/{app_id}/subscribers",
    operationId: "listPushSubscribers",
    scope: "push:read",
    summary: "List subscribers",
    description: "Oldest first. Query: `page` (1-based), `per_page` (default 20, max 100), `tag`, `external_id`. Subscription keys are not returned.",
    request: { params: AppIdParam, query: ListSubscribersQuery },
    responses: {
      200: jsonResponse("Subscribers", z.object({ data: z.array(SubscriberSchema), pagination: PaginationSchema })),
      ...notFound("App"),
      ...invalid,
    },
  }),
  async (c) => c.json(await listSubscribers(c.env, c.get("principal").teamId, c.req.valid("param").app_id, c.req.valid("query")), 200),
);

pushRouter.openapi(
  route({
    method: "delete",
    path: "/apps/{app_id}/subscribers/{subscriber_id}",
    operationId: "deletePushSubscriber",
    scope: "push:write",
    summary: "Delete a subscriber",
    description: "Requires `push:write`. Removes one subscriber of the app; later notifications skip it. Another team's app or subscriber answers 404.",
    request: { params: SubscriberParams },
    responses: { 204: { description: "Deleted" }, ...notFound("App or subscriber") },
  }),
  async (c) => {
    const { app_id, subscriber_id } = c.req.valid("param");
    await deleteSubscriber(c.env, c.get("principal").teamId, app_id, subscriber_id);
    return c.body(null, 204);
  },
);

// Notifications -------------------------------------------------------------------------------

pushRouter.openapi(
  route({
    method: "post",
    path: "/apps/{app_id}/notifications",
    operationId: "sendPushNotification",
    scope: "push:write",
    idempotent: true,
    summary: "Send a notification",
    description:
      "Answers 202 at once; fan-out and sending run on a queue. Target: every subscriber (default), `subscriber_ids`, or `tags` (subscribers with any of them). `icon`, `url`, `ttl` and `urgency` default to the app's `default_icon`, `default_url`, `default_ttl` (86400) and `default_urgency` (`normal`). Each recipient consumes one unit of the `push` monthly quota when the notification is accepted (429 when the quota cannot cover them all). The payload the service worker receives is the JSON in `payload`, at most 3993 bytes.",
    request: {
      params: AppIdParam,
      body: jsonBody(SendSchema, { title: "Your order shipped", body: "It arrives on Thursday.", url: "https://example.com/orders/42" }),
    },
    responses: {
      202: dataResponse("Accepted", NotificationSchema),
      ...notFound("App"),
      ...invalid,
    },
  }),
  async (c) => {
    const principal = c.get("principal");
    return c.json({ data: await sendNotification(c.env, principal, c.req.valid("param").app_id, c.req.valid("json")) }, 202);
  },
);

pushRouter.openapi(
  route({
    method: "get",
    path: "/apps/{app_id}/notifications",
    operationId: "listPushNotifications",
    scope: "push:read",
    summary: "List notifications",
    description: "Newest first, with their counts. Query: `limit` (default 20, max 100).",
    request: { params: AppIdParam, query: ListNotificationsQuery },
    responses: { 200: dataResponse("Notifications", z.array(NotificationSchema)), ...notFound("App"), ...invalid },
  }),
  async (c) => c.json({ data: await listNotifications(c.env, c.get("principal").teamId, c.req.valid("param").app_id, c.req.valid("query").limit) }, 200),
);

pushRouter.openapi(
  route({
    method: "get",
    path: "/apps/{app_id}/notifications/{id}",
    operationId: "getPushNotification",
    scope: "push:read",
    summary: "Get a notification with its delivery results",
    description:
      "Counts of `queued` (not yet finished, including retrying), `delivered`, `failed` and `removed` (the push service answered 404/410 and the subscriber was deleted), and per-subscriber `results` in subscriber id order: `limit` (default 100, max 500), `cursor` (the `results_next_cursor` of the previous page), `status`.",
    request: { params: NotificationParams, query: NotificationQuery },
    responses: { 200: dataResponse("The notification", NotificationDetailSchema), ...notFound("App or notification"), ...invalid },
  }),
  async (c) => {
    const { app_id, id } = c.req.valid("param");
    return c.json({ data: await getNotification(c.env, c.get("principal").teamId, app_id, id, c.req.valid("query")) }, 200);
  },
);

// A path no route serves is authenticated like the routes before its 404 or 405.
pushRouter.use("*", ...route.unmatched());
