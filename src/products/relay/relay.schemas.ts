// Request and response schemas of the webhook relay, and the relay's fixed limits.
import { z } from "@hono/zod-openapi";

export const PROVIDERS = ["stripe", "github", "standard", "generic"] as const;
export type Provider = (typeof PROVIDERS)[number];

export const RETENTION_DEFAULT_DAYS = 7;
export const RETENTION_MAX_DAYS = 90;
export const MAX_DESTINATIONS_PER_SOURCE = 20;
export const MAX_FILTER_ENTRIES = 50;
/** Largest accepted ingest body (bytes); larger answers 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

export const DELIVERY_STATUSES = ["pending", "sending", "delivered", "failed"] as const;
/** Roll-up of an event's deliveries, used by the events list filter. */
export const EVENT_DELIVERY_STATUSES = ["pending", "delivered", "failed", "none"] as const;

const name = z.string().trim().min(1).max(200);
const signingSecret = z.string().min(1).max(512);
const retentionDays = z.number().int().min(1).max(RETENTION_MAX_DAYS);

export const CreateSourceBody = z
  .strictObject({
    name,
    provider: z.enum(PROVIDERS).openapi({
      description:
        "How inbound signatures are verified and the event type and id are read. `standard` accepts Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) and Svix's (`svix-id`, `svix-timestamp`, `svix-signature`: Clerk, Resend and other Svix senders).",
    }),
    signing_secret: signingSecret.nullable().optional().openapi({
      description:
        "The secret the provider signs with. Optional: without it, anyone who knows the ingest URL can post events. Stored encrypted, never returned.",
    }),
    retention_days: retentionDays
      .default(RETENTION_DEFAULT_DAYS)
      .openapi({ description: `Days events are kept, 1 to ${RETENTION_MAX_DAYS}; default ${RETENTION_DEFAULT_DAYS}.` }),
    enabled: z.boolean().default(true),
  })
  .openapi("CreateWebhookSource");

export const PatchSourceBody = z
  .strictObject({
    name: name.optional(),
    enabled: z.boolean().optional(),
    retention_days: retentionDays.optional(),
    signing_secret: signingSecret.nullable().optional().openapi({ description: "A new secret, or null to stop verifying signatures." }),
  })
  .openapi("PatchWebhookSource");

export const SourceSchema = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    provider: z.enum(PROVIDERS),
    slug: z.string(),
    url: z.string().openapi({ description: "The public ingest address `{APP_URL}/in/<slug>`." }),
    destinations_count: z.number().int(),
    enabled: z.boolean(),
    retention_days: z.number().int(),
    signature_verification: z.boolean().openapi({ description: "True when a signing secret is set (the secret itself is never returned)." }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("WebhookSource");

/** An event type, or a prefix ending in `*` (`invoice.*`); `*` alone admits everything. */
const filterEntry = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^*\s]*\*?$/, "must be an event type, optionally ending in *");

const eventFilter = z.array(filterEntry).max(MAX_FILTER_ENTRIES);

export const CreateDestinationBody = z
  .strictObject({
    url: z.string().max(2048),
    event_filter: eventFilter
      .nullable()
      .optional()
      .openapi({ description: "Event types to forward; entries may end in `*` to admit a prefix. Empty or absent: every event." }),
    enabled: z.boolean().default(true),
  })
  .openapi("CreateWebhookDestination");

export const PatchDestinationBody = z
  .strictObject({
    url: z.string().max(2048).optional(),
    event_filter: eventFilter.nullable().optional(),
    enabled: z.boolean().optional(),
  })
  .openapi("PatchWebhookDestination");

