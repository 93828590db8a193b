// Request and response schemas of the Logs product: projects, the ingest entry, the entry query and
// alerts. The ingest entry schema carries the specification's exact messages, so the single and
// the batch endpoint judge an entry the same way.
import { z } from "@hono/zod-openapi";
import { ALERT_CHANNELS, LOG_LEVELS } from "../../db/schema/logs";

export const LEVEL_MESSAGE = `level must be one of: ${LOG_LEVELS.join(", ")}`;
export const MESSAGE_REQUIRED = "message is required";

/** Limits of one entry (the spec is silent; chosen so an entry always fits a D1 row). */
export const ENTRY_LIMITS = { message: 32_768, name: 128, id: 128, metadataBytes: 32_768 } as const;

const optionalName = (field: string, max: number) =>
  z
    .string({ error: `${field} must be a string` })
    .min(1, `${field} must not be empty`)
    .max(max, `${field} must be at most ${max} characters`)
    .nullish();

export const LogEntryInput = z
  .object({
    message: z
      .string({ error: MESSAGE_REQUIRED })
      .refine((s) => s.trim().length > 0, MESSAGE_REQUIRED)
      .refine((s) => s.length <= ENTRY_LIMITS.message, `message must be at most ${ENTRY_LIMITS.message} characters`),
    level: z.enum(LOG_LEVELS, { error: LEVEL_MESSAGE }).nullish(),
    stream: optionalName("stream", ENTRY_LIMITS.name),
    service: optionalName("service", ENTRY_LIMITS.name),
    trace_id: optionalName("trace_id", ENTRY_LIMITS.id),
    span_id: optionalName("span_id", ENTRY_LIMITS.id),
    metadata: z.record(z.string(), z.unknown(), { error: "metadata must be an object" }).nullish(),
  })
  .openapi("LogEntryInput", {
    description: "One log entry. `level` defaults to `info`; `stream` is created on first use.",
    example: { message: "user signed in", level: "info", stream: "auth", service: "api", trace_id: "4bf92f35", metadata: { user_id: 42 } },
  });
export type LogEntryInput = z.infer<typeof LogEntryInput>;

export const IngestOk = z.object({ ok: z.literal(true) }).openapi("LogIngestOk");
export const BatchIngestOk = z
  .object({ ok: z.literal(true), count: z.number().int(), dropped: z.number().int() })
  .openapi("LogBatchIngestOk");
export const IngestError = z.object({ error: z.string() }).openapi("LogIngestError");

// Projects

export const DEFAULT_DAILY_LIMIT_MB = 100;
export const DEFAULT_RETENTION_DAYS = 7;

export const CreateProjectBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    daily_limit_mb: z.number().int().min(1).max(1_048_576).default(DEFAULT_DAILY_LIMIT_MB).openapi({ description: `Default ${DEFAULT_DAILY_LIMIT_MB}` }),
    retention_days: z.number().int().min(1).max(365).default(DEFAULT_RETENTION_DAYS).openapi({ description: `Default ${DEFAULT_RETENTION_DAYS}` }),
  })
  .openapi("CreateLogProject");

export const ProjectSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    daily_limit_mb: z.number().int(),
    retention_days: z.number().int(),
    ingest_token_prefix: z.string().openapi({ description: "First characters of the current token, to tell tokens apart" }),
    stream_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("LogProject");

export const ProjectWithToken = ProjectSchema.extend({
  ingest_token: z.string().openapi({ description: "Plaintext ingest token: returned only here" }),
}).openapi("LogProjectWithToken");

export const StreamSchema = z.object({ name: z.string(), created_at: z.string() }).openapi("LogStream");

export const IdParam = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });

export const StreamsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(10_000).default(1_000),
  after: z.string().max(ENTRY_LIMITS.name).optional().openapi({ description: "Return names after this one (the last name of the previous page)" }),
});

// Entries

