// The Forms control plane in D1: one row per form (its fields, origins, redirect, recipients,
// webhook with its sealed signing secret, files and retention). Submissions, their webhook
// deliveries and the attempts live in the form's own store (store/form-store.ts), never in D1.
// Exported through src/db/schema/index.ts so drizzle-kit generates its migration with the others.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { teams } from "./platform";

/** A declared field of a form (`fields` of the API). */
export interface FormField {
  name: string;
  type: "text" | "email" | "number" | "url" | "checkbox" | "file";
  required: boolean;
  max_length: number | null;
}

export const forms = sqliteTable(
  "forms",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** null: any fields are taken (up to 50). */
    fields: text("fields", { mode: "json" }).$type<FormField[] | null>(),
    allowedOrigins: text("allowed_origins", { mode: "json" }).$type<string[]>().notNull(),
    redirectUrl: text("redirect_url"),
    notifyEmails: text("notify_emails", { mode: "json" }).$type<string[]>().notNull(),
    webhookUrl: text("webhook_url"),
    /** encryptSecret() of the `whsec_` signing secret; shown once, never returned. */
    webhookSecret: text("webhook_secret"),
    filesEnabled: integer("files_enabled", { mode: "boolean" }).notNull().default(false),
    filesMaxBytes: integer("files_max_bytes").notNull(),
    retentionDays: integer("retention_days").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("forms_team_idx").on(t.teamId, t.createdAt)],
);

export type FormRow = typeof forms.$inferSelect;
