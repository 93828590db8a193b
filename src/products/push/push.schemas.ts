// Request and response schemas of the push product (zod, documented in the OpenAPI document).
import { cappedJsonObject, FREE_FORM_JSON_BYTES, jsonCapMessage, jsonFits, utf8Length } from "../../platform/sizes";
import { z } from "@hono/zod-openapi";

export const AppIdParam = z.object({ app_id: z.string().openapi({ param: { name: "app_id", in: "path" } }) });
export const SubscriberParams = AppIdParam.extend({
  subscriber_id: z.string().openapi({ param: { name: "subscriber_id", in: "path" } }),
});
export const NotificationParams = AppIdParam.extend({
  id: z.string().openapi({ param: { name: "id", in: "path" } }),
});

// The urgencies RFC 8030 names that @block65/webcrypto-web-push sends.
export const URGENCIES = ["low", "normal", "high"] as const;
const MAX_TTL = 2_419_200; // 28 days, the longest any push service keeps a message

/** A URL or an absolute path the service worker opens or shows (icon, click target). */
const linkString = z
  .string()
  .max(2048, "must be at most 2048 characters")
  .refine((value) => value.startsWith("/") || /^https?:\/\/[^\s]+$/i.test(value), "must be an http(s) URL or a path starting with /");

/**
 * Default notification settings. Known keys are typed; other keys are kept as given (the object
 * is the app's own), within 8 KB of JSON.
 */
export const SettingsSchema = z
  .looseObject({
    default_icon: linkString.optional(),
    default_url: linkString.optional(),
    default_ttl: z.number().int().min(1).max(MAX_TTL).optional(),
    default_urgency: z.enum(URGENCIES).optional(),
    vapid_subject: z
      .string()
      .max(320)
      .refine((value) => /^mailto:\S+@\S+$/.test(value) || /^https:\/\/\S+$/.test(value), "must be a mailto: or https: URI")
      .optional(),
  })
  .refine((value) => jsonFits(value, 8192), jsonCapMessage(8192))
  .openapi("PushAppSettings", {
    description:
      "Default notification settings: `default_icon`, `default_url`, `default_ttl` (seconds, 1 to 2419200), `default_urgency` (`low`, `normal`, `high`), `vapid_subject` (`mailto:` or `https:` contact sent in the VAPID JWT). Other keys are stored as given.",
  });

/** FCM / APNs credentials: any JSON object or string, at most 16 KB; stored encrypted, never returned. */
const Credentials = z.union([
  z
    .string()
    .min(1)
    .refine((value) => utf8Length(value) <= FREE_FORM_JSON_BYTES, `must be at most ${FREE_FORM_JSON_BYTES / 1024} KB`),
  cappedJsonObject(FREE_FORM_JSON_BYTES),
]);

export const CreateAppSchema = z
  .strictObject({
    name: z.string().trim().min(1, "can't be blank").max(200, "must be at most 200 characters"),
    settings: SettingsSchema.optional(),
    vapid_public_key: z.string().optional().openapi({ description: "base64url raw 65-byte uncompressed P-256 point" }),
    vapid_private_key: z.string().optional().openapi({ description: "base64url 32-byte private scalar `d`; never returned" }),
    fcm_credentials: Credentials.optional(),
    apns_credentials: Credentials.optional(),
  })
  .openapi("CreatePushApp");

/** VAPID keys are fixed for the life of an app: every subscription is bound to its public key. */
const keysAreFixed = z
  .unknown()
  .refine((value) => value === undefined, "cannot be changed; create a new app to rotate keys")
  .optional()
  .openapi({ description: "Not accepted: VAPID keys cannot be changed (422)." });

export const UpdateAppSchema = z
  .strictObject({
    name: z.string().trim().min(1, "can't be blank").max(200, "must be at most 200 characters").optional(),
    settings: SettingsSchema.optional(),
    fcm_credentials: Credentials.nullable().optional(),
    apns_credentials: Credentials.nullable().optional(),
    vapid_public_key: keysAreFixed,
    vapid_private_key: keysAreFixed,
  })
  .openapi("UpdatePushApp");