export const EntriesQuery = z.object({
  level: z.enum(LOG_LEVELS).optional(),
  stream: z.string().min(1).max(ENTRY_LIMITS.name).optional(),
  service: z.string().min(1).max(ENTRY_LIMITS.name).optional(),
  trace_id: z.string().min(1).max(ENTRY_LIMITS.id).optional(),
  since: z.iso.datetime({ offset: true }).optional().openapi({ description: "Inclusive lower bound (ISO 8601)" }),
  until: z.iso.datetime({ offset: true }).optional().openapi({ description: "Exclusive upper bound (ISO 8601)" }),
  q: z
    .string()
    .min(1)
    .max(200)
    // SQLite reads a pattern only up to a NUL, so a query holding one could never mean what it says.
    .refine((q) => !q.includes("\u0000"), "must not contain NUL characters")
    .optional()
    .openapi({ description: "Case-insensitive substring of `message` (3+ characters use the full-text index)" }),
  limit: z.coerce.number().int().min(1).max(1_000).default(100),
  cursor: z.string().max(200).optional().openapi({ description: "`pagination.next_cursor` of the previous page" }),
});
export type EntriesQuery = z.infer<typeof EntriesQuery>;

export const EntrySchema = z
  .object({
    id: z.string(),
    project_id: z.string(),
    stream: z.string().nullable(),
    level: z.enum(LOG_LEVELS),
    message: z.string(),
    service: z.string().nullable(),
    trace_id: z.string().nullable(),
    span_id: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    created_at: z.string(),
  })
  .openapi("LogEntry");

export const EntriesPage = z
  .object({
    data: z.array(EntrySchema),
    pagination: z.object({ limit: z.number().int(), next_cursor: z.string().nullable() }),
  })
  .openapi("LogEntriesPage");

// Alerts

const channelList = z
  .array(z.enum(ALERT_CHANNELS))
  .min(1)
  .max(2)
  .refine((list) => new Set(list).size === list.length, "must not repeat a channel");

const alertFields = {
  name: z.string().trim().min(1).max(200),
  level: z.enum(LOG_LEVELS),
  threshold: z.number().int().min(1).max(1_000_000),
  window_minutes: z.number().int().min(1).max(1_440),
  channels: channelList,
  notify_email: z.string().email().max(320).nullable(),
  notify_webhook: z.string().url().max(2_048).nullable(),
  enabled: z.boolean(),
};

export const CreateAlertBody = z
  .object({
    ...alertFields,
    channels: alertFields.channels.optional(),
    notify_email: alertFields.notify_email.optional(),
    notify_webhook: alertFields.notify_webhook.optional(),
    enabled: alertFields.enabled.default(true),
  })
  .openapi("CreateLogAlert");
export type CreateAlertBody = z.infer<typeof CreateAlertBody>;

export const UpdateAlertBody = z
  .object({
    name: alertFields.name.optional(),
    level: alertFields.level.optional(),
    threshold: alertFields.threshold.optional(),
    window_minutes: alertFields.window_minutes.optional(),
    channels: alertFields.channels.optional(),
    notify_email: alertFields.notify_email.optional(),
    notify_webhook: alertFields.notify_webhook.optional(),
    enabled: alertFields.enabled.optional(),
  })
  .openapi("UpdateLogAlert");
export type UpdateAlertBody = z.infer<typeof UpdateAlertBody>;

export const AlertSchema = z
  .object({
    id: z.string(),
    project_id: z.string(),
    name: z.string(),
    level: z.enum(LOG_LEVELS),
    threshold: z.number().int(),
    window_minutes: z.number().int(),
    channels: z.array(z.enum(ALERT_CHANNELS)),
    notify_email: z.string().nullable(),
    notify_webhook: z.string().nullable(),
    enabled: z.boolean(),
    last_triggered_at: z.string().nullable(),
    inserted_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("LogAlert");

export const LogsError = z
  .object({ error: z.string(), details: z.record(z.string(), z.array(z.string())).optional() })
  .openapi("LogsError");
