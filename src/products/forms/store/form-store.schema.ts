// Tables of one form's store (a SQLite-backed Durable Object, `FormStore`, one per form): its
// submissions (inbox and spam), the webhook deliveries of each and their attempts, and one row of
// state (whose form this is, its retention). `seq` (the rowid) orders newest first and is the
// cursor of the list and of the export.
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const submissions = sqliteTable(
  "submissions",
  {
    seq: integer("seq").primaryKey(),
    id: text("id").notNull().unique(),
    status: text("status").$type<"inbox" | "spam">().notNull(),
    /** JSON object of field → text or list of texts. */
    fields: text("fields").notNull(),
    /** JSON list of the files kept in R2 (id, field, name, content_type, size). */
    files: text("files").notNull(),
    subject: text("subject"),
    replyTo: text("reply_to"),
    origin: text("origin"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("submissions_status_idx").on(t.status, t.seq), index("submissions_created_idx").on(t.createdAt)],
);

export const deliveries = sqliteTable(
  "deliveries",
  {
    seq: integer("seq").primaryKey(),
    id: text("id").notNull().unique(),
    submissionId: text("submission_id").notNull(),
    status: text("status").$type<"pending" | "delivered" | "failed">().notNull(),
    trigger: text("trigger").$type<"submission" | "resend">().notNull(),
    attempts: integer("attempts").notNull().default(0),
    /** ms since the epoch; null once delivered or failed. */
    nextAttemptAt: integer("next_attempt_at"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("deliveries_due_idx").on(t.status, t.nextAttemptAt), index("deliveries_submission_idx").on(t.submissionId)],
);

export const attempts = sqliteTable(
  "attempts",
  {
    deliveryId: text("delivery_id").notNull(),
    number: integer("number").notNull(),
    attemptedAt: text("attempted_at").notNull(),
    statusCode: integer("status_code"),
    durationMs: integer("duration_ms"),
    error: text("error"),
    responseBody: text("response_body"),
  },
  (t) => [primaryKey({ columns: [t.deliveryId, t.number] })],
);

export const state = sqliteTable("state", {
  id: integer("id").primaryKey(),
  formId: text("form_id").notNull(),
  teamId: text("team_id").notNull(),
  retentionDays: integer("retention_days").notNull(),
});
