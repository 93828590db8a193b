// Push tables: apps (VAPID keys, encrypted credentials, the subscriber count) and notifications
// (one row per send). Subscribers and deliveries live in each app's store (products/push/store);
// push_subscribers and push_deliveries are the former tables, read only by the operator's
// migration (products/push/push.migrate.ts) until it has moved every row.
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { teams } from "./platform";

export const pushApps = sqliteTable(
  "push_apps",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    vapidPublicKey: text("vapid_public_key").notNull(),
    /** encryptSecret() of the base64url `d` of the private key; never returned. */
    vapidPrivateKeyEnc: text("vapid_private_key_enc").notNull(),
    /** encryptSecret() of the JSON the caller supplied; never returned. */
    fcmCredentialsEnc: text("fcm_credentials_enc"),
    apnsCredentialsEnc: text("apns_credentials_enc"),
    settings: text("settings", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /**
     * The app's store's count of its subscribers (products/push/store), written after each change
     * with the store's sequence number of that change: a write with an older one changes nothing.
     */
    subscriberCount: integer("subscriber_count").notNull().default(0),
    subscriberCountSeq: integer("subscriber_count_seq").notNull().default(0),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("push_apps_team_idx").on(t.teamId, t.createdAt)],
);

export const pushSubscribers = sqliteTable(
  "push_subscribers",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id").notNull(),
    appId: text("app_id")
      .notNull()
      .references(() => pushApps.id, { onDelete: "cascade" }),
    endpoint: text("endpoint").notNull(),
    p256dh: text("p256dh").notNull(),
    auth: text("auth").notNull(),
    expirationTime: integer("expiration_time"),
    tags: text("tags", { mode: "json" }).$type<string[]>().notNull(),
    externalId: text("external_id"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("push_subscribers_endpoint_idx").on(t.appId, t.endpoint),
    index("push_subscribers_app_idx").on(t.appId, t.createdAt, t.id),
    // Fan-out walks an app's subscribers in id order.
    index("push_subscribers_fanout_idx").on(t.appId, t.id),
  ],
);

export type PushTarget = { type: "all" } | { type: "subscribers"; subscriber_ids: string[] } | { type: "tags"; tags: string[] };

export const pushNotifications = sqliteTable(
  "push_notifications",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id").notNull(),
    appId: text("app_id")
      .notNull()
      .references(() => pushApps.id, { onDelete: "cascade" }),
    /** The exact JSON string every subscriber's service worker receives. */
    payload: text("payload").notNull(),
    ttl: integer("ttl").notNull(),
    urgency: text("urgency").$type<"low" | "normal" | "high">().notNull(),
    topic: text("topic"),
    target: text("target", { mode: "json" }).$type<PushTarget>().notNull(),
    vapidSubject: text("vapid_subject").notNull(),
    /** Subscribers targeted; corrected to the fanned-out count when fan-out ends. */
    recipients: integer("recipients").notNull(),
    fanoutDone: integer("fanout_done", { mode: "boolean" }).notNull().default(false),
    /**
     * The fan-out chain's current token: `fanout` messages carry it and one with another token
     * does nothing. The hourly sweep replaces it when it re-queues a stalled fan-out, so a late
     * original message cannot start a second chain.
     */
    fanoutToken: text("fanout_token"),
    /** When fan-out last progressed (created, a step queued the next one, or a sweep re-queued it). */
    fanoutAt: text("fanout_at"),
    createdAt: text("created_at").notNull(),
    /**
     * Set here for a notification with no recipients (and by the former D1 deliveries); otherwise
     * the app's store knows when the last delivery finished.
     */
    completedAt: text("completed_at"),
  },
  (t) => [
    index("push_notifications_app_idx").on(t.appId, t.createdAt),
    // The hourly sweep looks for unfinished fan-outs that stopped progressing.
    index("push_notifications_fanout_idx").on(t.fanoutDone, t.fanoutAt),
  ],
);

export type PushDeliveryStatus = "queued" | "sending" | "retrying" | "delivered" | "failed" | "removed";

export const pushDeliveries = sqliteTable(
  "push_deliveries",
  {
    notificationId: text("notification_id")
      .notNull()
      .references(() => pushNotifications.id, { onDelete: "cascade" }),
    /** Not a foreign key: the row outlives a subscriber the push service removed (410). */
    subscriberId: text("subscriber_id").notNull(),
    status: text("status").$type<PushDeliveryStatus>().notNull(),
    attempts: integer("attempts").notNull().default(0),
    statusCode: integer("status_code"),
    error: text("error"),
    /** While `sending`: until when the consumer that claimed it owns it, ms since the epoch (platform/jobs/claim.ts). */
    leaseUntil: integer("lease_until"),
    /**
     * When a queue message is next due to act on a pending row: its fan-out (queued), its retry
     * (retrying), the end of its claim (sending), or its last sweep. Null once finished.
     */
    nextAttemptAt: text("next_attempt_at"),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.notificationId, t.subscriberId] }),
    index("push_deliveries_status_idx").on(t.notificationId, t.status),
    // The hourly sweep looks for pending rows long past due.
    index("push_deliveries_due_idx").on(t.status, t.nextAttemptAt),
  ],
);
