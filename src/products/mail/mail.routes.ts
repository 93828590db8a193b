// HTTP routes of the mail product: the emails router (sending, mounted from mail-send.routes.ts,
// then listing and reading emails with their history) and the mail event webhooks router
// (mail-webhooks.routes.ts), which src/app.ts mounts under /emails and /webhooks. Errors of both,
// and of the sending domains, render in the mail shapes (README "Errors").
import { mailErrorFormat } from "./mail.errors";
import { z } from "@hono/zod-openapi";
import { dataOf, dataResponse, jsonResponse } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { uuidOr404 } from "../../platform/tenancy";
import { EmailSchema, ErrorBody, IdParam, ListEmailsQuery, PaginationSchema, ValidationErrorBody } from "./mail.schemas";
import { emailNotFound, emailView, getEmail, listEmails } from "./mail.service";
import { mailSendRouter } from "./mail-send.routes";
import { route } from "./mail.openapi";

export { mailWebhooksRouter } from "./mail-webhooks.routes";

export const emailsRouter = createRouter({ errorFormat: mailErrorFormat, wrongMethodIsNotFound: true });
// The send routes first: their operations come first in the OpenAPI document.
emailsRouter.route("/", mailSendRouter);

emailsRouter.openapi(
  route({
    method: "get",
    path: "/",
    operationId: "listEmails",
    summary: "List emails",
    description:
      "The team's emails, newest first. Filters: `status`, `stream`, `recipient` (to, cc or bcc), `since` and `until` (ISO 8601 on `created_at`). Pages: `page` (from 1), `per_page` (default 20, max 100). Requires `mail:read` (a send-only key cannot read mail).",
    scope: "mail:read",
    request: { query: ListEmailsQuery },
    responses: {
      200: jsonResponse("A page of emails", dataOf(z.array(EmailSchema)).extend({ pagination: PaginationSchema })),
      422: jsonResponse("Invalid filter", ValidationErrorBody),
    },
  }),
  async (c) => {
    const { rows, pagination } = await listEmails(c.env, c.get("principal").teamId, c.req.valid("query"));
    return c.json({ data: rows.map((row) => emailView(row)), pagination }, 200);
  },
);

emailsRouter.openapi(
  route({
    method: "get",
    path: "/{id}",
    operationId: "getEmail",
    summary: "Get an email with its status history",
    description:
      "`history` lists every status reached (queued, sent, delivered, bounced, complained, failed), oldest first. Requires `mail:read` (a send-only key cannot read mail).",
    scope: "mail:read",
    request: { params: IdParam },
    responses: { 200: dataResponse("The email", EmailSchema), 404: jsonResponse("Not found", ErrorBody) },
  }),
  async (c) => {
    const id = uuidOr404(c.req.valid("param").id, emailNotFound);
    const { row, history } = await getEmail(c.env, c.get("principal").teamId, id);
    return c.json({ data: emailView(row, history) }, 200);
  },
);
