// Webhook relay tables: sources (public ingest addresses) and destinations (customer URLs), the
// relay's control plane. The events received at a source, one delivery per event and destination,
// and every attempt of a delivery live in each source's store (src/products/relay/store/); the
// three tables below them are their former home, read only by the operator's migration
// (relay.migrate.ts) until it has emptied them. Deleting a source removes its destinations
// (foreign-key cascade).
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { teams } from "./platform";

export const webhookSources = sqliteTable(
  "webhook_sources",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    provider: text("provider").notNull(),
    /** Unguessable identifier of the ingest address `{APP_URL}/in/<slug>`. */
    slug: text("slug").notNull(),
    /** AES-GCM sealed (encryptSecret); null when inbound signatures are not checked. */
    signingSecret: text("signing_secret"),
    retentionDays: integer("retention_days").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("webhook_sources_slug_idx").on(t.slug), index("webhook_sources_team_idx").on(t.teamId, t.createdAt)],
);

export const webhookDestinations = sqliteTable(
  "webhook_destinations",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    sourceId: text("source_id")
      .notNull()
      .references(() => webhookSources.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    eventFilter: text("event_filter", { mode: "json" }).$type<string[]>().notNull(),
    /** The `whsec_` signing secret, sealed: the plaintext is needed to sign each delivery. */
    secret: text("secret").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    /** First failed attempt of the current run of failures; null after a success. */
    failingSince: text("failing_since"),
    /** `failing` when the relay disabled it after five days of failures; null otherwise. */
    disabledReason: text("disabled_reason").$type<"failing">(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("webhook_destinations_source_idx").on(t.sourceId, t.createdAt)],
);

export const webhookEvents = sqliteTable(
  "webhook_events",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    sourceId: text("source_id")
      .notNull()
      .references(() => webhookSources.id, { onDelete: "cascade" }),
    eventType: text("event_type"),
    /** The provider's own id of the event, used to drop redelivered duplicates. */
    providerEventId: text("provider_event_id"),
    contentType: text("content_type"),
    headers: text("headers", { mode: "json" }).$type<Record<string, string>>().notNull(),
    body: text("body").notNull(),
    sizeBytes: integer("size_bytes").notNull(),
    receivedAt: text("received_at").notNull(),
  },
  (t) => [
    uniqueIndex("webhook_events_dedupe_idx").on(t.sourceId, t.providerEventId),
    index("webhook_events_source_idx").on(t.sourceId, t.receivedAt, t.id),
    index("webhook_events_received_idx").on(t.receivedAt),
  ],
);

export type DeliveryStatus = "pending" | "sending" | "delivered" | "failed";

export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    eventId: text("event_id")
      .notNull()
      .references(() => webhookEvents.id, { onDelete: "cascade" }),
    destinationId: text("destination_id")
      .notNull()
      .references(() => webhookDestinations.id, { onDelete: "cascade" }),
    status: text("status").$type<DeliveryStatus>().notNull(),
    attempts: integer("attempts").notNull().default(0),
    /** While `sending`: until when the consumer that claimed it owns it (ms since epoch). */
    leaseUntil: integer("lease_until"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    nextAttemptAt: text("next_attempt_at"),
    deliveredAt: text("delivered_at"),
    /** `ingest` or `replay`. */
    trigger: text("trigger").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("webhook_deliveries_event_idx").on(t.eventId, t.status), index("webhook_deliveries_destination_idx").on(t.destinationId)],
);

export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    number: integer("number").notNull(),
    attemptedAt: text("attempted_at").notNull(),
    statusCode: integer("status_code"),
    durationMs: integer("duration_ms").notNull(),
    error: text("error"),
    /** First bytes of the receiver's answer, for debugging. */
    responseBody: text("response_body"),
    /** Delay before the next attempt; null when this attempt was the last. */
    retryInSeconds: integer("retry_in_seconds"),
  },
  (t) => [index("webhook_attempts_delivery_idx").on(t.deliveryId, t.number)],
);
