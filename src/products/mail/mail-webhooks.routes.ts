// Mail event webhooks under /api/v1/webhooks, next to the relay's /webhooks/sources: create, list,
// delete and the test delivery. No router-wide middleware: auth and scopes sit on each route, so
// nothing here runs for a relay path, and ids must be UUIDs, so `/webhooks/sources` is never taken
// for a mail webhook id. Errors render in the mail shapes (mail.routes.ts registers them).
import { z } from "@hono/zod-openapi";
import { dataResponse, jsonBody, jsonResponse } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { mailErrorFormat } from "./mail.errors";
import { uuidOr404 } from "../../platform/tenancy";
import {
  CreatedMailWebhookSchema,
  CreateWebhookBody,
  ErrorBody,
  GatewayErrorBody,
  IdParam,
  MailWebhookSchema,
  ValidationErrorBody,
  WebhookTestResult,
} from "./mail.schemas";
import { createWebhook, deleteWebhook, listWebhooks, testWebhook, webhookNotFound, webhookView } from "./mail-webhooks.service";
import { webhookRoute } from "./mail.openapi";

export const mailWebhooksRouter = createRouter({ errorFormat: mailErrorFormat, wrongMethodIsNotFound: true });
const webhookErrors = { 404: jsonResponse("Not found", ErrorBody), 422: jsonResponse("Validation failed", ValidationErrorBody) };

mailWebhooksRouter.openapi(
  webhookRoute({
    method: "post",
    path: "/",
    operationId: "createMailWebhook",
    summary: "Create a mail event webhook",
    description:
      "Events: `email.sent`, `email.delivered`, `email.bounced`, `email.complained`, `email.failed`. Deliveries are signed with Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) using the returned `secret`, shown only here. At most 10 per team. Requires `mail:send`.",
    scope: "mail:send",
    idempotent: true,
    request: { body: jsonBody(CreateWebhookBody, { url: "https://hooks.example.com/mail", events: ["email.delivered", "email.bounced"] }) },
    responses: {
      201: dataResponse("The webhook with its signing secret", CreatedMailWebhookSchema),
      400: jsonResponse("Malformed JSON", ErrorBody),
      ...webhookErrors,
    },
  }),
  async (c) => {
    const { row, secret } = await createWebhook(c.env, c.get("principal").teamId, c.req.valid("json"));
    return c.json({ data: { ...webhookView(row), secret } }, 201);
  },
);

mailWebhooksRouter.openapi(
  webhookRoute({
    method: "get",
    path: "/",
    operationId: "listMailWebhooks",
    summary: "List mail event webhooks",
    description: "Requires `mail:read` or `mail:send`. Secrets are never returned here.",
    scope: ["mail:read", "mail:send"],
    responses: { 200: dataResponse("The team's mail webhooks", z.array(MailWebhookSchema)) },
  }),
  async (c) => c.json({ data: (await listWebhooks(c.env, c.get("principal").teamId)).map(webhookView) }, 200),
);

mailWebhooksRouter.openapi(
  webhookRoute({
    method: "delete",
    path: "/{id}",
    operationId: "deleteMailWebhook",
    summary: "Delete a mail event webhook",
    description: "Requires `mail:send`. Pending deliveries to it are dropped.",
    scope: "mail:send",
    request: { params: IdParam },
    responses: { 204: { description: "Deleted" }, ...webhookErrors },
  }),
  async (c) => {
    await deleteWebhook(c.env, c.get("principal").teamId, uuidOr404(c.req.valid("param").id, webhookNotFound));
    return c.body(null, 204);
  },
);

mailWebhooksRouter.openapi(
  webhookRoute({
    method: "post",
    path: "/{id}/test",
    operationId: "testMailWebhook",
    summary: "Send a test delivery",
    description:
      "Posts a signed `email.test` event to the webhook now. 200 `{data: {success: true, webhook_id, message_id, status_code, duration_ms}}` when the endpoint answers 2xx; 502 `{error: {message, detail}}` when it cannot be reached (network error, timeout, refused address) or answers another status. Requires `mail:send`.",
    scope: "mail:send",
    request: { params: IdParam },
    responses: {
      200: dataResponse("The endpoint accepted the test delivery", WebhookTestResult),
      ...webhookErrors,
      502: jsonResponse("The endpoint could not be reached", GatewayErrorBody),
    },
  }),
  async (c) => {
    const result = await testWebhook(c.env, c.get("principal").teamId, uuidOr404(c.req.valid("param").id, webhookNotFound));
    return c.json({ data: result }, 200);
  },
);
