// Request and response schemas of the Forms API, its fixed limits and the public answers' shapes.
import { z } from "@hono/zod-openapi";

/** Fields taken per submission (declared or not); more answer 422 TOO_MANY_FIELDS. */
export const MAX_FIELDS = 50;
/** Forms per team (checked and written in one statement). */
export const MAX_FORMS_PER_TEAM = 100;
/** Largest body without files, and the text of a multipart body, in bytes; larger answers 413. */
export const MAX_TEXT_BYTES = 1024 * 1024;
/** The most `files.max_bytes` may be: 10 MB per submission, every file together. */
export const MAX_FILES_BYTES = 10 * 1024 * 1024;
export const MAX_ORIGINS = 20;
export const MAX_NOTIFY_EMAILS = 10;
export const RETENTION_DEFAULT_DAYS = 90;
export const RETENTION_MAX_DAYS = 365;
export const FIELD_TYPES = ["text", "email", "number", "url", "checkbox", "file"] as const;
export const SUBMISSION_STATUSES = ["inbox", "spam"] as const;
export type SubmissionStatus = (typeof SUBMISSION_STATUSES)[number];

/** The public error codes of `POST /f/:form_id` (422 unless noted). */
export const FIELD_CODES = [
  "REQUIRED_FIELD_MISSING",
  "TYPE_EMAIL",
  "TYPE_NUMBER",
  "TYPE_URL",
  "TOO_LONG",
  "TOO_MANY_FIELDS",
  "FILES_TOO_BIG",
  "FILES_NOT_ALLOWED",
] as const;
export type FieldCode = (typeof FIELD_CODES)[number];

const name = z.string().trim().min(1).max(200);
/** A field name a visitor's form can carry: not starting with `_` (those are instructions). */
const fieldName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[^_\s][^\u0000-\u001f]*$/, "must not start with _ or a space, nor hold control characters");

const FieldDefinition = z.strictObject({
  name: fieldName,
  type: z.enum(FIELD_TYPES),
  required: z.boolean().default(false),
  max_length: z.number().int().min(1).max(MAX_TEXT_BYTES).nullable().default(null),
});

const fieldList = z
  .array(FieldDefinition)
  .max(MAX_FIELDS)
  .refine((list) => new Set(list.map((f) => f.name)).size === list.length, "field names must be unique")
  .nullable()
  .openapi({ description: `Declared fields (at most ${MAX_FIELDS}); null or absent: any fields are taken, up to ${MAX_FIELDS}.` });

/** `scheme://host[:port]` exactly, as a browser sends it in `Origin`. */
const origin = z
  .string()
  .max(300)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "https:" || url.protocol === "http:") && url.origin === value;
    } catch {
      return false;
    }
  }, "must be an origin such as https://example.com (scheme, host and port only)");

/** Where a browser is sent after a post: an absolute http(s) address. */
const redirectUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "https:" || url.protocol === "http:") && !url.username && !url.password;
    } catch {
      return false;
    }
  }, "must be an absolute http or https URL");

const files = z.strictObject({
  enabled: z.boolean().default(false),
  max_bytes: z.number().int().min(1).max(MAX_FILES_BYTES).default(MAX_FILES_BYTES),
});

const retentionDays = z.number().int().min(1).max(RETENTION_MAX_DAYS);

export const CreateFormBody = z
  .strictObject({
    name,
    fields: fieldList.optional(),
    allowed_origins: z.array(origin).max(MAX_ORIGINS).default([]),
    redirect_url: redirectUrl.nullable().default(null),
    notify_emails: z.array(z.email().max(320)).max(MAX_NOTIFY_EMAILS).default([]),
    webhook_url: z.string().max(2048).nullable().default(null),
    files: files.default({ enabled: false, max_bytes: MAX_FILES_BYTES }),
    retention_days: retentionDays.default(RETENTION_DEFAULT_DAYS),
    enabled: z.boolean().default(true),
  })
  .openapi("CreateForm");
export type CreateFormInput = z.infer<typeof CreateFormBody>;

