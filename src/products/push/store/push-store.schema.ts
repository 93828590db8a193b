// Tables of one push app's store (a SQLite-backed Durable Object, `PushStore`, one per app): its
// subscribers, the fan-out state of each notification sent to them, and one delivery row per
// (notification, subscriber). D1 keeps the app row (with subscriber_count, so listing apps calls no
// store) and the notification rows (one per send: payload, target, fan-out chain). Times are ISO
// 8601 text as the API shows them; `lease_until` is ms since the epoch (platform/jobs/claim.ts).
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const subscribers = sqliteTable(
  "subscribers",
  {
    id: text("id").primaryKey(),
    endpoint: text("endpoint").notNull(),
    p256dh: text("p256dh").notNull(),
    auth: text("auth").notNull(),
    expirationTime: integer("expiration_time"),
    /** JSON array of strings. */
    tags: text("tags").notNull(),
    externalId: text("external_id"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("subscribers_endpoint_idx").on(t.endpoint),
    // The list's order (oldest first); fan-out walks the primary key.
    index("subscribers_created_idx").on(t.createdAt, t.id),
    index("subscribers_external_idx").on(t.externalId),
  ],
);

/** The store's side of a notification: when it was made (retention), whether fan-out ended, when it completed. */
export const notifications = sqliteTable("notifications", {
  id: text("id").primaryKey(),
  createdAt: text("created_at").notNull(),
  fanoutDone: integer("fanout_done").notNull().default(0),
  completedAt: text("completed_at"),
});

export const deliveries = sqliteTable(
  "deliveries",
  {
    notificationId: text("notification_id").notNull(),
    /** Not a reference: the row outlives a subscriber the push service removed (410). */
    subscriberId: text("subscriber_id").notNull(),
    status: text("status").notNull(),
    attempts: integer("attempts").notNull().default(0),
    statusCode: integer("status_code"),
    error: text("error"),
    /** While `sending`: until when the consumer that claimed it owns it, ms since the epoch. */
    leaseUntil: integer("lease_until"),
    /** When a queue message is next due to act on a pending row (fan-out, retry, end of claim, last sweep); null once finished. */
    nextAttemptAt: text("next_attempt_at"),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.notificationId, t.subscriberId] }),
    index("deliveries_status_idx").on(t.notificationId, t.status),
    // The alarm's sweep looks for pending rows long past due.
    index("deliveries_due_idx").on(t.status, t.nextAttemptAt),
  ],
);

/** Counters of the store: `subscriber_count` and `count_seq` (bumped with every change of the count; D1 keeps the newest it was told). */
export const meta = sqliteTable("meta", {
  key: text("key").primaryKey(),
  value: integer("value").notNull(),
});