export const DestinationSchema = z
  .object({
    id: z.string().uuid(),
    source_id: z.string().uuid(),
    url: z.string(),
    event_filter: z.array(z.string()),
    enabled: z.boolean(),
    disabled_reason: z.enum(["failing"]).nullable().openapi({
      description:
        "`failing` when the relay disabled the destination because every attempt had failed for 5 days (the team owner is emailed); null otherwise. Cleared by any change of `enabled`.",
    }),
    failing_since: z.string().nullable().openapi({ description: "When the current run of failed attempts began; null after a successful attempt." }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("WebhookDestination");

export const CreatedDestinationSchema = DestinationSchema.extend({
  secret: z.string().openapi({ description: "`whsec_...`: verifies the Standard Webhooks signature of deliveries. Shown only here." }),
}).openapi("CreatedWebhookDestination");

export const AttemptSchema = z
  .object({
    id: z.string().uuid(),
    number: z.number().int(),
    attempted_at: z.string(),
    status_code: z.number().int().nullable(),
    duration_ms: z.number().int(),
    error: z.string().nullable(),
    response_body: z.string().nullable(),
    retry_in_seconds: z.number().int().nullable(),
  })
  .openapi("WebhookAttempt");

export const DeliverySchema = z
  .object({
    id: z.string().uuid(),
    destination_id: z.string().uuid(),
    status: z.enum(DELIVERY_STATUSES),
    attempts_count: z.number().int(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    next_attempt_at: z.string().nullable(),
    delivered_at: z.string().nullable(),
    trigger: z.enum(["ingest", "replay"]),
    created_at: z.string(),
    attempts: z.array(AttemptSchema),
  })
  .openapi("WebhookDelivery");

export const EventSummarySchema = z
  .object({
    id: z.string().uuid(),
    source_id: z.string().uuid(),
    event_type: z.string().nullable(),
    provider_event_id: z.string().nullable(),
    content_type: z.string().nullable(),
    size_bytes: z.number().int(),
    received_at: z.string(),
    delivery_status: z.enum(EVENT_DELIVERY_STATUSES).openapi({
      description:
        "`failed` when any delivery failed, else `pending` while any is pending or sending, else `delivered`; `none` when no destination admitted it.",
    }),
  })
  .openapi("WebhookEventSummary");

export const EventDetailSchema = EventSummarySchema.extend({
  headers: z.record(z.string(), z.string()),
  body: z.string(),
  deliveries: z.array(DeliverySchema),
}).openapi("WebhookEvent");

export const EventsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25).openapi({ description: "1 to 100, default 25." }),
  cursor: z.string().max(200).optional().openapi({ description: "`next_cursor` of the previous page." }),
  type: z.string().min(1).max(200).optional().openapi({ description: "Event type; a trailing `*` matches a prefix." }),
  status: z.enum(EVENT_DELIVERY_STATUSES).optional().openapi({ description: "Delivery roll-up of the event." }),
});

export const PaginationSchema = z.object({ next_cursor: z.string().nullable(), has_more: z.boolean(), limit: z.number().int() }).openapi("CursorPagination");

export const ReplayBody = z
  .object({
    destination_ids: z.array(z.string().max(100)).min(1).max(MAX_DESTINATIONS_PER_SOURCE).optional().openapi({
      description:
        "Resend only to these destinations of the source (e.g. the one that failed), not to the healthy ones. Each must be a destination of this source, enabled, and admit the event's type (422 otherwise). Absent: every enabled destination whose filter admits the event.",
    }),
  })
  .openapi("WebhookReplayRequest");

export const ReplaySchema = z.object({ count: z.number().int(), destination_ids: z.array(z.string().uuid()) }).openapi("WebhookReplay");

export const IngestAcceptedSchema = z
  .object({ id: z.string().uuid(), event_type: z.string().nullable(), duplicate: z.boolean(), deliveries: z.number().int() })
  .openapi("WebhookIngestAccepted");

export const SourceParam = z.object({ source_id: z.string().max(100) });
export const DestinationParam = SourceParam.extend({ destination_id: z.string().max(100) });
export const EventParam = SourceParam.extend({ event_id: z.string().max(100) });
export const SlugParam = z.object({ slug: z.string().max(100) });

export const RelayErrorSchema = z.object({ error: z.string(), details: z.record(z.string(), z.array(z.string())).optional() }).openapi("RelayError");