export const PatchFormBody = z
  .strictObject({
    name: name.optional(),
    fields: fieldList.optional(),
    allowed_origins: z.array(origin).max(MAX_ORIGINS).optional(),
    redirect_url: redirectUrl.nullable().optional(),
    notify_emails: z.array(z.email().max(320)).max(MAX_NOTIFY_EMAILS).optional(),
    webhook_url: z.string().max(2048).nullable().optional(),
    files: z.strictObject({ enabled: z.boolean().optional(), max_bytes: z.number().int().min(1).max(MAX_FILES_BYTES).optional() }).optional(),
    retention_days: retentionDays.optional(),
    enabled: z.boolean().optional(),
  })
  .openapi("PatchForm");
export type PatchFormInput = z.infer<typeof PatchFormBody>;

export const FormSchema = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    endpoint: z.string().openapi({ description: "Where a form posts: `{APP_URL}/f/<id>`." }),
    fields: z.array(FieldDefinition).nullable(),
    allowed_origins: z.array(z.string()),
    redirect_url: z.string().nullable(),
    notify_emails: z.array(z.string()),
    webhook_url: z.string().nullable(),
    files: z.object({ enabled: z.boolean(), max_bytes: z.number().int() }),
    retention_days: z.number().int(),
    enabled: z.boolean(),
    submission_count: z.number().int().openapi({ description: "Submissions in the inbox (spam not counted)." }),
    spam_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Form");

export const CreatedFormSchema = FormSchema.extend({
  webhook_secret: z.string().nullable().openapi({ description: "The `whsec_` secret signing webhook deliveries: shown only here (null without a webhook)." }),
}).openapi("CreatedForm");

export const FormParam = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });
export const SubmissionParam = FormParam.extend({ sid: z.string().openapi({ param: { name: "sid", in: "path" } }) });
export const FileParam = SubmissionParam.extend({ file_id: z.string().openapi({ param: { name: "file_id", in: "path" } }) });

export const SubmissionListQuery = z.object({
  status: z.enum(SUBMISSION_STATUSES).default("inbox"),
  cursor: z.string().max(200).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(25),
});

export const FileSchema = z
  .object({ id: z.string(), field: z.string(), name: z.string(), content_type: z.string(), size: z.number().int() })
  .openapi("FormFile");

export const SubmissionSchema = z
  .object({
    id: z.string(),
    form_id: z.string(),
    status: z.enum(SUBMISSION_STATUSES),
    fields: z.record(z.string(), z.union([z.string(), z.array(z.string())])),
    files: z.array(FileSchema),
    subject: z.string().nullable(),
    reply_to: z.string().nullable(),
    origin: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("FormSubmission");

export const SubmissionPageSchema = z.object({
  data: z.array(SubmissionSchema),
  pagination: z.object({ next_cursor: z.string().nullable(), has_more: z.boolean() }),
});

export const AttemptSchema = z.object({
  number: z.number().int(),
  attempted_at: z.string(),
  status_code: z.number().int().nullable(),
  duration_ms: z.number().int().nullable(),
  error: z.string().nullable(),
  response_body: z.string().nullable(),
});

export const DeliverySchema = z
  .object({
    id: z.string(),
    submission_id: z.string(),
    status: z.enum(["pending", "delivered", "failed"]),
    trigger: z.enum(["submission", "resend"]),
    next_attempt_at: z.string().nullable(),
    created_at: z.string(),
    attempts: z.array(AttemptSchema),
  })
  .openapi("FormWebhookDelivery");

/** The authenticated API's error body: `{error}`, and `details` on validation failures. */
export const FormErrorSchema = z.object({ error: z.string(), details: z.record(z.string(), z.array(z.string())).optional() }).openapi("FormError");

/** The public endpoint's answers. */
export const PublicOkSchema = z.object({ ok: z.literal(true), id: z.string() }).openapi("FormPostAccepted");
export const PublicFieldErrorSchema = z.object({ field: z.string().nullable(), code: z.string(), message: z.string() });
export const PublicErrorSchema = z
  .object({ ok: z.literal(false), errors: z.array(PublicFieldErrorSchema).optional(), error: z.string().optional(), code: z.string().optional() })
  .openapi("FormPostError");
