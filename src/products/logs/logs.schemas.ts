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

/** The sender's time of an entry: `timestamp`, with `dt` and `time` as aliases, in this order of precedence. */
export const TIMESTAMP_FIELDS = ["timestamp", "dt", "time"] as const;
export type TimestampField = (typeof TIMESTAMP_FIELDS)[number];
/** How far the sender's time may be from the time of receipt (README "Entry time"). */
export const TIMESTAMP_WINDOW = { pastMs: 7 * 86_400_000, futureMs: 3_600_000 } as const;
export const timestampFormatMessage = (field: TimestampField) =>
  `${field} must be an ISO 8601 date-time with a time zone (e.g. 2026-01-01T10:00:00.000Z) or epoch milliseconds`;

// Date, `T` (or a space, as RFC 3339 allows), hours and minutes, optional seconds with any number of
// fraction digits (Vector sends nanoseconds), and a zone: `Z` or ±hh:mm / ±hhmm. No zone, no guess.
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))$/;

/**
 * Milliseconds since the epoch of a sender's time: an ISO 8601 date-time with a zone, or a finite
 * number of epoch milliseconds (a fraction is cut). Null when it is neither, or names no real
 * instant (2026-02-30, 24:00, a zone past ±23:59). Date.parse alone would roll 02-30 to 03-02.
 */
export function timestampMs(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) && Math.abs(value) <= 8.64e15 ? Math.floor(value) : null;
  if (typeof value !== "string" || value.length > 40) return null;
  const m = ISO_DATE_TIME.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? "0"].map(Number);
  const ms = Number((m[7] ?? "").padEnd(3, "0").slice(0, 3));
  // Date.UTC maps years 0–99 to 1900–1999: no log line is that old, so such a year is no instant here.
  if (year < 1000 || month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return null;
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  if (new Date(utc).getUTCDate() !== day || day < 1) return null;
  if (m[8]) return utc;
  const offsetHours = Number(m[10]);
  const offsetMinutes = Number(m[11]);
  if (offsetHours > 23 || offsetMinutes > 59) return null;
  const offset = (offsetHours * 60 + offsetMinutes) * 60_000;
  return m[9] === "+" ? utc - offset : utc + offset;
}

const timestampField = (field: TimestampField) =>
  z
    .union(
      [
        z.string().refine((s) => timestampMs(s) !== null, timestampFormatMessage(field)),
        // A number past the range of a date (±8.64e15 ms) is no instant: the plain check refuses it too.
        z.number().refine((n) => timestampMs(n) !== null, timestampFormatMessage(field)),
      ],
      { error: timestampFormatMessage(field) },
    )
    .nullish()
    .openapi({
      description: field === "timestamp" ? "The entry's time: ISO 8601 with a zone, or epoch ms. Default: the time of receipt" : "Alias of `timestamp`",
    });

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
    timestamp: timestampField("timestamp"),
    dt: timestampField("dt"),
    time: timestampField("time"),
  })
  .openapi("LogEntryInput", {
    description:
      "One log entry. `level` defaults to `info`; `stream` is created on first use. `timestamp` (or its aliases `dt`, then `time`) is the " +
      "sender's time, at most 7 days before and 1 hour after receipt; default the time of receipt. Any other top-level field is kept in " +
      "`metadata` (an explicit `metadata` key wins a clash; the merged object must stay within 32,768 bytes).",
    example: {
      message: "user signed in",
      level: "info",
      stream: "auth",
      service: "api",
      trace_id: "4bf92f35",
      timestamp: "2026-01-01T10:00:00.000Z",
      metadata: { user_id: 42 },
    },
  });
export type LogEntryInput = z.infer<typeof LogEntryInput>;

export const IngestOk = z.object({ ok: z.literal(true) }).openapi("LogIngestOk");
export const BatchIngestOk = z.object({ ok: z.literal(true), count: z.number().int(), dropped: z.number().int() }).openapi("LogBatchIngestOk");
export const IngestError = z.object({ error: z.string() }).openapi("LogIngestError");

// Projects

export const DEFAULT_DAILY_LIMIT_MB = 100;
export const DEFAULT_RETENTION_DAYS = 7;

export const CreateProjectBody = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    daily_limit_mb: z
      .number()
      .int()
      .min(1)
      .max(1_048_576)
      .default(DEFAULT_DAILY_LIMIT_MB)
      .openapi({ description: `Default ${DEFAULT_DAILY_LIMIT_MB}` }),
    retention_days: z
      .number()
      .int()
      .min(1)
      .max(365)
      .default(DEFAULT_RETENTION_DAYS)
      .openapi({ description: `Default ${DEFAULT_RETENTION_DAYS}` }),
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
  since: z.iso.datetime({ offset: true }).optional().openapi({ description: "Inclusive lower bound on the entry's `timestamp` (ISO 8601)" }),
  until: z.iso.datetime({ offset: true }).optional().openapi({ description: "Exclusive upper bound on the entry's `timestamp` (ISO 8601)" }),
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

/** The live tail takes the entry query's filters (no time bounds, no paging). */
export const TailQuery = EntriesQuery.pick({ level: true, stream: true, service: true, trace_id: true, q: true });
export type TailQuery = z.infer<typeof TailQuery>;

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
    timestamp: z.string().openapi({
      description: "The entry's time (the sender's, or the time of receipt when it sent none): orders the query, serves since/until and alert windows",
    }),
    created_at: z.string().openapi({ description: "The time the platform received the entry" }),
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
  .strictObject({
    ...alertFields,
    channels: alertFields.channels.optional(),
    notify_email: alertFields.notify_email.optional(),
    notify_webhook: alertFields.notify_webhook.optional(),
    enabled: alertFields.enabled.default(true),
  })
  .openapi("CreateLogAlert");
export type CreateAlertBody = z.infer<typeof CreateAlertBody>;

export const UpdateAlertBody = z
  .strictObject({
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

export const FiringsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1_000).default(100),
  cursor: z.string().max(200).optional().openapi({ description: "`pagination.next_cursor` of the previous page" }),
});

export const FiringSchema = z
  .object({
    id: z.string().openapi({ description: "The firing id, as in the notifications' `firing_id`" }),
    alert_id: z.string(),
    fired_at: z.string(),
    count: z.number().int().openapi({ description: "Entries counted in the window when it fired" }),
    resolved_at: z.string().nullable().openapi({
      description: "When the window fell back under the threshold (or a later firing took over, or the alert was disabled); null while it is firing",
    }),
  })
  .openapi("LogAlertFiring");

export const FiringsPage = z
  .object({
    data: z.array(FiringSchema),
    pagination: z.object({ limit: z.number().int(), next_cursor: z.string().nullable() }),
  })
  .openapi("LogAlertFiringsPage");

export const LogsError = z.object({ error: z.string(), details: z.record(z.string(), z.array(z.string())).optional() }).openapi("LogsError");