export const PushAppSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    vapid_public_key: z.string(),
    subscriber_count: z.number().int(),
    settings: z.record(z.string(), z.unknown()),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("PushApp");

// Subscribers ---------------------------------------------------------------------------------

const tagSchema = z.string().trim().min(1, "can't be blank").max(64, "must be at most 64 characters");

export const SubscribeSchema = z
  .object({
    endpoint: z.string().max(2048, "must be at most 2048 characters"),
    // A DOMHighResTimeStamp (ms since the epoch, may be fractional); stored rounded.
    expirationTime: z.number().nonnegative().max(8.64e15).nullable().optional(),
    keys: z.object({
      p256dh: z.string().max(200),
      auth: z.string().max(100),
    }),
    tags: z.array(tagSchema).max(50, "must have at most 50 tags").optional(),
    external_id: z.string().trim().min(1).max(255).nullable().optional(),
  })
  .openapi("PushSubscriptionInput", {
    description: "A browser PushSubscription (`subscription.toJSON()`), plus optional `tags` and `external_id`.",
  });

export const SubscriberSchema = z
  .object({
    id: z.string(),
    app_id: z.string(),
    endpoint: z.string(),
    expiration_time: z.number().nullable(),
    tags: z.array(z.string()),
    external_id: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("PushSubscriber");

export const ListSubscribersQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  per_page: z.coerce.number().int().min(1).max(100).default(20),
  tag: z.string().max(64).optional(),
  external_id: z.string().max(255).optional(),
});

export const PaginationSchema = z.object({
  page: z.number().int(),
  per_page: z.number().int(),
  total: z.number().int(),
  total_pages: z.number().int(),
});

// Notifications -------------------------------------------------------------------------------

export const SendSchema = z
  .object({
    title: z.string().trim().min(1, "can't be blank").max(200, "must be at most 200 characters"),
    body: z.string().max(1000, "must be at most 1000 characters"),
    icon: linkString.optional(),
    url: linkString.optional(),
    data: cappedJsonObject(FREE_FORM_JSON_BYTES).optional(),
    ttl: z.number().int().min(1).max(MAX_TTL).optional(),
    urgency: z.enum(URGENCIES).optional(),
    topic: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,32}$/, "must be 1 to 32 characters of the base64url alphabet")
      .optional(),
    subscriber_ids: z.array(z.string()).min(1).max(1000).optional(),
    tags: z.array(tagSchema).min(1).max(50).optional(),
  })
  .refine((value) => !(value.subscriber_ids && value.tags), {
    message: "give either subscriber_ids or tags, not both",
    path: ["tags"],
  })
  .openapi("SendPushNotification");

const CountsSchema = z.object({
  queued: z.number().int(),
  delivered: z.number().int(),
  failed: z.number().int(),
  removed: z.number().int(),
});

export const NotificationSchema = z
  .object({
    id: z.string(),
    app_id: z.string(),
    status: z.enum(["queued", "sending", "completed"]),
    payload: z.record(z.string(), z.unknown()),
    ttl: z.number().int(),
    urgency: z.string(),
    topic: z.string().nullable(),
    target: z.record(z.string(), z.unknown()),
    recipients: z.number().int(),
    counts: CountsSchema,
    created_at: z.string(),
    completed_at: z.string().nullable(),
  })
  .openapi("PushNotification");

export const DeliveryResultSchema = z
  .object({
    subscriber_id: z.string(),
    status: z.enum(["queued", "sending", "retrying", "delivered", "failed", "removed"]),
    attempts: z.number().int(),
    status_code: z.number().int().nullable(),
    error: z.string().nullable(),
    updated_at: z.string(),
  })
  .openapi("PushDeliveryResult");

export const NotificationDetailSchema = NotificationSchema.extend({
  results: z.array(DeliveryResultSchema),
  results_next_cursor: z.string().nullable(),
}).openapi("PushNotificationDetail");

export const NotificationQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().max(100).optional(),
  status: z.enum(["queued", "sending", "retrying", "delivered", "failed", "removed"]).optional(),
});

export const ListNotificationsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

export const PUSH_LIMITS = { MAX_TTL, MAX_PAYLOAD_BYTES: 3993 } as const;
