// Platform tables: teams, API keys, monthly usage counters and their days (the roll-up of each
// team's meter, src/platform/usage/rollup.ts), usage warnings, the platform mail
// outbox (mail the platform itself sends: usage warnings, report shares, alert emails) and the
// idempotency keys of retried POSTs (src/platform/idempotency.ts).
import { sql } from "drizzle-orm";
import type { Plan } from "../../platform/plans";
import { blob, index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const teams = sqliteTable("teams", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  plan: text("plan").$type<Plan>().notNull().default("free"),
  ownerEmail: text("owner_email"),
  /**
   * When the team's sandbox sending was suspended (a sandbox key's bounce or complaint rate, or the
   * operator), else null: every sandbox key of the team is held by it, whichever key tripped it,
   * so revoking keys and minting new ones sheds nothing; only the operator clears it.
   */
  sandboxSuspendedAt: text("sandbox_suspended_at"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    name: text("name"),
    prefix: text("prefix").notNull(),
    keyHash: text("key_hash").notNull(),
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    /** Mail policy of the key (sandbox, streams, allow-list, caps, suspension). */
    mail: text("mail", { mode: "json" }).$type<MailKeyPolicy>().notNull(),
    createdAt: text("created_at").notNull(),
    revokedAt: text("revoked_at"),
    /** Last authenticated use, to the minute: written at most once a minute per key (platform/request-log/last-used.ts). */
    lastUsedAt: text("last_used_at"),
  },
  (t) => [uniqueIndex("api_keys_hash_idx").on(t.keyHash), index("api_keys_team_idx").on(t.teamId)],
);

export interface MailKeyPolicy {
  sandbox: boolean;
  allowed_streams: string[];
  allowed_recipients: string[];
  hourly_cap: number | null;
  daily_cap: number | null;
  suspended: boolean;
}

export const usageCounters = sqliteTable(
  "usage_counters",
  {
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    service: text("service").notNull(),
    /** Calendar month in UTC, `YYYY-MM`. */
    period: text("period").notNull(),
    used: real("used").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.service, t.period] })],
);

/** Units per team, service and UTC day: the meter's roll-up (never a write per request), for the console's daily chart. */
export const usageDaily = sqliteTable(
  "usage_daily",
  {
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    service: text("service").notNull(),
    /** UTC day, `YYYY-MM-DD`. */
    day: text("day").notNull(),
    used: real("used").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.service, t.day] }), index("usage_daily_day_idx").on(t.day)],
);

export const usageWarnings = sqliteTable(
  "usage_warnings",
  {
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    service: text("service").notNull(),
    period: text("period").notNull(),
    threshold: integer("threshold").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.service, t.period, t.threshold] })],
);

export const platformOutbox = sqliteTable(
  "platform_outbox",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id").references(() => teams.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    to: text("to").notNull(),
    subject: text("subject").notNull(),
    text: text("text").notNull(),
    html: text("html"),
    status: text("status").notNull().default("pending"),
    /** The claim's columns (platform/jobs/claim.ts): deliveries tried, and the sender's lease (ms). */
    attempts: integer("attempts").notNull().default(0),
    leaseUntil: integer("lease_until"),
    createdAt: text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`),
    /** Last change (stored, claimed, released, swept): when the sweep counts a lost message from; null on rows stored before it. */
    updatedAt: text("updated_at"),
    sentAt: text("sent_at"),
  },
  (t) => [index("platform_outbox_status_idx").on(t.status, t.createdAt)],
);

/**
 * One row per (team, Idempotency-Key): the claim while the first request runs (`lock_id`,
 * `locked_until`), then its answer for replays. Kept 24 hours (src/platform/idempotency.ts).
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    /** SHA-256 (hex) of method, path and body of the request that claimed the key. */
    requestHash: text("request_hash").notNull(),
    /** Token of the request holding the claim; null once the answer is stored. */
    lockId: text("lock_id"),
    /** Until when the claim counts as held; past it, an unfinished claim is abandoned. */
    lockedUntil: text("locked_until"),
    /** Status of the stored answer; null while the first request runs. */
    responseStatus: integer("response_status"),
    responseType: text("response_type"),
    /** The answer's body, gzip-compressed; null when it was over the stored-body cap. */
    responseBody: blob("response_body", { mode: "buffer" }),
    /** Size in bytes of the uncompressed answer body. */
    responseBytes: integer("response_bytes"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.key] }), index("idempotency_keys_created_idx").on(t.createdAt)],
);
