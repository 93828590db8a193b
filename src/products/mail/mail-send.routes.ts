// Mail routes of sending: one email (POST /emails) and a batch (POST /emails/batch). They read and
// parse their body themselves (declared `body: { own: MAX_REQUEST_BYTES }`: at most 10 MiB;
// malformed or non-object JSON answers 400), then the send service (mail-send.service.ts)
// validates it with zod and its hook (400 for a missing required field, 422 for a bad one),
// applies the policy, the verified sender and the caps, stores and queues. They are `.openapi` routes like the others (route and handler in one call) whose body
// is documented by reference, so no automatic validator stands in front of the service's.
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { dataResponse, jsonResponse } from "../../platform/openapi";
import { createRouter } from "../../platform/router";
import { backgroundOf } from "../../platform/request-context";
import { MAX_REQUEST_BYTES, parseJsonObject, readBody } from "./mail.policy";
import { BatchItemFailure, EmailSchema, ErrorBody, PolicyErrorBody, SendBatchBody, SendEmailBody, ValidationErrorBody } from "./mail.schemas";
import { emailView } from "./mail.service";
import { sendEmail, sendEmailBatch, type SendContext } from "./mail-send.service";
import { route } from "./mail.openapi";

function sendContext(c: Context<AppEnv>): SendContext {
  return { env: c.env, principal: c.get("principal"), background: backgroundOf(c) };
}

const sendErrors = {
  400: jsonResponse("Malformed or non-object JSON, or a missing `from`, `to` or `subject`", ErrorBody),
  403: jsonResponse("Insufficient scope (`{error}`), or a policy refusal (`{error, code}`)", PolicyErrorBody),
  422: jsonResponse("Validation failed (`{error, details}`) or a policy refusal (`{error, code}`)", ValidationErrorBody),
  429: jsonResponse("Rate limit (`{error, retry_after}`), monthly quota (`{error}`) or sandbox cap (`{error, code}`)", PolicyErrorBody),
};

const policyDescription =
  "Rules are evaluated in a fixed order and the first broken one answers: 400 (JSON, required fields), 422 field validation, then override_forbidden, forbidden_header, invalid_stream, stream_required, stream_not_allowed, sandbox_disabled, sandbox_domain_forbidden (live keys), sandbox_stream_forbidden, sandbox sender domain (422 validation on `from`), sandbox_extra_recipients, recipient_not_allowed, hourly_cap_exceeded, daily_cap_exceeded, then the monthly `mail` quota.";

export const mailSendRouter = createRouter();

/**
 * The request body of a send route, in the document only: a reference to the registered schema,
 * so @hono/zod-openapi adds no validator of its own. The service validates with the same fields
 * (SendEmailBody is built from its EmailFields) through a hook, because the spec answers 400 for
 * malformed JSON and missing required fields but 422 for bad fields, and the body is read at most
 * 10 MiB as it arrives, which the automatic validator cannot do.
 */
/** The bodies the reference shows and sends: they succeed as sent with `npm start`'s demo key (example.com is verified for its team). */
const EXAMPLES = {
  SendEmail: {
    from: "Acme <app@example.com>",
    to: "ada@example.com",
    subject: "Welcome to Acme",
    text: "Hello Ada, your account is ready.",
    stream: "transactional",
  },
  SendEmailBatch: {
    emails: [
      { from: "Acme <app@example.com>", to: "ada@example.com", subject: "Welcome to Acme", text: "Hello Ada, your account is ready.", stream: "transactional" },
      { from: "app@example.com", to: ["grace@example.com"], subject: "Your receipt", html: "<p>Thanks for your order.</p>", stream: "transactional" },
    ],
  },
};

function documentedBody(name: "SendEmail" | "SendEmailBatch") {
  return { required: true, content: { "application/json": { schema: { $ref: `#/components/schemas/${name}` }, example: EXAMPLES[name] } } };
}
mailSendRouter.openAPIRegistry.register("SendEmail", SendEmailBody);
mailSendRouter.openAPIRegistry.register("SendEmailBatch", SendBatchBody);

const sendRoute = route({
  method: "post",
  path: "/",
  operationId: "sendEmail",
  summary: "Send an email",
  description: `Stores the message as \`queued\` and delivers it through the configured transport. Consumes one unit of the \`mail\` quota. ${policyDescription}`,
  scope: "mail:send",
  idempotent: true,
  body: { own: MAX_REQUEST_BYTES },
  request: { body: documentedBody("SendEmail") },
  responses: { 201: dataResponse("The stored message (status `queued`)", EmailSchema), ...sendErrors },
});
mailSendRouter.openapi(sendRoute, async (c) => {
  const row = await sendEmail(sendContext(c), parseJsonObject(await readBody(c.req.raw)));
  // Built from the row as stored, so it still says `queued` while its first attempt runs.
  return c.json({ data: emailView(row, [{ status: "queued", detail: null, createdAt: row.createdAt }]) }, 201);
});

const batchRoute = route({
  method: "post",
  path: "/batch",
  operationId: "sendEmailBatch",
  summary: "Send up to 100 emails in one request",
  description:
    "`{emails: [...]}`, 1 to 100 items of the POST /emails body. One request for the rate limit; one `mail` quota unit per created email. " +
    "A missing or non-array `emails` answers 400; an item that is not an object or lacks `from`, `to` or `subject` answers 422 `{error}` naming its 0-indexed position. " +
    "Items that fail field validation are skipped and reported as `{status: 422, errors}` in a 207 answer (all items invalid: 422 with `details` keyed `emails.<index>.<field>`). " +
    "An item breaking a policy rule refuses the whole batch with that policy error, its message prefixed `Item <n>: ` (1-indexed); nothing is stored. Sandbox caps count the valid items in order.",
  scope: "mail:send",
  idempotent: true,
  body: { own: MAX_REQUEST_BYTES },
  request: { body: documentedBody("SendEmailBatch") },
  responses: {
    201: dataResponse("Every email created, in request order", z.array(EmailSchema)),
    207: dataResponse(
      "Some items failed validation: created emails and `{status: 422, errors}` in request order",
      z.array(z.union([EmailSchema, BatchItemFailure])),
    ),
    ...sendErrors,
  },
});
mailSendRouter.openapi(batchRoute, async (c) => {
  const { rows, items } = await sendEmailBatch(sendContext(c), parseJsonObject(await readBody(c.req.raw)));
  // Every item created: 201 with the emails; some skipped: 207 with each item's outcome in order.
  if (!items) return c.json({ data: rows.map((row) => emailView(row)) }, 201);
  return c.json({ data: items.map((item) => ("row" in item ? emailView(item.row) : { status: 422 as const, errors: item.errors })) }, 207);
});
