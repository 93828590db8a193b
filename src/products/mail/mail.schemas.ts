// Request and response schemas of the mail product (POST/GET /emails, POST /emails/batch and the
// mail event webhooks), for the OpenAPI document and for the handlers' validation.
import { z } from "@hono/zod-openapi";
import { MAIL_STATUSES, MAIL_WEBHOOK_EVENTS } from "../../db/schema";
import { STREAMS } from "./mail.policy";
import { EmailFields } from "./mail.validation";

export { STREAMS, type Stream } from "./mail.policy";

/** Most emails in one POST /emails/batch. */
export const MAX_BATCH = 100;

const ADDRESS_LIST = { description: "One address or an array of addresses; `Name <user@example.com>` or `user@example.com`." };

/**
 * The body of POST /emails (also one item of POST /emails/batch): the validator's own fields
 * (mail.validation.ts), with the document's examples, and `headers`, `stream` and `tags` as a caller
 * should send them (the validator passes other header values and streams on to the policy:
 * forbidden_header, invalid_stream; it takes any array of tags to answer one message for them).
 * The handlers read and parse the body themselves (400 for malformed JSON and missing required
 * fields, 422 for bad fields, at most 10 MiB read as it arrives), so it is documented by reference.
 */
export const SendEmailBody = EmailFields.extend({
  from: EmailFields.shape.from.openapi({ example: "Acme <hello@acme.dev>" }),
  to: EmailFields.shape.to.openapi(ADDRESS_LIST),
  subject: EmailFields.shape.subject.openapi({ example: "Welcome" }),
  cc: EmailFields.shape.cc.openapi(ADDRESS_LIST),
  bcc: EmailFields.shape.bcc.openapi(ADDRESS_LIST),
  reply_to: EmailFields.shape.reply_to.openapi(ADDRESS_LIST),
  headers: z
    .record(z.string(), z.string())
    .optional()
    .openapi({ description: "Custom headers (string values); reserved names are refused with `forbidden_header`." }),
  stream: z.enum(STREAMS).optional().openapi({ description: "Required when the key allows more than one stream." }),
  tags: z.array(z.string()).optional().openapi({ description: "Up to 10 labels of 1–64 characters `[A-Za-z0-9_-]`." }),
}).openapi("SendEmail");

export const SendBatchBody = z.object({ emails: z.array(SendEmailBody) }).openapi("SendEmailBatch");

export const HistoryEntry = z.object({ status: z.enum(MAIL_STATUSES), at: z.string(), detail: z.string().nullable() }).openapi("EmailStatusChange");

export const EmailSchema = z
  .object({
    id: z.string().uuid(),
    from: z.string(),
    to: z.array(z.string()),
    cc: z.array(z.string()),
    bcc: z.array(z.string()),
    reply_to: z.array(z.string()),
    subject: z.string(),
    html: z.string().nullable(),
    text: z.string().nullable(),
    headers: z.record(z.string(), z.string()),
    tags: z.array(z.string()),
    stream: z.enum(STREAMS),
    sandbox: z.boolean(),
    status: z.enum(MAIL_STATUSES),
    attempts: z.number().int(),
    last_error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    history: z.array(HistoryEntry).optional().openapi({ description: "Every status reached, oldest first (single-message answers)." }),
  })
  .openapi("Email");

export const BatchItemFailure = z.object({ status: z.literal(422), errors: z.record(z.string(), z.array(z.string())) }).openapi("EmailBatchItemFailure");

export const ListEmailsQuery = z.object({
  status: z.enum(MAIL_STATUSES).optional(),
  stream: z.enum(STREAMS).optional(),
  recipient: z.string().trim().max(320).optional().openapi({ description: "An address among to, cc or bcc (case-insensitive)." }),
  since: z.string().datetime({ offset: true }).optional().openapi({ description: "Created at or after (ISO 8601)." }),
  until: z.string().datetime({ offset: true }).optional().openapi({ description: "Created before (ISO 8601)." }),
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  per_page: z.coerce.number().int().min(1).max(100).default(20),
});

export const PaginationSchema = z
  .object({ page: z.number().int(), per_page: z.number().int(), total: z.number().int(), total_pages: z.number().int() })
  .openapi("EmailPagination");

export const IdParam = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" }, format: "uuid" }) });

export const CreateWebhookBody = z
  .strictObject({
    url: z.string().max(2048),
    events: z.array(z.enum(MAIL_WEBHOOK_EVENTS)).min(1).max(MAIL_WEBHOOK_EVENTS.length),
  })
  .openapi("CreateMailWebhook");

export const MailWebhookSchema = z
  .object({ id: z.string().uuid(), url: z.string(), events: z.array(z.enum(MAIL_WEBHOOK_EVENTS)), created_at: z.string() })
  .openapi("MailWebhook");

export const CreatedMailWebhookSchema = MailWebhookSchema.extend({
  secret: z.string().openapi({ description: "The `whsec_...` signing secret. Shown only in this answer." }),
}).openapi("CreatedMailWebhook");

export const WebhookTestResult = z
  .object({
    success: z.literal(true),
    webhook_id: z.string().uuid(),
    message_id: z.string(),
    status_code: z.number().int(),
    duration_ms: z.number().int(),
  })
  .openapi("MailWebhookTestResult");

export const ErrorBody = z.object({ error: z.string() }).openapi("MailError");
export const PolicyErrorBody = z.object({ error: z.string(), code: z.string() }).openapi("MailPolicyError");
export const ValidationErrorBody = z
  .object({ error: z.literal("Validation failed"), details: z.record(z.string(), z.array(z.string())) })
  .openapi("MailValidationError");
export const GatewayErrorBody = z.object({ error: z.object({ message: z.string(), detail: z.string() }) }).openapi("MailWebhookTestError");
