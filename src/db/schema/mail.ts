// Mail tables: sent messages (their bodies in R2) with their status history, the mail event webhooks of a team, and
// the sending domains a team may send from.
import { check, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { sql } from "drizzle-orm";
import { apiKeys, teams } from "./platform";

export const MAIL_STATUSES = ["queued", "sent", "delivered", "bounced", "complained", "failed"] as const;
export type MailStatus = (typeof MAIL_STATUSES)[number];

export const emails = sqliteTable(
  "emails",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    /** The key that sent it: sandbox caps and suspension are counted per key. */
    keyId: text("key_id").references(() => apiKeys.id, { onDelete: "set null" }),
    sandbox: integer("sandbox", { mode: "boolean" }).notNull().default(false),
    stream: text("stream").notNull(),
    from: text("from").notNull(),
    to: text("to", { mode: "json" }).$type<string[]>().notNull(),
    cc: text("cc", { mode: "json" }).$type<string[]>().notNull(),
    bcc: text("bcc", { mode: "json" }).$type<string[]>().notNull(),
    replyTo: text("reply_to", { mode: "json" }).$type<string[]>().notNull(),
    /** Lower-cased bare addresses of to, cc and bcc: the `recipient` filter searches this. */
    recipients: text("recipients", { mode: "json" }).$type<string[]>().notNull(),
    subject: text("subject").notNull(),
    /**
     * Where the body is: true, in the MAIL_BODIES bucket (one object per email, mail.bodies.ts);
     * false, in `html` and `text` here, for rows stored before the bodies moved to R2 (until the
     * operator's POST /admin/mail/migrate-bodies moves them). New rows leave `html` and `text` null.
     */
    bodyInR2: integer("body_in_r2", { mode: "boolean" }).notNull().default(false),
    html: text("html"),
    text: text("text"),
    headers: text("headers", { mode: "json" }).$type<Record<string, string>>().notNull(),
    tags: text("tags", { mode: "json" }).$type<string[]>().notNull(),
    status: text("status").$type<MailStatus>().notNull(),
    attempts: integer("attempts").notNull().default(0),
    /** Until when a consumer holds the message (a redelivered copy waits), ms since the epoch (platform/jobs/claim.ts). */
    leaseUntil: integer("lease_until"),
    providerId: text("provider_id"),
    lastError: text("last_error"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("emails_team_created_idx").on(t.teamId, t.createdAt),
    index("emails_key_created_idx").on(t.keyId, t.createdAt),
    // The hourly sweep looks for messages left `queued`.
    index("emails_status_updated_idx").on(t.status, t.updatedAt),
    // The rows whose body the migration still has to move to R2: empty once it is done.
    index("emails_body_in_d1_idx").on(t.createdAt).where(sql`${t.bodyInR2} = 0`),
  ],
);

/** One row per status an email (or a platform mail) has reached: its history. */
export const emailEvents = sqliteTable(
  "email_events",
  {
    id: text("id").primaryKey(),
    emailId: text("email_id").notNull(),
    /** Null for platform mail (usage warnings, report shares, alerts). */
    teamId: text("team_id"),
    status: text("status").$type<MailStatus>().notNull(),
    detail: text("detail"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("email_events_email_idx").on(t.emailId, t.createdAt)],
);

export const MAIL_WEBHOOK_EVENTS = ["email.sent", "email.delivered", "email.bounced", "email.complained", "email.failed"] as const;
export type MailWebhookEvent = (typeof MAIL_WEBHOOK_EVENTS)[number];

export const mailWebhooks = sqliteTable(
  "mail_webhooks",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    events: text("events", { mode: "json" }).$type<MailWebhookEvent[]>().notNull(),
    /** The signing secret, AES-GCM encrypted; shown in plaintext only in the create answer. */
    secretEncrypted: text("secret_encrypted").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("mail_webhooks_team_idx").on(t.teamId)],
);

/**
 * A domain a team may send from once verified (docs/ARCHITECTURE.md "Sending domains"). Each team has its
 * own row and token for a name: several teams may verify the same domain, each with its record.
 */
export const sendingDomains = sqliteTable(
  "sending_domains",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    status: text("status").$type<"pending" | "verified">().notNull(),
    token: text("token").notNull(),
    createdAt: text("created_at").notNull(),
    verifiedAt: text("verified_at"),
  },
  (t) => [uniqueIndex("sending_domains_team_name_idx").on(t.teamId, t.name)],
);
export type SendingDomainRow = typeof sendingDomains.$inferSelect;

/**
 * Sandbox caps reserved, not counted after the fact (docs/ARCHITECTURE.md "Counts under concurrency"): one
 * counter per key, window kind (`hour`, `day`) and window start. A send adds its messages with one
 * upsert per window in one D1 batch; the CHECK refuses a counter past its cap, which rolls the
 * whole batch back, so two concurrent sends can never both take the last slot.
 */
export const sandboxCapUsage = sqliteTable(
  "sandbox_cap_usage",
  {
    keyId: text("key_id")
      .notNull()
      .references(() => apiKeys.id, { onDelete: "cascade" }),
    window: text("window").$type<"hour" | "day">().notNull(),
    start: text("start").notNull(),
    used: integer("used").notNull(),
    cap: integer("cap").notNull(),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.window, t.start] }), check("sandbox_cap_usage_within_cap", sql`${t.used} <= ${t.cap}`)],
);

/**
 * The team's sandbox caps (SANDBOX_HOURLY_CAP, SANDBOX_DAILY_CAP), reserved like the keys' own in
 * `sandbox_cap_usage` and in the same batch: one counter per team, window kind and window start,
 * whichever of the team's sandbox keys sends, so minting more keys never multiplies the caps.
 */
export const sandboxTeamCapUsage = sqliteTable(
  "sandbox_team_cap_usage",
  {
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    window: text("window").$type<"hour" | "day">().notNull(),
    start: text("start").notNull(),
    used: integer("used").notNull(),
    cap: integer("cap").notNull(),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.window, t.start] }), check("sandbox_team_cap_usage_within_cap", sql`${t.used} <= ${t.cap}`)],
);
